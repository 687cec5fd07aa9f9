#pragma once
// The shape of a decoder-only transformer: what parameter counts, FLOPs and activation memory
// are computed from.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "spec/fields.hpp"

namespace sextant {

enum class NormKind { LayerNorm, RmsNorm };
inline constexpr std::string_view kNormNames[] = {"layernorm", "rmsnorm"};
constexpr std::span<const std::string_view> enum_names(NormKind) { return kNormNames; }
// GeLU and ReLU-family MLPs have two matrices; gated ones (SwiGLU, GeGLU) three (gate, up, down).
// Squared ReLU is Nemotron-4's (Parmar et al. 2024), ReLU OPT's.
enum class MlpKind { Gelu, SwiGlu, GeGlu, SquaredRelu, Relu };
inline constexpr std::string_view kMlpNames[] = {"gelu", "swiglu", "geglu", "squared_relu", "relu"};
constexpr std::span<const std::string_view> enum_names(MlpKind) { return kMlpNames; }
// Rotary embeddings, with YaRN's frequency scaling (gpt-oss) a kind of its own: Megatron runs
// only plain RoPE in its fused kernel (see FusedKernels::yarn_rope). None: no position encoding
// in the attention layers (Megatron-Core's MambaModel default; a hybrid model's Mamba layers
// carry the order).
enum class PositionKind { Learned, Rotary, Yarn, None };
inline constexpr std::string_view kPositionNames[] = {"learned", "rotary", "yarn", "none"};
constexpr std::span<const std::string_view> enum_names(PositionKind) { return kPositionNames; }
enum class AttentionKind { Standard, MultiLatent };

// Multi-head latent attention (DeepSeek-V2/V3): low-rank compressed queries and keys/values.
struct LatentAttention {
    std::int64_t q_lora_rank = 0;  // 0: queries are not compressed
    std::int64_t kv_lora_rank = 0;
    std::int64_t qk_nope_head_dim = 0;
    std::int64_t qk_rope_head_dim = 0;
    std::int64_t v_head_dim = 0;
};

// Banded (local) attention: a windowed layer attends to the last `tokens` positions only. The
// pattern repeats `local` windowed layers then `global` full ones (gpt-oss and Gemma 2 alternate
// 1:1 starting with a windowed layer; Gemma 3 runs 5:1). Chunked attention (Llama 4, 3:1) cuts
// the sequence into aligned blocks of `tokens` instead: a query sees only the keys of its own
// block, so the first query of each block sees one key, not `tokens`.
struct SlidingWindow {
    std::int64_t tokens = 0;  // 0: no layer is windowed
    std::int64_t local = 1;
    std::int64_t global = 0;
    bool chunked = false;
};

struct MoeSpec {
    std::int64_t experts = 0;  // routed experts; 0 = dense model
    std::int64_t top_k = 0;
    std::int64_t expert_ffn_hidden = 0;
    std::int64_t shared_experts = 0;
    std::int64_t shared_ffn_hidden = 0;    // per shared expert
    std::int64_t first_dense_layers = 0;   // DeepSeek: the first k layers use a dense MLP
    std::int64_t layer_frequency = 1;      // every n-th layer (after the dense ones) is MoE
    double load_imbalance = 1.0;           // busiest expert's tokens over the mean
    // Token dropping (Megatron --moe-expert-capacity-factor): an expert takes at most this many
    // times its balanced share of a rank's routed tokens and drops the rest; 0: dropless.
    double capacity_factor = 0.0;
    // With dropping, every expert's input padded to that capacity (--moe-pad-expert-input-to-
    // capacity): static shapes, so the expert GEMMs and the all-to-all carry the capacity whatever
    // the routing.
    bool pad_to_capacity = false;
    // Latent MoE (Megatron-Core --moe-latent-size; Nemotron 3 Super): the router reads the hidden
    // state, a projection takes it down to this width before dispatch and the experts work in it,
    // another takes the combined output back up (both replicated over TP); 0: experts on hidden.
    std::int64_t latent = 0;
    // The busiest rank's routed copies over a balanced rank's: the imbalance, capped at the
    // capacity where tokens are dropped, the capacity itself where inputs are padded to it
    // (megatron/core/transformer/moe/moe_utils.py get_capacity: ceil(tokens x top_k / experts x
    // factor) per expert).
    double routed_share() const {
        if (capacity_factor <= 0) return load_imbalance;
        return pad_to_capacity ? capacity_factor : std::min(load_imbalance, capacity_factor);
    }
};

// Mamba-2 mixers (Dao and Gu 2024, "Transformers are SSMs") as Megatron-Core builds them
// (megatron/core/ssm/mamba_mixer.py): in_proj h -> [z, x, B, C, dt] of 2 d_inner + 2 groups state
// + heads, a depthwise causal conv1d over [x, B, C], the chunked SSD scan, a gated RMSNorm over
// d_inner, out_proj d_inner -> h. Defaults are Megatron-Core's (TransformerConfig mamba_head_dim
// 64, mamba_num_groups 8, mamba_state_dim 128; MambaMixer d_conv 4, chunk_size 128).
struct MambaSpec {
    std::int64_t heads = 0;       // 0: d_inner = 2 h (MambaMixer's expand 2), heads = d_inner / head_dim
    std::int64_t head_dim = 64;
    std::int64_t state = 128;
    std::int64_t groups = 8;
    std::int64_t conv_kernel = 4;
    std::int64_t chunk = 128;
    std::int64_t inner() const { return heads * head_dim; }
    // Channels of the causal conv1d, and of in_proj's output.
    std::int64_t conv_channels() const { return inner() + 2 * groups * state; }
    std::int64_t in_proj_out() const { return 2 * inner() + 2 * groups * state + heads; }
};

// Gated DeltaNet mixers (Yang, Kautz and Hatamizadeh 2025, "Gated Delta Networks"; Qwen3-Next,
// Qwen3.5) in a transformer's linear-attention layers, as Megatron-Core builds them
// (experimental_attention_variant gated_delta_net, megatron/core/ssm/gated_delta_net.py at
// b0cc2706, Megatron-Bridge 26.02's): in_proj h -> [q, k, v, gate z, beta, alpha] of 2 key_dim +
// 2 value_dim + 2 value heads, a depthwise causal conv1d over [q, k, v], the chunked gated delta
// rule (flash-linear-attention's chunk_gated_delta_rule, queries and keys repeated to the value
// heads), a gated RMSNorm over each value head, out_proj value_dim -> h. Every
// full_attention_interval-th layer keeps full attention (Megatron's linear_attention_freq; layer
// i is linear unless (i + 1) % interval == 0). Defaults are Megatron-Core's TransformerConfig
// (linear_key_head_dim 128, linear_value_head_dim 128, linear_num_key_heads 16,
// linear_num_value_heads 32, linear_conv_kernel_dim 4) and FLA's chunk_size 64.
struct GatedDeltaNetSpec {
    std::int64_t key_heads = 16;
    std::int64_t value_heads = 32;
    std::int64_t key_head_dim = 128;
    std::int64_t value_head_dim = 128;
    std::int64_t conv_kernel = 4;
    std::int64_t full_attention_interval = 4;
    std::int64_t chunk = 64;
    std::int64_t key_dim() const { return key_heads * key_head_dim; }
    std::int64_t value_dim() const { return value_heads * value_head_dim; }
    // Channels of the causal conv1d ([q, k, v]), and of in_proj's output.
    std::int64_t conv_channels() const { return 2 * key_dim() + value_dim(); }
    std::int64_t in_proj_out() const { return 2 * key_dim() + 2 * value_dim() + 2 * value_heads; }
};

// What one layer holds. A transformer layer holds an attention mixer (or a gated delta net in its
// linear-attention layers) and an MLP (dense or MoE); a layer of a Megatron-Core hybrid model
// (hybrid_override_pattern) holds one block: a Mamba or an attention mixer, or a dense or MoE
// MLP, each behind its own norm.
enum class Mixer : std::uint8_t { Attention, Mamba, GatedDeltaNet, None };
enum class Ffn : std::uint8_t { Dense, Moe, None };
// Megatron-Core's symbols of the hybrid blocks Sextant models (hybrid_layer_allocation.py), in
// ModelSpec::block_kind's order, and what each block holds.
inline constexpr std::string_view kHybridSymbols = "M*-E";
inline constexpr Mixer kHybridMixer[] = {Mixer::Mamba, Mixer::Attention, Mixer::None, Mixer::None};
inline constexpr Ffn kHybridFfn[] = {Ffn::None, Ffn::None, Ffn::Dense, Ffn::Moe};
// Distinct kinds of layer one model has at most: a transformer's dense or MoE MLP under full or
// windowed attention or a gated delta net (no windowed attention beside one), or a hybrid model's
// four blocks (M, *, -, E; no windowed attention there).
inline constexpr std::size_t kLayerKinds = 4;

struct ModelSpec {
    std::string name;
    std::int64_t layers = 0;
    std::int64_t hidden = 0;
    std::int64_t ffn_hidden = 0;
    std::int64_t heads = 0;
    std::int64_t kv_heads = 0;
    std::int64_t head_dim = 0;  // defaults to hidden / heads
    std::int64_t vocab = 0;
    std::int64_t max_positions = 0;  // learned position embeddings only
    std::int64_t mtp_layers = 0;     // multi-token-prediction modules (DeepSeek-V3)
    bool tied_embeddings = false;
    bool linear_bias = false;
    bool qkv_bias = false;
    NormKind norm = NormKind::RmsNorm;
    MlpKind mlp = MlpKind::SwiGlu;
    // A gated MLP's two inputs clamped to this magnitude before the activation (gpt-oss's
    // swiglu_limit, 7); 0: not clamped.
    double activation_clamp = 0.0;
    PositionKind position = PositionKind::Rotary;
    AttentionKind attention = AttentionKind::Standard;
    LatentAttention mla;
    // Megatron-Core's attention_output_gate (Qwen3-Next): the QKV projection also outputs a gate
    // of the queries' size, and the attention output is multiplied by its sigmoid before the
    // output projection.
    bool attention_output_gate = false;
    SlidingWindow window;
    std::optional<GatedDeltaNetSpec> gdn;  // absent: no gated delta net layer
    MoeSpec moe;
    // Megatron-Core's hybrid_override_pattern, one character a layer: M Mamba, * attention,
    // - MLP, E MoE; empty: every layer a transformer layer.
    std::string hybrid_pattern;
    MambaSpec mamba;
    // A hybrid model's MTP module: its layers, in the main pattern's symbols (the part after
    // Megatron's '/'); each of its blocks must also be a block of the main pattern.
    std::string mtp_pattern;
    std::string source;

    bool is_moe() const { return moe.experts > 0; }
    bool is_hybrid() const { return !hybrid_pattern.empty(); }
    bool has_gdn() const { return gdn.has_value(); }
    // Elements per token out of a standard attention's QKV projection: the queries (with the
    // output gate, a gate of their size beside them, in Megatron's linear_qkv), keys and values.
    std::int64_t qkv_out() const { return (heads * (attention_output_gate ? 2 : 1) + 2 * kv_heads) * head_dim; }
    // The width routed experts and the dispatcher work in.
    std::int64_t expert_width() const { return moe.latent > 0 ? moe.latent : hidden; }
    // Calls f(layer) for each block of one MTP module, with a main-model layer of that block's
    // kind: a transformer's module is one layer of the last layer's kind (DeepSeek-V3), a hybrid
    // model's the blocks of mtp_pattern. No allocation: the screen asks it for every layout.
    template <class F>
    void for_each_mtp_block(F&& f) const {
        if (!is_hybrid()) return f(layers - 1);
        for (const char c : mtp_pattern) f(static_cast<std::int64_t>(hybrid_pattern.find(c)));
    }
    // Pre-norms a layer holds: a transformer layer's two (attention, MLP), a hybrid layer's one.
    double norms_per_layer() const { return is_hybrid() ? 1.0 : 2.0; }
    Mixer layer_mixer(std::int64_t layer) const {
        if (!hybrid_pattern.empty()) return kHybridMixer[block_kind(layer)];
        return layer_is_linear_attention(layer) ? Mixer::GatedDeltaNet : Mixer::Attention;
    }
    // A transformer layer with a gated delta net in place of attention.
    bool layer_is_linear_attention(std::int64_t layer) const {
        return has_gdn() && (layer + 1) % gdn->full_attention_interval != 0;
    }
    Ffn layer_ffn(std::int64_t layer) const {
        if (hybrid_pattern.empty()) return layer_is_moe(layer) ? Ffn::Moe : Ffn::Dense;
        return kHybridFfn[block_kind(layer)];
    }
    // What a layer's parameters and saved activations depend on, as an index below kLayerKinds:
    // a transformer layer's dense or MoE MLP (0, 1), +2 under a gated delta net; a hybrid layer's
    // block, its place in kHybridSymbols (M 0, * 1, - 2, E 3; a switch, not a search: the screen
    // asks per layer).
    std::size_t block_kind(std::int64_t layer) const {
        if (hybrid_pattern.empty()) {
            const std::size_t block = layer_is_moe(layer) ? 1u : 0u;
            return layer_is_linear_attention(layer) ? block + 2u : block;
        }
        switch (hybrid_pattern[static_cast<std::size_t>(layer)]) {
        case 'M': return 0;
        case '*': return 1;
        case '-': return 2;
        default: return 3;
        }
    }
    // What its costs depend on besides: a transformer's windowed attention (+2); a hybrid model
    // and a model with gated delta nets have no windowed layer.
    std::size_t layer_kind(std::int64_t layer) const { return block_kind(layer) + (layer_is_windowed(layer) ? 2u : 0u); }
    bool rotary() const { return position == PositionKind::Rotary || position == PositionKind::Yarn; }
    // Key/value heads one of `tp` ranks attends with: one where TP exceeds them (Megatron-Core
    // 0.16+ slices a gathered QKV output so that tp / kv_heads ranks share each).
    std::int64_t kv_heads_per_rank(std::int64_t tp) const { return std::max<std::int64_t>(1, kv_heads / tp); }
    bool gated_mlp() const { return mlp == MlpKind::SwiGlu || mlp == MlpKind::GeGlu; }
    // Inline: the planner's screen asks both for every layer of every stage of every layout.
    // A hybrid model, or one with gated delta nets, has no windowed layer (parse_model refuses
    // sliding_window there).
    bool layer_is_windowed(std::int64_t layer) const {
        if (window.tokens <= 0) return false;
        return layer % (window.local + window.global) < window.local;
    }
    // Keys one query of a `seq`-token causal sequence attends to, on average, in that layer.
    double mean_causal_keys(std::int64_t layer, std::int64_t seq) const;
    bool layer_is_moe(std::int64_t layer) const {
        if (!hybrid_pattern.empty()) return hybrid_pattern[static_cast<std::size_t>(layer)] == 'E';
        if (!is_moe() || layer < moe.first_dense_layers) return false;
        // Every layer after the dense ones (the common case) without the division.
        return moe.layer_frequency == 1 || (layer - moe.first_dense_layers) % moe.layer_frequency == 0;
    }
    // Where the run of layers from `layer` of one block_kind ends (at most `end`): the
    // first_dense_layers, then every layer MoE when layer_frequency is 1; otherwise runs of one
    // (a shorter run than the true one is still a run of one kind).
    std::int64_t moe_run_end(std::int64_t layer, std::int64_t end) const {
        if (is_hybrid() || has_gdn()) return std::min(end, layer + 1);
        if (!is_moe()) return end;
        if (layer < moe.first_dense_layers) return std::min(end, moe.first_dense_layers);
        return moe.layer_frequency == 1 ? end : layer + 1;
    }
    std::int64_t moe_layer_count() const;
    // Layers whose mixer is `mixer` (all of them attention in a transformer).
    std::int64_t mixer_layer_count(Mixer mixer) const;
};

// Why a model's Mamba or gated delta net mixers cannot run at tensor-parallel degree `tp` and
// context-parallel degree `cp`; empty where they can, or where the model has neither. Megatron-
// Core's asserts: Mamba (mamba_mixer.py): tp divides the SSM heads and groups; cp divides the
// heads of a TP rank, and a TP rank's groups divide cp or cp them. Gated delta net
// (transformer_config.py at b0cc2706): tp divides the key and the value heads; cp divides a TP
// rank's key and value heads (gated_delta_net/gdn.py in_proj sections at d98e8a64dd). Whether the
// runtime has the gated delta net's context parallelism at all is the runtime's
// (check_gdn_context_parallel).
std::string mixer_split_rule(const ModelSpec& model, std::int64_t tp, std::int64_t cp);
// Why `pattern` is not a hybrid pattern of `layers` layers (`layers_key` names that count in
// the message): one character a layer, each in kHybridSymbols; empty where it is. Sextant's own
// format and the Hugging Face reader check it alike.
std::string hybrid_pattern_rule(std::string_view pattern, std::int64_t layers, std::string_view layers_key);
// Why a gated delta net's value heads cannot go with its key heads (`key_heads_key` names that
// count in the message): queries and keys are repeated to the value heads, so the value heads
// must be a multiple of them (Megatron-Core's assert); empty where they can. Sextant's own format
// and the Hugging Face reader check it alike.
std::string gdn_heads_rule(const GatedDeltaNetSpec& gdn, std::string_view key_heads_key);
// Why `mtp` cannot be the blocks of an MTP module of `pattern`: each must be one of its blocks.
std::string mtp_pattern_rule(std::string_view pattern, std::string_view mtp);

// Parses a model object in Sextant's vocabulary (the published-runs one, with richer optional
// fields), or a Hugging Face config.json (recognised by its field names). `path` is the JSON
// pointer of the object for error messages.
ModelSpec parse_model(const json& object, const std::string& path);
ModelSpec parse_hf_config(const json& object, const std::string& path);
bool looks_like_hf_config(const json& object);

std::span<const FieldDef> model_fields();
std::span<const FieldDef> moe_fields();
std::span<const FieldDef> mla_fields();
std::span<const FieldDef> sliding_window_fields();
std::span<const FieldDef> mamba_fields();
std::span<const FieldDef> gated_delta_net_fields();

}  // namespace sextant
