#pragma once
// Parameter counts of a model, whole and per part, exactly as the framework allocates them
// (no vocabulary padding: Megatron's padding is a few rows per TP rank).
#include <cstdint>

#include "spec/model_spec.hpp"

namespace sextant {

struct ParamCounts {
    double embedding = 0;        // token (+ learned position) embeddings
    double output = 0;           // output projection (0 when tied)
    double final_norm = 0;
    double attention = 0;        // all attention layers
    double mamba = 0;            // all Mamba layers' mixers (hybrid models)
    double gdn = 0;              // all gated delta net mixers (linear-attention layers)
    double dense_mlp = 0;        // all dense-MLP layers
    double moe_experts = 0;      // all routed experts of all MoE layers
    double moe_shared = 0;       // shared experts and routers
    double norms = 0;            // per-layer norms
    double mtp = 0;              // multi-token-prediction modules

    double total() const;
    // Parameters touched by one token: routed experts count top_k of them.
    double active(const ModelSpec& m) const;
};

ParamCounts count_params(const ModelSpec& m);

double attention_params_per_layer(const ModelSpec& m);
// One Mamba-2 mixer: in_proj, conv1d (weight and bias), the per-head dt bias, A and D, the gated
// norm over d_inner, out_proj (mamba_mixer.py; biases on the projections where linear_bias).
double mamba_params(const ModelSpec& m);
// One gated delta net mixer: in_proj, the conv1d weight (no bias: GatedDeltaNet's conv_bias
// default and Qwen3-Next's), the per-value-head dt bias and A_log, the gated norm's weight over a
// value head, out_proj (gated_delta_net.py; no projection biases).
double gdn_params(const ModelSpec& m);
// A layer's mixer (attention, Mamba, gated delta net or none) and its MLP block (dense, MoE or none).
double mixer_params(const ModelSpec& m, std::int64_t layer);
double ffn_params(const ModelSpec& m, std::int64_t layer);
// An MLP between `width` (hidden by default; a latent MoE's experts: moe.latent) and ffn_hidden.
double mlp_params(const ModelSpec& m, std::int64_t ffn_hidden);
double mlp_params(const ModelSpec& m, std::int64_t ffn_hidden, std::int64_t width);
// A latent MoE layer's two projections, hidden to latent and back (0 without).
double latent_projection_params(const ModelSpec& m);
double norm_params(const ModelSpec& m);
double routed_expert_params(const ModelSpec& m);      // one expert
double moe_layer_params(const ModelSpec& m);          // router + experts + shared experts + latent projections
double layer_params(const ModelSpec& m, std::int64_t layer);
// The trained parameters of one layer under LoRA: rank-r adapters (A: in x r, B: r x out) beside
// the QKV and output projections.
double lora_params_per_layer(const ModelSpec& m, std::int64_t rank);

}  // namespace sextant
