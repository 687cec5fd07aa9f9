#pragma once
// The GEMMs of one transformer layer on one GPU, as Megatron-style tensor parallelism shards
// them (QKV and MLP up column-parallel, attention output and MLP down row-parallel, experts
// split over EP): the shapes a cost model prices and sextant-calibrate --scenario measures.
#include <array>
#include <cstddef>
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
// The forward FLOPs per token of one Mamba layer's chunked SSD scan (Dao and Gu 2024, section 6),
// unsharded: per group C B^T within a chunk (2 Q N), per head the masked product with X (2 Q P),
// the chunk's state B^T X (2 N P) and the states' contribution C h (2 N P).
double ssd_scan_flops_per_token(const ModelSpec& model);
// The forward FLOPs per token of one gated delta net's delta rule as Megatron-LM counts them for
// its reported throughput (training.py num_floating_point_operations at b0cc2706): four products
// of a value head's size squared per value head (K K^T, V K^T, S (a (I - b K K^T)), S Q), two
// FLOPs a multiply-add, unsharded.
double gdn_rule_flops_per_token(const ModelSpec& model);
// The output projection (logits) of the last stage.
LayerGemm logits_gemm(const ModelSpec& model, std::int64_t tokens, std::int64_t tp);

// The same layer's linear projections one at a time, in forward order, as an autograd policy that
// counts matmuls sees them (torchtitan's modules: wq, wk, wv, then wo; MLA: q or q_a and q_b,
// wkv_a, wkv_b, wo; then a dense MLP's w1, w3, w2, or w1, w2 ungated), where layer_gemms fuses
// QKV and gate/up. A MoE layer lists its attention only (its experts run as grouped GEMMs); a Mamba
// or gated delta net mixer its in_proj and out_proj.
enum class TpSplit { Column, Row, None };  // output split over TP, input split (partial sums out), neither
struct BlockMatmul {
    double in = 0, out = 0;  // elements per token of the input and output, before the TP split
    TpSplit split = TpSplit::Column;
    bool saved = false;      // set by a checkpointing policy (memory/activations, op_checkpoint_matmuls)
};
// At most eight (MLA with a q LoRA, five, then a gated MLP, three), held in place: the memory
// screen reads them for every layer of every layout it checks.
struct BlockMatmuls {
    std::array<BlockMatmul, 8> items{};
    std::size_t count = 0;
    void push_back(const BlockMatmul& m) { items[count++] = m; }
    std::size_t size() const { return count; }
    BlockMatmul& operator[](std::size_t i) { return items[i]; }
    const BlockMatmul& operator[](std::size_t i) const { return items[i]; }
    const BlockMatmul* begin() const { return items.data(); }
    const BlockMatmul* end() const { return items.data() + count; }
};
BlockMatmuls block_matmuls(const ModelSpec& model, std::int64_t layer);

}  // namespace sextant
