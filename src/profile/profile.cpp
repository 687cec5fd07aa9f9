#include "profile/profile.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/hash_mix.hpp"
#include "profile/collective_sweeps.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr FieldDef kProfileFields[] = {
    {"schema", FieldType::String, "profile format version", "", "", -1e300, 1e300, "sextant-calibration/1"},
    {"gpu", FieldType::String, "GPU type the profile describes"},
    {"provenance", FieldType::Object, "how and where it was measured, or the published sources"},
    {"gemm", FieldType::Object, "GEMM points per precision recipe (bf16, fp16, fp8, fp8_rowwise, fp8_blockwise, mxfp8, nvfp4): {bf16: [{m, n, k, tflops}], ...}"},
    {"attention", FieldType::Array, "flash attention points [{seq, head_dim, head_dim_v, heads, kv_heads, causal, fwd_tflops, bwd_tflops}]"},
    {"attention_kernel", FieldType::String,
     "the flash kernel the attention points measured (fused: not named; flash-attention-2; cudnn-fused): a runtime running that kernel reads "
     "them without the fitted compute factor", "", "fused", -1e300, 1e300, "fused|flash-attention-2|cudnn-fused"},
    {"memory", FieldType::Object, "{copy_tbps, elementwise_tbps, buffer_bytes}"},
    {"collectives", FieldType::Array, "measured sweeps [{op, span, ranks, nodes, provenance, points: [{bytes, time_us, busbw_gbps}]}]"},
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
    {"head_dim", FieldType::Integer, "query and key head size", "", "", 1, 1 << 16},
    {"head_dim_v", FieldType::Integer, "value head size (MLA: 128 against 192 for queries and keys)", "", "head_dim", 1, 1 << 16},
    {"batch", FieldType::Integer, "sequences in the measured batch", "", "", 1, 1 << 30},
    {"heads", FieldType::Integer, "query heads", "", "", 1, 1 << 16},
    {"kv_heads", FieldType::Integer, "key/value heads", "", "", 1, 1 << 16},
    {"causal", FieldType::Boolean, "causal mask", "", "true"},
    {"fwd_tflops", FieldType::Number, "forward throughput", "TFLOP/s", "", 0.001},
    {"bwd_tflops", FieldType::Number, "backward throughput", "TFLOP/s", "", 0.001},
    {"kernel", FieldType::String,
     "the kernel this point measured, where it is not the profile's attention_kernel (a runtime running it reads these points)", "",
     "attention_kernel", -1e300, 1e300, "fused|flash-attention-2|cudnn-fused"},
    {"source", FieldType::String, "where the point comes from"},
};
constexpr FieldDef kMemoryFields[] = {
    {"copy_tbps", FieldType::Number, "device-to-device copy bandwidth", "TB/s", "", 0.001},
    {"elementwise_tbps", FieldType::Number, "norm/elementwise kernel bandwidth", "TB/s", "copy_tbps", 0.001},
    {"buffer_bytes", FieldType::Integer, "the buffer a measurement streamed (sextant-calibrate: its largest, past the L2)", "B", "", 1, 1e15},
    {"source", FieldType::String, "where the figures come from"},
};
constexpr FieldDef kFactorFields[] = {
    {"compute", FieldType::Number, "multiplier on achieved compute throughput", "", "1", 0.1, 2},
    {"communication", FieldType::Number, "multiplier on achieved communication bandwidth", "", "1", 0.1, 2},
    {"overlap", FieldType::Number, "multiplier on the communication that overlaps compute", "", "1", 0, 2},
    {"moe", FieldType::Number, "multiplier on the MoE expert path's throughput (grouped GEMMs, routing, permutation)", "", "1", 0.1, 2},
    {"moe_host_ms", FieldType::Number, "host issue time added to the runtime's for a dropless MoE layer, forward and backward of one microbatch",
     "ms", "0", 0, 1000},
    {"moe_overlap_host", FieldType::Number, "multiplier on that host time under the all-to-all overlap (ep_a2a_overlap)", "", "1", 0.1, 10},
};

struct GemmPoint {
    double lm, ln, lk, efficiency;  // log2 of the dimensions; achieved / the table's peak
};
struct AttentionPoint {
    double lseq;
    double head_dim, head_dim_split;  // mean of the query-key and value head sizes; their difference
    double lgroup;                    // log2 of query heads per key-value head (GQA)
    double fwd_efficiency, bwd_efficiency;
    bool causal;
};

// A GEMM table's name (training.precision's recipe names) and the datasheet peak it is read
// against: the scaled FP8 variants and MXFP8 run on the FP8 tensor cores; NVFP4 on the FP4 ones
// (the GPU's fp4_tflops: twice FP8 on B200 and GB200, three times on B300 and GB300). The first
// table of a kind of tensor core is the one a GEMM of those operands reads (nvfp4 for FP4: the
// only FP4 recipe the frameworks run).
struct GemmTable {
    std::string_view name;
    Precision tensor_cores;
};
constexpr GemmTable kGemmTables[] = {{"bf16", Precision::Bf16},        {"fp16", Precision::Fp16},
                                     {"fp8", Precision::Fp8},          {"fp8_rowwise", Precision::Fp8},
                                     {"fp8_blockwise", Precision::Fp8}, {"mxfp8", Precision::Fp8},
                                     {"nvfp4", Precision::Fp4}};

const GemmTable* gemm_table(std::string_view name) {
    for (const GemmTable& t : kGemmTables)
        if (t.name == name) return &t;
    return nullptr;
}

std::string_view operands_table(Precision p) {
    for (const GemmTable& t : kGemmTables)
        if (t.tensor_cores == p) return t.name;
    return "";
}

// The table a scaled FP8 recipe reads when the profile has none of its own: tensor-wise FP8's.
// An FP4 GEMM without a table of its own is derived from FP8's (gemm_tflops_uncached).
std::string_view fallback_table(std::string_view name) {
    if (name == "fp8_rowwise" || name == "fp8_blockwise" || name == "mxfp8") return "fp8";
    return "";
}

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
    std::map<std::string, std::vector<GemmPoint>, std::less<>> gemm;  // by table name
    // Attention points by the kernel they measured (AttentionKernel's order); the profile's own
    // kernel (attention_kernel) has at least one, others may.
    std::array<std::vector<AttentionPoint>, std::size(kAttentionKernelNames)> attention;
    AttentionKernel attention_kernel = AttentionKernel::Fused;
    double memory_tbps = 0;
    CommCalibration comm;
    std::vector<CollectiveSweep> collectives;
    ProfileFactors factors;
    std::string source;
    // Unique per Data ever built (from_json, with_factors): the GEMM memo's key, which a later
    // profile allocated at a freed one's address must not match.
    std::uint64_t serial = 0;
};

namespace {
std::atomic<std::uint64_t> g_profile_serial{0};

// One remembered GEMM rate per slot of a per-thread direct-mapped memo. The planner asks for the
// same few hundred shapes across millions of layouts (the DeepSeek-V3 screen spent 20% of its
// instructions in the inverse-distance weighting over every measured point), and the rate is a
// pure function of the profile and the query, so a hit returns the same bits.
struct GemmMemo {
    std::uint64_t serial = 0;  // 0: empty (serials start at 1)
    std::int64_t m = 0, n = 0, k = 0;
    Precision operands = Precision::Bf16;
    std::uint8_t recipe_size = 0;
    std::array<char, 30> recipe{};  // recipe names are short; longer ones are not memoised
    double tflops = 0;
};
}  // namespace

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
        const GemmTable* table = gemm_table(it.key());
        if (!table) throw InputError(gp, "", "unknown GEMM precision; use bf16, fp16, fp8, fp8_rowwise, fp8_blockwise, mxfp8 or nvfp4");
        if (gpu.peak_tflops(table->tensor_cores) <= 0 || (table->tensor_cores == Precision::Fp8 && gpu.fp8_tflops <= 0) ||
            (table->tensor_cores == Precision::Fp4 && gpu.fp4_tflops <= 0))
            throw InputError(gp, "", gpu.name + " has no " + it.key() + " tensor cores");
        data->gemm[it.key()] = parse_gemm_points(it.value(), gp, gpu.peak_tflops(table->tensor_cores));
    }

    // The table's choices refuse "unfused" and misspellings: points of a flash kernel, named or not.
    if (const auto kernel = r.string("attention_kernel")) data->attention_kernel = enum_from_name<AttentionKernel>(*kernel).value();
    const json* attention = r.raw("attention");
    if (!attention || attention->empty()) throw InputError(r.path_of("attention"), "", "is required: flash attention points");
    const double peak16 = gpu.bf16_tflops;
    for (std::size_t i = 0; i < attention->size(); ++i) {
        ObjectReader a((*attention)[i], r.path_of("attention") + "/" + std::to_string(i), kAttentionFields);
        const auto qk = static_cast<double>(a.require_integer("head_dim"));
        const auto v = static_cast<double>(a.integer("head_dim_v").value_or(a.require_integer("head_dim")));
        const auto heads = a.integer("heads"), kv_heads = a.integer("kv_heads");
        if (heads.has_value() != kv_heads.has_value())
            throw InputError(a.path(), "", "give heads and kv_heads together, or neither");
        if (heads && *heads % *kv_heads != 0)
            throw InputError(a.path_of("kv_heads"), std::to_string(*kv_heads), "must divide heads (" + std::to_string(*heads) + ")");
        const double group = heads ? static_cast<double>(*heads / *kv_heads) : 1.0;
        const auto named = a.string("kernel");
        const AttentionKernel kernel = named ? enum_from_name<AttentionKernel>(*named).value() : data->attention_kernel;
        data->attention[static_cast<std::size_t>(kernel)].push_back(
            {log2d(a.require_integer("seq")), 0.5 * (qk + v), qk - v, std::log2(group), a.require_number("fwd_tflops") / peak16,
             a.require_number("bwd_tflops") / peak16, a.boolean("causal").value_or(true)});
    }
    if (data->attention[static_cast<std::size_t>(data->attention_kernel)].empty())
        throw InputError(r.path_of("attention"), "", "needs points of the profile's attention_kernel (" +
                                                         std::string(name_of(data->attention_kernel)) + "): points of other kernels only");

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
        data->factors.moe = fr.number("moe").value_or(1.0);
        data->factors.moe_host_ms = fr.number("moe_host_ms").value_or(0.0);
        data->factors.moe_overlap_host = fr.number("moe_overlap_host").value_or(1.0);
    }
    if (const json* c = r.raw("collectives")) data->collectives = parse_collective_sweeps(*c, r.path_of("collectives"));
    data->serial = ++g_profile_serial;
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
    const std::string_view table = operands_table(p);
    return table.empty() ? gemm_tflops(precision_name(p), p, m, n, k) : gemm_tflops(table, p, m, n, k);
}

double CalibrationProfile::gemm_tflops(std::string_view recipe, Precision operands, std::int64_t m, std::int64_t n,
                                       std::int64_t k) const {
    const Data& d = *data_;
    constexpr std::size_t kSlots = 4096;
    thread_local std::array<GemmMemo, kSlots> memo;
    GemmMemo* slot = nullptr;
    if (recipe.size() <= GemmMemo{}.recipe.size()) {
        HashMix h(d.serial);
        for (const char c : recipe) h.add(static_cast<unsigned char>(c));
        h.add(static_cast<std::uint64_t>(operands));
        h.add(static_cast<std::uint64_t>(m));
        h.add(static_cast<std::uint64_t>(n));
        h.add(static_cast<std::uint64_t>(k));
        slot = &memo[h.value() % kSlots];
        if (slot->serial == d.serial && slot->m == m && slot->n == n && slot->k == k && slot->operands == operands &&
            slot->recipe_size == recipe.size() && std::memcmp(slot->recipe.data(), recipe.data(), recipe.size()) == 0)
            return slot->tflops;
    }
    const double tflops = gemm_tflops_uncached(recipe, operands, m, n, k);
    if (slot) {
        *slot = {d.serial, m, n, k, operands, static_cast<std::uint8_t>(recipe.size()), {}, tflops};
        std::memcpy(slot->recipe.data(), recipe.data(), recipe.size());
    }
    return tflops;
}

double CalibrationProfile::gemm_tflops_uncached(std::string_view recipe, Precision operands, std::int64_t m, std::int64_t n,
                                                std::int64_t k) const {
    const Data& d = *data_;
    auto it = d.gemm.find(recipe);
    if (it == d.gemm.end() && operands == Precision::Fp4) return fp4_from_fp8(m, n, k);
    for (std::string_view name = fallback_table(recipe); it == d.gemm.end() && !name.empty(); name = fallback_table(name))
        it = d.gemm.find(name);
    if (it == d.gemm.end()) it = d.gemm.find(precision_name(operands));
    if (it == d.gemm.end()) it = d.gemm.find(operands == Precision::Fp16 ? "bf16" : "fp16");
    if (it == d.gemm.end()) it = d.gemm.begin();
    const double lm = log2d(m), ln = log2d(n), lk = log2d(k);
    const double efficiency = idw(
        it->second,
        [&](const GemmPoint& g) { return (g.lm - lm) * (g.lm - lm) + (g.ln - ln) * (g.ln - ln) + (g.lk - lk) * (g.lk - lk); },
        [](const GemmPoint& g) { return g.efficiency; });
    const double peak = d.gpu.peak_tflops(operands);
    // Interpolating between measured shapes cannot see that a thin GEMM (an attention score
    // product over a head of 64-128, a small expert) waits on memory: cap it at the roofline of
    // reading both operands and writing the 16-bit result once.
    const double bytes = (double(m) * double(k) + double(k) * double(n)) * precision_bytes(operands) + double(m) * double(n) * 2.0;
    const double roofline = 2.0 * double(m) * double(n) * double(k) / (bytes / (memory_tbps() * 1e12)) / 1e12;
    return std::min({peak, efficiency * peak * d.factors.compute, roofline});
}

// No FP4 GEMM measured: the FP8 GEMM of the shape, whose tensor-core time (its table's share of
// FP8 peak; the rest is the kernel's prologue, epilogue, scales and data movement) runs at FP4's
// peak instead. On a B300, where the FP4 peak is three times FP8's, this prices Transformer
// Engine's kernel-only NVFP4 GEMM at 0.58 of the per-tensor FP8 one's time (share 0.63);
// measured, 2,815 / 5,094 TFLOP/s = 0.55 (docs/examples/gemm_profiling, TransformerEngine@d0067d0).
// B200 and GB200 double FP8.
double CalibrationProfile::fp4_from_fp8(std::int64_t m, std::int64_t n, std::int64_t k) const {
    const GpuSpec& gpu = data_->gpu;
    const double fp8 = gemm_tflops(Precision::Fp8, m, n, k);
    if (gpu.fp4_tflops <= 0) return fp8;  // no FP4 tensor cores: the recipe is refused before this
    const double share = fp8 / (gpu.fp8_tflops * data_->factors.compute);
    return fp8 / (1.0 - share * (1.0 - gpu.fp8_tflops / gpu.fp4_tflops));
}

double CalibrationProfile::attention_tflops(Precision p, std::int64_t seq, std::int64_t head_dim, bool causal,
                                            bool backward) const {
    return attention_tflops(p, {seq, head_dim, head_dim, 1, causal, backward});
}

double CalibrationProfile::attention_tflops(Precision p, const AttentionQuery& q) const {
    return std::min(data_->gpu.bf16_tflops, measured_attention_tflops(p, q) * data_->factors.compute);
}

double CalibrationProfile::measured_attention_tflops(Precision p, std::int64_t seq, std::int64_t head_dim, bool causal, bool backward) const {
    return measured_attention_tflops(p, {seq, head_dim, head_dim, 1, causal, backward});
}

double CalibrationProfile::measured_attention_tflops(Precision p, const AttentionQuery& q) const {
    return measured_attention_tflops(data_->attention_kernel, p, q);
}

bool CalibrationProfile::measures_attention(AttentionKernel kernel) const {
    return kernel != AttentionKernel::Fused && !data_->attention[static_cast<std::size_t>(kernel)].empty();
}

double CalibrationProfile::measured_attention_tflops(AttentionKernel kernel, Precision, const AttentionQuery& q) const {
    const Data& d = *data_;
    const std::vector<AttentionPoint>& points = d.attention[static_cast<std::size_t>(kernel)];
    // A flash kernel's throughput levels off with the sequence (FlashAttention-2 and -3 papers'
    // figures: flat from 4k-8k to 16k, the longest they measure): past the profile's longest
    // measured sequence the kernel runs at that length's rate, where a weighted mean of the
    // table would drift toward its short-sequence points.
    double longest = 0;
    for (const AttentionPoint& a : points) longest = std::max(longest, a.lseq);
    const double ls = points.empty() ? log2d(q.seq) : std::min(log2d(q.seq), longest);
    const double hd = 0.5 * double(q.head_dim + q.head_dim_v), split = double(q.head_dim - q.head_dim_v);
    const double lgroup = std::log2(static_cast<double>(std::max<std::int64_t>(q.group, 1)));
    const bool any_same_mask = std::any_of(points.begin(), points.end(), [&](const AttentionPoint& a) { return a.causal == q.causal; });
    const double efficiency = idw(
        points,
        [&](const AttentionPoint& a) {
            const double mask = (any_same_mask && a.causal != q.causal) ? 100.0 : 0.0;
            const double dh = (a.head_dim - hd) / 64.0, ds = (a.head_dim_split - split) / 64.0, dg = a.lgroup - lgroup;
            return (a.lseq - ls) * (a.lseq - ls) + dh * dh + ds * ds + dg * dg + mask;
        },
        [&](const AttentionPoint& a) { return q.backward ? a.bwd_efficiency : a.fwd_efficiency; });
    return std::min(d.gpu.bf16_tflops, efficiency * d.gpu.bf16_tflops);
}

AttentionKernel CalibrationProfile::attention_kernel() const { return data_->attention_kernel; }

double CalibrationProfile::memory_tbps() const { return data_->memory_tbps * data_->factors.compute; }
const CommCalibration& CalibrationProfile::comm() const { return data_->comm; }
const std::vector<CollectiveSweep>& CalibrationProfile::collective_sweeps() const { return data_->collectives; }
const ProfileFactors& CalibrationProfile::factors() const { return data_->factors; }
const GpuSpec& CalibrationProfile::gpu() const { return data_->gpu; }
const std::string& CalibrationProfile::source() const { return data_->source; }

CalibrationProfile CalibrationProfile::with_factors(const ProfileFactors& factors) const {
    auto copy = std::make_shared<Data>(*data_);
    copy->factors = factors;
    copy->serial = ++g_profile_serial;
    CalibrationProfile p;
    p.data_ = std::move(copy);
    return p;
}

}  // namespace sextant
