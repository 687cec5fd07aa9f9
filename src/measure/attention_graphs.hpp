#pragma once
// The cuDNN graphs of fused flash attention, BF16, tensors [b, h, s, d]; key-value heads may be
// fewer than query heads (GQA) and the value head smaller than the query-key one (MLA):
//   forward:  S = Q K^T * scale, causal mask, softmax with its log-sum-exp statistics, O = P V;
//   backward: P recomputed from the statistics, dV = P^T dO, dS = P (dO V^T - rowsum(dO O)) scale,
//             dK = dS^T Q, dQ = dS K (accumulated in fp32); with GQA, dK and dV summed over each
//             group of query heads.
// The operation layout is the one cuDNN's fused attention engines recognise (as cudnn-frontend
// builds it). Building the graph needs no GPU; planning and running it does.
#include <limits>
#include <vector>

#include "cudnn_graph.hpp"
#include "plan.hpp"

namespace sextant::measure {

// Device buffers of one attention problem (attention_buffer_bytes gives their sizes);
// softmax_sum ([b, hq, s] fp32) and dq_accum ([b, hq, s, d_qk] fp32) are the backward's scratch.
struct AttentionBuffers {
    void *q = nullptr, *k = nullptr, *v = nullptr, *o = nullptr, *stats = nullptr;
    void *d_o = nullptr, *d_q = nullptr, *d_k = nullptr, *d_v = nullptr, *softmax_sum = nullptr, *d_q_accum = nullptr;
};

// Host scalars the graphs read by value; they must outlive every execution.
struct AttentionScalars {
    float scale = 1.0f;
    float negative_infinity = -std::numeric_limits<float>::infinity();
    float one = 1.0f;
};

// A graph with what its variant pack binds to each of its non-virtual tensors.
struct BoundGraph {
    OperationGraph graph;
    std::vector<TensorId> ids;
    std::vector<void*> pointers;
    // A non-virtual tensor of the graph, and what the variant pack passes for it.
    TensorId add(const TensorSpec& spec, void* pointer) {
        const TensorId id = graph.tensor(spec);
        ids.push_back(id);
        pointers.push_back(pointer);
        return id;
    }
};

// Bytes of each buffer of a shape: Q and dQ, K and dK, V and dV, O and dO, a statistics row, the
// fp32 dQ accumulator.
struct AttentionBufferBytes {
    std::size_t q, k, v, o, stats, d_q_accum;
};
AttentionBufferBytes attention_buffer_bytes(const AttentionShape& shape);

BoundGraph attention_forward_graph(const AttentionShape& shape, const AttentionBuffers& buffers, AttentionScalars& scalars);
BoundGraph attention_backward_graph(const AttentionShape& shape, const AttentionBuffers& buffers, AttentionScalars& scalars);

}  // namespace sextant::measure
