#include "profile/profile.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr FieldDef kProfileFields[] = {
    {"schema", FieldType::String, "profile format version", "", "", -1e300, 1e300, "sextant-calibration/1"},
    {"gpu", FieldType::String, "GPU type the profile describes"},
    {"provenance", FieldType::Object, "how and where it was measured, or the published sources"},
    {"gemm", FieldType::Object, "GEMM points per precision: {bf16: [{m, n, k, tflops}], ...}"},
    {"attention", FieldType::Array, "flash attention points [{seq, head_dim, causal, fwd_tflops, bwd_tflops}]"},
    {"memory", FieldType::Object, "{copy_tbps, elementwise_tbps}"},
    {"collectives", FieldType::Array, "nccl-tests style points [{op, ranks, group, bytes, time_us, busbw_gbps}]"},
    {"comm", FieldType::Object, "collective model calibration"},
    {"factors", FieldType::Object, "fitted multipliers {compute, communication, overlap}"},
};
constexpr FieldDef kGemmPointFields[] = {
    {"m", FieldType::Integer, "rows of A and C", "", "", 1, 1 << 24},
    {"n", FieldType::Integer, "columns of B and C", "", "", 1, 1 << 24},
    {"k", FieldType::Integer, "inner dimension", "", "", 1, 1 << 24},
    {"tflops", FieldType::Number, "achieved throughput", "TFLOP/s", "", 0.001},
    {"source", FieldType::String, "where the point comes from"},
};
constexpr FieldDef kAttentionFields[] = {
    {"seq", FieldType::Integer, "sequence length", "tokens", "", 1, 1 << 27},
    {"head_dim", FieldType::Integer, "head size", "", "", 1, 1 << 16},
    {"batch", FieldType::Integer, "sequences in the measured batch", "", "", 1, 1 << 30},
    {"heads", FieldType::Integer, "query heads", "", "", 1, 1 << 16},
    {"kv_heads", FieldType::Integer, "key/value heads", "", "", 1, 1 << 16},
    {"causal", FieldType::Boolean, "causal mask", "", "true"},
    {"fwd_tflops", FieldType::Number, "forward throughput", "TFLOP/s", "", 0.001},
    {"bwd_tflops", FieldType::Number, "backward throughput", "TFLOP/s", "", 0.001},
    {"source", FieldType::String, "where the point comes from"},
};
constexpr FieldDef kMemoryFields[] = {
    {"copy_tbps", FieldType::Number, "device-to-device copy bandwidth", "TB/s", "", 0.001},
    {"elementwise_tbps", FieldType::Number, "norm/elementwise kernel bandwidth", "TB/s", "copy_tbps", 0.001},
    {"source", FieldType::String, "where the figures come from"},
};
constexpr FieldDef kCollectivePointFields[] = {
    {"op", FieldType::String, "nccl-tests operation", "", "", -1e300, 1e300,
     "all_reduce|all_gather|reduce_scatter|all_to_all|broadcast|reduce|send_recv"},
    {"ranks", FieldType::Integer, "GPUs in the group", "", "", 2, 1 << 24},
    {"group", FieldType::String, "what the group spans", "", "", -1e300, 1e300, "node|rail|all"},
    {"algorithm", FieldType::String, "NCCL's algorithm as reported or forced (Ring, Tree, NVLS)", "", "\"\""},
    {"bytes", FieldType::Number, "nccl-tests size", "B", "", 0},
    {"time_us", FieldType::Number, "time of one operation", "us", "", 0},
    {"busbw_gbps", FieldType::Number, "bus bandwidth (nccl-tests convention)", "GB/s", "", 0},
    {"source", FieldType::String, "where the point comes from"},
};
constexpr FieldDef kFactorFields[] = {
    {"compute", FieldType::Number, "multiplier on achieved compute throughput", "", "1", 0.1, 2},
    {"communication", FieldType::Number, "multiplier on achieved communication bandwidth", "", "1", 0.1, 2},
    {"overlap", FieldType::Number, "multiplier on the communication that overlaps compute", "", "1", 0, 2},
};

struct GemmPoint {
    double lm, ln, lk, efficiency;  // log2 of the dimensions; achieved / peak
};
struct AttentionPoint {
    double lseq, head_dim, fwd_efficiency, bwd_efficiency;
    bool causal;
};

double log2d(std::int64_t v) { return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1))); }

// Inverse-distance weighting (power 2): exact at a measured point, a weighted mean elsewhere.
template <class Points, class Distance, class Value>
double idw(const Points& points, Distance distance, Value value) {
    double weights = 0, sum = 0;
    for (const auto& p : points) {
        const double d2 = distance(p);
        if (d2 < 1e-12) return value(p);
        const double w = 1.0 / (d2 * d2);
        weights += w;
        sum += w * value(p);
    }
    return weights > 0 ? sum / weights : 0.0;
}
}  // namespace

struct CalibrationProfile::Data {
    GpuSpec gpu;
    std::map<Precision, std::vector<GemmPoint>> gemm;
    std::vector<AttentionPoint> attention;
    double memory_tbps = 0;
    CommCalibration comm;
    ProfileFactors factors;
    std::vector<CollectivePoint> collectives;
    std::string source;
};

std::span<const FieldDef> profile_fields() { return kProfileFields; }

namespace {
std::vector<GemmPoint> parse_gemm_points(const json& array, const std::string& path, double peak) {
    if (!array.is_array()) throw InputError(path, value_text(array), "must be an array of {m, n, k, tflops}");
    std::vector<GemmPoint> points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        ObjectReader r(array[i], path + "/" + std::to_string(i), kGemmPointFields);
        const double tflops = r.require_number("tflops");
        if (tflops > peak * 1.02)
            throw InputError(r.path_of("tflops"), std::to_string(tflops),
                             "exceeds the GPU's dense peak (" + std::to_string(peak) + " TFLOP/s)");
        points.push_back({log2d(r.require_integer("m")), log2d(r.require_integer("n")),
                          log2d(r.require_integer("k")), tflops / peak});
    }
    return points;
}

std::vector<CollectivePoint> parse_collective_points(const json& array, const std::string& path) {
    if (!array.is_array()) throw InputError(path, value_text(array), "must be an array");
    std::vector<CollectivePoint> points;
    for (std::size_t i = 0; i < array.size(); ++i) {
        ObjectReader r(array[i], path + "/" + std::to_string(i), kCollectivePointFields);
        CollectivePoint p;
        // The field table's choices have checked both names.
        p.op = *parse_nccl_test_op(r.require_string("op"));
        const std::string group = r.require_string("group");
        p.group = group == "node" ? GroupKind::Node : group == "rail" ? GroupKind::Rail : GroupKind::All;
        p.ranks = r.require_integer("ranks");
        p.algorithm = r.string("algorithm").value_or("");
        p.bytes = r.require_number("bytes");
        p.time_us = r.require_number("time_us");
        p.busbw_gbps = r.require_number("busbw_gbps");
        points.push_back(p);
    }
    return points;
}
}  // namespace

CalibrationProfile CalibrationProfile::from_json(const json& document, const std::string& path, const GpuSpec& gpu) {
    // A profile may start from another one ("preset": "A100-SXM4-80GB"): a GPU variant that
    // differs in memory only, say.
    const json doc = resolve_inherited(document, "calibration", path);
    ObjectReader r(doc, path, kProfileFields);
    auto data = std::make_shared<Data>();
    data->gpu = gpu;
    const std::string name = r.require_string("gpu");
    if (name != gpu.name)
        throw InputError(r.path_of("gpu"), "\"" + name + "\"", "profile is for another GPU than the cluster's (" + gpu.name + ")");
    if (const json* prov = r.raw("provenance"); prov && prov->contains("summary")) {
        const json& summary = (*prov)["summary"];
        if (!summary.is_string())
            throw InputError(r.path_of("provenance") + "/summary", value_text(summary), "must be a string");
        data->source = summary.get<std::string>();
    }

    const json* gemm = r.raw("gemm");
    if (!gemm || !gemm->is_object() || gemm->empty())
        throw InputError(r.path_of("gemm"), "", "is required: GEMM points for at least one precision");
    for (auto it = gemm->begin(); it != gemm->end(); ++it) {
        const std::string gp = r.path_of("gemm") + "/" + it.key();
        Precision p;
        try {
            p = parse_precision(it.key());
        } catch (const InputError&) {
            throw InputError(gp, "", "unknown precision; use bf16, fp16 or fp8");
        }
        if (gpu.peak_tflops(p) <= 0 || (p == Precision::Fp8 && gpu.fp8_tflops <= 0))
            throw InputError(gp, "", gpu.name + " has no " + it.key() + " tensor cores");
        data->gemm[p] = parse_gemm_points(it.value(), gp, gpu.peak_tflops(p));
    }

    const json* attention = r.raw("attention");
    if (!attention || attention->empty()) throw InputError(r.path_of("attention"), "", "is required: flash attention points");
    const double peak16 = gpu.bf16_tflops;
    for (std::size_t i = 0; i < attention->size(); ++i) {
        ObjectReader a((*attention)[i], r.path_of("attention") + "/" + std::to_string(i), kAttentionFields);
        data->attention.push_back({log2d(a.require_integer("seq")), static_cast<double>(a.require_integer("head_dim")),
                                   a.require_number("fwd_tflops") / peak16, a.require_number("bwd_tflops") / peak16,
                                   a.boolean("causal").value_or(true)});
    }

    const json* memory = r.raw("memory");
    if (!memory) throw InputError(r.path_of("memory"), "", "is required: {copy_tbps}");
    ObjectReader m(*memory, r.path_of("memory"), kMemoryFields);
    data->memory_tbps = m.number("elementwise_tbps").value_or(m.require_number("copy_tbps"));
    if (data->memory_tbps > gpu.hbm_tbps * 1.02)
        throw InputError(m.path_of("copy_tbps"), std::to_string(data->memory_tbps), "exceeds the GPU's HBM bandwidth");

    if (const json* comm = r.raw("comm")) data->comm = parse_comm_calibration(*comm, r.path_of("comm"));
    if (const json* f = r.raw("factors")) {
        ObjectReader fr(*f, r.path_of("factors"), kFactorFields);
        data->factors.compute = fr.number("compute").value_or(1.0);
        data->factors.communication = fr.number("communication").value_or(1.0);
        data->factors.overlap = fr.number("overlap").value_or(1.0);
    }
    if (const json* c = r.raw("collectives")) data->collectives = parse_collective_points(*c, r.path_of("collectives"));
    CalibrationProfile profile;
    profile.data_ = std::move(data);
    return profile;
}

CalibrationProfile CalibrationProfile::load(const std::filesystem::path& file, const GpuSpec& gpu) {
    return from_json(load_json_file(file, "/calibration"), "/calibration", gpu);
}

CalibrationProfile CalibrationProfile::for_gpu(const GpuSpec& gpu) {
    return from_json(load_preset("calibration", gpu.name, "/cluster/gpu"), "/calibration", gpu);
}

double CalibrationProfile::gemm_tflops(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) const {
    const Data& d = *data_;
    auto it = d.gemm.find(p);
    if (it == d.gemm.end()) it = d.gemm.find(p == Precision::Fp16 ? Precision::Bf16 : Precision::Fp16);
    if (it == d.gemm.end()) it = d.gemm.begin();
    const double lm = log2d(m), ln = log2d(n), lk = log2d(k);
    const double efficiency = idw(
        it->second,
        [&](const GemmPoint& g) { return (g.lm - lm) * (g.lm - lm) + (g.ln - ln) * (g.ln - ln) + (g.lk - lk) * (g.lk - lk); },
        [](const GemmPoint& g) { return g.efficiency; });
    const double peak = d.gpu.peak_tflops(p);
    // Interpolating between measured shapes cannot see that a thin GEMM (an attention score
    // product over a head of 64-128, a small expert) waits on memory: cap it at the roofline of
    // reading both operands and writing the 16-bit result once.
    const double bytes = (double(m) * double(k) + double(k) * double(n)) * precision_bytes(p) + double(m) * double(n) * 2.0;
    const double roofline = 2.0 * double(m) * double(n) * double(k) / (bytes / (memory_tbps() * 1e12)) / 1e12;
    return std::min({peak, efficiency * peak * d.factors.compute, roofline});
}

double CalibrationProfile::attention_tflops(Precision, std::int64_t seq, std::int64_t head_dim, bool causal,
                                            bool backward) const {
    const Data& d = *data_;
    const double ls = log2d(seq), hd = static_cast<double>(head_dim);
    bool any_same_mask = std::any_of(d.attention.begin(), d.attention.end(), [&](const AttentionPoint& a) { return a.causal == causal; });
    const double efficiency = idw(
        d.attention,
        [&](const AttentionPoint& a) {
            const double mask = (any_same_mask && a.causal != causal) ? 100.0 : 0.0;
            const double dh = (a.head_dim - hd) / 64.0;
            return (a.lseq - ls) * (a.lseq - ls) + dh * dh + mask;
        },
        [&](const AttentionPoint& a) { return backward ? a.bwd_efficiency : a.fwd_efficiency; });
    return std::min(d.gpu.bf16_tflops, efficiency * d.gpu.bf16_tflops * d.factors.compute);
}

double CalibrationProfile::memory_tbps() const { return data_->memory_tbps * data_->factors.compute; }
const CommCalibration& CalibrationProfile::comm() const { return data_->comm; }
const ProfileFactors& CalibrationProfile::factors() const { return data_->factors; }
const std::vector<CollectivePoint>& CalibrationProfile::collectives() const { return data_->collectives; }
const GpuSpec& CalibrationProfile::gpu() const { return data_->gpu; }
const std::string& CalibrationProfile::source() const { return data_->source; }

CalibrationProfile CalibrationProfile::with_factors(const ProfileFactors& factors) const {
    auto copy = std::make_shared<Data>(*data_);
    copy->factors = factors;
    CalibrationProfile p;
    p.data_ = std::move(copy);
    return p;
}

}  // namespace sextant
