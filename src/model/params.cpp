#include "model/params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

double norm_params(const ModelSpec& m) {
    return m.norm == NormKind::LayerNorm ? 2.0 * d(m.hidden) : d(m.hidden);
}

double attention_params_per_layer(const ModelSpec& m) {
    const double h = d(m.hidden), heads = d(m.heads);
    if (m.attention == AttentionKind::MultiLatent) {
        const auto& a = m.mla;
        const double qk = d(a.qk_nope_head_dim + a.qk_rope_head_dim);
        double q = a.q_lora_rank > 0
                       ? h * d(a.q_lora_rank) + d(a.q_lora_rank) + d(a.q_lora_rank) * heads * qk
                       : h * heads * qk;
        double kv = h * d(a.kv_lora_rank + a.qk_rope_head_dim) + d(a.kv_lora_rank) +
                    d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim);
        double o = heads * d(a.v_head_dim) * h;
        return q + kv + o;
    }
    const double q = heads * d(m.head_dim), kv = d(m.kv_heads) * d(m.head_dim);
    double params = h * d(m.qkv_out()) + q * h;
    if (m.linear_bias) params += q + 2.0 * kv + h;
    else if (m.qkv_bias) params += q + 2.0 * kv;
    return params;
}

double mamba_params(const ModelSpec& m) {
    const MambaSpec& s = m.mamba;
    const double h = d(m.hidden), inner = d(s.inner()), in_out = d(s.in_proj_out()), conv = d(s.conv_channels());
    double params = h * in_out + conv * d(s.conv_kernel + 1) + 3.0 * d(s.heads) + inner + inner * h;
    if (m.linear_bias) params += in_out + h;
    return params;
}

double gdn_params(const ModelSpec& m) {
    const GatedDeltaNetSpec& g = *m.gdn;
    const double h = d(m.hidden);
    return h * d(g.in_proj_out()) + d(g.conv_channels()) * d(g.conv_kernel) + 2.0 * d(g.value_heads) + d(g.value_head_dim) +
           d(g.value_dim()) * h;
}

double mlp_params(const ModelSpec& m, std::int64_t ffn_hidden) { return mlp_params(m, ffn_hidden, m.hidden); }

double mlp_params(const ModelSpec& m, std::int64_t ffn_hidden, std::int64_t width) {
    const double h = d(width), f = d(ffn_hidden);
    if (m.gated_mlp()) return 3.0 * h * f + (m.linear_bias ? 2.0 * f + h : 0.0);
    return 2.0 * h * f + (m.linear_bias ? f + h : 0.0);
}

double routed_expert_params(const ModelSpec& m) { return mlp_params(m, m.moe.expert_ffn_hidden, m.expert_width()); }

double latent_projection_params(const ModelSpec& m) {
    // Megatron-Core moe_layer.py fc1_latent_proj and fc2_latent_proj (biases where add_bias_linear).
    if (m.moe.latent <= 0) return 0.0;
    return 2.0 * d(m.hidden) * d(m.moe.latent) + (m.linear_bias ? d(m.moe.latent + m.hidden) : 0.0);
}

double moe_layer_params(const ModelSpec& m) {
    const double router = d(m.hidden) * d(m.moe.experts);
    return router + d(m.moe.experts) * routed_expert_params(m) + d(m.moe.shared_experts) * mlp_params(m, m.moe.shared_ffn_hidden) +
           latent_projection_params(m);
}

double mixer_params(const ModelSpec& m, std::int64_t layer) {
    switch (m.layer_mixer(layer)) {
    case Mixer::Attention: return attention_params_per_layer(m);
    case Mixer::Mamba: return mamba_params(m);
    case Mixer::GatedDeltaNet: return gdn_params(m);
    case Mixer::None: break;
    }
    return 0.0;
}

double ffn_params(const ModelSpec& m, std::int64_t layer) {
    switch (m.layer_ffn(layer)) {
    case Ffn::Dense: return mlp_params(m, m.ffn_hidden);
    case Ffn::Moe: return moe_layer_params(m);
    case Ffn::None: break;
    }
    return 0.0;
}

double layer_params(const ModelSpec& m, std::int64_t layer) {
    return mixer_params(m, layer) + ffn_params(m, layer) + m.norms_per_layer() * norm_params(m);
}

double lora_params_per_layer(const ModelSpec& m, std::int64_t rank) {
    const double h = d(m.hidden), r = d(rank);
    const double q = d(m.heads) * d(m.head_dim);
    return r * (h + d(m.qkv_out())) + r * (q + h);
}

ParamCounts count_params(const ModelSpec& m) {
    ParamCounts c;
    const double h = d(m.hidden);
    c.embedding = d(m.vocab) * h;
    if (m.position == PositionKind::Learned) c.embedding += d(m.max_positions) * h;
    c.output = m.tied_embeddings ? 0.0 : d(m.vocab) * h;
    c.final_norm = norm_params(m);
    const double moe_layers = d(m.moe_layer_count());
    double dense_layers = 0;
    for (std::int64_t l = 0; l < m.layers; ++l) dense_layers += m.layer_ffn(l) == Ffn::Dense ? 1 : 0;
    c.attention = d(m.mixer_layer_count(Mixer::Attention)) * attention_params_per_layer(m);
    c.mamba = d(m.mixer_layer_count(Mixer::Mamba)) * mamba_params(m);
    c.gdn = d(m.mixer_layer_count(Mixer::GatedDeltaNet)) * gdn_params(m);
    c.norms = d(m.layers) * m.norms_per_layer() * norm_params(m);
    c.dense_mlp = dense_layers * mlp_params(m, m.ffn_hidden);
    if (m.is_moe()) {
        c.moe_experts = moe_layers * d(m.moe.experts) * routed_expert_params(m);
        c.moe_shared = moe_layers * (moe_layer_params(m) - d(m.moe.experts) * routed_expert_params(m));
    }
    // A DeepSeek-V3 MTP module: two norms and a 2h -> h projection in front of one full layer
    // (the last layer's kind), and a final norm. Training shares the embedding and output head
    // with the main model, but the published 14e9 (and the checkpoint) count a copy of each.
    if (m.mtp_layers > 0) {
        double blocks = 0;
        m.for_each_mtp_block([&](std::int64_t layer) { blocks += layer_params(m, layer); });
        c.mtp = d(m.mtp_layers) * (2.0 * norm_params(m) + 2.0 * h * h + blocks + norm_params(m) + 2.0 * d(m.vocab) * h);
    }
    return c;
}

double ParamCounts::total() const {
    return embedding + output + final_norm + attention + mamba + gdn + dense_mlp + moe_experts + moe_shared + norms;
}

double ParamCounts::active(const ModelSpec& m) const {
    if (!m.is_moe()) return total();
    const double inactive = d(m.moe_layer_count()) * d(m.moe.experts - m.moe.top_k) *
                            routed_expert_params(m);
    return total() - inactive;
}

}  // namespace sextant
