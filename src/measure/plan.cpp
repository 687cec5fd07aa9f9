#include "plan.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include "model/layer_gemms.hpp"
#include "spec/scenario.hpp"

namespace sextant::measure {

namespace {
// Square GEMMs over the sizes, plus the shapes published sweeps report for comparison
// (reference-data.md 13a).
void add_grid(MeasurePlan& plan, const std::string& recipe, const std::vector<std::int64_t>& sizes) {
    for (std::int64_t m : sizes)
        for (std::int64_t n : sizes)
            for (std::int64_t k : sizes) plan.gemm.push_back({recipe, m, n, k, "grid"});
    plan.gemm.push_back({recipe, 1024, 2145, 1024, "grid"});
    plan.gemm.push_back({recipe, 6144, 12288, 12288, "grid"});
    plan.gemm.push_back({recipe, 802816, 192, 768, "grid"});
}

// A GEMM and the two of its backward pass, each once.
void add_linear(MeasurePlan& plan, std::set<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>>& seen,
                const std::string& recipe, const LayerGemm& g, const std::string& at) {
    const std::tuple<std::int64_t, std::int64_t, std::int64_t, const char*> passes[] = {
        {g.m, g.n, g.k, "forward"}, {g.m, g.k, g.n, "input gradient"}, {g.k, g.n, g.m, "weight gradient"}};
    for (const auto& [m, n, k, pass] : passes)
        if (m > 0 && n > 0 && k > 0 && seen.insert({recipe, m, n, k}).second)
            plan.gemm.push_back({recipe, m, n, k, g.name + " " + pass + at});
}

std::vector<std::int64_t> tp_degrees(const Scenario& s) {
    if (s.layout.tp) return {*s.layout.tp};
    std::vector<std::int64_t> out;
    for (std::int64_t tp : {1, 2, 4, 8})
        if (s.model.heads % tp == 0 && (s.model.attention == AttentionKind::MultiLatent || s.model.kv_heads % tp == 0)) out.push_back(tp);
    return out;
}
}  // namespace

MeasurePlan default_plan(const PlanOptions& options) {
    MeasurePlan plan;
    plan.max_bytes = options.max_bytes;
    const std::vector<std::int64_t> quick = {1024, 4096, 8192};
    const std::vector<std::int64_t> sizes = options.quick ? quick : std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192, 16384};
    add_grid(plan, "bf16", sizes);
    add_grid(plan, "fp16", sizes);
    if (options.fp8) add_grid(plan, "fp8", sizes);
    // The scaled variants differ from their base format by the scale handling, not by how the
    // tensor cores fill: a coarser grid each.
    std::vector<std::string> variants;
    if (options.fp8) variants = {"fp8_rowwise", "fp8_blockwise"};
    if (options.block_scaled) variants.insert(variants.end(), {"mxfp8", "nvfp4"});
    for (const auto& recipe : variants) add_grid(plan, recipe, quick);
    // 16k tokens per configuration: multi-head (head 64 and 128), grouped-query (64 query heads
    // on 8 key-value heads: Llama 3 70B and 405B at TP 1), multi-head latent (DeepSeek-V3's 192
    // and 128, its 128 heads at TP 8); causal and not; forward and backward each.
    struct Kind {
        std::int64_t heads, kv_heads, head_dim, head_dim_v;
    };
    const Kind kinds[] = {{32, 32, 64, 64}, {16, 16, 128, 128}, {64, 8, 128, 128}, {16, 16, 192, 128}};
    for (std::int64_t seq : {512, 1024, 2048, 4096, 8192, 16384})
        for (const Kind& k : kinds)
            for (bool causal : {false, true})
                plan.attention.push_back({16384 / seq, seq, k.heads, k.kv_heads, k.head_dim, k.head_dim_v, causal});
    for (std::size_t bytes = std::size_t(1) << 20; bytes <= (std::size_t(4) << 30); bytes *= 4) plan.memory_bytes.push_back(bytes);
    plan.collectives = {NcclTestOp::AllReduce, NcclTestOp::AllGather, NcclTestOp::ReduceScatter,
                        NcclTestOp::AllToAll, NcclTestOp::Broadcast, NcclTestOp::SendRecv};
    if (options.quick) plan.reps = 20;
    return plan;
}

void add_scenario_shapes(MeasurePlan& plan, const Scenario& s) {
    const ModelSpec& m = s.model;
    const std::int64_t cp = s.layout.cp.value_or(1), ep = s.layout.ep.value_or(1), microbatch = s.layout.microbatch.value_or(1);
    const std::int64_t tokens = microbatch * s.training.seq_len / cp;
    const std::string recipe(s.training.precision.name);
    // The output projection stays in 16 bits under FP8 recipes (Megatron-Core's output layer is
    // not a Transformer Engine module; torchtitan's Float8 conversion skips it), as the cost model has it.
    const std::string logits_recipe = recipe == "fp16" ? "fp16" : "bf16";
    std::set<std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>> seen;
    for (const auto& g : plan.gemm) seen.insert({g.recipe, g.m, g.n, g.k});
    const bool mla = m.attention == AttentionKind::MultiLatent;
    const std::int64_t qk_dim = mla ? m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim : m.head_dim;
    const std::int64_t v_dim = mla ? m.mla.v_head_dim : m.head_dim;
    for (std::int64_t tp : tp_degrees(s)) {
        const std::string at = " (tp " + std::to_string(tp) + (ep > 1 ? ", ep " + std::to_string(ep) : "") + ")";
        // The first layer of each kind covers every kind's GEMMs.
        std::vector<std::int64_t> kinds;
        std::array<bool, kLayerKinds> seen_kind{};
        for (std::int64_t layer = 0; layer < m.layers; ++layer)
            if (!seen_kind[m.layer_kind(layer)]) {
                seen_kind[m.layer_kind(layer)] = true;
                kinds.push_back(layer);
            }
        for (std::int64_t layer : kinds)
            for (const LayerGemm& g : layer_gemms(m, layer, tokens, tp, ep)) add_linear(plan, seen, recipe, g, at);
        add_linear(plan, seen, logits_recipe, logits_gemm(m, tokens, tp), at);
        const std::int64_t heads = m.heads / tp, kv = mla ? heads : std::max<std::int64_t>(m.kv_heads / tp, 1);
        // Context parallelism runs attention on blocks of seq / cp: causal on the diagonal, full off it.
        plan.attention.push_back({microbatch, s.training.seq_len / cp, heads, kv, qk_dim, v_dim, true});
        if (cp > 1) plan.attention.push_back({microbatch, s.training.seq_len / cp, heads, kv, qk_dim, v_dim, false});
    }
}

std::string describe(const MeasurePlan& plan) {
    std::ostringstream out;
    std::vector<std::string> recipes;
    for (const GemmShape& g : plan.gemm)
        if (std::find(recipes.begin(), recipes.end(), g.recipe) == recipes.end()) recipes.push_back(g.recipe);
    out << "GEMM (cuBLASLt, " << plan.warmup << " warm-up, median of " << plan.reps << "): " << plan.gemm.size() << " shapes in";
    for (const auto& r : recipes) out << " " << r;
    out << "\n";
    if (std::find(recipes.begin(), recipes.end(), "mxfp8") != recipes.end())
        out << "  (mxfp8 and nvfp4 run where cuBLASLt offers them: Blackwell, compute capability 10.0 and later)\n";
    for (const GemmShape& g : plan.gemm)
        if (g.origin != "grid") out << "  " << g.recipe << " " << g.m << "x" << g.n << "x" << g.k << "  " << g.origin << "\n";
    out << "attention (cuDNN SDPA graphs, BF16, forward and backward): " << plan.attention.size() << " configurations\n";
    for (const AttentionShape& a : plan.attention)
        out << "  batch " << a.batch << " seq " << a.seq << " heads " << a.heads << "/" << a.kv_heads << " head_dim " << a.head_dim
            << (a.head_dim_v != a.head_dim ? "/" + std::to_string(a.head_dim_v) : "") << (a.causal ? " causal" : "") << "\n";
    if (!plan.memory_bytes.empty())
        out << "memory: device-to-device copy and RMSNorm proxy at " << plan.memory_bytes.size() << " sizes, "
            << plan.memory_bytes.front() << " to " << plan.memory_bytes.back() << " B\n";
    out << "NCCL:";
    for (NcclTestOp op : plan.collectives) out << " " << nccl_test_op_name(op);
    out << " from " << plan.min_bytes << " to " << plan.max_bytes << " B, doubling\n";
    return out.str();
}

}  // namespace sextant::measure
