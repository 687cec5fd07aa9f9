#include "model/layer_gemms.hpp"

#include <cmath>

namespace sextant {

namespace {
void attention(const ModelSpec& m, std::int64_t T, std::int64_t tp, std::vector<LayerGemm>& out) {
    const std::int64_t h = m.hidden, heads = m.heads;
    if (m.attention == AttentionKind::MultiLatent) {
        const LatentAttention& a = m.mla;
        const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
        if (a.q_lora_rank > 0) {
            out.push_back({"q down", T, a.q_lora_rank, h});
            out.push_back({"q up", T, heads * qk / tp, a.q_lora_rank});
        } else {
            out.push_back({"q", T, heads * qk / tp, h});
        }
        out.push_back({"kv down", T, a.kv_lora_rank + a.qk_rope_head_dim, h});
        out.push_back({"kv up", T, heads * (a.qk_nope_head_dim + a.v_head_dim) / tp, a.kv_lora_rank});
        out.push_back({"attention output", T, h, heads * a.v_head_dim / tp});
        return;
    }
    const std::int64_t q = heads * m.head_dim;
    out.push_back({"qkv", T, m.qkv_out() / tp, h});
    out.push_back({"attention output", T, h, q / tp});
}

void mlp(const ModelSpec& m, const std::string& what, std::int64_t tokens, std::int64_t ffn, std::int64_t tp,
         std::int64_t count, std::vector<LayerGemm>& out, std::int64_t width) {
    const std::int64_t up = m.gated_mlp() ? 2 * ffn : ffn;
    out.push_back({what + " up", tokens, up / tp, width, count});
    out.push_back({what + " down", tokens, width, ffn / tp, count});
}
}  // namespace

std::vector<LayerGemm> layer_gemms(const ModelSpec& m, std::int64_t layer, std::int64_t T, std::int64_t tp, std::int64_t ep) {
    std::vector<LayerGemm> out;
    if (m.layer_mixer(layer) == Mixer::Attention) attention(m, T, tp, out);
    if (m.layer_mixer(layer) == Mixer::Mamba) {
        // in_proj column-parallel by heads and groups, out_proj row-parallel (mamba_mixer.py).
        out.push_back({"mamba in", T, m.mamba.in_proj_out() / tp, m.hidden});
        out.push_back({"mamba out", T, m.hidden, m.mamba.inner() / tp});
    }
    if (m.layer_mixer(layer) == Mixer::GatedDeltaNet) {
        // in_proj column-parallel by heads, out_proj row-parallel (gated_delta_net.py).
        out.push_back({"gdn in", T, m.gdn->in_proj_out() / tp, m.hidden});
        out.push_back({"gdn out", T, m.hidden, m.gdn->value_dim() / tp});
    }
    if (m.layer_ffn(layer) == Ffn::None) return out;
    if (m.layer_ffn(layer) == Ffn::Dense) {
        mlp(m, "mlp", T, m.ffn_hidden, tp, 1, out, m.hidden);
        return out;
    }
    const MoeSpec& e = m.moe;
    out.push_back({"router", T, e.experts, m.hidden});
    const std::int64_t local = e.experts / ep;
    const double routed = static_cast<double>(T) * static_cast<double>(e.top_k) * e.routed_share();
    const auto per_expert = static_cast<std::int64_t>(std::llround(routed / static_cast<double>(local)));
    if (e.latent > 0) {
        out.push_back({"latent down", T, e.latent, m.hidden});
        out.push_back({"latent up", T, m.hidden, e.latent});
    }
    mlp(m, "expert", per_expert, e.expert_ffn_hidden, tp, local, out, m.expert_width());
    if (e.shared_experts > 0) mlp(m, "shared expert", T, e.shared_experts * e.shared_ffn_hidden, tp, 1, out, m.hidden);
    return out;
}

double ssd_scan_flops_per_token(const ModelSpec& m) {
    const MambaSpec& s = m.mamba;
    const auto d = [](std::int64_t v) { return static_cast<double>(v); };
    const double P = d(s.head_dim), N = d(s.state), Q = d(s.chunk);
    return 2 * d(s.groups) * Q * N + 2 * d(s.heads) * (Q * P + 2 * N * P);
}

double gdn_rule_flops_per_token(const ModelSpec& m) {
    const double dv = static_cast<double>(m.gdn->value_head_dim);
    return 2 * 4 * static_cast<double>(m.gdn->value_heads) * dv * dv;
}

LayerGemm logits_gemm(const ModelSpec& m, std::int64_t T, std::int64_t tp) { return {"logits", T, (m.vocab + tp - 1) / tp, m.hidden}; }

BlockMatmuls block_matmuls(const ModelSpec& m, std::int64_t layer) {
    BlockMatmuls mms;
    const auto d = [](std::int64_t v) { return static_cast<double>(v); };
    const double h = d(m.hidden), heads = d(m.heads);
    const Mixer mixer = m.layer_mixer(layer);
    if (mixer == Mixer::Mamba) {
        mms.push_back({h, d(m.mamba.in_proj_out()), TpSplit::Column});
        mms.push_back({d(m.mamba.inner()), h, TpSplit::Row});
    } else if (mixer == Mixer::GatedDeltaNet) {
        mms.push_back({h, d(m.gdn->in_proj_out()), TpSplit::Column});
        mms.push_back({d(m.gdn->value_dim()), h, TpSplit::Row});
    } else if (mixer == Mixer::Attention && m.attention == AttentionKind::MultiLatent) {
        const auto& a = m.mla;
        const double qk = heads * d(a.qk_nope_head_dim + a.qk_rope_head_dim);
        if (a.q_lora_rank > 0) {
            mms.push_back({h, d(a.q_lora_rank), TpSplit::None});
            mms.push_back({d(a.q_lora_rank), qk, TpSplit::Column});
        } else {
            mms.push_back({h, qk, TpSplit::Column});
        }
        mms.push_back({h, d(a.kv_lora_rank + a.qk_rope_head_dim), TpSplit::None});
        mms.push_back({d(a.kv_lora_rank), heads * d(a.qk_nope_head_dim + a.v_head_dim), TpSplit::Column});
        mms.push_back({heads * d(a.v_head_dim), h, TpSplit::Row});
    } else if (mixer == Mixer::Attention) {
        // With the output gate, the query projection also outputs the gate (Qwen3-Next's q_proj).
        const double q = heads * d(m.head_dim), kv = d(m.kv_heads) * d(m.head_dim);
        mms.push_back({h, q * (m.attention_output_gate ? 2 : 1), TpSplit::Column});
        mms.push_back({h, kv, TpSplit::Column});
        mms.push_back({h, kv, TpSplit::Column});
        mms.push_back({q, h, TpSplit::Row});
    }
    if (m.layer_ffn(layer) == Ffn::Dense) {
        const double f = d(m.ffn_hidden);
        mms.push_back({h, f, TpSplit::Column});
        if (m.gated_mlp()) mms.push_back({h, f, TpSplit::Column});
        mms.push_back({f, h, TpSplit::Row});
    }
    return mms;
}

}  // namespace sextant
