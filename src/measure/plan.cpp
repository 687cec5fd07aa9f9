#include "plan.hpp"

#include <algorithm>
#include <sstream>

#include "spec/scenario.hpp"

namespace sextant::measure {

MeasurePlan default_plan(const PlanOptions& options) {
    MeasurePlan plan;
    plan.max_bytes = options.max_bytes;
    std::vector<Precision> precisions = {Precision::Bf16, Precision::Fp16};
    if (options.fp8) precisions.push_back(Precision::Fp8);
    const std::vector<std::int64_t> sizes =
        options.quick ? std::vector<std::int64_t>{1024, 4096, 8192} : std::vector<std::int64_t>{512, 1024, 2048, 4096, 8192, 16384};
    for (Precision p : precisions) {
        for (std::int64_t m : sizes)
            for (std::int64_t n : sizes)
                for (std::int64_t k : sizes) plan.gemm.push_back({p, m, n, k, "grid"});
        // Shapes published sweeps report, for comparison (reference-data.md §13a).
        plan.gemm.push_back({p, 1024, 2145, 1024, "grid"});
        plan.gemm.push_back({p, 6144, 12288, 12288, "grid"});
        plan.gemm.push_back({p, 802816, 192, 768, "grid"});
    }
    for (std::int64_t seq : {512, 1024, 2048, 4096, 8192, 16384})
        for (std::int64_t head_dim : {64, 128})
            for (bool causal : {false, true})
                plan.attention.push_back({16384 / seq, seq, 2048 / head_dim, 2048 / head_dim, head_dim, causal});
    for (std::size_t bytes = std::size_t(1) << 20; bytes <= (std::size_t(4) << 30); bytes *= 4) plan.memory_bytes.push_back(bytes);
    plan.collectives = {NcclTestOp::AllReduce, NcclTestOp::AllGather, NcclTestOp::ReduceScatter,
                        NcclTestOp::AllToAll, NcclTestOp::Broadcast, NcclTestOp::SendRecv};
    if (options.quick) plan.reps = 20;
    return plan;
}

void add_scenario_shapes(MeasurePlan& plan, const Scenario& s) {
    const ModelSpec& m = s.model;
    const std::int64_t head_dim = m.head_dim > 0 ? m.head_dim : m.hidden / m.heads;
    const std::int64_t tokens = s.training.seq_len * s.layout.microbatch.value_or(1);
    const Precision p = Precision::Bf16;
    const std::int64_t ffn = m.is_moe() ? m.moe.expert_ffn_hidden : m.ffn_hidden;
    for (std::int64_t tp : {1, 2, 4, 8}) {
        if (m.heads % tp != 0) continue;
        const std::string at = " (tp " + std::to_string(tp) + ")";
        const std::int64_t kv = std::max<std::int64_t>(m.kv_heads / tp, 1);
        plan.gemm.push_back({p, tokens, (m.heads / tp + 2 * kv) * head_dim, m.hidden, "qkv" + at});
        plan.gemm.push_back({p, tokens, m.hidden, m.heads / tp * head_dim, "attention output" + at});
        if (ffn % tp == 0) {
            plan.gemm.push_back({p, tokens, 2 * ffn / tp, m.hidden, "mlp gate+up" + at});
            plan.gemm.push_back({p, tokens, m.hidden, ffn / tp, "mlp down" + at});
        }
        plan.gemm.push_back({p, tokens, (m.vocab + tp - 1) / tp, m.hidden, "logits" + at});
        plan.attention.push_back({s.layout.microbatch.value_or(1), s.training.seq_len, m.heads / tp, kv, head_dim, true});
    }
}

std::string describe(const MeasurePlan& plan) {
    std::ostringstream out;
    out << "GEMM (cuBLASLt, " << plan.warmup << " warm-up, median of " << plan.reps << "): " << plan.gemm.size() << " shapes\n";
    for (const GemmShape& g : plan.gemm)
        if (g.origin != "grid") out << "  " << precision_name(g.precision) << " " << g.m << "x" << g.n << "x" << g.k << "  " << g.origin << "\n";
    out << "attention (cuDNN SDPA graphs, BF16, forward and backward, heads = kv heads): " << plan.attention.size()
        << " configurations\n";
    for (const AttentionShape& a : plan.attention)
        out << "  batch " << a.batch << " seq " << a.seq << " heads " << a.heads << "/" << a.kv_heads << " head_dim "
            << a.head_dim << (a.causal ? " causal" : "") << "\n";
    out << "memory: device-to-device copy and RMSNorm proxy at " << plan.memory_bytes.size() << " sizes, "
        << plan.memory_bytes.front() << " to " << plan.memory_bytes.back() << " B\n";
    out << "NCCL:";
    for (NcclTestOp op : plan.collectives) out << " " << nccl_test_op_name(op);
    out << " from " << plan.min_bytes << " to " << plan.max_bytes << " B, doubling\n";
    return out.str();
}

}  // namespace sextant::measure
