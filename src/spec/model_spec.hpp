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
// only plain RoPE in its fused kernel (see FusedKernels::yarn_rope).
enum class PositionKind { Learned, Rotary, Yarn };
inline constexpr std::string_view kPositionNames[] = {"learned", "rotary", "yarn"};
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
    // The busiest rank's routed copies over a balanced rank's: the imbalance, capped at the
    // capacity where tokens are dropped, the capacity itself where inputs are padded to it
    // (megatron/core/transformer/moe/moe_utils.py get_capacity: ceil(tokens x top_k / experts x
    // factor) per expert).
    double routed_share() const {
        if (capacity_factor <= 0) return load_imbalance;
        return pad_to_capacity ? capacity_factor : std::min(load_imbalance, capacity_factor);
    }
};

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
    SlidingWindow window;
    MoeSpec moe;
    std::string source;

    bool is_moe() const { return moe.experts > 0; }
    bool rotary() const { return position != PositionKind::Learned; }
    bool gated_mlp() const { return mlp == MlpKind::SwiGlu || mlp == MlpKind::GeGlu; }
    // Inline: the planner's screen asks both for every layer of every stage of every layout.
    bool layer_is_windowed(std::int64_t layer) const {
        if (window.tokens <= 0) return false;
        return layer % (window.local + window.global) < window.local;
    }
    // Keys one query of a `seq`-token causal sequence attends to, on average, in that layer.
    double mean_causal_keys(std::int64_t layer, std::int64_t seq) const;
    bool layer_is_moe(std::int64_t layer) const {
        if (!is_moe() || layer < moe.first_dense_layers) return false;
        // Every layer after the dense ones (the common case) without the division.
        return moe.layer_frequency == 1 || (layer - moe.first_dense_layers) % moe.layer_frequency == 0;
    }
    // Where the run of layers from `layer` that layer_is_moe answers alike ends (at most `end`):
    // the first_dense_layers, then every layer MoE when layer_frequency is 1; otherwise runs of
    // one (a shorter run than the true one is still a run of one kind).
    std::int64_t moe_run_end(std::int64_t layer, std::int64_t end) const {
        if (!is_moe()) return end;
        if (layer < moe.first_dense_layers) return std::min(end, moe.first_dense_layers);
        return moe.layer_frequency == 1 ? end : layer + 1;
    }
    std::int64_t moe_layer_count() const;
};

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

}  // namespace sextant
