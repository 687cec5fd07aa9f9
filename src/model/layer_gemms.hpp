#pragma once
// The GEMMs of one transformer layer on one GPU, as Megatron-style tensor parallelism shards
// them (QKV and MLP up column-parallel, attention output and MLP down row-parallel, experts
// split over EP): the shapes a cost model prices and sextant-calibrate --scenario measures.
#include <cstdint>
#include <string>
#include <vector>

#include "spec/model_spec.hpp"

namespace sextant {

// C[m, n] = A[m, k] B[k, n], `count` times per layer (the local experts of a grouped GEMM).
struct LayerGemm {
    std::string name;
    std::int64_t m = 0, n = 0, k = 0;
    std::int64_t count = 1;
};

// The forward GEMMs of `layer` for `tokens` tokens on one GPU (microbatch x sequence / CP),
// TP degree `tp`, EP degree `ep`. A routed expert's m is its share of the routed tokens: tokens
// x top_k x load imbalance over the local experts. The backward of each is two more GEMMs of
// the same size: the input gradient (m, k, n) and the weight gradient (k, n, m).
std::vector<LayerGemm> layer_gemms(const ModelSpec& model, std::int64_t layer, std::int64_t tokens, std::int64_t tp,
                                   std::int64_t ep);
// The output projection (logits) of the last stage.
LayerGemm logits_gemm(const ModelSpec& model, std::int64_t tokens, std::int64_t tp);

}  // namespace sextant
