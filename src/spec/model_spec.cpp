#include "spec/model_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
constexpr FieldDef kModelFields[] = {
    {"name", FieldType::String, "display name"},
    {"arch", FieldType::String,
     "family defaults: gpt = LayerNorm, GeLU MLP, learned positions, biases; llama = RMSNorm, "
     "SwiGLU, rotary, no biases",
     "", "llama", -1e300, 1e300, "gpt|llama"},
    {"layers", FieldType::Integer, "transformer layers", "", "", 1, 1 << 16},
    {"hidden", FieldType::Integer, "hidden size h", "", "", 1, 1 << 20},
    {"ffn_hidden", FieldType::Integer, "MLP inner size (per matrix for SwiGLU)", "", "4h (gpt)", 1, 1 << 22},
    {"heads", FieldType::Integer, "attention (query) heads", "", "", 1, 1 << 16},
    {"kv_heads", FieldType::Integer, "key/value heads (GQA when below heads)", "", "heads", 1, 1 << 16},
    {"head_dim", FieldType::Integer, "size of one attention head", "", "hidden/heads", 1, 1 << 16},
    {"vocab", FieldType::Integer, "vocabulary size", "", "", 1, 1 << 24},
    {"max_positions", FieldType::Integer, "learned position embeddings (gpt)", "", "seq_len", 1, 1 << 27},
    {"mtp_layers", FieldType::Integer, "multi-token-prediction modules", "", "0", 0, 1 << 16},
    {"tied_embeddings", FieldType::Boolean, "output layer shares the input embedding", "", "arch (gpt: true)"},
    {"linear_bias", FieldType::Boolean, "biases on every linear layer", "", "arch"},
    {"qkv_bias", FieldType::Boolean, "biases on the QKV projection only (Qwen2)", "", "false"},
    {"norm", FieldType::String, "normalisation", "", "arch", -1e300, 1e300, "layernorm|rmsnorm"},
    {"mlp", FieldType::String, "MLP kind (swiglu, geglu: gated, three matrices)", "", "arch", -1e300, 1e300,
     "gelu|swiglu|geglu|squared_relu|relu"},
    {"position", FieldType::String, "position encoding", "", "arch", -1e300, 1e300,
     "learned|rotary"},
    {"attention", FieldType::Object, "multi-head latent attention (DeepSeek), see /model/attention"},
    {"sliding_window", FieldType::Object, "banded (local) attention in some layers, see /model/sliding_window"},
    {"moe", FieldType::Object, "mixture of experts, see /model/moe"},
    {"source", FieldType::String, "where the shape comes from"},
};

constexpr FieldDef kMoeFields[] = {
    {"experts", FieldType::Integer, "routed experts", "", "", 1, 1 << 16},
    {"top_k", FieldType::Integer, "experts per token", "", "", 1, 1 << 16},
    {"expert_ffn_hidden", FieldType::Integer, "MLP inner size of one expert", "", "ffn_hidden", 1, 1 << 22},
    {"shared_experts", FieldType::Integer, "always-active shared experts", "", "0", 0, 1 << 16},
    {"shared_ffn_hidden", FieldType::Integer, "MLP inner size of one shared expert", "",
     "expert_ffn_hidden", 1, 1 << 22},
    {"first_dense_layers", FieldType::Integer, "leading layers with a dense MLP", "", "0", 0, 1 << 16},
    {"layer_frequency", FieldType::Integer, "every n-th layer after those is MoE", "", "1", 1, 1 << 16},
    {"load_imbalance", FieldType::Number, "tokens of the busiest expert over the mean", "", "1.0",
     1.0},
};

constexpr FieldDef kMlaFields[] = {
    {"type", FieldType::String, "attention kind", "", "mla", -1e300, 1e300, "mla"},
    {"q_lora_rank", FieldType::Integer, "query compression rank (0: none)", "", "0", 0, 1 << 20},
    {"kv_lora_rank", FieldType::Integer, "key/value compression rank", "", "", 1, 1 << 20},
    {"qk_nope_head_dim", FieldType::Integer, "per-head query/key size without rotary", "", "", 1, 1 << 16},
    {"qk_rope_head_dim", FieldType::Integer, "per-head rotary query/key size", "", "", 1, 1 << 16},
    {"v_head_dim", FieldType::Integer, "per-head value size", "", "", 1, 1 << 16},
};

constexpr FieldDef kWindowFields[] = {
    {"tokens", FieldType::Integer, "positions a windowed layer attends to", "tokens", "", 1, 1 << 27},
    {"layers", FieldType::Any,
     "which layers are windowed: \"all\", \"alternate\" (1 windowed, 1 full, from the first layer; text after "
     "\"alternate:\" is a comment) or {\"local\": a, \"global\": b} (a windowed, then b full, repeating)", "", "alternate"},
    {"chunked", FieldType::Boolean,
     "windowed layers attend within aligned blocks of `tokens` positions (Llama 4's chunked attention), "
     "not to the last `tokens`", "", "false"},
};

constexpr FieldDef kWindowPatternFields[] = {
    {"local", FieldType::Integer, "windowed layers in each repeat", "", "", 1, 1 << 16},
    {"global", FieldType::Integer, "full-attention layers in each repeat", "", "", 0, 1 << 16},
};

SlidingWindow parse_window(const json& object, const std::string& path) {
    ObjectReader r(object, path, kWindowFields);
    SlidingWindow w;
    w.tokens = r.require_integer("tokens");
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
        ObjectReader pr(*layers, r.path_of("layers"), kWindowPatternFields);
        w.local = pr.require_integer("local");
        w.global = pr.require_integer("global");
    } else {
        throw InputError(r.path_of("layers"), value_text(*layers), rule);
    }
    w.chunked = r.boolean("chunked").value_or(false);
    return w;
}

MlpKind parse_mlp(const std::string& s) {
    if (s == "gelu") return MlpKind::Gelu;
    if (s == "geglu") return MlpKind::GeGlu;
    if (s == "squared_relu") return MlpKind::SquaredRelu;
    if (s == "relu") return MlpKind::Relu;
    return MlpKind::SwiGlu;
}

MoeSpec parse_moe(const json& object, const std::string& path, std::int64_t ffn_hidden) {
    ObjectReader r(object, path, kMoeFields);
    MoeSpec m;
    m.experts = r.require_integer("experts");
    m.top_k = r.require_integer("top_k");
    if (m.top_k > m.experts)
        throw InputError(r.path_of("top_k"), std::to_string(m.top_k),
                         "must not exceed experts (" + std::to_string(m.experts) + ")");
    m.expert_ffn_hidden = r.integer("expert_ffn_hidden").value_or(ffn_hidden);
    if (m.expert_ffn_hidden <= 0)
        throw InputError(r.path_of("expert_ffn_hidden"), "", "is required when ffn_hidden is not set");
    m.shared_experts = r.integer("shared_experts").value_or(0);
    m.shared_ffn_hidden = r.integer("shared_ffn_hidden").value_or(m.expert_ffn_hidden);
    m.first_dense_layers = r.integer("first_dense_layers").value_or(0);
    m.layer_frequency = r.integer("layer_frequency").value_or(1);
    m.load_imbalance = r.number("load_imbalance").value_or(1.0);
    return m;
}

LatentAttention parse_mla(const json& object, const std::string& path) {
    ObjectReader r(object, path, kMlaFields);
    LatentAttention a;
    a.q_lora_rank = r.integer("q_lora_rank").value_or(0);
    a.kv_lora_rank = r.require_integer("kv_lora_rank");
    a.qk_nope_head_dim = r.require_integer("qk_nope_head_dim");
    a.qk_rope_head_dim = r.require_integer("qk_rope_head_dim");
    a.v_head_dim = r.require_integer("v_head_dim");
    return a;
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

bool ModelSpec::layer_is_windowed(std::int64_t layer) const {
    if (window.tokens <= 0) return false;
    return layer % (window.local + window.global) < window.local;
}

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

bool ModelSpec::layer_is_moe(std::int64_t layer) const {
    if (!is_moe() || layer < moe.first_dense_layers) return false;
    return (layer - moe.first_dense_layers) % moe.layer_frequency == 0;
}

std::int64_t ModelSpec::moe_layer_count() const {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < layers; ++l) n += layer_is_moe(l) ? 1 : 0;
    return n;
}

ModelSpec parse_model(const json& object, const std::string& path) {
    ObjectReader r(object, path, kModelFields);
    ModelSpec m;
    m.name = r.string("name").value_or("custom");
    apply_arch_defaults(m, r.string("arch").value_or("llama"));
    m.layers = r.require_integer("layers");
    m.hidden = r.require_integer("hidden");
    m.heads = r.require_integer("heads");
    m.vocab = r.require_integer("vocab");
    m.kv_heads = r.integer("kv_heads").value_or(m.heads);
    m.head_dim = r.integer("head_dim").value_or(0);
    if (m.head_dim == 0) {
        if (m.hidden % m.heads != 0)
            throw InputError(r.path_of("heads"), std::to_string(m.heads),
                             "must divide hidden (" + std::to_string(m.hidden) +
                                 ") unless head_dim is given");
        m.head_dim = m.hidden / m.heads;
    }
    if (m.heads % m.kv_heads != 0)
        throw InputError(r.path_of("kv_heads"), std::to_string(m.kv_heads),
                         "must divide heads (" + std::to_string(m.heads) + ")");
    if (auto v = r.string("norm")) m.norm = *v == "layernorm" ? NormKind::LayerNorm : NormKind::RmsNorm;
    if (auto v = r.string("mlp")) m.mlp = parse_mlp(*v);
    if (auto v = r.string("position"))
        m.position = *v == "learned" ? PositionKind::Learned : PositionKind::Rotary;
    m.linear_bias = r.boolean("linear_bias").value_or(m.linear_bias);
    m.qkv_bias = r.boolean("qkv_bias").value_or(false);
    m.tied_embeddings = r.boolean("tied_embeddings").value_or(m.tied_embeddings);
    m.max_positions = r.integer("max_positions").value_or(0);
    m.mtp_layers = r.integer("mtp_layers").value_or(0);
    m.source = r.string("source").value_or("");
    auto ffn = r.integer("ffn_hidden");
    if (ffn) m.ffn_hidden = *ffn;
    else if (!m.gated_mlp()) m.ffn_hidden = 4 * m.hidden;
    if (const json* moe = r.raw("moe")) m.moe = parse_moe(*moe, r.path_of("moe"), m.ffn_hidden);
    if (m.ffn_hidden <= 0 && m.moe_layer_count() < m.layers)
        throw InputError(r.path_of("ffn_hidden"), "", "is required for a model with dense MLP layers");
    if (const json* w = r.raw("sliding_window")) m.window = parse_window(*w, r.path_of("sliding_window"));
    if (const json* att = r.raw("attention")) {
        m.attention = AttentionKind::MultiLatent;
        m.mla = parse_mla(*att, r.path_of("attention"));
    }
    return m;
}

}  // namespace sextant
