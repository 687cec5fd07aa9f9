#include "spec/model_spec.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/field_binding.hpp"

namespace sextant {

namespace {
constexpr FieldDef kModelFields[] = {
    {"name", FieldType::String, "display name", "", default_string("custom")},
    {"arch", FieldType::String,
     "family defaults: gpt = LayerNorm, GeLU MLP, learned positions, biases; llama = RMSNorm, "
     "SwiGLU, rotary, no biases",
     "", default_string("llama"), -1e300, 1e300, "gpt|llama"},
    {"layers", FieldType::Integer, "transformer layers", "", required(), 1, 1 << 16, "", bind<&ModelSpec::layers>()},
    {"hidden", FieldType::Integer, "hidden size h", "", required(), 1, 1 << 20, "", bind<&ModelSpec::hidden>()},
    {"ffn_hidden", FieldType::Integer, "MLP inner size (per matrix for SwiGLU)", "", "4h (gpt)", 1, 1 << 22, "",
     bind<&ModelSpec::ffn_hidden>()},
    {"heads", FieldType::Integer, "attention (query) heads", "", required(), 1, 1 << 16, "", bind<&ModelSpec::heads>()},
    {"kv_heads", FieldType::Integer, "key/value heads (GQA when below heads)", "", "heads", 1, 1 << 16, "", bind<&ModelSpec::kv_heads>()},
    {"head_dim", FieldType::Integer, "size of one attention head", "", "hidden/heads", 1, 1 << 16, "", bind<&ModelSpec::head_dim>()},
    {"vocab", FieldType::Integer, "vocabulary size", "", required(), 1, 1 << 24, "", bind<&ModelSpec::vocab>()},
    {"max_positions", FieldType::Integer, "learned position embeddings (gpt)", "", "seq_len", 1, 1 << 27, "",
     bind<&ModelSpec::max_positions>()},
    {"mtp_layers", FieldType::Integer, "multi-token-prediction modules", "", default_integer(0), 0, 1 << 16, "",
     bind<&ModelSpec::mtp_layers>()},
    {"tied_embeddings", FieldType::Boolean, "output layer shares the input embedding", "", "arch (gpt: true)", -1e300, 1e300, "",
     bind<&ModelSpec::tied_embeddings>()},
    {"linear_bias", FieldType::Boolean, "biases on every linear layer", "", "arch", -1e300, 1e300, "", bind<&ModelSpec::linear_bias>()},
    {"qkv_bias", FieldType::Boolean, "biases on the QKV projection only (Qwen2)", "", default_bool(false), -1e300, 1e300, "",
     bind<&ModelSpec::qkv_bias>()},
    {"norm", FieldType::String, "normalisation", "", "arch", -1e300, 1e300, "", bind<&ModelSpec::norm>()},
    {"mlp", FieldType::String, "MLP kind (swiglu, geglu: gated, three matrices)", "", "arch", -1e300, 1e300, "",
     bind<&ModelSpec::mlp>()},
    {"activation_clamp", FieldType::Number,
     "a gated MLP's gate and linear inputs clamped to this magnitude before the activation (gpt-oss: 7); 0: none", "",
     default_number(0.0), 0.0, 1e300, "", bind<&ModelSpec::activation_clamp>()},
    {"position", FieldType::String,
     "position encoding: learned, rotary, yarn (rotary with YaRN's frequency scaling), or none (hybrid Mamba models)", "", "arch",
     -1e300, 1e300, "", bind<&ModelSpec::position>()},
    {"attention", FieldType::Object, "multi-head latent attention (DeepSeek), see /model/attention"},
    {"sliding_window", FieldType::Object, "banded (local) attention in some layers, see /model/sliding_window"},
    {"moe", FieldType::Object, "mixture of experts, see /model/moe"},
    {"hybrid_override_pattern", FieldType::String,
     "Megatron-Core hybrid model: one character a layer, M Mamba-2 mixer, * attention, - MLP, E MoE (each layer one block "
     "behind its own norm); empty: transformer layers", "", default_string(""), -1e300, 1e300, "",
     bind<&ModelSpec::hybrid_pattern>()},
    {"mamba", FieldType::Object, "the Mamba-2 mixers of a hybrid model, see /model/mamba"},
    {"gated_delta_net", FieldType::Object,
     "gated delta net mixers in a transformer's linear-attention layers (Qwen3-Next), see /model/gated_delta_net"},
    {"attention_output_gate", FieldType::Boolean,
     "the QKV projection also outputs a query-sized gate whose sigmoid scales the attention output (Megatron "
     "--attention-output-gate, Qwen3-Next)", "", default_bool(false), -1e300, 1e300, "", bind<&ModelSpec::attention_output_gate>()},
    {"mtp_pattern", FieldType::String,
     "a hybrid model's MTP module, in hybrid_override_pattern's symbols (Megatron's part after '/'; needs mtp_layers)", "",
     default_string(""), -1e300, 1e300, "", bind<&ModelSpec::mtp_pattern>()},
    {"source", FieldType::String, "where the shape comes from", "", default_string(""), -1e300, 1e300, "", bind<&ModelSpec::source>()},
};

constexpr FieldDef kMoeFields[] = {
    {"experts", FieldType::Integer, "routed experts", "", required(), 1, 1 << 16, "", bind<&MoeSpec::experts>()},
    {"top_k", FieldType::Integer, "experts per token", "", required(), 1, 1 << 16, "", bind<&MoeSpec::top_k>()},
    {"expert_ffn_hidden", FieldType::Integer, "MLP inner size of one expert", "", "ffn_hidden", 1, 1 << 22, "",
     bind<&MoeSpec::expert_ffn_hidden>()},
    {"shared_experts", FieldType::Integer, "always-active shared experts", "", default_integer(0), 0, 1 << 16, "",
     bind<&MoeSpec::shared_experts>()},
    {"shared_ffn_hidden", FieldType::Integer, "MLP inner size of one shared expert", "", "expert_ffn_hidden", 1, 1 << 22, "",
     bind<&MoeSpec::shared_ffn_hidden>()},
    {"first_dense_layers", FieldType::Integer, "leading layers with a dense MLP", "", default_integer(0), 0, 1 << 16, "",
     bind<&MoeSpec::first_dense_layers>()},
    {"layer_frequency", FieldType::Integer, "every n-th layer after those is MoE", "", default_integer(1), 1, 1 << 16, "",
     bind<&MoeSpec::layer_frequency>()},
    {"load_imbalance", FieldType::Number, "tokens of the busiest expert over the mean", "", default_number(1.0), 1.0, 1e300, "",
     bind<&MoeSpec::load_imbalance>()},
    {"capacity_factor", FieldType::Number,
     "token dropping: an expert takes at most this many times its balanced share and drops the rest (Megatron "
     "--moe-expert-capacity-factor); 0: dropless", "", default_number(0.0), 0.0, 1e300, "", bind<&MoeSpec::capacity_factor>()},
    {"latent", FieldType::Integer,
     "latent MoE (Megatron --moe-latent-size, Nemotron 3 Super): experts and dispatch in this width, projected from and back to "
     "hidden; 0: none", "", default_integer(0), 0, 1 << 20, "", bind<&MoeSpec::latent>()},
    {"pad_to_capacity", FieldType::Boolean,
     "with capacity_factor, every expert's input padded to the capacity (--moe-pad-expert-input-to-capacity): the experts and the "
     "all-to-all carry capacity_factor times the balanced tokens", "", default_bool(false), -1e300, 1e300, "",
     bind<&MoeSpec::pad_to_capacity>()},
};

constexpr FieldDef kMlaFields[] = {
    {"type", FieldType::String, "attention kind", "", default_string("mla"), -1e300, 1e300, "mla"},
    {"q_lora_rank", FieldType::Integer, "query compression rank (0: none)", "", default_integer(0), 0, 1 << 20, "",
     bind<&LatentAttention::q_lora_rank>()},
    {"kv_lora_rank", FieldType::Integer, "key/value compression rank", "", required(), 1, 1 << 20, "",
     bind<&LatentAttention::kv_lora_rank>()},
    {"qk_nope_head_dim", FieldType::Integer, "per-head query/key size without rotary", "", required(), 1, 1 << 16, "",
     bind<&LatentAttention::qk_nope_head_dim>()},
    {"qk_rope_head_dim", FieldType::Integer, "per-head rotary query/key size", "", required(), 1, 1 << 16, "",
     bind<&LatentAttention::qk_rope_head_dim>()},
    {"v_head_dim", FieldType::Integer, "per-head value size", "", required(), 1, 1 << 16, "", bind<&LatentAttention::v_head_dim>()},
};

constexpr FieldDef kMambaFields[] = {
    {"heads", FieldType::Integer, "SSM heads (mamba_num_heads); d_inner = heads x head_dim", "", "2 hidden / head_dim", 1, 1 << 16, "",
     bind<&MambaSpec::heads>()},
    {"head_dim", FieldType::Integer, "size of one SSM head (mamba_head_dim)", "", default_integer(64), 1, 1 << 16, "",
     bind<&MambaSpec::head_dim>()},
    {"state", FieldType::Integer, "SSM state size N (mamba_state_dim)", "", default_integer(128), 1, 1 << 16, "",
     bind<&MambaSpec::state>()},
    {"groups", FieldType::Integer, "B/C groups (mamba_num_groups); must divide heads", "", default_integer(8), 1, 1 << 16, "",
     bind<&MambaSpec::groups>()},
    {"conv_kernel", FieldType::Integer, "width of the causal conv1d (d_conv)", "", default_integer(4), 1, 64, "",
     bind<&MambaSpec::conv_kernel>()},
    {"chunk", FieldType::Integer, "chunk length of the SSD scan kernels (chunk_size)", "tokens", default_integer(128), 1, 1 << 16, "",
     bind<&MambaSpec::chunk>()},
};

constexpr FieldDef kGdnFields[] = {
    {"key_heads", FieldType::Integer, "query and key heads (Megatron linear_num_key_heads)", "", default_integer(16), 1, 1 << 16, "",
     bind<&GatedDeltaNetSpec::key_heads>()},
    {"value_heads", FieldType::Integer, "value and gate heads (linear_num_value_heads); a multiple of key_heads", "",
     default_integer(32), 1, 1 << 16, "", bind<&GatedDeltaNetSpec::value_heads>()},
    {"key_head_dim", FieldType::Integer, "size of one query/key head (linear_key_head_dim)", "", default_integer(128), 1, 1 << 16, "",
     bind<&GatedDeltaNetSpec::key_head_dim>()},
    {"value_head_dim", FieldType::Integer, "size of one value head (linear_value_head_dim)", "", default_integer(128), 1, 1 << 16, "",
     bind<&GatedDeltaNetSpec::value_head_dim>()},
    {"conv_kernel", FieldType::Integer, "causal conv1d width (linear_conv_kernel_dim)", "", default_integer(4), 1, 1 << 10, "",
     bind<&GatedDeltaNetSpec::conv_kernel>()},
    {"full_attention_interval", FieldType::Integer,
     "every n-th layer keeps full attention, the others are gated delta nets (linear_attention_freq; Qwen3-Next: 4)", "",
     default_integer(4), 2, 1 << 16, "", bind<&GatedDeltaNetSpec::full_attention_interval>()},
    {"chunk", FieldType::Integer, "tokens per chunk of the chunked delta rule (flash-linear-attention's chunk_size)", "",
     default_integer(64), 1, 1 << 16, "", bind<&GatedDeltaNetSpec::chunk>()},
};

constexpr FieldDef kWindowFields[] = {
    {"tokens", FieldType::Integer, "positions a windowed layer attends to", "tokens", required(), 1, 1 << 27, "",
     bind<&SlidingWindow::tokens>()},
    {"layers", FieldType::Any,
     "which layers are windowed: \"all\", \"alternate\" (1 windowed, 1 full, from the first layer; text after "
     "\"alternate:\" is a comment) or {\"local\": a, \"global\": b} (a windowed, then b full, repeating)", "", "alternate"},
    {"chunked", FieldType::Boolean,
     "windowed layers attend within aligned blocks of `tokens` positions (Llama 4's chunked attention), "
     "not to the last `tokens`", "", default_bool(false), -1e300, 1e300, "", bind<&SlidingWindow::chunked>()},
};

constexpr FieldDef kWindowPatternFields[] = {
    {"local", FieldType::Integer, "windowed layers in each repeat", "", required(), 1, 1 << 16, "", bind<&SlidingWindow::local>()},
    {"global", FieldType::Integer, "full-attention layers in each repeat", "", required(), 0, 1 << 16, "",
     bind<&SlidingWindow::global>()},
};

SlidingWindow parse_window(const json& object, const std::string& path) {
    ObjectReader r(object, path, kWindowFields);
    SlidingWindow w;
    read_fields(r, w);
    const json* layers = r.raw("layers");
    const std::string rule = "must be \"all\", \"alternate\" (optionally \"alternate: comment\") or {\"local\": a, \"global\": b}";
    if (!layers) {
        w.local = w.global = 1;
    } else if (layers->is_string()) {
        const std::string text = layers->get<std::string>();
        if (text == "all") {
            w.local = 1;
            w.global = 0;
        } else if (text == "alternate" || text.rfind("alternate:", 0) == 0) {
            w.local = w.global = 1;
        } else {
            throw InputError(r.path_of("layers"), value_text(*layers), rule);
        }
    } else if (layers->is_object()) {
        read_fields(ObjectReader(*layers, r.path_of("layers"), kWindowPatternFields), w);
    } else {
        throw InputError(r.path_of("layers"), value_text(*layers), rule);
    }
    return w;
}

MoeSpec parse_moe(const json& object, const std::string& path, std::int64_t ffn_hidden) {
    ObjectReader r(object, path, kMoeFields);
    MoeSpec m;
    read_fields(r, m);
    if (m.top_k > m.experts)
        throw InputError(r.path_of("top_k"), std::to_string(m.top_k),
                         "must not exceed experts (" + std::to_string(m.experts) + ")");
    if (!r.has("expert_ffn_hidden")) m.expert_ffn_hidden = ffn_hidden;
    if (m.expert_ffn_hidden <= 0)
        throw InputError(r.path_of("expert_ffn_hidden"), "", "is required when ffn_hidden is not set");
    if (!r.has("shared_ffn_hidden")) m.shared_ffn_hidden = m.expert_ffn_hidden;
    // An expert takes each token at most once, so neither its load nor its capacity passes all of
    // a rank's tokens: experts / top_k times the balanced share.
    const double most = static_cast<double>(m.experts) / static_cast<double>(m.top_k);
    for (const auto& [key, value] : {std::pair{"load_imbalance", m.load_imbalance}, std::pair{"capacity_factor", m.capacity_factor}})
        if (value > most)
            throw InputError(r.path_of(key), fmt::format("{}", value),
                             fmt::format("must not exceed experts / top_k ({:g}): an expert takes each token at most once", most));
    if (m.pad_to_capacity && m.capacity_factor <= 0)
        throw InputError(r.path_of("pad_to_capacity"), "true",
                         "needs capacity_factor > 0: padding fills each expert to the capacity the factor sets (a dropless model has none)");
    return m;
}

LatentAttention parse_mla(const json& object, const std::string& path) {
    LatentAttention a;
    read_fields(ObjectReader(object, path, kMlaFields), a);
    return a;
}

MambaSpec parse_mamba(const json& object, const std::string& path, std::int64_t hidden) {
    ObjectReader r(object, path, kMambaFields);
    MambaSpec s;
    read_fields(r, s);
    if (!r.has("heads")) {
        if (2 * hidden % s.head_dim != 0)
            throw InputError(r.path_of("head_dim"), std::to_string(s.head_dim),
                             fmt::format("must divide 2 x hidden ({}) unless heads is given (d_inner = 2 hidden)", 2 * hidden));
        s.heads = 2 * hidden / s.head_dim;
    }
    if (s.heads % s.groups != 0)
        throw InputError(r.path_of("groups"), std::to_string(s.groups), fmt::format("must divide heads ({})", s.heads));
    return s;
}

GatedDeltaNetSpec parse_gdn(const json& object, const std::string& path) {
    ObjectReader r(object, path, kGdnFields);
    GatedDeltaNetSpec s;
    read_fields(r, s);
    if (const std::string rule = gdn_heads_rule(s, "key_heads"); !rule.empty())
        throw InputError(r.path_of("value_heads"), std::to_string(s.value_heads), rule);
    return s;
}

// What a transformer with gated delta nets cannot also have: Sextant keeps a model to four kinds
// of layer, and Megatron-Core builds the gated delta net beside standard attention only.
void check_gdn(const ObjectReader& r, const ModelSpec& m) {
    if (m.is_hybrid())
        throw InputError(r.path_of("gated_delta_net"), "",
                         "is not modelled in a hybrid model (hybrid_override_pattern): give a transformer with full_attention_interval");
    if (r.has("sliding_window"))
        throw InputError(r.path_of("sliding_window"), "", "is not modelled beside gated delta nets (/model/gated_delta_net)");
    if (m.attention == AttentionKind::MultiLatent)
        throw InputError(r.path_of("attention"), "", "multi-latent attention is not modelled beside gated delta nets (/model/gated_delta_net)");
}

// The rules of a hybrid_override_pattern (Megatron-Core's hybrid_layer_allocation.py symbols):
// a layer per character, each a block Sextant models, and the settings its blocks need.
void check_hybrid(const ObjectReader& r, const ModelSpec& m) {
    const std::string& p = m.hybrid_pattern;
    if (const std::string rule = hybrid_pattern_rule(p, m.layers, "layers"); !rule.empty())
        throw InputError(r.path_of("hybrid_override_pattern"), p, rule);
    const bool moe_layers = p.find('E') != std::string::npos;
    if (moe_layers && !m.is_moe()) throw InputError(r.path_of("moe"), "", "is required: hybrid_override_pattern has MoE layers (E)");
    if (!moe_layers && m.is_moe())
        throw InputError(r.path_of("moe"), "", "is set but no layer of hybrid_override_pattern is a MoE layer (E)");
    if (m.is_moe() && (m.moe.first_dense_layers != 0 || m.moe.layer_frequency != 1))
        throw InputError(r.path_of("moe") + (m.moe.first_dense_layers != 0 ? "/first_dense_layers" : "/layer_frequency"), "",
                         "must be left out of a hybrid model: hybrid_override_pattern places its MoE layers");
    if (p.find('-') != std::string::npos && m.ffn_hidden <= 0)
        throw InputError(r.path_of("ffn_hidden"), "", "is required: hybrid_override_pattern has MLP layers (-)");
    if (p.find('M') == std::string::npos && r.has("mamba"))
        throw InputError(r.path_of("mamba"), "", "is set but no layer of hybrid_override_pattern is a Mamba layer (M)");
    if (m.mtp_layers > 0 && m.mtp_pattern.empty())
        throw InputError(r.path_of("mtp_pattern"), "", "is required for mtp_layers in a hybrid model: the blocks of an MTP module");
    if (m.mtp_layers == 0 && !m.mtp_pattern.empty())
        throw InputError(r.path_of("mtp_layers"), "0", "must be at least 1 where mtp_pattern is given");
    if (const std::string rule = mtp_pattern_rule(p, m.mtp_pattern); !rule.empty()) throw InputError(r.path_of("mtp_pattern"), m.mtp_pattern, rule);
    if (r.has("sliding_window"))
        throw InputError(r.path_of("sliding_window"), "", "is not modelled in a hybrid model (hybrid_override_pattern)");
}

void apply_arch_defaults(ModelSpec& m, const std::string& arch) {
    if (arch == "gpt") {
        m.norm = NormKind::LayerNorm;
        m.mlp = MlpKind::Gelu;
        m.position = PositionKind::Learned;
        m.linear_bias = true;
        m.tied_embeddings = true;  // Megatron GPT shares the output layer with the embedding
    } else {
        m.norm = NormKind::RmsNorm;
        m.mlp = MlpKind::SwiGlu;
        m.position = PositionKind::Rotary;
        m.linear_bias = false;
        m.tied_embeddings = false;
    }
}
}  // namespace

std::span<const FieldDef> model_fields() { return kModelFields; }
std::span<const FieldDef> moe_fields() { return kMoeFields; }
std::span<const FieldDef> mla_fields() { return kMlaFields; }
std::span<const FieldDef> sliding_window_fields() { return kWindowFields; }
std::span<const FieldDef> mamba_fields() { return kMambaFields; }
std::span<const FieldDef> gated_delta_net_fields() { return kGdnFields; }

double ModelSpec::mean_causal_keys(std::int64_t layer, std::int64_t seq) const {
    const double s = static_cast<double>(seq);
    if (!layer_is_windowed(layer) || window.tokens >= seq) return (s + 1) / 2;
    const double w = static_cast<double>(window.tokens);
    if (window.chunked) {
        // n whole blocks of W see W(W + 1) / 2 keys each, the last r queries r(r + 1) / 2.
        const double n = static_cast<double>(seq / window.tokens), r = s - n * w;
        return (n * w * (w + 1) / 2 + r * (r + 1) / 2) / s;
    }
    // Query i sees min(i + 1, W) keys: W - W(W - 1) / (2 s) on average.
    return w - w * (w - 1) / (2 * s);
}

std::int64_t ModelSpec::mixer_layer_count(Mixer mixer) const {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < layers; ++l) n += layer_mixer(l) == mixer ? 1 : 0;
    return n;
}

std::int64_t ModelSpec::moe_layer_count() const {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < layers; ++l) n += layer_is_moe(l) ? 1 : 0;
    return n;
}

std::string mixer_split_rule(const ModelSpec& m, std::int64_t tp, std::int64_t cp) {
    if (m.has_gdn()) {
        const GatedDeltaNetSpec& g = *m.gdn;
        if (g.key_heads % tp != 0) return fmt::format("must divide the gated delta net's key heads ({})", g.key_heads);
        if (g.value_heads % tp != 0) return fmt::format("must divide the gated delta net's value heads ({})", g.value_heads);
        // Context parallelism (Megatron-Core 20ba03fec0, core_v0.18.0) turns the sequence split
        // into a head split: cp divides a TP rank's key and value heads (its in_proj sections).
        if ((g.key_heads / tp) % cp != 0) return fmt::format("must divide a TP rank's gated delta net key heads ({} / tp {})", g.key_heads, tp);
        if ((g.value_heads / tp) % cp != 0)
            return fmt::format("must divide a TP rank's gated delta net value heads ({} / tp {})", g.value_heads, tp);
        return "";
    }
    if (!m.is_hybrid() || m.hybrid_pattern.find('M') == std::string::npos) return "";
    const MambaSpec& s = m.mamba;
    if (s.heads % tp != 0) return fmt::format("must divide the Mamba heads ({})", s.heads);
    if (s.groups % tp != 0) return fmt::format("must divide the Mamba groups ({})", s.groups);
    const std::int64_t heads = s.heads / tp, groups = s.groups / tp;
    if (heads % cp != 0) return fmt::format("must divide a TP rank's Mamba heads ({} / tp {})", s.heads, tp);
    if (groups % cp != 0 && cp % groups != 0)
        return fmt::format("and a TP rank's Mamba groups ({} / tp {}) must divide one another", s.groups, tp);
    return "";
}

std::string hybrid_pattern_rule(std::string_view pattern, std::int64_t layers, std::string_view layers_key) {
    if (static_cast<std::int64_t>(pattern.size()) != layers)
        return fmt::format("must have one character per layer: {} characters for {} {}", pattern.size(), layers_key, layers);
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (kHybridSymbols.find(c) != std::string_view::npos) continue;
        const char* what = c == 'G' ? "a gated delta net mixer, which Sextant models in transformers only (/model/gated_delta_net)"
                         : c == 'D' ? "a DeepSeek sparse attention layer, which Sextant does not model"
                         : c == '+' ? "a multi-latent attention layer: give /model/attention and use *"
                         : c == '|' ? "a pipeline split: give layout.stage_layers instead"
                         : c == '/' ? "the MTP part: give its blocks as mtp_pattern, with mtp_layers"
                                    : "not a layer symbol";
        return fmt::format("may hold only M (Mamba), * (attention), - (MLP) and E (MoE); character {} '{}' is {}", i, c, what);
    }
    return "";
}

std::string gdn_heads_rule(const GatedDeltaNetSpec& gdn, std::string_view key_heads_key) {
    if (gdn.value_heads % gdn.key_heads == 0) return "";
    return fmt::format("must be a multiple of {} ({}): queries and keys are repeated to the value heads", key_heads_key, gdn.key_heads);
}

std::string mtp_pattern_rule(std::string_view pattern, std::string_view mtp) {
    for (const char c : mtp)
        if (pattern.find(c) == std::string_view::npos)
            return fmt::format("may hold only blocks the main pattern has; '{}' is not one of them", c);
    return "";
}

ModelSpec parse_model(const json& object, const std::string& path) {
    ObjectReader r(object, path, kModelFields);
    ModelSpec m;
    m.name = r.string_or_default("name");
    apply_arch_defaults(m, r.string_or_default("arch"));
    read_fields(r, m);  // over the family's defaults: a given norm, mlp, position or bias wins
    // The rules of the defaults the table states as text: kv_heads, head_dim, ffn_hidden.
    if (!r.has("kv_heads")) m.kv_heads = m.heads;
    if (!r.has("head_dim")) {
        if (m.hidden % m.heads != 0)
            throw InputError(r.path_of("heads"), std::to_string(m.heads),
                             "must divide hidden (" + std::to_string(m.hidden) +
                                 ") unless head_dim is given");
        m.head_dim = m.hidden / m.heads;
    }
    if (m.heads % m.kv_heads != 0)
        throw InputError(r.path_of("kv_heads"), std::to_string(m.kv_heads),
                         "must divide heads (" + std::to_string(m.heads) + ")");
    if (!r.has("ffn_hidden") && !m.gated_mlp()) m.ffn_hidden = 4 * m.hidden;
    if (const json* moe = r.raw("moe")) m.moe = parse_moe(*moe, r.path_of("moe"), m.ffn_hidden);
    if (m.is_hybrid()) {
        check_hybrid(r, m);
        const json* mamba = r.raw("mamba");
        if (m.mixer_layer_count(Mixer::Mamba) > 0) m.mamba = parse_mamba(mamba ? *mamba : json::object(), r.path_of("mamba"), m.hidden);
    } else if (r.has("mamba")) {
        throw InputError(r.path_of("mamba"), "", "needs hybrid_override_pattern: which layers are Mamba layers");
    } else if (!m.mtp_pattern.empty()) {
        throw InputError(r.path_of("mtp_pattern"), m.mtp_pattern, "is a hybrid model's (hybrid_override_pattern); a transformer's MTP module is its last layer's kind");
    }
    if (m.ffn_hidden <= 0 && !m.is_hybrid() && m.moe_layer_count() < m.layers)
        throw InputError(r.path_of("ffn_hidden"), "", "is required for a model with dense MLP layers");
    if (const json* w = r.raw("sliding_window")) m.window = parse_window(*w, r.path_of("sliding_window"));
    if (const json* att = r.raw("attention")) {
        m.attention = AttentionKind::MultiLatent;
        m.mla = parse_mla(*att, r.path_of("attention"));
    }
    if (const json* gdn = r.raw("gated_delta_net")) {
        check_gdn(r, m);
        m.gdn = parse_gdn(*gdn, r.path_of("gated_delta_net"));
    }
    if (m.attention_output_gate && m.attention == AttentionKind::MultiLatent)
        throw InputError(r.path_of("attention_output_gate"), "true", "is modelled for standard attention only, not multi-latent attention");
    return m;
}

}  // namespace sextant
