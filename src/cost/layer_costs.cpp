#include "cost/layer_costs.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <span>

#include "cost/quantization.hpp"
#include "memory/activations.hpp"
#include "memory/stage_params.hpp"
#include "model/layer_gemms.hpp"
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

// Whether a GEMM operand's quantisation runs in its own kernels or inside the kernel producing it.
enum class Producer { Standalone, Fused };

// The kernels of one layer. The transformer layers' linear layers run in the training recipe's
// precision; the output layer, the router and the attention core stay in 16 bits (bf16_kernels).
// Under LoRA the base weights are frozen: their GEMMs still pass the input gradient back, but
// compute no weight gradient.
class Kernels {
public:
    explicit Kernels(const CostContext& ctx) : Kernels(ctx, ctx.scenario.training.precision) {}
    Kernels(const CostContext& ctx, const PrecisionRecipe& recipe)
        : ctx_(ctx),
          precision_(recipe.operands),
          quantization_(quantization_cost(recipe.scaling, ctx.runtime.fp8_delayed_scaling)),
          frozen_(ctx.scenario.training.mode == TrainingMode::Lora) {}
    Kernels bf16_kernels() const { return Kernels(ctx_, precision_recipes().front()); }
    // Who quantises the second MLP GEMM's input (forward) and the first's output gradient
    // (backward): the activation kernel, where the runtime's activation is its quantiser's
    // (runtime activation_cast_fused), else the linear layer after it, standalone.
    Producer activation() const { return ctx_.runtime.fused.activation_cast ? Producer::Fused : Producer::Standalone; }
    // A clamped gated activation's clamps run in eager kernels of their own (runtime
    // activation_clamp_fused false).
    bool eager_clamp() const { return eager_activation_clamp(ctx_.scenario.model, ctx_.runtime); }
    // The same kernels on a MoE layer's expert path.
    Kernels moe_kernels() const {
        Kernels k = *this;
        k.scale_ = ctx_.runtime.moe_efficiency * ctx_.profile.factors().moe;
        return k;
    }

    double gemm(double m, double n, double k) const {
        if (m < 1 || n < 1 || k < 1) return 0.0;
        const auto i = [](double v) { return static_cast<std::int64_t>(std::max(1.0, v)); };
        return 2.0 * m * n * k / (ctx_.profile.gemm_tflops(precision_, i(m), i(n), i(k)) * quantization_.gemm_factor * efficiency() * 1e12);
    }
    // Forward GEMM Y[m,n] = X[m,k] W[k,n], and its backward GEMMs: the input gradient and (for a
    // trained weight) the weight gradient; a quantised recipe first quantises X forward and dY
    // backward. Transformer Engine fuses that quantisation into the kernel producing the tensor
    // where it can (the norm before the QKV and first MLP GEMMs, the activation function before
    // the second, its backward before the first's dY: LayerNormLinear, LayerNormMLP): a fused
    // quantisation only writes the low-precision copies, a standalone one runs the recipe's
    // kernels.
    void linear(PhaseCost& fwd, PhaseCost& bwd, double m, double n, double k, Producer input = Producer::Standalone,
                Producer grad = Producer::Standalone) const {
        fwd.gemm += gemm(m, n, k);
        const double weight_grad = frozen_ ? 0.0 : gemm(k, n, m);
        bwd.gemm += gemm(m, k, n) + weight_grad;
        bwd.weight_grad += weight_grad;
        fwd.memory += unfused(m * k * quantize_bytes(input));
        bwd.memory += unfused(m * n * quantize_bytes(grad));
    }
    // A trained rank-r adapter beside a frozen [k,n] projection (LoRA): X A (k x r), then (X A) B
    // (r x n), in 16 bits, with both gradients.
    void adapter(PhaseCost& fwd, PhaseCost& bwd, double m, double n, double k, double rank) const {
        for (const auto& [out, in] : {std::pair{rank, k}, std::pair{n, rank}}) {
            fwd.gemm += gemm(m, out, in);
            bwd.gemm += gemm(m, in, out) + gemm(in, out, m);
            bwd.weight_grad += gemm(in, out, m);
        }
    }
    // Norms, activations and residuals: the runtime's fusion scales the bytes they move.
    double memory(double bytes) const { return unfused(bytes * ctx_.runtime.memory_traffic_factor); }
    double unfused(double bytes) const { return bytes / (ctx_.profile.memory_tbps() * efficiency() * 1e12); }
    // A fused attention kernel. Where the profile holds points of the kernel the runtime runs,
    // it sustains their rates: the GPU's fitted compute factor and the runtime's
    // compute_efficiency stand for what a training step loses against microbenchmarks (launch
    // gaps between short kernels, kernels the model does not list), not for one kernel that runs
    // for milliseconds at the rate measured. A kernel the profile has no points of is read from
    // the profile's own kernel's points through both, as before runtimes named their kernel.
    double flash(double flops, std::int64_t seq, std::int64_t head_dim, bool backward, bool causal = true) const {
        const AttentionKernel kernel = ctx_.runtime.attention_kernel;
        if (ctx_.profile.measures_attention(kernel))
            return flops / (ctx_.profile.measured_attention_tflops(kernel, precision_, {seq, head_dim, head_dim, 1, causal, backward}) * 1e12);
        return flops / (ctx_.profile.attention_tflops(precision_, seq, head_dim, causal, backward) * efficiency() * 1e12);
    }
    double collective(CollectiveOp op, double bytes, const GroupShape& g) const {
        if (g.ranks <= 1) return 0.0;
        return ctx_.network.cost(op, Bytes(bytes), g).time.value();
    }

private:
    double efficiency() const { return ctx_.runtime.compute_efficiency * scale_; }
    double quantize_bytes(Producer p) const {
        return p == Producer::Fused ? quantization_.fused_bytes_per_element : quantization_.bytes_per_element;
    }

    const CostContext& ctx_;
    Precision precision_;
    QuantizationCost quantization_;
    bool frozen_;
    double scale_ = 1.0;
};

// Attention projections: standard (GQA) or multi-head latent attention; under LoRA with rank-r
// adapters beside the QKV and output projections (MLPerf's Llama 2 70B LoRA reference adapts the
// attention projections).
// Returns the forward cost of MLA's up-projections (what mla_up_proj recompute re-runs).
PhaseCost attention_projections(const ModelSpec& m, const Kernels& k, const Shapes& x, const TrainingSpec& t, const GroupShape& tp_group,
                                PhaseCost& f, PhaseCost& b) {
    const double h = d(m.hidden), heads = d(m.heads), T = x.T, tp = x.tp;
    if (m.attention == AttentionKind::MultiLatent) {
        const auto& a = m.mla;
        const double qk = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
        PhaseCost up;
        if (a.q_lora_rank > 0) {
            k.linear(f, b, T, d(a.q_lora_rank), h, Producer::Fused);
            k.linear(up, b, T, heads * qk / tp, d(a.q_lora_rank), Producer::Fused);  // after q's latent norm
        } else {
            k.linear(f, b, T, heads * qk / tp, h, Producer::Fused);
        }
        k.linear(f, b, T, d(a.kv_lora_rank + a.qk_rope_head_dim), h, Producer::Fused);
        k.linear(up, b, T, heads * d(a.qk_nope_head_dim + a.v_head_dim) / tp, d(a.kv_lora_rank), Producer::Fused);
        k.linear(f, b, T, h, heads * d(a.v_head_dim) / tp);
        f.gemm += up.gemm;
        f.memory += up.memory;
        return up;
    }
    const double q = heads * d(m.head_dim), qkv = d(m.qkv_out());
    k.linear(f, b, T, qkv / tp, h, Producer::Fused);
    k.linear(f, b, T, h, q / tp);
    if (m.kv_heads < static_cast<std::int64_t>(tp)) {
        // TP above the KV heads (Megatron-Core 0.16+, attention.py get_query_key_value_tensors):
        // each rank's QKV output is all-gathered over TP, 16 bits, and sliced to its heads; the
        // gather's backward is a reduce-scatter.
        f.tp += k.collective(CollectiveOp::AllGather, T * qkv * 2, tp_group);
        b.tp += k.collective(CollectiveOp::ReduceScatter, T * qkv * 2, tp_group);
    }
    if (m.attention_output_gate) {
        // The output gate (attention.py: core output x sigmoid(gate)), 16-bit: forward reads the
        // output and the gate and writes the product; backward reads those three and writes the
        // two gradients.
        f.memory += k.memory(T * 3 * 2 * q / tp);
        b.memory += k.memory(T * 5 * 2 * q / tp);
    }
    if (t.mode == TrainingMode::Lora) {
        const Kernels adapters = k.bf16_kernels();
        adapters.adapter(f, b, T, qkv / tp, h, d(t.lora.rank));
        adapters.adapter(f, b, T, h, q / tp, d(t.lora.rank));
    }
    return {};
}

// Two matrices (up, down), or three when gated (gate and up run as one GEMM); `tp` splits ffn.
// Returns the forward seconds of the activation function, its eager clamps included (what its
// recompute re-runs).
// `input` says whether the MLP's input comes out of a norm (fused quantisation) or, for experts,
// out of the token permutation.
// `width` is the MLP's input and output size: hidden, or a latent MoE's expert width.
double mlp(const ModelSpec& m, const Kernels& k, double tokens, double ffn, double tp, PhaseCost& f, PhaseCost& b,
           Producer input = Producer::Fused, double width = 0) {
    const double h = width > 0 ? width : d(m.hidden);
    const double up = m.gated_mlp() ? 2 * ffn : ffn;
    k.linear(f, b, tokens, up / tp, h, input, k.activation());
    k.linear(f, b, tokens, h, ffn / tp, k.activation());
    const double act_bytes = m.gated_mlp() ? 6 * ffn : 4 * ffn;  // read gate|up, write product
    double act = k.memory(tokens * act_bytes / tp);
    f.memory += act;
    b.memory += 2 * act;
    if (k.eager_clamp()) {
        // Before the activation kernel, per element of the [tokens, gate|up] input, 16 bits: the
        // two halves' clamps read and write it (4 B) and their concatenation copies it (4 B);
        // backward, each clamp's gradient reads the gradient and its input and writes (6 B), and
        // the halves' gradients are joined into one tensor (4 B).
        const double elements = tokens * up / tp;
        const double clamp = k.unfused(8 * elements);
        f.memory += clamp;
        b.memory += k.unfused(10 * elements);
        act += clamp;
    }
    return act;
}

// The attention core: a flash kernel, or (before flash attention) two batched GEMMs around a
// fused scale-mask-softmax-dropout kernel that reads and writes the s x s scores.
void attention_core(const CostContext& ctx, const Kernels& k, const Shapes& x, const Layout& l, std::int64_t layer, PhaseCost& f, PhaseCost& b) {
    const ModelSpec& m = ctx.scenario.model;
    const double seq = d(ctx.scenario.training.seq_len), heads = d(m.heads) / x.tp;
    const double qk_dim = m.attention == AttentionKind::MultiLatent ? d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim) : d(m.head_dim);
    const double v_dim = m.attention == AttentionKind::MultiLatent ? d(m.mla.v_head_dim) : d(m.head_dim);
    if (ctx.runtime.flash_attention()) {
        // FlashAttention's count: 2 GEMMs of 2 T s d each per head, halved by the causal mask
        // (a windowed layer's kernel skips the blocks outside the band).
        const double keys = m.layer_is_windowed(layer) ? m.mean_causal_keys(layer, ctx.scenario.training.seq_len) : seq * 0.5;
        const double flops = 2.0 * x.T * heads * (qk_dim + v_dim) * keys;
        const auto hd = static_cast<std::int64_t>((qk_dim + v_dim) / 2);
        // The backward kernel runs 2.5x the forward's FLOPs: five GEMMs against the forward's two,
        // the scores recomputed from Q and K rather than stored (Dao 2023, FlashAttention-2,
        // section 4.1, which counts the backward so in its benchmarks).
        constexpr double kBackwardFlops = 2.5;
        if (l.cp > 1 && ctx.runtime.cp_ring_load_balanced && !m.layer_is_windowed(layer)) {
            // A K/V ring over load-balanced chunks (each rank holds chunks i and 2 cp - 1 - i of
            // the 2 cp chunks): step 0 runs the causal kernel on the rank's own two chunks (Q and
            // K/V of s / cp tokens), each of the other cp - 1 steps an unmasked kernel of the
            // same work, all of Q against the first half of the received K/V or the second half
            // of Q against all of it (NVIDIA/TransformerEngine 015d2257, transformer_engine/
            // pytorch/attention/dot_product_attention/context_parallel.py, AttnFuncWithCPAndKVP2P:
            // attn_mask_type "no_mask" for i != 0). The work is the causal count's, split 1 : cp - 1.
            const double cp = d(l.cp);
            const auto local = std::max<std::int64_t>(1, ctx.scenario.training.seq_len / l.cp);
            for (const bool backward : {false, true}) {
                const double work = backward ? kBackwardFlops * flops : flops;
                (backward ? b : f).attention += k.flash(work / cp, local, hd, backward) +
                                                k.flash(work * (cp - 1) / cp, local, hd, backward, false);
            }
            return;
        }
        f.attention += k.flash(flops, ctx.scenario.training.seq_len, hd, false);
        b.attention += k.flash(kBackwardFlops * flops, ctx.scenario.training.seq_len, hd, true);
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

// Elements of the query and key a layer's rotary embedding turns (multi-head latent attention
// turns its small decoupled part inside its projections, not priced apart).
double rotary_elements(const ModelSpec& m, const Shapes& x) {
    if (!m.rotary() || m.attention != AttentionKind::Standard) return 0;
    return (d(m.heads) / x.tp + d(m.kv_heads_per_rank(static_cast<std::int64_t>(x.tp)))) * d(m.head_dim) * x.T;
}

// Norms, residual adds, dropout, and the rotary embedding where one fused kernel runs it (reads
// and writes each element): bytes, forward; backward moves about twice. Each block of the layer
// (attention or Mamba, MLP or MoE) has its norm and its residual add.
double elementwise_bytes(const ModelSpec& m, std::int64_t layer, const Shapes& x, bool dropout, bool fused_rotary) {
    const double h = d(m.hidden);
    const double blocks = (m.layer_mixer(layer) != Mixer::None ? 1.0 : 0.0) + (m.layer_ffn(layer) != Ffn::None ? 1.0 : 0.0);
    double per_norm_token = blocks * (4 * h + 6 * h);  // a norm (read, write), a residual add
    if (dropout) per_norm_token += blocks * 5 * h;
    const bool rotary = fused_rotary && m.layer_mixer(layer) == Mixer::Attention;
    return per_norm_token * x.norm_T + (rotary ? 4 * rotary_elements(m, x) : 0.0);
}

// A mixer's context parallelism as Megatron-Core runs Mamba's and the gated delta net's: the
// sequence split turned into a head split before the conv1d and back after the mixer, by
// all-to-alls of these per-token widths (of a TP rank, 16 bits), the reverse backward. The mixer
// waits on each (cp_waited): no compute runs beside them.
void mixer_cp_exchange(const Kernels& k, const Shapes& x, const GroupShape& cp, std::initializer_list<std::int64_t> widths, PhaseCost& f,
                       PhaseCost& b) {
    double exchange = 0;
    for (const std::int64_t width : widths) exchange += k.collective(CollectiveOp::AllToAll, x.T * d(width) / x.tp * 2, cp);
    f.cp += exchange;
    f.cp_waited += exchange;
    b.cp += exchange;
    b.cp_waited += exchange;
}

// A Mamba-2 mixer (Megatron-Core MambaMixer on its memory-efficient path), TP sharded by heads
// and groups: in_proj (fed by the norm, Transformer Engine's LayerNormColumnParallelLinear) and
// out_proj in the recipe's precision; between them the conv1d, the chunked SSD scan and the
// gated norm (mamba_ssm's Triton kernels, 16-bit). The scan's four products per chunk of Q
// tokens (Dao and Gu 2024, section 6) run as batched matmuls, each priced as the 16-bit GEMM of
// its stacked shape: C B^T per group (Q x N by N x Q), the masked (C B^T) X per head (Q x Q by
// Q x P), each chunk's state B^T X (N x Q by Q x P) and the states' contribution C h (Q x N by
// N x P); backward, each product's two gradients (twice the forward). The memory-bound parts
// move, per token and layer on one GPU: the conv1d reads and writes [x, B, C] (its backward
// rebuilds it, then reads the gradient and input and writes the input's gradient); the chunk
// states, fp32, H P N / Q per token, are written, passed (read and written) and read; C B^T,
// fp32, G Q per token, written and read; the gated norm reads y and z and writes its output
// (backward reads those three, writes two gradients).
// Returns the forward seconds of the projections' GEMMs (the block's TP GEMMs).
double mamba_block(const CostContext& ctx, const Kernels& k, const Shapes& x, PhaseCost& f, PhaseCost& b) {
    const ModelSpec& m = ctx.scenario.model;
    const MambaSpec& s = m.mamba;
    const double h = d(m.hidden), T = x.T, tp = x.tp;
    const double heads = d(s.heads) / tp, groups = d(s.groups) / tp, P = d(s.head_dim), N = d(s.state), Q = d(s.chunk);
    const double inner = d(s.inner()) / tp, conv = d(s.conv_channels()) / tp;
    const double gemm_before = f.gemm;
    k.linear(f, b, T, d(s.in_proj_out()) / tp, h, Producer::Fused);
    k.linear(f, b, T, h, inner);
    const double projections = f.gemm - gemm_before;
    const Kernels scan = k.bf16_kernels();
    const double products = scan.gemm(T * groups, Q, N) + scan.gemm(T * heads, P, Q) + scan.gemm(N * T / Q * heads, P, Q) +
                            scan.gemm(T * heads, P, N);
    f.attention += products;
    b.attention += 2 * products;
    const double conv_bytes = 2 * conv * 2, states = 4 * heads * P * N / Q, scores = 4 * groups * Q;
    const double norm_bytes = 3 * 2 * inner;
    f.memory += k.memory(T * (conv_bytes + 4 * states + 2 * scores + norm_bytes));
    b.memory += k.memory(T * (conv_bytes + 1.5 * conv_bytes + 2 * 4 * states + 2 * 2 * scores + 5 * 2 * inner));
    return projections;
}

// A gated delta net mixer (Megatron-Core GatedDeltaNet at b0cc2706), TP sharded by heads: in_proj
// (fed by the norm, LayerNormColumnParallelLinear) and out_proj in the recipe's precision;
// between them the causal conv1d, the queries' and keys' L2 norms and their repeat to the value
// heads, the chunked gated delta rule (flash-linear-attention's chunk_gated_delta_rule, Triton,
// 16-bit) and the gated norm. The rule's products per chunk of C tokens and value head (key and
// value heads of size dk, dv) run as batched matmuls, each priced as the 16-bit GEMM of its
// stacked shape. Forward: K K^T (C x dk by dk x C); the triangular solve of I + A, a third of a
// C x C by C x C product; W = A K and U = A V (C x C by C x dk, C x dv); the state pass, V' = U -
// W S (C x dk by dk x dv) and S's update K^T V' (dk x C by C x dv); the output Q S (C x dk by
// dk x dv), Q K^T (C x dk by dk x C) and its masked product with V' (C x C by C x dv). Backward:
// each product's two gradients, after W, U and the state pass are recomputed (fla/ops/
// gated_delta_rule/chunk.py, chunk_gated_delta_rule_bwd: recompute_w_u_fwd, then
// chunk_gated_delta_rule_fwd_h). The memory-bound parts move, per token and layer on one GPU:
// the conv1d reads and writes [q, k, v] (its backward rebuilds it, then reads the gradient and
// input and writes the input's gradient); the L2 norms read and write q and k, and the repeat
// writes them at the value heads' count; the chunk states (16-bit, H dk dv / C per token) are
// written and read forward, and backward written twice (recomputed, and their gradients) and
// read twice; the chunk's A (16-bit, C per head and token) is written and read forward, read
// and its gradient written and read backward; the gated norm reads the output and the gate and
// writes its output (backward reads those three, writes two gradients).
// Returns the forward seconds of the projections' GEMMs (the block's TP GEMMs).
double gdn_block(const CostContext& ctx, const Kernels& k, const Shapes& x, PhaseCost& f, PhaseCost& b) {
    const ModelSpec& m = ctx.scenario.model;
    const GatedDeltaNetSpec& g = *m.gdn;
    const double h = d(m.hidden), T = x.T, tp = x.tp;
    const double H = d(g.value_heads) / tp, dk = d(g.key_head_dim), dv = d(g.value_head_dim), C = d(g.chunk);
    const double key = d(g.key_dim()) / tp, value = d(g.value_dim()) / tp, conv = d(g.conv_channels()) / tp;
    const double gemm_before = f.gemm;
    k.linear(f, b, T, d(g.in_proj_out()) / tp, h, Producer::Fused);
    k.linear(f, b, T, h, value);
    const double projections = f.gemm - gemm_before;
    const Kernels rule = k.bf16_kernels();
    const double rows = T * H;
    const double w_u = rule.gemm(rows, dk, C) + rule.gemm(rows, dv, C);
    const double state = rule.gemm(rows, dv, dk) + rule.gemm(dk * rows / C, dv, C);
    const double products = rule.gemm(rows, C, dk) + rule.gemm(rows / 3, C, C) + w_u + state + rule.gemm(rows, dv, dk) +
                            rule.gemm(rows, C, dk) + rule.gemm(rows, dv, C);
    f.attention += products;
    b.attention += 2 * products + w_u + state;
    const double conv_bytes = 2 * conv * 2, norms = 2 * (2 * key + 2 * key) + 2 * (2 * key + 2 * H * dk);
    const double states = 2 * H * dk * dv / C, a = 2 * C * H;
    f.memory += k.memory(T * (conv_bytes + norms + 2 * states + 2 * a + 3 * 2 * value));
    b.memory += k.memory(T * (conv_bytes + 1.5 * conv_bytes + 1.5 * norms + 4 * states + 3 * a + 5 * 2 * value));
    return projections;
}

// Forward seconds of a TP-parallel block's GEMMs around its sequence-parallel collectives: the
// first is fed by the all-gather (and its input-gradient GEMM feeds the backward's
// reduce-scatter), the last drains into the reduce-scatter (and its input-gradient GEMM takes the
// backward's all-gather of the output gradient). Input- and weight-gradient GEMMs do the forward's
// FLOPs.
struct TpBlockGemms {
    double first = 0, last = 0;
    // The same GEMMs run as tp row chunks, one GEMM each (async TP), on the profile's curve.
    double first_split = 0, last_split = 0;
};

// `block` is the forward seconds of all the block's GEMMs before the reduce-scatter's (the first
// group: QKV, or MLA's projections; the MLP's up projection), [n, k] the shapes of the main one
// of the first group and of the last GEMM. The chunked times are priced only where async TP
// (`chunked`) reads them: Transformer Engine's NCCL path needs the whole GEMMs alone.
TpBlockGemms tp_block_gemms(const Kernels& k, const Shapes& x, double block, double first_n, double first_k, double last_n,
                            double last_k, bool chunked) {
    const auto split = [&](double n, double kk) {
        const double whole = k.gemm(x.T, n, kk);
        return whole > 0 ? x.tp * k.gemm(x.T / x.tp, n, kk) / whole : 1.0;
    };
    TpBlockGemms g;
    g.last = k.gemm(x.T, last_n, last_k);
    g.first = std::max(0.0, block - g.last);
    g.first_split = chunked ? g.first * split(first_n, first_k) : g.first;
    g.last_split = chunked ? g.last * split(last_n, last_k) : g.last;
    return g;
}

// What async TP hides of a collective of c seconds split into n = tp chunks and pipelined with a
// GEMM of g seconds (PyTorch's micro-pipeline TP pass, torch/_inductor/fx_passes/
// micro_pipeline_tp.py: fused_all_gather_matmul, fused_matmul_reduce_scatter): each remote
// chunk's transfer runs beside another chunk's GEMM, and the local chunk's GEMM, 1/n of g, has no
// transfer beside it. Hidden: min(c, g (n - 1) / n), g being the chunked GEMMs' time: the split
// costs what tp smaller GEMMs lose against one (their rate on the profile's curve).
double async_tp_hidden(double c, double g, double n) { return std::min(c, g * (n - 1) / n); }

// The TP collectives of TP-parallel blocks (attention, MLP): an all-reduce after each, or with
// sequence parallelism an all-gather before and a reduce-scatter after. The gather moves what the
// recipe gathers (sp_gather_element_bytes: the quantised GEMM input under most recipes);
// reductions stay 16-bit. Under async TP (layout.async_tp) each sequence-parallel collective
// hides behind its own GEMM (tp_hidden); `gathers_pipelined` false leaves the all-gathers whole.
// On Transformer Engine's NCCL path (`backward_async`, TpOverlap::TeNcclBackward) the
// backward's collectives of each block's first GEMMs run beside the other GEMM of their pair:
// the input gradient's reduce-scatter (all-reduce without sequence parallelism) beside the weight
// gradient, the regathered input beside the input gradient, each GEMM as long as the forward's.
// Returns one sequence-parallel all-gather's seconds (0 without sequence parallelism), which a
// recompute that gathers again pays once more.
double tensor_parallel_comm(const Layout& l, const Kernels& k, const Shapes& x, double h, const GroupShape& tp,
                          std::span<const TpBlockGemms> blocks, double gather_bytes_per_element, bool regathered,
                          bool gathers_pipelined, bool backward_async, PhaseCost& f, PhaseCost& b) {
    const double bytes = x.T * h * 2;
    const double n = static_cast<double>(blocks.size());
    if (!l.sequence_parallel) {
        const double all_reduce = k.collective(CollectiveOp::AllReduce, bytes, tp);
        f.tp += n * all_reduce;
        b.tp += n * all_reduce;
        if (backward_async)
            for (const TpBlockGemms& g : blocks) b.tp_hidden += std::min(all_reduce, g.first);
        return 0.0;
    }
    const double gather = k.collective(CollectiveOp::AllGather, x.T * h * gather_bytes_per_element, tp);
    const double scatter = k.collective(CollectiveOp::ReduceScatter, bytes, tp);
    f.tp += n * (gather + scatter);
    // Where sequence parallelism keeps only the sharded input of the QKV and first MLP
    // projections, their weight gradients gather it again (runtime sp_input_regathered).
    b.tp += n * (gather + scatter) + (regathered ? n * gather : 0.0);
    if (backward_async)
        for (const TpBlockGemms& g : blocks) b.tp_hidden += std::min(scatter, g.first) + (regathered ? std::min(gather, g.first) : 0.0);
    if (!l.async_tp) return gather;
    // Forward: the all-gather feeds the first GEMMs, the last feeds the reduce-scatter. Backward:
    // the output gradient's all-gather feeds the last GEMM's input gradient, the first's input
    // gradient feeds the reduce-scatter (the same FLOPs and split as forward).
    for (const TpBlockGemms& g : blocks) {
        const double first_loss = g.first_split - g.first, last_loss = g.last_split - g.last;
        f.tp_hidden += async_tp_hidden(scatter, g.last_split, x.tp);
        b.tp_hidden += async_tp_hidden(scatter, g.first_split, x.tp);
        f.gemm += last_loss;
        b.gemm += first_loss;
        if (!gathers_pipelined) continue;
        f.tp_hidden += async_tp_hidden(gather, g.first_split, x.tp);
        b.tp_hidden += async_tp_hidden(gather, g.last_split, x.tp);
        f.gemm += first_loss;
        b.gemm += last_loss;
    }
    return gather;
}

// A MoE layer's MLP as Megatron-Core runs it (MoE parallel folding): each rank routes its own
// tokens (sequence parallel shards them over TP), the dispatcher sends every routed copy to its
// expert's rank over the expert-parallel group and combines the results back; with expert TP the
// expert-TP ranks gather their tokens and split each expert's ffn. Permutation kernels reorder the
// routed copies by expert before the grouped GEMM and back after it.
// What recompute modules re-run of a MoE block, forward seconds each.
struct MoeParts {
    PhaseCost block;          // the whole block (moe)
    double expert_act = 0;    // the experts' activation function (moe_act)
    PhaseCost shared;         // the shared experts (shared_experts)
};

MoeParts moe_block(const CostContext& ctx, const Kernels& layer_kernels, const Shapes& x, const Layout& l, const LayoutGroups& groups,
                   PhaseCost& f, PhaseCost& b) {
    const Kernels k = layer_kernels.moe_kernels();
    const PhaseCost before = f;
    const ModelSpec& m = ctx.scenario.model;
    const MoeSpec& e = m.moe;
    const double hidden = d(m.hidden);
    const double h = d(m.expert_width());                    // what the dispatcher and the experts carry
    const double tokens = x.norm_T;                          // this rank's tokens
    const double routed = tokens * d(e.top_k) * e.routed_share();  // copies it sends (and, balanced, receives)
    k.bf16_kernels().linear(f, b, tokens, d(e.experts), hidden);  // the router, in 16 bits
    if (e.latent > 0) {
        // Megatron-Core's latent projections (moe_layer.py fc1_latent_proj, fc2_latent_proj:
        // TELinear, duplicated over TP) on the rank's own tokens, in the recipe's precision.
        k.linear(f, b, tokens, h, hidden);
        k.linear(f, b, tokens, hidden, h);
    }
    // The grouped GEMM runs every local expert on its share of the routed tokens.
    const double local_experts = d(e.experts) / d(l.ep);
    const double expert_tokens = routed * d(l.etp);
    PhaseCost ef, eb;
    MoeParts parts;
    parts.expert_act = local_experts * mlp(m, k, expert_tokens / local_experts, d(e.expert_ffn_hidden), d(l.etp), ef, eb,
                                           Producer::Standalone, h);
    f.gemm += local_experts * ef.gemm;
    f.memory += local_experts * ef.memory;
    b.gemm += local_experts * eb.gemm;
    b.weight_grad += local_experts * eb.weight_grad;
    b.memory += local_experts * eb.memory;
    if (m.linear_bias && !ctx.runtime.fused.moe_expert_bias) {
        // The second linear layer's bias, weighted by each copy's routing probability, added after
        // the grouped GEMM in eager 16-bit kernels, per local expert: `t + b * p` then a
        // concatenation (Megatron-Core experts.py, TEGroupedMLP._apply_bias). Per element of the
        // [copies, hidden] output: the product is written, the sum reads two and writes one, the
        // concatenation reads and writes one, 6 moves forward; backward, the bias and probability
        // gradients each multiply the output gradient by the other factor (read, write) and reduce
        // it (read), 6 moves. (The sum's gradient passes through: same dtype, no copy.)
        const double elements = expert_tokens * h;
        f.memory += k.unfused(elements * 2 * 6);
        b.memory += k.unfused(elements * 2 * 6);
    }
    if (e.shared_experts > 0) {
        PhaseCost sb;
        mlp(m, layer_kernels, x.T, d(e.shared_experts * e.shared_ffn_hidden), x.tp, parts.shared, sb);
        f.gemm += parts.shared.gemm;
        f.memory += parts.shared.memory;
        b.gemm += sb.gemm;
        b.weight_grad += sb.weight_grad;
        b.memory += sb.memory;
    }
    // A permute reads and writes each routed copy, an unpermute reads, weights, sums and writes it,
    // 16 bits. NCCL's all-to-all dispatcher permutes twice each way, globally by destination rank
    // before the exchange and locally by expert after it; DeepEP and HybridEP fuse the global
    // permute into their dispatch and combine kernels, and the all-gather dispatcher has no global
    // one, so they keep the local pair (NVIDIA, "Optimizing DeepSeek-V3 Training Performance on
    // GB200 NVL72", Megatron-LM docs/discussions, section 2.1.1). HybridEP's one API call for both
    // (Megatron-Core's dispatch_with_permute) still runs the local sort as a kernel of its own:
    // DeepEP hybrid-ep f4f2c10; the fused path came in a0d27f1, 2026-03-31, after the releases
    // validated here (README "Tried and not kept"). The all-to-all dispatcher sorts
    // by local expert only where a rank holds more than one ("Permutation 2", `if
    // self.num_local_experts > 1`, token_dispatcher.py dispatch_postprocess and
    // combine_preprocess, core_v0.15.0): with one, its global pair alone. Without expert
    // parallelism there is no exchange, and one permute by expert.
    const MoeDispatcher dispatcher = moe_dispatcher(l, ctx.runtime);
    const double permutes = dispatcher == MoeDispatcher::AllToAll && l.ep > 1 && local_experts > 1 ? 2.0 : 1.0;
    const double permutation = k.unfused(routed * h * 2 * 4 * permutes);
    f.memory += permutation;
    b.memory += permutation;
    const double bytes = routed * h * 2;
    const double etp = l.etp > 1 ? k.collective(CollectiveOp::AllGather, bytes * d(l.etp), groups.etp) +
                                       k.collective(CollectiveOp::ReduceScatter, bytes * d(l.etp), groups.etp)
                                 : 0.0;
    if (dispatcher == MoeDispatcher::AllGather) {
        // Megatron's MoEAllGatherTokenDispatcher: every rank gathers all the group's tokens (each
        // once, whatever top_k) and keeps those routed to its experts; the combine reduce-scatters
        // the outputs back. Backward, each becomes the other.
        const double gathered = tokens * h * 2 * d(l.ep);
        const double exchange = k.collective(CollectiveOp::AllGather, gathered, groups.ep) +
                                k.collective(CollectiveOp::ReduceScatter, gathered, groups.ep);
        f.ep += exchange + etp;
        b.ep += exchange + etp;
    } else {
        // DeepEP/HybridEP send a token once to each remote node holding one of its experts: with
        // top-k experts spread evenly over D nodes, D (1 - (1 - 1/D)^k) of the k copies cross.
        const double nodes = static_cast<double>(groups.ep.domains);
        const double crossing =
            dedups_nodes(dispatcher) && nodes > 1 ? nodes * (1 - std::pow(1 - 1 / nodes, d(e.top_k))) / d(e.top_k) : 1.0;
        const double a2a = k.collective(CollectiveOp::AllToAll, bytes * crossing, groups.ep);
        f.ep += 2 * a2a + etp;  // dispatch and combine
        b.ep += 2 * a2a + etp;
    }
    parts.block = f;
    parts.block.gemm -= before.gemm;
    parts.block.memory -= before.memory;
    parts.block.attention -= before.attention;
    parts.block.ep -= before.ep;
    parts.block.tp = parts.block.cp = parts.block.zero3 = parts.block.zero3_waited = 0;
    return parts;
}

}  // namespace

namespace {
// Gathering `share` of a layer's 16-bit parameters: one all-gather, or one per tensor when the
// runtime launches them so. DeepSpeed's per-tensor gathers synchronised the device before each
// launch (DeepSpeed issue #1069: "a torch.cuda.synchronize() sync point when pre_launch next
// all_gather"; PR #1188: "each all_gather calls torch.cuda.synchronize()"), so each costs its
// host launch and then its collective, one after the other. The launch copies each rank's chunk
// out of PyTorch's flat gather buffer (gather_copy_per_rank_s), so it grows with the group.
double zero3_gather(const CostContext& ctx, const Kernels& k, const Layout& l, const GroupShape& group, std::int64_t layer,
                    double params, double share) {
    const Zero3Traits& z = ctx.runtime.zero3;
    const double bytes = gathered_weight_bytes(ctx);
    if (z.per_tensor_gather_host_s <= 0 || group.ranks <= 1) return k.collective(CollectiveOp::AllGather, params * share * bytes, group);
    const double host = z.per_tensor_gather_host_s + static_cast<double>(group.ranks) * z.gather_copy_per_rank_s;
    double seconds = 0;
    for (const double tensor : layer_parameter_tensors(ctx.scenario.model, l, layer))
        seconds += host + k.collective(CollectiveOp::AllGather, tensor * bytes, group);
    return seconds * share;
}

// The host's issue time of a dropless MoE layer's expert path. Its tokens per expert change with
// every routing, so Megatron's dispatcher copies them to the host before the all-to-all
// (token_dispatcher.py: cuda_sync_point "before_ep_alltoall") and no CUDA graph can hold the
// grouped GEMMs, their quantisation and the permutations: the layer's Python, the dispatcher's
// preprocessing and Transformer Engine's modules issue them one by one, and where the GPU
// finishes a layer's kernels sooner than the CPU issues them, the layer takes the CPU's time
// ("CPU overhead", the DeepSeek-V3 on GB200 guide, section 2; Megatron-Core's MoE README:
// dropless shapes leave the MoE layers uncapturable). The all-gather dispatcher copies its tokens
// per expert to the host too (`.cpu()`), and DeepEP's normal kernels hand the host the received
// counts. HybridEP's kernels need no synchronisation (DeepEP's hybrid-ep README: "zero CPU-GPU
// synchronization", CUDA-graph compatible) and fuse the permutations, but Megatron-Core's dropless
// dispatch through them still waits for the token counts in pinned memory (fused_a2a.py
// HybridEPDispatch: non_blocking only where num_permuted_tokens is known, i.e. drop-and-pad;
// Megatron-LM b0cc2706). Its host time is not the fitted one, which is the NCCL path's many
// kernels: charged it, the NVL72 HybridEP rows go 20-130% too slow (README "Tried and not kept").
// So no floor applies to HybridEP until its own host time is measured. Nor where padded token dropping gives
// static shapes: the recipes capture those layers whole. The backward issues 1.75 times the
// forward's host time (Transformer Engine's grouped MLP block on GB200, forward 1.2 ms and
// backward 2.1 ms of CPU time: NVIDIA/TransformerEngine#2897); the share `rerun` of the block
// that the backward recomputes issues its forward once more. Under the all-to-all overlap the
// host does more: the merged forward-backward schedule splits each layer into sub-stages with
// synchronisations between them, which "aggravates the CPU overhead" (the DeepSeek-V3 on GB200
// guide, section 4), by the generation's moe_overlap_host_factor.
//
// The synchronisation also orders the two: the host issues the expert path only once the GPU has
// run everything queued before it (the layer's attention, norms, residuals; `before_sync`), and
// the GPU, drained at that point, waits for what the host issues. A forward then takes
// max(expert path's GPU time, host time) + the work before the synchronisation, not the larger
// of the layer's GPU and host times: the step sums what the floor alone would overlap. The
// backward has no such point (the forward's token counts are kept for it), so its floor stays.
void moe_host_floor(const CostContext& ctx, const Layout& l, double rerun, const PhaseCost& before_sync, LayerCost& c) {
    const MoeSpec& e = ctx.scenario.model.moe;
    if (e.capacity_factor > 0 && e.pad_to_capacity) return;
    if (moe_dispatcher(l, ctx.runtime) == MoeDispatcher::HybridEP) return;
    const ProfileFactors& f = ctx.profile.factors();
    double host = (ctx.runtime.moe_host_ms_per_layer + f.moe_host_ms) * 1e-3;
    if (host <= 0) return;
    if (l.ep_overlapped()) host *= ctx.runtime.moe_overlap_host_factor * f.moe_overlap_host;
    constexpr double kForwardShare = 1.2 / (1.2 + 2.1);
    c.host_forward = host * kForwardShare;
    c.host_backward = host * (1 - kForwardShare) + rerun * c.host_forward;
    c.forward_before_sync = SyncedWork::of(before_sync);
}
}  // namespace

LayoutGroups analyse_groups(const NetworkModel& network, const Layout& l, const ModelSpec& model) {
    return analyse_groups(l, model, [&](const GroupPlacement& p, bool all_to_all) { return network.analyse(p, all_to_all); });
}

LayoutGroups analyse_groups(const Layout& l, const ModelSpec& model, const PlacementAnalyser& analyse) {
    const bool moe = model.is_moe();
    // A mixer that exchanges over CP by all-to-all (mixer_cp_exchange): a gated delta net, or a
    // hybrid pattern's Mamba blocks.
    const bool mixer_all_to_all = model.has_gdn() || model.hybrid_pattern.find('M') != std::string::npos;
    LayoutGroups g;
    g.tp = analyse(place_group(l, ParallelDim::TP), false);
    g.cp = analyse(place_group(l, ParallelDim::CP), l.cp > 1 && mixer_all_to_all);
    g.pp = analyse(place_group(l, ParallelDim::PP), false);
    g.dp_dense = analyse(place_group(l, {ParallelDim::DP, ParallelDim::CP}, DpPart::Shard), false);
    if (l.dp_replicas() > 1) g.dp_replicas = analyse(place_group(l, {ParallelDim::DP}, DpPart::Replicas), false);
    if (moe) {
        g.ep = analyse(place_expert_group(l, ExpertDim::EP), true);
        g.etp = analyse(place_expert_group(l, ExpertDim::ETP), false);
        g.dp_expert = analyse(place_expert_group(l, ExpertDim::EDP), false);
        if (l.dp_replicas() > 1) g.dp_expert_replicas = analyse(place_expert_group(l, ExpertDim::EDPReplicas), false);
    }
    return g;
}

LayerCost layer_cost(const CostContext& ctx, const Layout& l, const LayoutGroups& groups, std::int64_t layer) {
    const ModelSpec& m = ctx.scenario.model;
    const Kernels k(ctx);
    const Shapes x = shapes(ctx.scenario, l);
    const bool dropout = !ctx.runtime.flash_attention() && m.linear_bias && m.norm == NormKind::LayerNorm;
    LayerCost c;
    PhaseCost& f = c.forward;
    PhaseCost& b = c.backward;
    const Mixer mixer = m.layer_mixer(layer);
    // The blocks' GEMMs around their TP collectives, read only where async TP pipelines them or
    // Transformer Engine's backward runs its collectives beside them (the planner's screen
    // prices every layout without async TP). Attention: the output projection last, the rest
    // first; a Mamba mixer: in_proj first, out_proj last.
    const bool pipelined_tp = l.async_tp && l.sequence_parallel;
    const bool backward_async = l.tp > 1 && tp_overlap(ctx.runtime, l, ctx.scenario.training.precision) == TpOverlap::TeNcclBackward;
    const bool tp_gemms = pipelined_tp || backward_async;
    TpBlockGemms tp_blocks[2];
    std::size_t tp_block_count = 0;
    PhaseCost up_projections;
    double core = 0;
    if (mixer == Mixer::Attention) {
        up_projections = attention_projections(m, k, x, ctx.scenario.training, groups.tp, f, b);
        if (tp_gemms) {
            const double attention_out = m.attention == AttentionKind::MultiLatent ? d(m.heads) * d(m.mla.v_head_dim) : d(m.heads) * d(m.head_dim);
            const double qkv_out = m.attention == AttentionKind::MultiLatent ? d(m.heads) * d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim)
                                                                             : d(m.qkv_out());
            tp_blocks[0] = tp_block_gemms(k, x, f.gemm, qkv_out / x.tp, d(m.hidden), d(m.hidden), attention_out / x.tp, pipelined_tp);
        }
        const double core_before = f.attention;
        attention_core(ctx, k, x, l, layer, f, b);
        core = f.attention - core_before;
        tp_block_count = 1;
    } else if (mixer == Mixer::Mamba) {
        const double projections = mamba_block(ctx, k, x, f, b);
        if (tp_gemms)
            tp_blocks[0] = tp_block_gemms(k, x, projections, d(m.mamba.in_proj_out()) / x.tp, d(m.hidden), d(m.hidden),
                                          d(m.mamba.inner()) / x.tp, pipelined_tp);
        tp_block_count = 1;
    } else if (mixer == Mixer::GatedDeltaNet) {
        const double projections = gdn_block(ctx, k, x, f, b);
        if (tp_gemms)
            tp_blocks[0] = tp_block_gemms(k, x, projections, d(m.gdn->in_proj_out()) / x.tp, d(m.hidden), d(m.hidden),
                                          d(m.gdn->value_dim()) / x.tp, pipelined_tp);
        tp_block_count = 1;
    }
    const bool eager_rotary = m.position == PositionKind::Yarn && !ctx.runtime.fused.yarn_rope && mixer == Mixer::Attention;
    const double elementwise = elementwise_bytes(m, layer, x, dropout, !eager_rotary);
    f.memory += k.memory(elementwise);
    b.memory += k.memory(2 * elementwise);
    if (eager_rotary) {
        // Megatron-Core's unfused rotary embedding (rope_utils.py _apply_rotary_pos_emb_bshd:
        // t * cos + rotate_half(t) * sin, then a concatenation with the unrotated rest), 16-bit
        // eager kernels, bytes an element: forward t * cos 4, the negated half 2, rotate_half's
        // concatenation 4, * sin 4, the sum 6 (two reads, a write), the final concatenation 4;
        // backward grad * sin 4, the negated half 2, the halves rejoined 4, grad * cos 4, the two
        // gradients summed 6.
        const double rotated = rotary_elements(m, x);
        f.memory += k.unfused(24 * rotated);
        b.memory += k.unfused(20 * rotated);
    }
    // The MLP block's TP all-gather and reduce-scatter: a dense MLP and shared experts need them;
    // routed experts without expert TP get their tokens from the dispatcher instead.
    MoeParts moe;
    PhaseCost dense_mlp, dense_mlp_b;
    double dense_act = 0;
    const Ffn ffn = m.layer_ffn(layer);
    // The forward work the layer queues before its MoE block, which the host's device-to-host
    // synchronisation waits for (moe_host_floor).
    PhaseCost before_moe;
    if (ffn == Ffn::Moe) {
        before_moe = f;
        moe = moe_block(ctx, k, x, l, groups, f, b);
        const bool mlp_tp_comm = m.moe.shared_experts > 0 || l.etp > 1;
        // The shared experts are the MLP block's TP GEMMs (expert TP's gathers have none of their own).
        if (tp_gemms && m.moe.shared_experts > 0) {
            const double shared = d(m.moe.shared_experts * m.moe.shared_ffn_hidden);
            tp_blocks[tp_block_count] = tp_block_gemms(k, x, moe.shared.gemm, (m.gated_mlp() ? 2 : 1) * shared / x.tp, d(m.hidden),
                                                       d(m.hidden), shared / x.tp, pipelined_tp);
        }
        if (mlp_tp_comm) ++tp_block_count;
    } else if (ffn == Ffn::Dense) {
        dense_act = mlp(m, k, x.T, d(m.ffn_hidden), x.tp, dense_mlp, dense_mlp_b);
        if (tp_gemms)
            tp_blocks[tp_block_count] = tp_block_gemms(k, x, dense_mlp.gemm, (m.gated_mlp() ? 2 : 1) * d(m.ffn_hidden) / x.tp, d(m.hidden),
                                                       d(m.hidden), d(m.ffn_hidden) / x.tp, pipelined_tp);
        ++tp_block_count;
        f.gemm += dense_mlp.gemm;
        f.memory += dense_mlp.memory;
        b.gemm += dense_mlp_b.gemm;
        b.weight_grad += dense_mlp_b.weight_grad;
        b.memory += dense_mlp_b.memory;
    }
    const double gathered = sp_gather_element_bytes(ctx.scenario.training.precision);
    const std::span<const TpBlockGemms> tp_block_span(tp_blocks, tp_block_count);
    // PyTorch's micro-pipeline pass fuses matmul -> reduce-scatter but not all-gather -> matmul
    // when the matmul takes row-wise scales (pytorch/pytorch#149990, torchao's row-wise float8).
    const bool gathers_pipelined = ctx.scenario.training.precision.scaling != Scaling::Row;
    const double sp_gather =
        tensor_parallel_comm(l, k, x, d(m.hidden), groups.tp, tp_block_span, gathered, ctx.runtime.sp_input_regathered, gathers_pipelined,
                             backward_async, f, b);
    if (l.cp > 1 && mixer == Mixer::Mamba) {
        // Megatron-Core's Mamba context parallelism (megatron/core/ssm/mamba_context_parallel.py):
        // all-to-alls of z, x, B, C and dt, then of y, each its own.
        const MambaSpec& ms = m.mamba;
        mixer_cp_exchange(k, x, groups.cp, {ms.inner(), ms.inner(), ms.groups * ms.state, ms.groups * ms.state, ms.heads, ms.inner()}, f, b);
    }
    if (l.cp > 1 && mixer == Mixer::GatedDeltaNet) {
        // Megatron-Core's gated delta net context parallelism (gated_delta_net/gdn.py,
        // a2a_cp_to_hp and _gated_norm_and_a2a at d98e8a64dd): one all-to-all of the in_proj
        // output (q, k, v, the gate z, beta and alpha), one of the gated norm's output.
        mixer_cp_exchange(k, x, groups.cp, {m.gdn->in_proj_out(), m.gdn->value_dim()}, f, b);
    }
    if (l.cp > 1 && mixer == Mixer::Attention) {
        // The K/V elements per token a rank passes on: MLA's over its heads, GQA's of its KV heads.
        const double kv = m.attention == AttentionKind::MultiLatent
                              ? d(m.heads) * d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) / x.tp
                              : 2 * d(m.kv_heads_per_rank(l.tp)) * d(m.head_dim);
        const double step = k.collective(CollectiveOp::SendRecv, x.T * kv * 2, groups.cp);
        f.cp += d(l.cp - 1) * step;
        b.cp += 2 * d(l.cp - 1) * step;
    }
    if (l.zero_stage >= 3) {
        // Every microbatch gathers the layer's 16-bit parameters for its forward and again for
        // its backward (resharded after forward), and reduce-scatters the layer's gradient in the
        // runtime's gradient dtype: FSDP, Megatron-FSDP and DeepSpeed keep gradients sharded, so
        // they reduce each microbatch's and no stage-wide reduction follows (plan_step). Under
        // full recompute a hook-based runtime gathers once more for the recomputed forward.
        // A per-module runtime gathers a module that was not prefetched while the device waits.
        const StageParams p = layer_params_per_gpu(m, l, layer);
        // DeepSpeed before September 2021 gathers tensor by tensor (per_tensor_gather_host_s);
        // its re-gather after recompute is priced as that share of the layer's tensor gathers.
        const double gather = zero3_gather(ctx, k, l, groups.dp_dense, layer, p.total(), 1.0);
        const Zero3Traits& z = ctx.runtime.zero3;
        const double regathered = l.recompute == Recompute::Full && z.regather_for_recompute
                                      ? regathered_after_recompute(m, l, layer, z.max_reuse_distance) : 0.0;
        const double backward_gathers =
            gather + (regathered > 0 ? zero3_gather(ctx, k, l, groups.dp_dense, layer, p.total(), regathered / p.total()) : 0.0);
        // Per-tensor gathers synchronise the device before each one: nothing overlaps them.
        const double waited = z.per_tensor_gather_host_s > 0 ? 1.0 : 1.0 - zero3_prefetched_share(m, l, layer, z.max_live_params);
        f.zero3 += gather;
        f.zero3_waited += waited * gather;
        b.zero3 += backward_gathers +
                   k.collective(CollectiveOp::ReduceScatter, p.total() * precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime)),
                                groups.dp_dense);
        // HSDP under FSDP2: each microbatch's gradient shard is all-reduced across the replicas
        // right after its reduce-scatter (foreach_reduce); runtimes that do it once per step
        // leave it to the stage's reduction (plan_step).
        if (z.hsdp_all_reduce_every_microbatch)
            b.zero3 += replica_reduce(ctx, groups.dp_dense, groups.dp_replicas, p.dense) +
                       replica_reduce(ctx, groups.dp_expert, groups.dp_expert_replicas, p.expert);
        b.zero3_waited += waited * backward_gathers;
    }
    // Recomputation re-runs forward work inside the backward pass; `moe_rerun` is the share of
    // the MoE block among it.
    double moe_rerun = 0;
    if (l.recompute == Recompute::Full) {
        moe_rerun = 1;
        c.recompute = f.compute();
        b.tp += f.tp;
        b.tp_hidden += f.tp_hidden;
        b.ep += f.ep;
    } else if (l.recompute == Recompute::Selective && ctx.runtime.selective_checkpoint == SelectiveCheckpoint::Layers) {
        // Every interval-th block recomputed whole (SelectiveCheckpoint), spread over the layers.
        const double share = 1.0 / d(ctx.runtime.selective_checkpoint_interval);
        moe_rerun = share;
        c.recompute = share * f.compute();
        b.tp += share * f.tp;
        b.tp_hidden += share * f.tp_hidden;
        b.ep += share * f.ep;
    } else if (l.recompute == Recompute::Selective && ctx.runtime.selective_checkpoint == SelectiveCheckpoint::Ops) {
        // torchtitan's per-op policy (SelectiveCheckpoint): the matmuls it does not save, and
        // every memory-bound op of the forward (norms, rotary, activation, the first residual
        // add: non-reentrant checkpointing stops recomputing once the last tensor the backward
        // needs, w2's input, is rebuilt, so the block's last add is not rerun); SDPA is saved.
        // A MoE block is rerun whole (its experts' grouped GEMMs are not saved), all-to-alls
        // with it. Collectives other than reduce_scatter are not saved: sequence parallelism's
        // all-gathers run again, and without it the attention's all-reduce (the MLP needs its
        // output; the MLP's own comes after the last rebuilt tensor).
        PhaseCost redo, unused;
        for (const BlockMatmul& mm : op_checkpoint_matmuls(m, layer)) {
            if (mm.saved) continue;
            k.linear(redo, unused, x.T, mm.split == TpSplit::Column ? mm.out / x.tp : mm.out,
                     mm.split == TpSplit::Row ? mm.in / x.tp : mm.in);
        }
        c.recompute = redo.compute() + k.memory(elementwise - 6 * d(m.hidden) * x.norm_T) + dense_act;
        if (ffn == Ffn::Moe) {
            moe_rerun = 1;
            c.recompute += moe.block.compute();
            b.ep += moe.block.ep;
        }
        if (l.tp > 1 && l.sequence_parallel) {
            // Recomputed for the weight gradients, which take the gathered input as their
            // reduction dimension: no GEMM of the recompute to pipeline them with.
            b.tp += d(tp_block_span.size()) * sp_gather;
        } else if (l.tp > 1)
            b.tp += k.collective(CollectiveOp::AllReduce, x.T * d(m.hidden) * 2, groups.tp);
    } else if (l.recompute == Recompute::Selective) {
        const std::uint8_t r = active_recompute_modules(l.recompute, l.recompute_modules, ctx.runtime.flash_attention());
        // Two norms per layer, each reading and writing h elements per token in 16 bits.
        if (r & kRecomputeLayerNorm) c.recompute += k.memory(m.norms_per_layer() * 4 * d(m.hidden) * x.norm_T);
        if (r & kRecomputeCoreAttn) c.recompute += core;
        if (r & kRecomputeMlaUpProj) c.recompute += up_projections.compute();
        if (r & kRecomputeAct) c.recompute += dense_act + moe.expert_act;
        else if (r & kRecomputeMoeAct) c.recompute += moe.expert_act;
        if (r & kRecomputeMlp) c.recompute += dense_mlp.compute();
        if (r & kRecomputeMoe) {
            moe_rerun = 1;
            c.recompute += moe.block.compute();
            b.ep += moe.block.ep;
        } else if (r & kRecomputeSharedExperts) {
            c.recompute += moe.shared.compute();
        }
    }
    b.memory += c.recompute;
    if (ffn == Ffn::Moe) moe_host_floor(ctx, l, moe_rerun, before_moe, c);
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
    // Low-precision recipes keep the output projection in 16 bits: Megatron-Core's output layer
    // is not a Transformer Engine module, and torchtitan's Float8 conversion skips "output".
    const Kernels k = Kernels(ctx).bf16_kernels();
    const Shapes x = shapes(ctx.scenario, l);
    const ModelSpec& m = ctx.scenario.model;
    PhaseCost f, b;
    k.linear(f, b, x.T, d(m.vocab) / x.tp, d(m.hidden));
    // The loss kernel's traffic per local logit (spec/runtime_profile.cpp, cross_entropy_bytes).
    const double logits = x.T * d(m.vocab) / x.tp;
    const CrossEntropyBytes loss = cross_entropy_bytes(ctx.runtime.cross_entropy);
    f.memory += k.unfused(loss.forward_traffic * logits) + k.memory(4 * x.norm_T * d(m.hidden));
    b.memory += k.unfused(loss.backward_traffic * logits);
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

CommDetail dp_gather_detail(const CostContext& ctx, const Layout& l, const GroupShape& group, double bytes) {
    if (group.ranks <= 1 || bytes <= 0 || l.zero_stage == 0 || l.zero_stage == 3) return {};
    return {CollectiveOp::AllGather, bytes, ctx.network.cost(CollectiveOp::AllGather, Bytes(bytes), group), group};
}

double gathered_weight_bytes(const CostContext& ctx) {
    const PrecisionRecipe& recipe = ctx.scenario.training.precision;
    if (!ctx.runtime.fp8_param_gather || recipe.operands != Precision::Fp8 || communicates_in_high_precision(recipe)) return 2.0;
    return quantized_element_bytes(recipe, TensorRole::Weight);
}

double pp_transfer(const CostContext& ctx, const Layout& l, const LayoutGroups& groups) {
    return pp_transfer_detail(ctx, l, groups).cost.time.value();
}

double dp_reduce(const CostContext& ctx, const Layout& l, const GroupShape& group, double params) {
    return dp_reduce_detail(ctx, l, group, params).cost.time.value();
}

double dp_gather(const CostContext& ctx, const Layout& l, const GroupShape& group, double bytes) {
    return dp_gather_detail(ctx, l, group, bytes).cost.time.value();
}

double replica_reduce(const CostContext& ctx, const GroupShape& shard, const GroupShape& replicas, double params) {
    if (replicas.ranks <= 1 || params <= 0) return 0.0;
    const double bytes = params * precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime)) / static_cast<double>(std::max<std::int64_t>(1, shard.ranks));
    return ctx.network.cost(CollectiveOp::AllReduce, Bytes(bytes), replicas).time.value();
}

double optimizer_time(const CostContext& ctx, const Layout& l, double local_params) {
    // Adam over the local shard: read gradient, master weight and two moments, write them back
    // and the 16-bit copy.
    const OptimizerSpec& o = ctx.scenario.training.optimizer;
    const double moments = o.kind == OptimizerKind::Muon ? 1.0 : 2.0;
    const double state = (o.master_weights ? 4.0 : 0.0) + moments * precision_bytes(o.state_dtype);
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

// Megatron-LM (d98e8a64, megatron/core/optimizer/clip_grads.py) sums the squared norms of the
// local gradients with multi_tensor_l2norm and all-reduces the fp32 total over the gradient-
// statistics group, every rank of the job under the distributed optimizer; torchtitan (b5bcd76c,
// torchtitan/distributed/utils.py clip_grad_norm_) takes the norm of DTensor gradients, one
// reduction over the whole mesh. The scaling that follows runs only when the norm exceeds the
// threshold (Megatron: clip_coeff < 1.0) and is not counted.
double grad_norm_time(const CostContext& ctx, const Layout& l, double local_params) {
    if (!ctx.runtime.grad_clip || local_params <= 0) return 0.0;
    const double bytes = local_params * precision_bytes(gradient_dtype(ctx.scenario.training, ctx.runtime));
    // Offloaded, the gradients the norm reads are in host memory (ZeRO-Offload's CPU norm, FSDP2's
    // CPU-offloaded gradients).
    if (l.optimizer_offload) return bytes / (ctx.scenario.cluster.host.memory_gbps_per_gpu * 1e9);
    return bytes / (ctx.profile.memory_tbps() * ctx.runtime.compute_efficiency * 1e12);
}

double grad_norm_all_reduce(const CostContext& ctx, const GroupShape& world) {
    if (!ctx.runtime.grad_clip || world.ranks <= 1) return 0.0;
    return ctx.network.cost(CollectiveOp::AllReduce, Bytes(4), world).time.value();
}

double newton_schulz_time(const CostContext& ctx, const Layout& l, double local_params) {
    if (ctx.scenario.training.optimizer.kind != OptimizerKind::Muon || local_params <= 0) return 0.0;
    // Five Newton-Schulz iterations (Megatron --muon-num-ns-steps 5) orthogonalise each m x n
    // momentum matrix (m <= n): X X^T (2 m^2 n), the quintic's square (2 m^3) and its product
    // with X (2 m^2 n). Distributed Muon (Liu et al. 2025, "Muon is Scalable for LLM Training")
    // gathers the momentum of the matrices in a rank's ZeRO partition and orthogonalises them
    // whole, and Megatron's default --muon-tp-mode duplicated does the same across tensor
    // parallelism: a GPU orthogonalises tp x its local shard, in whole matrices. Taken with
    // m = hidden and an MLP's aspect n / m = 3.5: 5 (4 m + 2 m / 3.5) FLOPs per parameter, in
    // 16-bit GEMMs of that shape.
    const double m = d(ctx.scenario.model.hidden), n = 3.5 * m;
    const double flops = local_params * d(l.tp) * 5 * (4 * m + 2 * m / 3.5);
    const auto i = [](double v) { return static_cast<std::int64_t>(v); };
    return flops / (ctx.profile.gemm_tflops(Precision::Bf16, i(m), i(m), i(n)) * ctx.runtime.compute_efficiency * 1e12);
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
    // 12 h s per layer and token counts every key of the sequence (the causal mask is not
    // credited); a windowed layer counts the keys inside its band the same way.
    double keys = 0;
    for (std::int64_t layer = 0; layer < m.layers; ++layer) {
        if (m.layer_mixer(layer) != Mixer::Attention) continue;
        keys += m.layer_is_windowed(layer) ? 2.0 * m.mean_causal_keys(layer, s.training.seq_len) : d(s.training.seq_len);
    }
    const double scan = d(m.mixer_layer_count(Mixer::Mamba)) * 3 * ssd_scan_flops_per_token(m) +
                        d(m.mixer_layer_count(Mixer::GatedDeltaNet)) * 3 * gdn_rule_flops_per_token(m);
    return tokens * (6 * dense + 12 * attn_width * keys + scan);
}

double hardware_flops_per_step(const Scenario& s, const Layout& l, double model, const RuntimeProfile& runtime) {
    const bool flash_attention = runtime.flash_attention();
    if (l.recompute == Recompute::Full) return model * 4.0 / 3.0;
    if (l.recompute == Recompute::Selective && runtime.selective_checkpoint == SelectiveCheckpoint::Layers)
        return model * (1.0 + 1.0 / (3.0 * d(runtime.selective_checkpoint_interval)));
    if (l.recompute == Recompute::Selective && runtime.selective_checkpoint == SelectiveCheckpoint::Ops) {
        // The matmuls the policy does not save, and a MoE layer's active experts, once more.
        const ModelSpec& m = s.model;
        double per_token = 0;
        for (std::int64_t layer = 0; layer < m.layers; ++layer) {
            for (const BlockMatmul& mm : op_checkpoint_matmuls(m, layer))
                if (!mm.saved) per_token += 2 * mm.in * mm.out;
            if (m.layer_is_moe(layer))
                per_token += 2 * (d(m.moe.top_k) * routed_expert_params(m) + d(m.moe.shared_experts) * mlp_params(m, m.moe.shared_ffn_hidden) +
                                  latent_projection_params(m));
        }
        return model + s.training.tokens_per_step() * per_token;
    }
    if (l.recompute == Recompute::Selective && !flash_attention) {
        const ModelSpec& m = s.model;
        return model + s.training.tokens_per_step() * 4 * d(m.mixer_layer_count(Mixer::Attention)) * d(m.heads) * d(m.head_dim) *
                           d(s.training.seq_len);
    }
    return model;
}

}  // namespace sextant
