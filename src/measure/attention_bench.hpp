#pragma once
// Fused flash attention through cuDNN's graph API: the forward (S = Q K^T scaled, causal mask,
// softmax with its log-sum-exp statistics, O = P V) and the backward (dQ, dK, dV from dO and the
// statistics), each one graph that cuDNN's fused attention engines take.
#include "plan.hpp"

namespace sextant::measure {

struct AttentionResult {
    AttentionShape shape;
    double fwd_us = 0, bwd_us = 0;
    // FlashAttention's count: 2 b h s^2 (d_qk + d_v) forward (4 b h s^2 d when the heads are
    // equal; half when causal), 2.5x that backward.
    double fwd_tflops = 0, bwd_tflops = 0;
    std::string engine;
};

// BF16 inputs; grouped-query and latent (d_qk != d_v) shapes as given. Throws
// std::runtime_error when cuDNN builds no plan for the shape on this GPU.
AttentionResult measure_attention(const AttentionShape& shape, int warmup, int reps);

// FLOPs of the forward pass as FlashAttention's papers count them.
double attention_forward_flops(const AttentionShape& shape);

}  // namespace sextant::measure
