// Reads a Hugging Face transformers config.json (Llama, Mistral/Mixtral, Qwen2, DeepSeek-V3).
// HF configs carry many keys irrelevant to training cost (dropout, token ids, rope scaling), so
// unknown keys are ignored here, unlike in Sextant's own format.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/model_spec.hpp"

namespace sextant {

namespace {
// Sizes in a config.json are counts and dimensions; beyond this none is a real model, and the
// products Sextant forms from them must stay exact.
constexpr std::int64_t kLargestSize = std::int64_t{1} << 24;

std::int64_t size_value(const json& v, const std::string& path, std::int64_t min) {
    if (!is_integral(v) || v.get<double>() < static_cast<double>(min) || v.get<double>() > static_cast<double>(kLargestSize))
        throw InputError(path, value_text(v), "must be an integer from " + std::to_string(min) + " to " + std::to_string(kLargestSize));
    return static_cast<std::int64_t>(v.get<double>());
}

std::int64_t positive(const json& o, const std::string& path, const char* key) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null())
        throw InputError(path + "/" + key, "", "is required in a Hugging Face config");
    return size_value(*it, path + "/" + key, 1);
}

std::int64_t optional_int(const json& o, const std::string& path, const char* key, std::int64_t fallback, std::int64_t min) {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) return fallback;
    return size_value(*it, path + "/" + key, min);
}
}  // namespace

bool looks_like_hf_config(const json& object) {
    return object.is_object() && object.contains("hidden_size") &&
           object.contains("num_hidden_layers");
}

ModelSpec parse_hf_config(const json& o, const std::string& path) {
    ModelSpec m;
    const std::string type = string_member(o, "model_type", "llama", path);
    m.name = string_member(o, "_name_or_path", type, path);
    m.layers = positive(o, path, "num_hidden_layers");
    m.hidden = positive(o, path, "hidden_size");
    m.heads = positive(o, path, "num_attention_heads");
    m.vocab = positive(o, path, "vocab_size");
    m.kv_heads = optional_int(o, path, "num_key_value_heads", m.heads, 1);
    m.head_dim = optional_int(o, path, "head_dim", std::max<std::int64_t>(1, m.hidden / m.heads), 1);
    m.ffn_hidden = positive(o, path, "intermediate_size");
    m.tied_embeddings = bool_member(o, "tie_word_embeddings", false, path);
    m.norm = NormKind::RmsNorm;
    m.mlp = MlpKind::SwiGlu;
    m.position = PositionKind::Rotary;
    m.qkv_bias = type == "qwen2" || bool_member(o, "attention_bias", false, path);
    m.source = "Hugging Face config.json (model_type " + type + ")";
    if (o.contains("num_local_experts")) {  // Mixtral
        m.moe.experts = positive(o, path, "num_local_experts");
        m.moe.top_k = positive(o, path, "num_experts_per_tok");
        m.moe.expert_ffn_hidden = m.ffn_hidden;
    }
    if (o.contains("n_routed_experts")) {  // DeepSeek-V2/V3
        m.moe.experts = positive(o, path, "n_routed_experts");
        m.moe.top_k = positive(o, path, "num_experts_per_tok");
        m.moe.expert_ffn_hidden = positive(o, path, "moe_intermediate_size");
        m.moe.shared_experts = optional_int(o, path, "n_shared_experts", 0, 0);
        m.moe.shared_ffn_hidden = m.moe.expert_ffn_hidden;
        m.moe.first_dense_layers = optional_int(o, path, "first_k_dense_replace", 0, 0);
        m.moe.layer_frequency = optional_int(o, path, "moe_layer_freq", 1, 1);
        m.mtp_layers = optional_int(o, path, "num_nextn_predict_layers", 0, 0);
    }
    if (o.contains("kv_lora_rank") && !o["kv_lora_rank"].is_null()) {
        m.attention = AttentionKind::MultiLatent;
        m.mla.q_lora_rank = optional_int(o, path, "q_lora_rank", 0, 0);
        m.mla.kv_lora_rank = positive(o, path, "kv_lora_rank");
        m.mla.qk_nope_head_dim = positive(o, path, "qk_nope_head_dim");
        m.mla.qk_rope_head_dim = positive(o, path, "qk_rope_head_dim");
        m.mla.v_head_dim = positive(o, path, "v_head_dim");
        m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
    }
    if (m.heads % m.kv_heads != 0)
        throw InputError(path + "/num_key_value_heads", std::to_string(m.kv_heads),
                         "must divide num_attention_heads (" + std::to_string(m.heads) + ")");
    return m;
}

}  // namespace sextant
