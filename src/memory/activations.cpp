#include "memory/activations.hpp"

#include <algorithm>

#include "spec/runtime_profile.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

// Elements per token of one layer's stored activations, split by how TP treats them.
struct PerToken {
    double replicated = 0;  // kept whole on every TP rank unless sequence parallel splits them
    double sharded = 0;     // split across TP ranks
    double unsplit = 0;     // whole on every TP rank even with sequence parallelism (partial sums)
};

// What torchtitan's per-op policy keeps of a layer: the block's input (the checkpoint's), the
// saved matmul outputs in 16 bits, SDPA's output and fp32 log-sum-exp, and under sequence
// parallelism the outputs of the attention's and a dense MLP's reduce-scatters (the policy saves
// reduce_scatter_tensor). The max it saves for FP8 scales is one number per tensor.
PerToken op_checkpoint_per_token(const ModelSpec& m, std::int64_t layer, bool sequence_parallel) {
    PerToken p;
    const double h = d(m.hidden), heads = d(m.heads);
    p.replicated += 2 * h;
    for (const BlockMatmul& mm : op_checkpoint_matmuls(m, layer)) {
        if (!mm.saved) continue;
        (mm.split == TpSplit::Column ? p.sharded : p.unsplit) += 2 * mm.out;
    }
    if (m.layer_mixer(layer) == Mixer::Attention) {
        const double out = m.attention == AttentionKind::MultiLatent ? heads * d(m.mla.v_head_dim) : heads * d(m.head_dim);
        p.sharded += 2 * out + 4 * heads;
    }
    // One reduce-scatter output per block that ends in one: a mixer, a dense MLP.
    const double scattered = (m.layer_mixer(layer) != Mixer::None ? 1 : 0) + (m.layer_ffn(layer) == Ffn::Dense ? 1 : 0);
    if (sequence_parallel) p.replicated += scattered * 2 * h;
    return p;
}

// Elements per token of an attention layer's Q, K, V and output (the output projection's input),
// before TP splits them. K and V per rank are its share of the KV heads, or one where tp exceeds
// them (kv_heads_per_rank x tp, which the layout's rules make max(kv_heads, tp)).
struct AttentionWidths {
    double q = 0, k = 0, v = 0, out = 0;
};
AttentionWidths attention_widths(const ModelSpec& m, std::int64_t tp) {
    const double heads = d(m.heads);
    if (m.attention == AttentionKind::MultiLatent) {
        const double qk = heads * d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim), v = heads * d(m.mla.v_head_dim);
        return {qk, qk, v, v};
    }
    const double q = heads * d(m.head_dim), kv = d(std::max(m.kv_heads, tp)) * d(m.head_dim);
    return {q, kv, kv, q};
}

PerToken attention_per_token(const ModelSpec& m, const RuntimeTraits& t, std::int64_t seq, std::int64_t tp, std::uint8_t recompute) {
    PerToken p;
    const double h = d(m.hidden), heads = d(m.heads);
    p.replicated += 2 * h;  // norm input (bytes: 2 per element)
    // The norm output, the QKV GEMM's input: sharded under sequence parallelism where the backward
    // gathers it again, whole where autograd saved the gathered copy.
    if (!(recompute & kRecomputeLayerNorm)) (t.sp_input_regathered ? p.replicated : p.unsplit) += t.saved_input_bytes * h;
    if (t.dropout) p.replicated += h;  // output dropout mask, 1 byte
    // The compressed latents, inputs of the up-projections.
    if (m.attention == AttentionKind::MultiLatent)
        p.replicated += t.saved_input_bytes * d(m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
    const AttentionWidths w = attention_widths(m, tp);
    // The output gate's multiply keeps its two inputs, the gate and the attention output, beside
    // its product, the output projection's input.
    if (m.attention_output_gate) p.sharded += 2 * 2 * w.q;
    // Q, K, V for the attention core's backward, unless the up-projections rebuild them.
    if (!(recompute & kRecomputeMlaUpProj)) p.sharded += 2 * (w.q + w.k + w.v);
    p.sharded += 2 * w.out;
    const bool core_kept = !(recompute & kRecomputeCoreAttn);
    if (!t.flash_attention && core_kept) {
        // Softmax output (2 bytes), and with dropout its mask (1) and output (2): 5as or 2as.
        p.sharded += (t.dropout ? 5.0 : 2.0) * heads * d(seq);
    }
    if (t.flash_attention) p.sharded += 4.0 * heads;  // fp32 log-sum-exp per head
    return p;
}

// A Mamba-2 mixer on Megatron-Core's memory-efficient path (use_mamba_mem_eff_path, the default):
// mamba_split_conv1d_scan_combined saves in_proj's whole output [z, x, B, C, dt] and the scan's
// output before the gated norm (16 bits) and the norm's fp32 reciprocal deviation per group, and
// rebuilds the conv1d output and the chunk states in its backward (mamba_ssm ops/triton/
// ssd_combined.py, MambaSplitConv1dScanCombinedFn); out_proj keeps its input, the normed output.
// With the layer norm and in_proj input as attention's.
PerToken mamba_per_token(const ModelSpec& m, const RuntimeTraits& t, std::uint8_t recompute) {
    PerToken p;
    const double h = d(m.hidden);
    const MambaSpec& s = m.mamba;
    p.replicated += 2 * h;
    if (!(recompute & kRecomputeLayerNorm)) (t.sp_input_regathered ? p.replicated : p.unsplit) += t.saved_input_bytes * h;
    p.sharded += 2 * d(s.in_proj_out()) + 2 * d(s.inner()) + 4 * d(s.groups) + t.saved_input_bytes * d(s.inner());
    return p;
}

// A gated delta net mixer (Megatron-Core GatedDeltaNet, no recompute) keeps: the causal conv1d's
// input [q, k, v] (causal_conv1d_fn saves it and rebuilds its output), the gate z and the
// scan's output for the gated norm and the norm's output for out_proj (saved format) and its fp32
// reciprocal deviation per head; flash-linear-attention's l2norm keeps its normed queries and
// keys, and chunk_gated_delta_rule keeps them repeated to the value heads, the values, g (fp32)
// and beta per head and the chunk's 16-bit A (chunk entries per head). With the layer norm and
// in_proj input as attention's. Out of line: inlined, it tipped GCC 12 out of inlining the rest of
// layer_activation_bytes, which the planner's memory screen runs for every layout (plan
// --search-all on DeepSeek-V3 measured 3.5% slower).
[[gnu::noinline]] PerToken gdn_per_token(const ModelSpec& m, const RuntimeTraits& t, std::uint8_t recompute) {
    PerToken p;
    const double h = d(m.hidden);
    const GatedDeltaNetSpec& g = *m.gdn;
    const double heads = d(g.value_heads), value = d(g.value_dim()), key = d(g.key_dim());
    p.replicated += 2 * h;
    if (!(recompute & kRecomputeLayerNorm)) (t.sp_input_regathered ? p.replicated : p.unsplit) += t.saved_input_bytes * h;
    p.sharded += 2 * d(g.conv_channels()) + 2 * 2 * key + 2 * 2 * heads * d(g.key_head_dim) + 2 * value +
                 (4 + 2 + 4 + 2 * d(g.chunk)) * heads + 2 * 2 * value + t.saved_input_bytes * value;
    return p;
}

PerToken mixer_per_token(const ModelSpec& m, const RuntimeTraits& t, std::int64_t layer, std::int64_t seq, std::int64_t tp,
                         std::uint8_t recompute) {
    switch (m.layer_mixer(layer)) {
    case Mixer::Attention: return attention_per_token(m, t, seq, tp, recompute);
    case Mixer::Mamba: return mamba_per_token(m, t, recompute);
    case Mixer::GatedDeltaNet: return gdn_per_token(m, t, recompute);
    case Mixer::None: break;
    }
    return {};
}

// The first GEMM's output (gate|up for a gated MLP: 2f elements, else f) in 16 bits, and the
// activation function's output, the second GEMM's input (f elements, in the recipe's saved
// format), unless the activation is recomputed; an eager clamp keeps a clamped copy of the first
// GEMM's output as well (the clamps' backward needs the unclamped one, the activation's the
// clamped one), unless the activation is recomputed.
double mlp_internals(const ModelSpec& m, const RuntimeTraits& t, std::int64_t ffn, bool recompute_activation) {
    const double fc1 = m.gated_mlp() ? 4.0 * d(ffn) : 2.0 * d(ffn);
    if (recompute_activation) return fc1;
    return fc1 * (t.eager_activation_clamp ? 2.0 : 1.0) + t.saved_input_bytes * d(ffn);
}

PerToken mlp_per_token(const ModelSpec& m, const RuntimeTraits& t, std::int64_t layer, std::uint8_t recompute) {
    PerToken p;
    if (m.layer_ffn(layer) == Ffn::None) return p;
    const double h = d(m.hidden);
    p.replicated += 2 * h;                // norm input
    const double norm_output = t.saved_input_bytes * h;  // first GEMM (or router) input
    // A dense MLP's input is gathered over TP like the QKV GEMM's (attention_per_token); a MoE
    // layer's router and dispatcher take the sharded tokens.
    if (!(recompute & kRecomputeLayerNorm))
        (t.sp_input_regathered || m.layer_is_moe(layer) ? p.replicated : p.unsplit) += norm_output;
    if (t.dropout) p.replicated += h;
    if (!m.layer_is_moe(layer)) {
        if (recompute & kRecomputeMlp) {
            // Only the MLP's input survives; the layernorm module would rebuild even that.
            if (recompute & kRecomputeLayerNorm) p.replicated += norm_output;
            return p;
        }
        p.sharded += mlp_internals(m, t, m.ffn_hidden, recompute & kRecomputeAct);
        return p;
    }
    const MoeSpec& e = m.moe;
    if (recompute & kRecomputeMoe) {
        if (recompute & kRecomputeLayerNorm) p.replicated += norm_output;
        return p;
    }
    p.replicated += 4.0 * d(e.experts);  // fp32 router probabilities
    // A latent MoE's up projection keeps its input, the combined latent output.
    if (e.latent > 0) p.replicated += t.saved_input_bytes * d(e.latent);
    // Each token visits top_k experts (its permuted copy, in the experts' width, is the expert's
    // first GEMM input); the busiest rank sees MoeSpec::routed_share() times the mean.
    const bool expert_act = recompute & (kRecomputeMoeAct | kRecomputeAct);
    p.sharded += e.routed_share() * d(e.top_k) * (t.saved_input_bytes * d(m.expert_width()) + mlp_internals(m, t, e.expert_ffn_hidden, expert_act));
    if (!(recompute & kRecomputeSharedExperts))
        p.sharded += d(e.shared_experts) * mlp_internals(m, t, e.shared_ffn_hidden, recompute & kRecomputeAct);
    return p;
}

double tokens_per_microbatch(const Scenario& s, const Layout& l) {
    return d(l.microbatch) * d(s.training.seq_len) / d(l.cp);
}

double bytes_for(const PerToken& p, const Layout& l, double tokens) {
    const double tp = d(l.tp);
    const double replicated = l.sequence_parallel ? p.replicated / tp : p.replicated;
    return tokens * (replicated + p.sharded / tp + p.unsplit);
}

// What a layer keeps when `modules` (Megatron's recompute modules; 0 = none) are recomputed.
double kept_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& t, std::int64_t layer, std::uint8_t modules, double tokens) {
    PerToken a = mixer_per_token(s.model, t, layer, s.training.seq_len, l.tp, modules);
    PerToken m = mlp_per_token(s.model, t, layer, modules);
    return bytes_for({a.replicated + m.replicated, a.sharded + m.sharded, a.unsplit + m.unsplit}, l, tokens);
}
}  // namespace

BlockMatmuls op_checkpoint_matmuls(const ModelSpec& m, std::int64_t layer) {
    BlockMatmuls mms = block_matmuls(m, layer);
    for (std::size_t i = 0; i < mms.size(); ++i) mms[i].saved = i % 2 == 0;
    return mms;
}

bool eager_activation_clamp(const ModelSpec& m, const RuntimeProfile& runtime) {
    return m.activation_clamp > 0 && m.gated_mlp() && !runtime.fused.activation_clamp;
}

RuntimeTraits runtime_traits(const Scenario& s, const RuntimeProfile& runtime) {
    RuntimeTraits t;
    t.flash_attention = runtime.flash_attention();
    t.dropout = s.model.linear_bias && s.model.norm == NormKind::LayerNorm && !runtime.flash_attention();
    t.zero3_reshard_with_pp = runtime.zero3_reshard_with_pp;
    t.least_pp_warmup = runtime.least_pp_warmup;
    t.selective = runtime.selective_checkpoint;
    t.selective_interval = runtime.selective_checkpoint_interval;
    t.cross_entropy = runtime.cross_entropy;
    t.grad_dtype = gradient_dtype(s.training, runtime);
    t.zero3 = runtime.zero3;
    // Transformer Engine saves a quantised recipe's GEMM inputs for the weight gradient in the
    // low-precision format (with its scales), not in 16 bits.
    const PrecisionRecipe& p = s.training.precision;
    t.saved_input_bytes = quantized_element_bytes(p, TensorRole::Activation);
    t.sp_input_regathered = runtime.sp_input_regathered;
    t.eager_activation_clamp = eager_activation_clamp(s.model, runtime);
    return t;
}

RuntimeTraits runtime_traits(const Scenario& s) { return runtime_traits(s, load_runtime_profile(s.training.framework, "/framework")); }

bool shards_like_zero1(const Layout& l, const RuntimeTraits& traits) {
    return l.zero_stage == 3 && l.pp > 1 && !traits.zero3_reshard_with_pp;
}

Layout effective_sharding(const Layout& layout, const RuntimeTraits& traits) {
    Layout l = layout;
    if (shards_like_zero1(l, traits)) l.zero_stage = 1;
    return l;
}

const Layout& effective_sharding_scratch(const Layout& layout, const RuntimeTraits& traits) {
    thread_local Layout l;
    l = layout;  // copy-assigned: the stage split keeps its capacity
    if (shards_like_zero1(l, traits)) l.zero_stage = 1;
    return l;
}

double layer_working_set_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& t, std::int64_t layer) {
    PerToken a = mixer_per_token(s.model, t, layer, s.training.seq_len, l.tp, 0);
    PerToken m = mlp_per_token(s.model, t, layer, 0);
    return bytes_for({a.replicated + m.replicated, a.sharded + m.sharded, a.unsplit + m.unsplit}, l, tokens_per_microbatch(s, l));
}

double layer_activation_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& t, std::int64_t layer) {
    const double tokens = tokens_per_microbatch(s, l);
    // Only the layer input survives the forward pass of a layer checkpointed whole.
    const double input = 2.0 * d(s.model.hidden);
    const double checkpointed = tokens * (l.sequence_parallel ? input / d(l.tp) : input);
    if (l.recompute == Recompute::Full) return checkpointed;
    if (l.recompute == Recompute::Selective && t.selective == SelectiveCheckpoint::Ops)
        return bytes_for(op_checkpoint_per_token(s.model, layer, l.sequence_parallel && l.tp > 1), l, tokens);
    if (l.recompute == Recompute::Selective && t.selective == SelectiveCheckpoint::Layers) {
        // One block in `interval` keeps its input only, the others everything (SelectiveCheckpoint).
        const double share = 1.0 / d(t.selective_interval);
        return share * checkpointed + (1 - share) * kept_bytes(s, l, t, layer, 0, tokens);
    }
    return kept_bytes(s, l, t, layer, active_recompute_modules(l.recompute, l.recompute_modules, t.flash_attention), tokens);
}

namespace {
// Each offload module's inputs one layer keeps, per token, in Megatron's forward order
// (OffloadModule bits from the lowest): the same tensors, at the same sizes and TP splits, as
// attention_per_token and mlp_per_token keep them. Zero for a module the layer lacks, or whose
// input a recomputed module rebuilds (not kept, so not moved).
std::array<PerToken, kOffloadModuleCount> offload_groups_per_token(const Scenario& s, const Layout& l, const RuntimeTraits& t,
                                                                   std::int64_t layer) {
    std::array<PerToken, kOffloadModuleCount> g{};
    const std::uint8_t off = l.offload_modules;
    if (off == 0 || l.recompute == Recompute::Full) return g;
    const ModelSpec& m = s.model;
    const std::uint8_t rc = active_recompute_modules(l.recompute, l.recompute_modules, t.flash_attention);
    const double h = d(m.hidden);
    if (m.layer_mixer(layer) == Mixer::Attention) {
        if (off & kOffloadAttnNorm) g[0].replicated += 2 * h;
        if ((off & kOffloadQkvLinear) && !(rc & kRecomputeLayerNorm))
            (t.sp_input_regathered ? g[1].replicated : g[1].unsplit) += t.saved_input_bytes * h;
        const AttentionWidths w = attention_widths(m, l.tp);
        if ((off & kOffloadCoreAttn) && !(rc & kRecomputeMlaUpProj)) g[2].sharded += 2 * (w.q + w.k + w.v);
        if (off & kOffloadAttnProj) g[3].sharded += 2 * w.out;
    }
    if (m.layer_ffn(layer) != Ffn::None && (off & kOffloadMlpNorm)) g[4].replicated += 2 * h;
    if (m.layer_is_moe(layer) && !(rc & kRecomputeMoe)) {
        const MoeSpec& e = m.moe;
        const double copies = e.routed_share() * d(e.top_k);
        if (off & kOffloadExpertFc1) g[5].sharded += copies * t.saved_input_bytes * d(m.expert_width());
        if (off & kOffloadMoeAct) g[6].sharded += copies * (m.gated_mlp() ? 4.0 : 2.0) * d(e.expert_ffn_hidden);
    }
    return g;
}
}  // namespace

double offloaded_module_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& t, std::int64_t layer) {
    PerToken p;
    for (const PerToken& g : offload_groups_per_token(s, l, t, layer)) {
        p.replicated += g.replicated;
        p.sharded += g.sharded;
        p.unsplit += g.unsplit;
    }
    return bytes_for(p, l, tokens_per_microbatch(s, l));
}

double offloaded_chunk_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& t, std::int64_t first, std::int64_t layers) {
    double all = 0;
    if (l.offload_fraction >= 1) {
        for (std::int64_t layer = first; layer < first + layers; ++layer) all += offloaded_module_bytes(s, l, t, layer);
        return all;
    }
    // Megatron-Core's groups: one per layer and module that moves any bytes, in forward order;
    // the later int(groups x (1 - fraction)) stay on the GPU (fine_grained_activation_offload.py
    // post_warmup_callback, core_v0.19.0), the same double arithmetic as Python's.
    const double tokens = tokens_per_microbatch(s, l);
    const auto each_group = [&](auto&& visit) {
        for (std::int64_t layer = first; layer < first + layers; ++layer)
            for (const PerToken& g : offload_groups_per_token(s, l, t, layer))
                if (const double bytes = bytes_for(g, l, tokens); bytes > 0) visit(bytes);
    };
    std::size_t groups = 0;
    each_group([&](double) { ++groups; });
    const auto moving = groups - static_cast<std::size_t>(static_cast<double>(groups) * (1.0 - l.offload_fraction));
    std::size_t seen = 0;
    each_group([&](double bytes) {
        if (seen++ < moving) all += bytes;
    });
    return all;
}

PipelineShape pipeline_shape(const Layout& l, std::int64_t microbatches, const RuntimeTraits& t) {
    PipelineShape shape{l.pp, l.vp, microbatches, l.pp_warmup};
    if (shape.warmup == 0 && t.least_pp_warmup && l.schedule == Schedule::Interleaved) shape.warmup = (l.vp - 1) * l.pp + l.pp - 1;
    return shape;
}

double microbatches_in_flight(const Layout& l, std::int64_t stage, std::int64_t microbatches, const RuntimeTraits& traits) {
    return l.schedule_def().in_flight(pipeline_shape(l, microbatches, traits), stage);
}

}  // namespace sextant
