// The cuDNN attention graphs of sextant-calibrate, built on the host: every tensor and operation
// descriptor must finalize (cuDNN checks types and shapes there), and the graphs must have the
// operations of fused flash attention. Planning and running them needs a GPU; this does not.
#include <doctest/doctest.h>

#include "attention_graphs.hpp"

using namespace sextant::measure;

TEST_CASE("the forward attention graph: two matmuls around a softmax with statistics, and the causal mask") {
    AttentionBuffers buffers;
    AttentionScalars scalars;
    const BoundGraph full = attention_forward_graph({2, 1024, 16, 16, 128, 128, false}, buffers, scalars);
    // QK^T, scale, max, subtract, exp, sum, log, add (statistics), divide, PV.
    CHECK(full.graph.operation_count() == 10);
    CHECK(full.ids.size() == 6);  // Q, K^T, V, O, statistics, scale
    const BoundGraph causal = attention_forward_graph({2, 1024, 16, 16, 128, 128, true}, buffers, scalars);
    // Row and column indices, their comparison and the select of -infinity.
    CHECK(causal.graph.operation_count() == 14);
    CHECK(causal.ids.size() == 7);
}

TEST_CASE("the backward attention graph: five matmuls, recomputed probabilities, fp32 dQ accumulation") {
    AttentionBuffers buffers;
    AttentionScalars scalars;
    const BoundGraph full = attention_backward_graph({1, 2048, 8, 8, 64, 64, false}, buffers, scalars);
    // dO*O, row sum, softmax_sum; QK^T, scale, minus statistics, exp; P^T reshape, dV; dO V^T,
    // minus softmax_sum, times P, scale; dS^T reshape, dK; K reshape, dQ accumulation, dQ.
    CHECK(full.graph.operation_count() == 18);
    CHECK(full.ids.size() == 13);
    const BoundGraph causal = attention_backward_graph({1, 2048, 8, 8, 64, 64, true}, buffers, scalars);
    CHECK(causal.graph.operation_count() == 22);
    CHECK(causal.ids.size() == 14);
}

TEST_CASE("the scalars are bound by address, so the graphs read what the caller holds") {
    AttentionBuffers buffers;
    AttentionScalars scalars;
    scalars.scale = 0.125f;
    const BoundGraph g = attention_forward_graph({1, 512, 4, 4, 64, 64, true}, buffers, scalars);
    bool scale_bound = false;
    for (void* p : g.pointers) scale_bound = scale_bound || p == &scalars.scale;
    CHECK(scale_bound);
}

TEST_CASE("grouped-query attention: K and V on fewer heads, their gradients summed over each group") {
    AttentionBuffers buffers;
    AttentionScalars scalars;
    const AttentionShape gqa{1, 4096, 64, 8, 128, 128, true};  // Llama 3 70B at TP 1
    const BoundGraph fwd = attention_forward_graph(gqa, buffers, scalars);
    CHECK(fwd.graph.operation_count() == 14);  // as multi-head: the matmuls broadcast K and V
    const BoundGraph bwd = attention_backward_graph(gqa, buffers, scalars);
    CHECK(bwd.graph.operation_count() == 22 + 2);  // plus the dK and dV group sums
    CHECK(bwd.ids.size() == 14);
    const AttentionBufferBytes bytes = attention_buffer_bytes(gqa);
    CHECK(bytes.q == std::size_t(4096) * 64 * 128 * 2);
    CHECK(bytes.k == std::size_t(4096) * 8 * 128 * 2);
    CHECK(bytes.d_q_accum == std::size_t(4096) * 64 * 128 * 4);
}

TEST_CASE("multi-head latent attention: query-key heads of 192, value heads of 128 (DeepSeek-V3)") {
    AttentionBuffers buffers;
    AttentionScalars scalars;
    const AttentionShape mla{1, 4096, 16, 16, 192, 128, false};
    CHECK(attention_forward_graph(mla, buffers, scalars).graph.operation_count() == 10);
    CHECK(attention_backward_graph(mla, buffers, scalars).graph.operation_count() == 18);
    const AttentionBufferBytes bytes = attention_buffer_bytes(mla);
    CHECK(bytes.q == std::size_t(4096) * 16 * 192 * 2);
    CHECK(bytes.v == std::size_t(4096) * 16 * 128 * 2);
    CHECK(bytes.o == std::size_t(4096) * 16 * 128 * 2);
}
