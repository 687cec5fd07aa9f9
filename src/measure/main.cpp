// sextant-calibrate: measures GEMM, memory-bound kernels and NCCL collectives on this machine's
// GPUs and writes a calibration profile (calibration/README.md explains the steps).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/output_file.hpp"
#include "attention_bench.hpp"
#include "environment.hpp"
#include "gemm_bench.hpp"
#include "memory_bench.hpp"
#include "mpi_collectives.hpp"
#include "nccl_bench.hpp"
#include "plan.hpp"
#include "profile/collective_sweeps.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::measure;

namespace {
struct Options {
    std::string gpu;  // Sextant GPU type (topologies/gpus/), e.g. H100-SXM5-80GB
    std::string out;
    std::string scenario;
    bool dry_run = false;
    bool quick = false;
    bool help = false;
    std::size_t max_bytes = std::size_t(4) << 30;
    std::string command;
};

const char* kUsage =
    "usage: sextant-calibrate --gpu TYPE [--out FILE] [--scenario FILE] [--quick] [--max-bytes N] [--dry-run]\n"
    "  --gpu TYPE       GPU type as in topologies/gpus/ (e.g. H100-SXM5-80GB)\n"
    "  --out FILE       profile to write (default: TYPE.measured.json)\n"
    "  --scenario FILE  also measure the GEMM shapes of this scenario's model\n"
    "  --quick          smaller GEMM grid and fewer repetitions\n"
    "  --max-bytes N    largest collective buffer (default 4 GiB)\n"
    "  --dry-run        print what would be measured; touches no GPU\n";

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw InputError(flag, "", "needs a value");
            return argv[++i];
        };
        if (flag == "--gpu") o.gpu = value();
        else if (flag == "--out") o.out = value();
        else if (flag == "--scenario") o.scenario = value();
        else if (flag == "--dry-run") o.dry_run = true;
        else if (flag == "--quick") o.quick = true;
        else if (flag == "--max-bytes") {
            const std::string text = value();
            try {
                o.max_bytes = std::stoull(text);
            } catch (const std::exception&) {
                throw InputError("--max-bytes", text, "must be a positive integer");
            }
            if (o.max_bytes < 1024) throw InputError("--max-bytes", text, "must be at least 1024");
        } else if (flag == "--help" || flag == "-h") {
            o.help = true;
        } else
            throw InputError(flag, "", "unknown flag");
    }
    if (o.help) return o;
    if (o.gpu.empty()) throw InputError("--gpu", "", "required: the GPU type of topologies/gpus/");
    if (o.out.empty()) o.out = o.gpu + ".measured.json";
    return o;
}

json provenance_json(const Provenance& p, const json& sources) {
    return {{"kind", p.kind}, {"gpu", p.gpu}, {"driver", p.driver}, {"cuda", p.cuda}, {"cublas", p.cublas},
            {"cudnn", p.cudnn}, {"nccl", p.nccl}, {"hosts", p.hosts}, {"date", p.date}, {"command", p.command},
            {"sources", sources}};
}

// Measured attention points, one per configuration that cuDNN builds a plan for; an empty
// result keeps the published points, and says why.
json measure_attention_points(const MeasurePlan& plan, std::string& failure) {
    json points = json::array();
    for (const AttentionShape& a : plan.attention) {
        try {
            const AttentionResult r = measure_attention(a, plan.warmup, plan.reps);
            std::printf("attention b%lld s%lld h%lld/%lld d%lld/%lld %s: fwd %.1f TFLOP/s, bwd %.1f TFLOP/s (%s)\n",
                        static_cast<long long>(a.batch), static_cast<long long>(a.seq), static_cast<long long>(a.heads),
                        static_cast<long long>(a.kv_heads), static_cast<long long>(a.head_dim),
                        static_cast<long long>(a.head_dim_v), a.causal ? "causal" : "full", r.fwd_tflops, r.bwd_tflops,
                        r.engine.c_str());
            points.push_back({{"seq", a.seq}, {"head_dim", a.head_dim}, {"head_dim_v", a.head_dim_v}, {"batch", a.batch},
                              {"heads", a.heads}, {"kv_heads", a.kv_heads}, {"causal", a.causal}, {"fwd_tflops", r.fwd_tflops},
                              {"bwd_tflops", r.bwd_tflops}, {"source", "sextant-calibrate, cuDNN SDPA graphs (" + r.engine + ")"}});
        } catch (const std::runtime_error& e) {
            std::printf("attention s%lld d%lld %s: skipped, %s\n", static_cast<long long>(a.seq),
                        static_cast<long long>(a.head_dim), a.causal ? "causal" : "full", e.what());
            failure = e.what();
        }
    }
    return points;
}

// The measured sections replace the published ones of the GPU's shipped profile; what this
// version does not measure (the comm section) stays, and the provenance says so.
json build_profile(const Options& o, const GpuSpec& gpu, const MeasurePlan& plan, std::vector<CollectiveSweep> collectives) {
    json doc = load_preset("calibration", gpu.name, "--gpu");
    const Provenance provenance = measured_provenance(o.command);
    std::string attention_failure;
    const json attention = measure_attention_points(plan, attention_failure);
    const bool measured_attention = !attention.empty();
    if (measured_attention) {
        doc["attention"] = attention;
        // cuDNN's fused flash attention, the kernel Transformer Engine runs on Hopper and later:
        // runtimes that run it read these points without the fitted compute factor.
        doc["attention_kernel"] = std::string(name_of(AttentionKernel::CudnnFused));
    }
    doc["provenance"] = provenance_json(
        provenance, {{"attention", measured_attention ? "measured: cuDNN SDPA forward and backward graphs"
                                                      : "not measured (" + attention_failure + "): published points of calibration/" +
                                                            gpu.name + ".json"},
                     {"comm", "not measured: calibration/" + gpu.name + ".json"}});
    doc["provenance"]["summary"] = "measured by sextant-calibrate on " + provenance.gpu + " (" + provenance.date + "); " +
                                   (measured_attention ? "comm" : "attention and comm") + " kept from the published profile";
    doc["gemm"] = json::object();
    for (const GemmShape& shape : plan.gemm) {
        GemmResult r;
        try {
            r = measure_gemm(shape, plan.warmup, plan.reps);
        } catch (const GemmUnsupported& e) {
            std::printf("gemm %s %lldx%lldx%lld: skipped, %s\n", shape.recipe.c_str(),
                        static_cast<long long>(shape.m), static_cast<long long>(shape.n),
                        static_cast<long long>(shape.k), e.what());
            continue;
        }
        std::printf("gemm %s %lldx%lldx%lld: %.1f TFLOP/s (%s)\n", shape.recipe.c_str(),
                    static_cast<long long>(shape.m), static_cast<long long>(shape.n), static_cast<long long>(shape.k),
                    r.tflops, shape.origin.c_str());
        doc["gemm"][shape.recipe].push_back(
            {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}, {"tflops", r.tflops}, {"source", "sextant-calibrate, " + shape.origin}});
    }
    // The largest buffer is the profile's: it describes streaming kernels, not cache-resident
    // ones. Taking the fastest size instead took 16 MiB on an H200 (copy 4.96 TB/s with the
    // operands in its 60 MB L2, against 4.29 at 4 GiB; 2026-11-27).
    MemoryResult best{0, 0, 0};
    for (std::size_t bytes : plan.memory_bytes) {
        const MemoryResult r = measure_memory(bytes, plan.warmup, plan.reps);
        std::printf("memory %zu B: copy %.3f TB/s, rmsnorm proxy %.3f TB/s\n", r.bytes, r.copy_tbps, r.elementwise_tbps);
        if (r.bytes >= best.bytes) best = r;
    }
    doc["memory"] = {{"copy_tbps", best.copy_tbps}, {"elementwise_tbps", best.elementwise_tbps}, {"buffer_bytes", best.bytes},
                     {"source", "sextant-calibrate, device-to-device copy and RMSNorm proxy at " + std::to_string(best.bytes) + " B"}};
    doc["collectives"] = json::array();
    for (CollectiveSweep& c : collectives) {
        c.provenance = {"measured", "sextant-calibrate", "", provenance.date, "clock", provenance.nccl, provenance.hosts,
                        provenance.gpu, provenance.command, false};
        for (const CollectiveSample& s : c.samples)
            std::printf("%s %.0f B: %.1f us, busbw %.2f GB/s\n", sweep_label(c).c_str(), s.bytes, s.time_us, sample_busbw_gbps(c, s));
        doc["collectives"].push_back(collective_sweep_json(c));
    }
    CalibrationProfile::from_json(doc, "", gpu);  // what we write must read back
    return doc;
}

int run(int argc, char** argv, const std::optional<MpiJob>& job) {
    const Options o = parse_args(argc, argv);
    if (o.help) {
        std::fputs(kUsage, stdout);
        return 0;
    }
    const GpuSpec gpu = load_gpu(o.gpu, "--gpu");
    // MX/NV block scaling runs on Blackwell only: the device says so when there is one; a dry run
    // lists those recipes with that condition.
    std::string why;
    const int devices = o.dry_run ? 0 : cuda_device_count(why);
    const bool fp8 = gpu.fp8_tflops > 0;
    MeasurePlan plan = default_plan({fp8, fp8 && (o.dry_run || (devices > 0 && compute_capability_major() >= 10)), o.quick, o.max_bytes});
    if (!o.scenario.empty()) add_scenario_shapes(plan, load_scenario(o.scenario));
    if (o.dry_run) {
        std::printf("sextant-calibrate dry run for %s (no GPU touched)\n%s", gpu.name.c_str(), describe(plan).c_str());
        std::printf("would write %s\n", o.out.c_str());
        return 0;
    }
    if (devices == 0) {
        std::fprintf(stderr, "sextant-calibrate: no CUDA device available (%s); nothing measured. "
                             "Use --dry-run to see the plan.\n", why.c_str());
        return 2;
    }
    std::vector<CollectiveSweep> collectives;
    if (job && job->size > 1) {
        // One process per GPU: every rank joins the collectives, rank 0 measures its own GPU
        // and writes the profile.
        collectives = measure_job_collectives(plan, *job);
        if (job->rank != 0) return 0;
    } else {
        collectives = measure_node_collectives(plan, devices);
    }
    const json doc = build_profile(o, gpu, plan, std::move(collectives));
    write_output_file(o.out, doc.dump(1) + "\n", "--out");
    std::printf("wrote %s\n", o.out.c_str());
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    // MPI may rewrite argv, so it starts before the flags are read; a dry run under mpirun is
    // harmless.
    const std::optional<MpiJob> job = start_mpi(argc, argv);
    int status = 1;
    try {
        status = run(argc, argv, job);
    } catch (const InputError& e) {
        std::fprintf(stderr, "error: %s\n%s", e.what(), kUsage);
        status = 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "internal error: %s\n", e.what());
        status = 1;
    }
    if (job) stop_mpi();
    return status;
}
