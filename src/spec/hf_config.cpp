// Reads a Hugging Face transformers config.json into a ModelSpec. Each model_type Sextant knows
// is read the way transformers builds that model: its field names, its defaults for the keys a
// file leaves out, the layers it makes MoE or windowed. Keys irrelevant to training cost (dropout,
// token ids, RoPE scaling other than YaRN's, routing scores, the released checkpoint's
// quantisation) are ignored.
// A key that changes the shape but that the model_type's reader does not take, an unknown
// model_type, or a layer pattern Sextant cannot express is an input error: a config is never
// silently read as a dense Llama.
#include <algorithm>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/model_spec.hpp"

namespace sextant {

namespace {
// Sizes in a config.json are counts and dimensions; beyond this none is a real model, and the
// products Sextant forms from them must stay exact.
constexpr std::int64_t kLargestSize = std::int64_t{1} << 24;

// The architectures transformers builds from the model_types below, as far as cost goes.
enum class Family { Llama, Mistral, Mixtral, Qwen2, Qwen2Moe, Qwen3, Qwen3Moe, Qwen3Next, Qwen35, Qwen35Moe, Gemma, Gemma2, Gemma3, GptOss,
                    Llama4, DeepSeek, NemotronH };

struct TextType {
    std::string_view model_type;
    Family family;
};
// qwen2_vl and qwen2_5_vl configs written before transformers 4.52 keep the language model's
// keys at the top level beside vision_config; later ones nest them under text_config.
constexpr TextType kTextTypes[] = {
    {"llama", Family::Llama},          {"mistral", Family::Mistral},
    {"mixtral", Family::Mixtral},      {"qwen2", Family::Qwen2},
    {"qwen2_vl", Family::Qwen2},       {"qwen2_5_vl", Family::Qwen2},
    {"qwen2_vl_text", Family::Qwen2},  {"qwen2_5_vl_text", Family::Qwen2},
    {"qwen2_moe", Family::Qwen2Moe},   {"qwen3", Family::Qwen3},
    {"qwen3_vl_text", Family::Qwen3},  {"qwen3_moe", Family::Qwen3Moe},
    {"qwen3_vl_moe_text", Family::Qwen3Moe}, {"gemma", Family::Gemma},
    {"gemma2", Family::Gemma2},        {"gemma3_text", Family::Gemma3},
    {"gpt_oss", Family::GptOss},       {"llama4_text", Family::Llama4},
    {"deepseek_v2", Family::DeepSeek}, {"deepseek_v3", Family::DeepSeek},
    {"kimi_k2", Family::DeepSeek},     {"nemotron_h", Family::NemotronH},
    {"qwen3_next", Family::Qwen3Next}, {"qwen3_5_text", Family::Qwen35},
    {"qwen3_5_moe_text", Family::Qwen35Moe},
};

// Multimodal wrappers: the language model sits under text_config, whose model_type transformers
// takes to be `text_type` when the file names none.
struct Wrapper {
    std::string_view model_type;
    std::string_view text_type;
    bool nested_only;  // the model_type is never a flat text config
};
constexpr Wrapper kWrappers[] = {
    {"llama4", "llama4_text", true},          {"gemma3", "gemma3_text", true},
    {"qwen2_vl", "qwen2_vl_text", false},     {"qwen2_5_vl", "qwen2_5_vl_text", false},
    {"qwen3_vl", "qwen3_vl_text", true},      {"qwen3_vl_moe", "qwen3_vl_moe_text", true},
    {"qwen3_5", "qwen3_5_text", true},        {"qwen3_5_moe", "qwen3_5_moe_text", true},
};

// Sub-models of a multimodal config that Sextant does not model (only the language model is).
constexpr std::string_view kTowers[] = {"vision_config", "audio_config"};

// Keys that change parameter counts or FLOPs. A family's reader takes the ones its architecture
// has; any other one that is set (not null, false, 0 or empty) belongs to an architecture Sextant
// would misread, so it is refused rather than ignored.
constexpr std::string_view kShapeKeys[] = {
    "num_experts", "num_local_experts", "n_routed_experts", "experts_per_token", "num_experts_per_tok",
    "moe_intermediate_size", "shared_expert_intermediate_size", "n_shared_experts", "num_shared_experts",
    "decoder_sparse_step", "mlp_only_layers", "first_k_dense_replace", "moe_layer_freq",
    "interleave_moe_layer_step", "moe_layers", "intermediate_size_mlp", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "num_nextn_predict_layers", "sliding_window",
    "use_sliding_window", "max_window_layers", "sliding_window_pattern", "layer_types",
    "attention_chunk_size", "no_rope_layers", "attention_bias", "mlp_bias",
    // State-space and linear-attention mixers: Mamba-2 hybrids (Nemotron-H's layer pattern and
    // Mamba sizes), Jamba's layer periods and Mamba sizes, Qwen3-Next's and Qwen3.5's gated delta
    // nets (their linear heads and sizes, full_attention_interval, the gated attention beside
    // them, Qwen3.5's MTP module); the Nemotron-H and Qwen3-Next readers take theirs.
    "hybrid_override_pattern", "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "mamba_d_state",
    "mamba_d_conv", "mamba_expand", "attn_layer_period", "attn_layer_offset", "linear_num_value_heads",
    "linear_num_key_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "full_attention_interval",
    "attn_output_gate", "mtp_num_hidden_layers",
    // Nemotron-H's other shape keys, Nemotron 3 Super's latent MoE width and hybrid MTP block
    // among them: its reader takes them, any other family refuses them.
    "layers_block_type", "n_groups", "moe_shared_expert_intermediate_size", "use_bias", "mamba_proj_bias",
    "moe_latent_size", "mtp_hybrid_override_pattern", "mtp_layers_block_type",
};

std::string text_of(std::string_view s) { return std::string(s); }
std::string int_text(std::int64_t v) { return std::to_string(v); }

bool is_set(const json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
    return true;
}

std::int64_t size_value(const json& v, const std::string& path, std::int64_t min) {
    if (!is_integral(v) || v.get<double>() < static_cast<double>(min) || v.get<double>() > static_cast<double>(kLargestSize))
        throw InputError(path, value_text(v), "must be an integer from " + int_text(min) + " to " + int_text(kLargestSize));
    return static_cast<std::int64_t>(v.get<double>());
}

// One object of a config.json, remembering which keys were read so that the shape keys left
// unread can be refused.
class HfObject {
public:
    HfObject(const json& object, std::string path) : object_(object), path_(std::move(path)) {}
    HfObject(json&& object, std::string path) = delete;

    std::string path_of(std::string_view key) const { return path_ + "/" + text_of(key); }

    // The value, or nullptr when absent or null; the key counts as read either way.
    const json* find(const char* key) {
        read_.insert(key);
        auto it = object_.find(key);
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }
    bool has(const char* key) { return find(key) != nullptr; }
    // Present at all, null included (transformers tells an explicit null from a default).
    bool present(const char* key) {
        read_.insert(key);
        return object_.contains(key);
    }
    std::int64_t size(const char* key, std::optional<std::int64_t> fallback, std::int64_t min = 1) {
        const json* v = find(key);
        if (v) return size_value(*v, path_of(key), min);
        if (!fallback) throw InputError(path_of(key), "", "is required in a Hugging Face config");
        return *fallback;
    }
    bool flag(const char* key, bool fallback) {
        read_.insert(key);
        return bool_member(object_, key, fallback, path_);
    }
    std::string text(const char* key, const std::string& fallback) {
        read_.insert(key);
        return string_member(object_, key, fallback, path_);
    }
    // A list of layer indices or 0/1 flags.
    std::vector<std::int64_t> integers(const char* key, std::int64_t max) {
        std::vector<std::int64_t> out;
        const json* v = find(key);
        if (!v) return out;
        if (!v->is_array()) throw InputError(path_of(key), value_text(*v), "must be a list of integers");
        for (std::size_t i = 0; i < v->size(); ++i) {
            const std::string at = path_of(key) + "/" + std::to_string(i);
            out.push_back(size_value((*v)[i], at, 0));
            if (out.back() > max) throw InputError(at, int_text(out.back()), "must be at most " + int_text(max));
        }
        return out;
    }
    std::string value_of(const char* key) const {
        auto it = object_.find(key);
        return it == object_.end() ? "" : value_text(*it);
    }

    void reject_unread_shape_keys(const std::string& model_type) const {
        for (std::string_view key : kShapeKeys) {
            auto it = object_.find(text_of(key));
            if (it == object_.end() || read_.count(text_of(key)) || !is_set(*it)) continue;
            throw InputError(path_of(key), value_text(*it),
                             "is not part of model_type " + model_type +
                                 " as Sextant reads it: an architecture it does not model (describe the model in "
                                 "Sextant's own format instead, see `sextant schema`)");
        }
    }

private:
    const json& object_;
    std::string path_;
    std::set<std::string> read_;
};

std::string known_types() {
    std::string s;
    for (const auto& t : kTextTypes) s += (s.empty() ? "" : ", ") + text_of(t.model_type);
    for (const auto& w : kWrappers)
        if (w.nested_only) s += ", " + text_of(w.model_type) + " (text_config)";
    return s;
}

Family family_of(const std::string& type, const std::string& path) {
    for (const auto& t : kTextTypes)
        if (t.model_type == type) return t.family;
    throw InputError(path, "\"" + type + "\"",
                     "is not a model_type Sextant reads (it reads " + known_types() +
                         "); describe the model in Sextant's own format instead (see `sextant schema`)");
}

const Wrapper* wrapper_of(const std::string& type) {
    for (const auto& w : kWrappers)
        if (w.model_type == type) return &w;
    return nullptr;
}

bool is_gemma(Family f) { return f == Family::Gemma || f == Family::Gemma2 || f == Family::Gemma3; }

// transformers' defaults for keys a file may leave out (the families' configuration classes).
bool tied_by_default(Family f) { return is_gemma(f); }
std::optional<std::int64_t> default_vocab(Family f) {
    if (f == Family::Gemma || f == Family::Gemma2) return 256000;
    if (f == Family::Gemma3) return 262208;
    if (f == Family::Llama4) return 202048;
    return std::nullopt;
}

// YaRN's RoPE scaling: rope_scaling's rope_type (transformers' current name) or type (older
// files, DeepSeek-V3's) is "yarn". Other scalings (Llama 3's, linear) change only the
// frequencies, which every rotary kernel takes as given.
bool yarn_scaled(HfObject& c) {
    const json* scaling = c.find("rope_scaling");
    if (!scaling || !scaling->is_object()) return false;
    for (const char* key : {"rope_type", "type"})
        if (scaling->contains(key) && (*scaling)[key].is_string() && (*scaling)[key].get<std::string>() == "yarn") return true;
    return false;
}

// The activation of a gated MLP (every family here has gate, up and down projections).
MlpKind gated_mlp(HfObject& c, Family f) {
    // Gemma 2 and 3 name it hidden_activation; Gemma 1's files carry both.
    std::string key = "hidden_act";
    std::string act = c.text("hidden_act", is_gemma(f) ? "gelu_pytorch_tanh" : "silu");
    if (is_gemma(f) && c.has("hidden_activation")) {
        key = "hidden_activation";
        act = c.text("hidden_activation", act);
    }
    if (act == "silu" || act == "swish") return MlpKind::SwiGlu;
    if (act == "gelu" || act == "gelu_pytorch_tanh" || act == "gelu_new" || act == "gelu_fast" || act == "gelu_python" ||
        act == "gelu_accurate")
        return MlpKind::GeGlu;
    throw InputError(c.path_of(key), "\"" + act + "\"",
                     "is not a gated-MLP activation Sextant models (silu/swish: SwiGLU; gelu variants: GeGLU)");
}

enum class LayerAttention { Full, Sliding, Chunked };

// layer_types, where a file lists them (gpt-oss ships them; transformers writes them for the
// families with windowed layers since 4.53).
std::optional<std::vector<LayerAttention>> layer_types(HfObject& c, std::int64_t layers) {
    const json* v = c.find("layer_types");
    if (!v) return std::nullopt;
    if (!v->is_array() || static_cast<std::int64_t>(v->size()) != layers)
        throw InputError(c.path_of("layer_types"), value_text(*v), "must list one attention type per layer (" + int_text(layers) + ")");
    std::vector<LayerAttention> kinds;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const json& t = (*v)[i];
        const std::string s = t.is_string() ? t.get<std::string>() : "";
        if (s == "full_attention") kinds.push_back(LayerAttention::Full);
        else if (s == "sliding_attention") kinds.push_back(LayerAttention::Sliding);
        else if (s == "chunked_attention") kinds.push_back(LayerAttention::Chunked);
        else
            throw InputError(c.path_of("layer_types") + "/" + std::to_string(i), value_text(t),
                             "must be full_attention, sliding_attention or chunked_attention: other attention kinds are not modelled");
    }
    return kinds;
}

// Sextant's window repeats `local` windowed layers then `global` full ones from layer 0; any
// other arrangement (full layers first, uneven runs) is refused at `path`, the key that set it.
void place_window(ModelSpec& m, const std::vector<LayerAttention>& kinds, HfObject& c, const std::string& path,
                  const std::string& value, std::optional<std::int64_t> tokens_default) {
    const auto count = [&](LayerAttention k) { return std::count(kinds.begin(), kinds.end(), k); };
    if (count(LayerAttention::Full) == static_cast<std::ptrdiff_t>(kinds.size())) return;
    if (count(LayerAttention::Sliding) > 0 && count(LayerAttention::Chunked) > 0)
        throw InputError(path, value, "mixes sliding and chunked layers; Sextant models one window kind per model");
    const bool chunked = count(LayerAttention::Chunked) > 0;
    std::vector<bool> windowed;
    for (auto k : kinds) windowed.push_back(k != LayerAttention::Full);
    std::int64_t local = 0, global = 0;
    const auto n = static_cast<std::int64_t>(windowed.size());
    while (local < n && windowed[static_cast<std::size_t>(local)]) ++local;
    while (local + global < n && !windowed[static_cast<std::size_t>(local + global)]) ++global;
    bool fits = local > 0;
    for (std::int64_t l = 0; fits && l < n; ++l)
        fits = windowed[static_cast<std::size_t>(l)] == (l % (local + global) < local);
    if (!fits)
        throw InputError(path, value,
                         "gives a layer pattern Sextant cannot express: it repeats a windowed layers then b full ones, "
                         "starting with a windowed layer");
    m.window.local = global == 0 ? 1 : local;
    m.window.global = global;
    m.window.chunked = chunked;
    m.window.tokens = c.size(chunked ? "attention_chunk_size" : "sliding_window", tokens_default);
}

// Sextant's MoE layers are every `layer_frequency`-th one after `first_dense_layers` dense ones;
// any other placement is refused at `path`, the key that set it.
void place_moe(ModelSpec& m, const std::vector<bool>& moe, const std::string& path, const std::string& value) {
    const auto n = static_cast<std::int64_t>(moe.size());
    std::vector<std::int64_t> at;
    for (std::int64_t l = 0; l < n; ++l)
        if (moe[static_cast<std::size_t>(l)]) at.push_back(l);
    if (at.empty()) {  // transformers builds no expert layer: a dense model
        m.moe = MoeSpec{};
        return;
    }
    m.moe.first_dense_layers = at[0];
    m.moe.layer_frequency = at.size() > 1 ? at[1] - at[0] : n - at[0];
    for (std::int64_t l = 0; l < n; ++l)
        if (moe[static_cast<std::size_t>(l)] != m.layer_is_moe(l))
            throw InputError(path, value,
                             "places experts in a pattern Sextant cannot express: every n-th layer after the first k "
                             "(layer " + int_text(l) + " breaks it)");
}

std::vector<bool> layer_flags(std::int64_t layers, const auto& rule) {
    std::vector<bool> v;
    for (std::int64_t l = 0; l < layers; ++l) v.push_back(rule(l));
    return v;
}

void read_routed_experts(ModelSpec& m, HfObject& c, const char* experts_key, const char* top_k_key) {
    m.moe.experts = c.size(experts_key, std::nullopt);
    m.moe.top_k = c.size(top_k_key, std::nullopt);
    if (m.moe.top_k > m.moe.experts)
        throw InputError(c.path_of(top_k_key), int_text(m.moe.top_k), "must not exceed " + text_of(experts_key) + " (" + int_text(m.moe.experts) + ")");
}

// Mixtral: every layer's MLP is num_local_experts experts of intermediate_size.
void read_mixtral(ModelSpec& m, HfObject& c) {
    read_routed_experts(m, c, "num_local_experts", "num_experts_per_tok");
    m.moe.expert_ffn_hidden = m.ffn_hidden;
}

// Qwen2-MoE and Qwen3-MoE: layer l is MoE unless listed in mlp_only_layers, when
// (l + 1) % decoder_sparse_step == 0; the others are dense MLPs of intermediate_size. Qwen2-MoE
// adds one shared expert of shared_expert_intermediate_size (its sigmoid gate, hidden_size
// weights per layer, is not counted).
void read_qwen_moe(ModelSpec& m, HfObject& c, bool shared) {
    read_routed_experts(m, c, "num_experts", "num_experts_per_tok");
    m.moe.expert_ffn_hidden = c.size("moe_intermediate_size", std::nullopt);
    if (shared) {
        m.moe.shared_ffn_hidden = c.size("shared_expert_intermediate_size", 0, 0);
        m.moe.shared_experts = m.moe.shared_ffn_hidden > 0 ? 1 : 0;
    }
    const std::int64_t step = c.size("decoder_sparse_step", 1);
    const std::vector<std::int64_t> dense = c.integers("mlp_only_layers", m.layers - 1);
    const auto moe = layer_flags(m.layers, [&](std::int64_t l) {
        return std::find(dense.begin(), dense.end(), l) == dense.end() && (l + 1) % step == 0;
    });
    place_moe(m, moe, c.path_of(dense.empty() ? "decoder_sparse_step" : "mlp_only_layers"),
              c.value_of(dense.empty() ? "decoder_sparse_step" : "mlp_only_layers"));
}

// gpt-oss: every layer is MoE, num_local_experts experts of intermediate_size, with biases on
// every projection (attention_bias, and the experts' gate_up and down biases transformers always
// builds). Its clamped SwiGLU variant (inputs clamped at swiglu_limit) has SwiGLU's three
// matrices and FLOPs; the per-head
// attention sinks and the router's bias (heads and experts per layer) are not counted.
void read_gpt_oss(ModelSpec& m, HfObject& c) {
    const char* top_k = c.has("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
    read_routed_experts(m, c, "num_local_experts", top_k);
    if (c.has("experts_per_token") && c.size("experts_per_token", std::nullopt) != m.moe.top_k)
        throw InputError(c.path_of("experts_per_token"), c.value_of("experts_per_token"),
                         "must equal num_experts_per_tok (" + int_text(m.moe.top_k) + ")");
    m.moe.expert_ffn_hidden = m.ffn_hidden;
    if (const json* limit = c.find("swiglu_limit")) {
        if (!limit->is_number() || limit->get<double>() < 0)
            throw InputError(c.path_of("swiglu_limit"), value_text(*limit), "must be a number, 0 or more");
        m.activation_clamp = limit->get<double>();
    }
    if (!c.flag("attention_bias", false))
        throw InputError(c.path_of("attention_bias"), c.value_of("attention_bias"),
                         "must be true for gpt_oss: expert biases without attention biases are not modelled");
    m.linear_bias = true;
}

// Llama 4: the layers in moe_layers (default every interleave_moe_layer_step-th, the first at
// step - 1) hold num_local_experts routed experts and one shared expert, all of
// intermediate_size; the others are dense MLPs of intermediate_size_mlp. Its query/key norm is
// a weightless L2 norm.
void read_llama4_moe(ModelSpec& m, HfObject& c) {
    read_routed_experts(m, c, "num_local_experts", "num_experts_per_tok");
    m.moe.expert_ffn_hidden = m.ffn_hidden;
    m.moe.shared_experts = 1;
    m.moe.shared_ffn_hidden = m.ffn_hidden;
    const std::int64_t step = c.size("interleave_moe_layer_step", 1);
    std::vector<std::int64_t> listed = c.integers("moe_layers", m.layers - 1);
    const bool explicit_list = c.has("moe_layers");
    const auto moe = layer_flags(m.layers, [&](std::int64_t l) {
        if (explicit_list) return std::find(listed.begin(), listed.end(), l) != listed.end();
        return l % step == step - 1;
    });
    place_moe(m, moe, c.path_of(explicit_list ? "moe_layers" : "interleave_moe_layer_step"),
              c.value_of(explicit_list ? "moe_layers" : "interleave_moe_layer_step"));
    m.ffn_hidden = c.size("intermediate_size_mlp", 16384);
}

// DeepSeek-V2/V3 and Kimi K2: layer l is MoE when l >= first_k_dense_replace and
// l % moe_layer_freq == 0, with n_routed_experts of moe_intermediate_size and n_shared_experts
// more of the same size (one MLP of n times the width, the same weights and FLOPs); the dense
// layers use intermediate_size. Multi-head latent attention when kv_lora_rank is set.
void read_deepseek(ModelSpec& m, HfObject& c) {
    if (c.has("n_routed_experts")) {
        read_routed_experts(m, c, "n_routed_experts", "num_experts_per_tok");
        m.moe.expert_ffn_hidden = c.size("moe_intermediate_size", std::nullopt);
        m.moe.shared_experts = c.size("n_shared_experts", 0, 0);
        m.moe.shared_ffn_hidden = m.moe.expert_ffn_hidden;
        const std::int64_t first = c.size("first_k_dense_replace", 0, 0);
        const std::int64_t freq = c.size("moe_layer_freq", 1);
        place_moe(m, layer_flags(m.layers, [&](std::int64_t l) { return l >= first && l % freq == 0; }),
                  c.path_of("moe_layer_freq"), c.value_of("moe_layer_freq"));
    }
    m.mtp_layers = c.size("num_nextn_predict_layers", 0, 0);
    if (c.has("kv_lora_rank")) {
        m.attention = AttentionKind::MultiLatent;
        m.mla.q_lora_rank = c.size("q_lora_rank", 0, 0);
        m.mla.kv_lora_rank = c.size("kv_lora_rank", std::nullopt);
        m.mla.qk_nope_head_dim = c.size("qk_nope_head_dim", std::nullopt);
        m.mla.qk_rope_head_dim = c.size("qk_rope_head_dim", std::nullopt);
        m.mla.v_head_dim = c.size("v_head_dim", std::nullopt);
        m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    }
    if (c.flag("attention_bias", false))
        throw InputError(c.path_of("attention_bias"), "true", "biases in DeepSeek's attention are not modelled");
}

// Nemotron-H and Nemotron 3 (NVIDIA's configuration_nemotron_h.py, shipped with the checkpoints):
// hybrid_override_pattern, or layers_block_type's names (mamba, attention, mlp, moe), gives each
// layer's block. Mamba-2 mixers of mamba_num_heads x mamba_head_dim, ssm_state_size, n_groups,
// conv_kernel, chunk_size; attention without position encoding (the modelling code applies no
// rotary embedding; Megatron-Bridge's provider sets position_embedding_type "none"); MLPs of
// intermediate_size and experts of moe_intermediate_size, up and down projections with
// mlp_hidden_act (relu2: squared ReLU); one shared expert of moe_shared_expert_intermediate_size
// when n_shared_experts is set; Nemotron 3 Super's latent MoE (moe_latent_size) and MTP modules
// (num_nextn_predict_layers of mtp_hybrid_override_pattern's blocks). Biases on the projections
// are not modelled.
// The hybrid symbol of a layers_block_type (or mtp_layers_block_type) name; '?' for another.
char block_symbol(const json& name) {
    const std::string t = name.is_string() ? name.get<std::string>() : "";
    return t == "mamba" ? 'M' : t == "attention" ? '*' : t == "mlp" ? '-' : t == "moe" ? 'E' : '?';
}

void read_nemotron_h(ModelSpec& m, HfObject& c) {
    std::string pattern;
    std::string key = "hybrid_override_pattern";
    if (const json* v = c.find("hybrid_override_pattern")) {
        if (!v->is_string()) throw InputError(c.path_of(key), value_text(*v), "must be a string, one character a layer");
        pattern = v->get<std::string>();
        c.find("layers_block_type");  // the same pattern in names, where a file has both
    } else if (const json* names = c.find("layers_block_type")) {
        key = "layers_block_type";
        if (!names->is_array()) throw InputError(c.path_of(key), value_text(*names), "must list one block type per layer");
        for (std::size_t i = 0; i < names->size(); ++i) {
            const char symbol = block_symbol((*names)[i]);
            if (symbol == '?')
                throw InputError(c.path_of(key) + "/" + std::to_string(i), value_text((*names)[i]), "must be mamba, attention, mlp or moe");
            pattern += symbol;
        }
    } else {
        throw InputError(c.path_of(key), "", "is required for model_type nemotron_h (or layers_block_type): which block each layer holds");
    }
    if (const std::string rule = hybrid_pattern_rule(pattern, m.layers, "num_hidden_layers"); !rule.empty())
        throw InputError(c.path_of(key), c.value_of(key.c_str()), rule);
    m.hybrid_pattern = pattern;
    m.position = PositionKind::None;
    const std::string act = c.text("mlp_hidden_act", "relu2");
    if (act == "relu2") m.mlp = MlpKind::SquaredRelu;
    else if (act == "relu") m.mlp = MlpKind::Relu;
    else
        throw InputError(c.path_of("mlp_hidden_act"), "\"" + act + "\"", "is not an ungated MLP activation Sextant models (relu2, relu)");
    MambaSpec& mamba = m.mamba;
    mamba.heads = c.size("mamba_num_heads", 128);
    mamba.head_dim = c.size("mamba_head_dim", 64);
    mamba.state = c.size("ssm_state_size", 128);
    mamba.groups = c.size("n_groups", 8);
    mamba.conv_kernel = c.size("conv_kernel", 4);
    mamba.chunk = c.size("chunk_size", 128);
    c.find("expand");  // d_inner is mamba_num_heads x mamba_head_dim, whatever expand says
    c.flag("use_conv_bias", true);  // the conv1d's bias, d_inner + 2 G N per layer: counted either way
    if (mamba.heads % mamba.groups != 0)
        throw InputError(c.path_of("n_groups"), int_text(mamba.groups), "must divide mamba_num_heads (" + int_text(mamba.heads) + ")");
    for (const char* bias : {"use_bias", "mamba_proj_bias", "attention_bias", "mlp_bias"})
        if (c.flag(bias, false)) throw InputError(c.path_of(bias), "true", "biases in a Nemotron-H model are not modelled");
    if (pattern.find('E') != std::string::npos) {
        read_routed_experts(m, c, "n_routed_experts", "num_experts_per_tok");
        m.moe.expert_ffn_hidden = c.size("moe_intermediate_size", std::nullopt);
        m.moe.latent = c.size("moe_latent_size", 0, 0);  // Nemotron 3 Super's latent MoE
        if (c.size("n_shared_experts", 1, 0) > 0) {
            m.moe.shared_experts = 1;
            m.moe.shared_ffn_hidden = c.size("moe_shared_expert_intermediate_size", std::nullopt);
        }
    }
    // MTP (Nemotron 3 Super): num_nextn_predict_layers modules, each the blocks of
    // mtp_hybrid_override_pattern (or mtp_layers_block_type's names).
    m.mtp_layers = c.size("num_nextn_predict_layers", 0, 0);
    if (const json* v = c.find("mtp_hybrid_override_pattern"); v && v->is_string()) {
        m.mtp_pattern = v->get<std::string>();
        c.find("mtp_layers_block_type");
    } else if (const json* names = c.find("mtp_layers_block_type"); names && names->is_array()) {
        for (const json& n : *names) m.mtp_pattern += block_symbol(n);  // an unknown name fails the rule below
    }
    const std::string mtp_key = c.has("mtp_hybrid_override_pattern") ? "mtp_hybrid_override_pattern" : "mtp_layers_block_type";
    if (m.mtp_layers > 0 && m.mtp_pattern.empty())
        throw InputError(c.path_of("mtp_hybrid_override_pattern"), "", "is required where num_nextn_predict_layers is set: the blocks of an MTP module");
    if (m.mtp_layers == 0) m.mtp_pattern.clear();
    if (const std::string rule = mtp_pattern_rule(pattern, m.mtp_pattern); !rule.empty())
        throw InputError(c.path_of(mtp_key.c_str()), c.value_of(mtp_key.c_str()), rule);
}

// Qwen3-Next and Qwen3.5 (transformers' configuration_qwen3_next.py and configuration_qwen3_5*.py):
// a gated delta net in each layer layer_types names linear_attention (without layer_types, every
// layer but each full_attention_interval-th: transformers' default), gated attention in the
// others (an output gate beside the queries: Qwen3-Next always, Qwen3.5 where attn_output_gate);
// Qwen3-Next's and Qwen3.5-MoE's experts are placed as Qwen2-MoE's, with its shared expert (the
// shared expert's sigmoid gate, hidden_size a layer, is not counted); Qwen3.5's MTP module
// (mtp_num_hidden_layers) is one layer of the last layer's kind. Sextant's placement is periodic
// (Megatron-Core's integer linear_attention_freq): any other is refused.
void read_qwen3_next(ModelSpec& m, HfObject& c, Family f) {
    if (f != Family::Qwen35) read_qwen_moe(m, c, true);
    if (m.ffn_hidden == 0 && m.moe_layer_count() < m.layers)
        throw InputError(c.path_of("intermediate_size"), "", "is required: mlp_only_layers or decoder_sparse_step leave dense MLP layers");
    // Read for every family, so that a qwen3_next file carrying the key is not refused as unread;
    // transformers' Qwen3NextAttention gates whatever it says.
    const bool gate = c.flag("attn_output_gate", true);
    m.attention_output_gate = gate || f == Family::Qwen3Next;
    if (f != Family::Qwen3Next) m.mtp_layers = c.size("mtp_num_hidden_layers", 0, 0);
    // transformers' defaults for the sizes are Megatron-Core's, GatedDeltaNetSpec's.
    GatedDeltaNetSpec g;
    g.key_heads = c.size("linear_num_key_heads", g.key_heads);
    g.value_heads = c.size("linear_num_value_heads", g.value_heads);
    g.key_head_dim = c.size("linear_key_head_dim", g.key_head_dim);
    g.value_head_dim = c.size("linear_value_head_dim", g.value_head_dim);
    g.conv_kernel = c.size("linear_conv_kernel_dim", g.conv_kernel);
    if (const std::string rule = gdn_heads_rule(g, "linear_num_key_heads"); !rule.empty())
        throw InputError(c.path_of("linear_num_value_heads"), int_text(g.value_heads), rule);
    std::int64_t interval = c.size("full_attention_interval", g.full_attention_interval);
    std::vector<bool> linear;
    std::string key = "full_attention_interval";
    if (const json* v = c.find("layer_types")) {
        if (!v->is_array() || static_cast<std::int64_t>(v->size()) != m.layers)
            throw InputError(c.path_of("layer_types"), value_text(*v), "must list one attention type per layer (" + int_text(m.layers) + ")");
        for (std::size_t i = 0; i < v->size(); ++i) {
            const json& t = (*v)[i];
            const std::string name = t.is_string() ? t.get<std::string>() : "";
            if (name != "linear_attention" && name != "full_attention")
                throw InputError(c.path_of("layer_types") + "/" + std::to_string(i), value_text(t),
                                 "must be linear_attention or full_attention in a gated delta net model");
            linear.push_back(name == "linear_attention");
        }
        const auto first_full = std::find(linear.begin(), linear.end(), false);
        interval = first_full == linear.end() ? 0 : (first_full - linear.begin()) + 1;
        key = "layer_types";
    } else {
        for (std::int64_t l = 0; l < m.layers; ++l) linear.push_back((l + 1) % interval != 0);
    }
    if (std::find(linear.begin(), linear.end(), true) == linear.end()) return;  // no linear layer: a transformer
    bool periodic = interval >= 2;
    for (std::int64_t l = 0; periodic && l < m.layers; ++l) periodic = linear[static_cast<std::size_t>(l)] == ((l + 1) % interval != 0);
    if (!periodic)
        throw InputError(c.path_of(key.c_str()), c.value_of(key.c_str()),
                         "gives a layer pattern Sextant cannot express: every n-th layer full attention, the others gated delta nets");
    g.full_attention_interval = interval;
    m.gdn = g;
}

// The windowed layers of each family, as transformers lays them out when layer_types is absent.
void read_window(ModelSpec& m, HfObject& c, Family f) {
    const auto all = [&](LayerAttention k) { return std::vector<LayerAttention>(static_cast<std::size_t>(m.layers), k); };
    const auto alternate = [&](std::int64_t period) {  // windowed unless (l + 1) % period == 0
        std::vector<LayerAttention> v;
        for (std::int64_t l = 0; l < m.layers; ++l) v.push_back((l + 1) % period != 0 ? LayerAttention::Sliding : LayerAttention::Full);
        return v;
    };
    std::optional<std::int64_t> tokens_default;
    std::string key = "layer_types";
    std::vector<LayerAttention> kinds = all(LayerAttention::Full);
    switch (f) {
        case Family::Mistral:
        case Family::Mixtral:  // sliding_window, when set, bands every layer
            if (c.has("sliding_window")) {
                kinds = all(LayerAttention::Sliding);
                key = "sliding_window";
            }
            break;
        case Family::Qwen2:
        case Family::Qwen2Moe:
        case Family::Qwen3:
        case Family::Qwen3Moe: {  // with use_sliding_window, the layers from max_window_layers on
            c.find("sliding_window");  // read: only use_sliding_window turns it on
            const std::int64_t from = c.size("max_window_layers", m.layers, 0);
            if (c.flag("use_sliding_window", false)) {
                for (std::int64_t l = from; l < m.layers; ++l) kinds[static_cast<std::size_t>(l)] = LayerAttention::Sliding;
                key = "max_window_layers";
            }
            break;
        }
        case Family::Gemma2:
        case Family::GptOss:  // alternate, starting with a windowed layer
            kinds = alternate(2);
            if (f == Family::Gemma2) tokens_default = 4096;
            break;
        case Family::Gemma3:  // sliding_window_pattern - 1 windowed layers, then a full one
            kinds = alternate(c.size("sliding_window_pattern", 6));
            tokens_default = 4096;
            key = "sliding_window_pattern";
            break;
        case Family::Llama4: {  // chunked on the RoPE layers; every no_rope_layer_interval-th is NoPE and full
            const std::vector<std::int64_t> rope = c.integers("no_rope_layers", 1);
            const std::int64_t interval = c.size("no_rope_layer_interval", 4);
            if (!rope.empty() && static_cast<std::int64_t>(rope.size()) < m.layers)
                throw InputError(c.path_of("no_rope_layers"), c.value_of("no_rope_layers"), "must have one entry per layer (" + int_text(m.layers) + ")");
            // attention_chunk_size defaults to 8192; an explicit null turns chunking off.
            const bool chunking = !c.present("attention_chunk_size") || c.has("attention_chunk_size");
            tokens_default = 8192;
            for (std::int64_t l = 0; l < m.layers; ++l) {
                const bool uses_rope = rope.empty() ? (l + 1) % interval != 0 : rope[static_cast<std::size_t>(l)] == 1;
                kinds[static_cast<std::size_t>(l)] = uses_rope && chunking ? LayerAttention::Chunked : LayerAttention::Full;
            }
            key = rope.empty() ? "no_rope_layer_interval" : "no_rope_layers";
            break;
        }
        default: break;
    }
    if (auto listed = layer_types(c, m.layers)) {
        kinds = *listed;
        key = "layer_types";
    }
    place_window(m, kinds, c, c.path_of(key), c.value_of(key.c_str()), tokens_default);
}

// Attention biases. Qwen2's q, k and v projections always carry one; attention_bias puts one on
// q, k, v and o (Sextant counts the first three: the output projection's hidden_size per layer
// is left out); Llama's mlp_bias with it is Sextant's linear_bias.
void read_biases(ModelSpec& m, HfObject& c, Family f) {
    if (f == Family::GptOss || f == Family::DeepSeek) return;  // read with their experts / attention
    const bool attention = c.flag("attention_bias", false);
    const bool mlp = f == Family::Llama && c.flag("mlp_bias", false);
    if (mlp && !attention)
        throw InputError(c.path_of("mlp_bias"), "true", "MLP biases without attention biases are not modelled");
    m.linear_bias = mlp;
    m.qkv_bias = !mlp && (attention || f == Family::Qwen2 || f == Family::Qwen2Moe);
}

ModelSpec read_text_model(HfObject& c, Family f, std::optional<bool> outer_tie) {
    ModelSpec m;
    m.layers = c.size("num_hidden_layers", std::nullopt);
    m.hidden = c.size("hidden_size", std::nullopt);
    m.heads = c.size("num_attention_heads", std::nullopt);
    m.vocab = c.size("vocab_size", default_vocab(f));
    m.kv_heads = c.size("num_key_value_heads", m.heads);
    if (m.heads % m.kv_heads != 0)
        throw InputError(c.path_of("num_key_value_heads"), int_text(m.kv_heads), "must divide num_attention_heads (" + int_text(m.heads) + ")");
    if (!c.has("head_dim") && !is_gemma(f) && m.hidden % m.heads != 0)
        throw InputError(c.path_of("num_attention_heads"), int_text(m.heads),
                         "must divide hidden_size (" + int_text(m.hidden) + ") unless head_dim is given");
    // Nemotron-H's early files name the head size attention_head_dim.
    const char* head_dim = f == Family::NemotronH && !c.has("head_dim") && c.has("attention_head_dim") ? "attention_head_dim" : "head_dim";
    m.head_dim = c.size(head_dim, is_gemma(f) ? 256 : m.hidden / m.heads);
    // Qwen3.5-MoE's files have no dense MLP size (read_qwen3_next checks that no layer needs one).
    m.ffn_hidden = c.size("intermediate_size", f == Family::NemotronH ? std::optional<std::int64_t>(21504)
                                               : f == Family::Qwen35Moe ? std::optional<std::int64_t>(0)
                                                                        : std::nullopt);
    m.tied_embeddings = c.flag("tie_word_embeddings", outer_tie.value_or(tied_by_default(f)));
    m.norm = NormKind::RmsNorm;
    if (f == Family::NemotronH) {
        read_nemotron_h(m, c);
        return m;
    }
    m.position = yarn_scaled(c) ? PositionKind::Yarn : PositionKind::Rotary;
    m.mlp = gated_mlp(c, f);
    switch (f) {
        case Family::Mixtral: read_mixtral(m, c); break;
        case Family::Qwen2Moe: read_qwen_moe(m, c, true); break;
        case Family::Qwen3Moe: read_qwen_moe(m, c, false); break;
        case Family::GptOss: read_gpt_oss(m, c); break;
        case Family::Llama4: read_llama4_moe(m, c); break;
        case Family::DeepSeek: read_deepseek(m, c); break;
        case Family::Qwen3Next:
        case Family::Qwen35:
        case Family::Qwen35Moe:
            read_qwen3_next(m, c, f);
            read_biases(m, c, f);
            return m;  // no windowed layers: a sliding_window set is refused as unread
        default: break;
    }
    read_biases(m, c, f);
    read_window(m, c, f);
    return m;
}

std::string towers_note(const json& o) {
    std::string note;
    for (std::string_view tower : kTowers)
        if (o.contains(text_of(tower)) && !o[text_of(tower)].is_null())
            note += "; " + text_of(tower) + " (not modelled: only the language model is)";
    return note;
}
}  // namespace

bool looks_like_hf_config(const json& object) {
    if (!object.is_object()) return false;
    const auto text = object.find("text_config");
    return object.contains("model_type") || (object.contains("hidden_size") && object.contains("num_hidden_layers")) ||
           (text != object.end() && text->is_object());
}

ModelSpec parse_hf_config(const json& o, const std::string& path) {
    const std::string type = string_member(o, "model_type", "llama", path);
    const Wrapper* wrapper = wrapper_of(type);
    const auto text = o.find("text_config");
    ModelSpec m;
    if (text != o.end() && !text->is_null()) {
        if (!text->is_object())
            throw InputError(path + "/text_config", value_text(*text), "must be a JSON object (the language model of a multimodal config)");
        HfObject c(*text, path + "/text_config");
        const std::string text_type = c.text("model_type", wrapper ? text_of(wrapper->text_type) : "");
        if (text_type.empty())
            throw InputError(c.path_of("model_type"), "", "is required: Sextant reads the language model by its model_type");
        const auto tie = o.find("tie_word_embeddings");
        std::optional<bool> outer_tie;
        if (tie != o.end() && !tie->is_null()) outer_tie = bool_member(o, "tie_word_embeddings", false, path);
        m = read_text_model(c, family_of(text_type, c.path_of("model_type")), outer_tie);
        c.reject_unread_shape_keys(text_type);
        m.source = "Hugging Face config.json (model_type " + type + "), language model from text_config (model_type " + text_type + ")";
    } else {
        if (wrapper && wrapper->nested_only)
            throw InputError(path + "/text_config", "", "is required for model_type " + type + ": its language model sits under text_config");
        HfObject c(o, path);
        c.text("model_type", "llama");
        m = read_text_model(c, family_of(type, path + "/model_type"), std::nullopt);
        c.reject_unread_shape_keys(type);
        m.source = "Hugging Face config.json (model_type " + type + ")";
    }
    m.source += towers_note(o);
    if (m.window.chunked) m.source += "; chunked attention modelled as aligned windows of " + int_text(m.window.tokens) + " tokens";
    m.name = string_member(o, "_name_or_path", type, path);
    return m;
}

}  // namespace sextant
