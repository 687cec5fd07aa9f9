#include "cost/layer_costs.hpp"

#include <algorithm>

#include "memory/stage_params.hpp"
#include "model/params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

struct Shapes {
    double T;        // tokens of one microbatch on one GPU (sequence split by CP)
    double norm_T;   // tokens the norms and residuals see (sequence parallel splits them over TP)
    double tp;
};

Shapes shapes(const Scenario& s, const Layout& l) {
    Shapes x;
    x.T = d(l.microbatch) * d(s.training.seq_len) / d(l.cp);
    x.tp = d(l.tp);
    x.norm_T = l.sequence_parallel ? x.T / x.tp : x.T;
    return x;
}

class Kernels {
public:
    Kernels(const CostContext& ctx) : Kernels(ctx, ctx.scenario.training.precision) {}
    Kernels(const CostContext& ctx, Precision precision) : ctx_(ctx), precision_(precision) {}

    double gemm(double m, double n, double k) const {
        if (m < 1 || n < 1 || k < 1) return 0.0;
        const auto i = [](double v) { return static_cast<std::int64_t>(std::max(1.0, v)); };
        return 2.0 * m * n * k / (ctx_.profile.gemm_tflops(precision_, i(m), i(n), i(k)) * efficiency() * 1e12);
    }
    // Forward GEMM and its two backward GEMMs (input gradient, weight gradient).
    void linear(PhaseCost& fwd, PhaseCost& bwd, double m, double n, double k) const {
        fwd.gemm += gemm(m, n, k);
        bwd.gemm += gemm(m, k, n) + gemm(k, n, m);
    }
    // Norms, activations and residuals: the runtime's fusion scales the bytes they move.
    double memory(double bytes) const { return unfused(bytes * ctx_.runtime.memory_traffic_factor); }
    double unfused(double bytes) const { return bytes / (ctx_.profile.memory_tbps() * efficiency() * 1e12); }
    double flash(double flops, std::int64_t seq, std::int64_t head_dim, bool backward) const {
        return flops / (ctx_.profile.attention_tflops(precision_, seq, head_dim, true, backward) * efficiency() * 1e12);
    }
    double collective(CollectiveOp op, double bytes, const GroupShape& g) const {
        if (g.ranks <= 1) return 0.0;
        return ctx_.network.cost(op, Bytes(bytes), g).time.value();
    }

private:
    double efficiency() const { return ctx_.runtime.compute_efficiency; }

    const CostContext& ctx_;
    Precision precision_;
};

// Attention projections: standard (GQA) or multi-head latent attention.
void attention_projections(const ModelSpec& m, const Kernels& k, const Shapes& x, PhaseCost& f, PhaseCost& b) {
    const double h = d(m.hidden), heads = d(m.heads), T = x.T, tp = x.tp;
    if (m.attention == AttentionKind::MultiLatent) {
        const auto& a = m.mla;
        const double qk = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
        if (a.q_lora_rank > 0) {
            k.linear(f, b, T, d(a.q_lora_rank), h);
            k.linear(f, b, T, heads * qk / tp, d(a.q_lora_rank));
        } else {
            k.linear(f, b, T, heads * qk / tp, h);
        }
        k.linear(f, b, T, d(a.kv_lora_rank + a.qk_rope_head_dim), h);
        k.linear(f, b, T, heads * d(a.qk_nope_head_dim + a.v_head_dim) / tp, d(a.kv_lora_rank));
        k.linear(f, b, T, h, heads * d(a.v_head_dim) / tp);
        return;
    }
    const double q = heads * d(m.head_dim), kv = d(m.kv_heads) * d(m.head_dim);
    k.linear(f, b, T, (q + 2 * kv) / tp, h);
    k.linear(f, b, T, h, q / tp);
}

void mlp(const ModelSpec& m, const Kernels& k, double tokens, double ffn, double tp, PhaseCost& f, PhaseCost& b) {
    const double h = d(m.hidden);
    const double up = m.mlp == MlpKind::SwiGlu ? 2 * ffn : ffn;
    k.linear(f, b, tokens, up / tp, h);
    k.linear(f, b, tokens, h, ffn / tp);
    const double act_bytes = m.mlp == MlpKind::SwiGlu ? 6 * ffn : 4 * ffn;  // read gate|up, write product
    f.memory += k.memory(tokens * act_bytes / tp);
    b.memory += k.memory(2 * tokens * act_bytes / tp);
}

// The attention core: a flash kernel, or (before flash attention) two batched GEMMs around a
// fused scale-mask-softmax-dropout kernel that reads and writes the s x s scores.
void attention_core(const CostContext& ctx, const Kernels& k, const Shapes& x, const Layout& l, PhaseCost& f, PhaseCost& b) {
    const ModelSpec& m = ctx.scenario.model;
    const double seq = d(ctx.scenario.training.seq_len), heads = d(m.heads) / x.tp;
    const double qk_dim = m.attention == AttentionKind::MultiLatent ? d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : d(m.head_dim);
    const double v_dim = m.attention == AttentionKind::MultiLatent ? d(m.mla.v_head_dim) : d(m.head_dim);
    if (ctx.runtime.flash_attention) {
        // FlashAttention's count: 2 GEMMs of 2 T s d each per head, halved by the causal mask.
        const double flops = 2.0 * x.T * seq * heads * (qk_dim + v_dim) * 0.5;
        const auto hd = static_cast<std::int64_t>((qk_dim + v_dim) / 2);
        f.attention += k.flash(flops, ctx.scenario.training.seq_len, hd, false);
        b.attention += k.flash(2.5 * flops, ctx.scenario.training.seq_len, hd, true);
        return;
    }
    const double batch = d(l.microbatch) * heads;
    const double s = seq / d(l.cp);
    const double qk = batch * k.gemm(s, seq, qk_dim), av = batch * k.gemm(s, v_dim, seq);
    f.attention += qk + av;
    b.attention += 2 * (qk + av);
    // Softmax with scale, mask and dropout: scores in (2 B), probabilities and dropout output
    // out (2 + 2 B), mask (1 B); the backward reads them and writes the score gradient.
    const double elements = batch * s * seq;
    f.attention += k.memory(7 * elements);
    b.attention += k.memory(8 * elements);
}

// Norms, residual adds, rotary and dropout: bytes per token, forward; backward moves about twice.
double elementwise_bytes(const ModelSpec& m, const Shapes& x, bool dropout) {
    const double h = d(m.hidden);
    double per_norm_token = 2 * 4 * h + 2 * 6 * h;  // two norms (read, write), two residual adds
    if (dropout) per_norm_token += 2 * 5 * h;
    double per_token = 0;
    if (m.position == PositionKind::Rotary && m.attention == AttentionKind::Standard)
        per_token += 4 * (d(m.heads) + d(m.kv_heads)) * d(m.head_dim) / x.tp;
    return per_norm_token * x.norm_T + per_token * x.T;
}

void tensor_parallel_comm(const Layout& l, const Kernels& k, const Shapes& x, double h, const GroupShape& tp, PhaseCost& f, PhaseCost& b) {
    const double bytes = x.T * h * 2;
    if (!l.sequence_parallel) {
        const double all_reduces = 2 * k.collective(CollectiveOp::AllReduce, bytes, tp);
        f.tp += all_reduces;
        b.tp += all_reduces;
        return;
    }
    const double gather = k.collective(CollectiveOp::AllGather, bytes, tp);
    const double scatter = k.collective(CollectiveOp::ReduceScatter, bytes, tp);
    f.tp += 2 * (gather + scatter);
    // Sequence parallelism keeps only the sharded input of the QKV and first MLP projections, so
    // their weight gradients gather it again (Megatron's and Transformer Engine's linear layers).
    b.tp += 2 * (gather + scatter) + 2 * gather;
}
}  // namespace

LayoutGroups analyse_groups(const NetworkModel& network, const Layout& l, bool moe) {
    LayoutGroups g;
    g.tp = network.analyse(place_group(l, ParallelDim::TP));
    g.cp = network.analyse(place_group(l, ParallelDim::CP));
    g.pp = network.analyse(place_group(l, ParallelDim::PP));
    g.dp_dense = network.analyse(place_group(l, {ParallelDim::DP, ParallelDim::CP}));
    if (moe) {
        g.ep = network.analyse(place_group(l, ParallelDim::EP), true);
        // Expert replicas: the ranks of the dense data-parallel group with the same EP
        // coordinate; every EP coordinate has such a group, all running at once.
        const std::int64_t ep_stride = dimension_stride(l, ParallelDim::EP);
        const GroupPlacement p = place_group(l, {ParallelDim::DP, ParallelDim::CP});
        GroupPlacement replicas;
        for (auto gpu : p.gpus)
            if ((gpu / ep_stride) % l.ep == 0) replicas.gpus.push_back(gpu);
        for (auto offset : p.offsets)
            for (std::int64_t k = 0; k < l.ep; ++k) replicas.offsets.push_back(offset + k * ep_stride);
        replicas.concurrent_groups = static_cast<std::int64_t>(replicas.offsets.size());
        g.dp_expert = network.analyse(replicas);
    }
    return g;
}

LayerCost layer_cost(const CostContext& ctx, const Layout& l, const LayoutGroups& groups, std::int64_t layer) {
    const ModelSpec& m = ctx.scenario.model;
    const Kernels k(ctx);
    const Shapes x = shapes(ctx.scenario, l);
    const bool dropout = !ctx.runtime.flash_attention && m.linear_bias && m.norm == NormKind::LayerNorm;
    LayerCost c;
    PhaseCost& f = c.forward;
    PhaseCost& b = c.backward;
    attention_projections(m, k, x, f, b);
    attention_core(ctx, k, x, l, f, b);
    const double elementwise = elementwise_bytes(m, x, dropout);
    f.memory += k.memory(elementwise);
    b.memory += k.memory(2 * elementwise);
    if (m.layer_is_moe(layer)) {
        const MoeSpec& e = m.moe;
        const double routed = x.T * d(e.top_k) * e.load_imbalance;
        k.linear(f, b, x.T, d(e.experts), d(m.hidden));  // router
        // The grouped GEMM runs every local expert on its share of the routed tokens.
        const double local_experts = d(e.experts) / d(l.ep);
        PhaseCost ef, eb;
        mlp(m, k, routed / local_experts, d(e.expert_ffn_hidden), x.tp, ef, eb);
        f.gemm += local_experts * ef.gemm;
        f.memory += local_experts * ef.memory;
        b.gemm += local_experts * eb.gemm;
        b.memory += local_experts * eb.memory;
        if (e.shared_experts > 0) mlp(m, k, x.T, d(e.shared_experts * e.shared_ffn_hidden), x.tp, f, b);
        const double a2a = k.collective(CollectiveOp::AllToAll, routed * d(m.hidden) * 2, groups.ep);
        f.ep += 2 * a2a;
        b.ep += 2 * a2a;
    } else {
        mlp(m, k, x.T, d(m.ffn_hidden), x.tp, f, b);
    }
    tensor_parallel_comm(l, k, x, d(m.hidden), groups.tp, f, b);
    if (l.cp > 1) {
        const double kv = m.attention == AttentionKind::MultiLatent ? d(m.heads) * d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim)
                                                                     : 2 * d(m.kv_heads) * d(m.head_dim);
        const double step = k.collective(CollectiveOp::SendRecv, x.T * kv / x.tp * 2, groups.cp);
        f.cp += d(l.cp - 1) * step;
        b.cp += 2 * d(l.cp - 1) * step;
    }
    if (l.zero_stage >= 3) {
        const StageParams p = layer_params_per_gpu(m, l, layer);
        const double gather = k.collective(CollectiveOp::AllGather, p.total() * 2, groups.dp_dense);
        f.zero3 += gather;
        b.zero3 += gather + k.collective(CollectiveOp::ReduceScatter, p.total() * precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime)), groups.dp_dense);
    }
    // Recomputation re-runs forward work inside the backward pass.
    if (l.recompute == Recompute::Full) {
        c.recompute = f.compute();
        b.tp += f.tp;
        b.ep += f.ep;
    } else if (l.recompute == Recompute::Selective) {
        c.recompute = ctx.runtime.flash_attention ? 0.5 * f.memory : f.attention;
    }
    b.memory += c.recompute;
    return c;
}

PhaseCost embedding_cost(const CostContext& ctx, const Layout& l, bool backward) {
    const Kernels k(ctx);
    const Shapes x = shapes(ctx.scenario, l);
    PhaseCost c;
    // Gather rows (write T x h) forward; scatter-add fp32 gradients backward.
    c.memory = k.memory(x.norm_T * d(ctx.scenario.model.hidden) * (backward ? 8.0 : 4.0));
    return c;
}

PhaseCost output_cost(const CostContext& ctx, const Layout& l, bool backward) {
    // FP8 recipes keep the output projection in bf16: Megatron-Core's output layer is not a
    // Transformer Engine module, and torchtitan's Float8 conversion skips "output".
    const Precision p = ctx.scenario.training.precision;
    const Kernels k(ctx, p == Precision::Fp8 ? Precision::Bf16 : p);
    const Shapes x = shapes(ctx.scenario, l);
    const ModelSpec& m = ctx.scenario.model;
    PhaseCost f, b;
    k.linear(f, b, x.T, d(m.vocab) / x.tp, d(m.hidden));
    // Vocab-parallel cross entropy as Megatron computes it, one kernel per step: per logit the
    // bf16 -> fp32 cast (2 + 4 B), max (4), subtract (8), exp (8), sum (4) and divide (8)
    // forward; scaling by the loss gradient (8) and the cast back (4 + 2) backward.
    const double logits = x.T * d(m.vocab) / x.tp;
    f.memory += k.unfused(38 * logits) + k.memory(4 * x.norm_T * d(m.hidden));
    b.memory += k.unfused(14 * logits);
    return backward ? b : f;
}

CommDetail pp_transfer_detail(const CostContext& ctx, const Layout& l, const LayoutGroups& groups) {
    if (l.pp == 1) return {};
    const Shapes x = shapes(ctx.scenario, l);
    double bytes = x.T * d(ctx.scenario.model.hidden) * 2;
    if (l.sequence_parallel || ctx.runtime.overlap.pp_scatter_gather) bytes /= x.tp;
    return {CollectiveOp::SendRecv, bytes, ctx.network.cost(CollectiveOp::SendRecv, Bytes(bytes), groups.pp), groups.pp};
}

CommDetail dp_reduce_detail(const CostContext& ctx, const Layout& l, const GroupShape& group, double params) {
    if (group.ranks <= 1 || params <= 0) return {};
    const double bytes = params * precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime));
    const CollectiveOp op = l.zero_stage >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
    return {op, bytes, ctx.network.cost(op, Bytes(bytes), group), group};
}

CommDetail dp_gather_detail(const CostContext& ctx, const Layout& l, const GroupShape& group, double params) {
    if (group.ranks <= 1 || params <= 0 || l.zero_stage == 0 || l.zero_stage == 3) return {};
    return {CollectiveOp::AllGather, params * 2, ctx.network.cost(CollectiveOp::AllGather, Bytes(params * 2), group), group};
}

double pp_transfer(const CostContext& ctx, const Layout& l, const LayoutGroups& groups) {
    return pp_transfer_detail(ctx, l, groups).cost.time.value();
}

double dp_reduce(const CostContext& ctx, const Layout& l, const GroupShape& group, double params) {
    return dp_reduce_detail(ctx, l, group, params).cost.time.value();
}

double dp_gather(const CostContext& ctx, const Layout& l, const GroupShape& group, double params) {
    return dp_gather_detail(ctx, l, group, params).cost.time.value();
}

double optimizer_time(const CostContext& ctx, const Layout& l, double local_params) {
    // Adam over the local shard: read gradient, master weight and two moments, write them back
    // and the 16-bit copy.
    const OptimizerSpec& o = ctx.scenario.training.optimizer;
    const double state = (o.master_weights ? 4.0 : 0.0) + 2 * precision_bytes(o.state_dtype);
    const double grad = precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime));
    const double adam_bytes = local_params * (grad + 2 * state + 2);
    if (!l.optimizer_offload) return adam_bytes / (ctx.profile.memory_tbps() * ctx.runtime.compute_efficiency * 1e12);
    // ZeRO-Offload: gradients down the host link, Adam on the host's DRAM bandwidth, 16-bit
    // weights back up; in sequence, since the step needs every gradient and the next forward
    // every weight.
    const HostSpec& host = ctx.scenario.cluster.host;
    const double link = host.link_gbps * 1e9;
    return local_params * grad / link + adam_bytes / (host.memory_gbps_per_gpu * 1e9) + local_params * 2 / link;
}

double model_flops_per_step(const Scenario& s) {
    const ModelSpec& m = s.model;
    const ParamCounts p = count_params(m);
    const double tokens = s.training.tokens_per_step();
    const double output = d(m.vocab) * d(m.hidden);  // the output GEMM runs even when tied
    const double dense = p.active(m) - p.embedding - p.output + output;
    const double attn_width = m.attention == AttentionKind::MultiLatent
                                  ? d(m.heads) * d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) / 2
                                  : d(m.heads) * d(m.head_dim);
    return tokens * (6 * dense + 12 * d(m.layers) * attn_width * d(s.training.seq_len));
}

double hardware_flops_per_step(const Scenario& s, const Layout& l, double model, bool flash_attention) {
    if (l.recompute == Recompute::Full) return model * 4.0 / 3.0;
    if (l.recompute == Recompute::Selective && !flash_attention) {
        const ModelSpec& m = s.model;
        return model + s.training.tokens_per_step() * 4 * d(m.layers) * d(m.heads) * d(m.head_dim) * d(s.training.seq_len);
    }
    return model;
}

}  // namespace sextant
