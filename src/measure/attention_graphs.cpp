#include "attention_graphs.hpp"

namespace sextant::measure {

namespace {
using Dims = std::vector<std::int64_t>;

// Q, O and their gradients are [b, hq, s, d_qk] and [b, hq, s, d_v]; K and V (and their
// gradients) [b, hk, s, d_qk] and [b, hk, s, d_v], hk dividing hq (grouped-query attention); all
// packed. cuDNN's graph takes K and V transposed ([b, hk, d, s]) through strides, without moving
// data, and broadcasts their heads over each group of query heads in the matmuls.
struct Layout {
    std::int64_t b, hq, hk, s, dqk, dv;
    Dims q() const { return {b, hq, s, dqk}; }
    Dims o() const { return {b, hq, s, dv}; }
    Dims k() const { return {b, hk, s, dqk}; }
    Dims v() const { return {b, hk, s, dv}; }
    Dims scores() const { return {b, hq, s, s}; }
    Dims rows() const { return {b, hq, s, 1}; }
    bool grouped() const { return hk != hq; }
    // The [b, h, d, s] view of a packed [b, h, s, d].
    static TensorSpec transposed_view(std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) {
        return {{b, h, d, s}, {h * s * d, s * d, 1, d}, CUDNN_DATA_BFLOAT16, false, false};
    }
    Dims transposed_score_strides() const { return {hq * s * s, s * s, 1, s}; }  // S^T as a view of S
};

Layout layout(const AttentionShape& a) { return {a.batch, a.heads, a.kv_heads, a.seq, a.head_dim, a.head_dim_v}; }

TensorSpec io(Dims dims) { return {dims, packed_strides(dims), CUDNN_DATA_BFLOAT16, false, false}; }
TensorSpec stats(Dims dims) { return {dims, packed_strides(dims), CUDNN_DATA_FLOAT, false, false}; }
TensorSpec scalar() { return {{1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true}; }

// Scores masked above the diagonal (top-left causal): keep where row >= column.
TensorId causal_mask(OperationGraph& g, TensorId scores, TensorId negative_infinity) {
    const TensorId row = g.virtual_like(scores, CUDNN_DATA_INT32), col = g.virtual_like(scores, CUDNN_DATA_INT32);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, OperationGraph::kNone, OperationGraph::kNone, row, 2);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, OperationGraph::kNone, OperationGraph::kNone, col, 3);
    const TensorId keep = g.virtual_like(scores, CUDNN_DATA_BOOLEAN);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, OperationGraph::kNone, keep, -1, CUDNN_DATA_BOOLEAN);
    const TensorId masked = g.virtual_like(scores);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, negative_infinity, keep, masked);
    return masked;
}

}  // namespace

AttentionBufferBytes attention_buffer_bytes(const AttentionShape& a) {
    const auto n = [](std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d) { return static_cast<std::size_t>(b * h * s * d); };
    constexpr std::size_t bf16 = 2, fp32 = 4;
    return {n(a.batch, a.heads, a.seq, a.head_dim) * bf16, n(a.batch, a.kv_heads, a.seq, a.head_dim) * bf16,
            n(a.batch, a.kv_heads, a.seq, a.head_dim_v) * bf16, n(a.batch, a.heads, a.seq, a.head_dim_v) * bf16,
            n(a.batch, a.heads, a.seq, 1) * fp32, n(a.batch, a.heads, a.seq, a.head_dim) * fp32};
}

BoundGraph attention_forward_graph(const AttentionShape& shape, const AttentionBuffers& buf, AttentionScalars& sc) {
    const Layout x = layout(shape);
    const bool causal = shape.causal;
    BoundGraph bind;
    OperationGraph& g = bind.graph;
    const TensorId q = bind.add(io(x.q()), buf.q), kt = bind.add(Layout::transposed_view(x.b, x.hk, x.s, x.dqk), buf.k);
    const TensorId v = bind.add(io(x.v()), buf.v);
    const TensorId o = bind.add(io(x.o()), buf.o), lse = bind.add(stats(x.rows()), buf.stats);
    const TensorId scale = bind.add(scalar(), &sc.scale);
    const TensorId neg_inf = causal ? bind.add(scalar(), &sc.negative_infinity) : OperationGraph::kNone;

    const TensorId s = g.virtual_tensor(x.scores());
    g.matmul(q, kt, s);
    TensorId scores = g.virtual_tensor(x.scores());
    g.pointwise(CUDNN_POINTWISE_MUL, s, scale, OperationGraph::kNone, scores);
    if (causal) scores = causal_mask(g, scores, neg_inf);
    // Softmax with its statistics: max, exp of the difference, sum, log-sum-exp for backward.
    const TensorId max = g.virtual_tensor(x.rows()), shifted = g.virtual_tensor(x.scores()), e = g.virtual_tensor(x.scores());
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, max);
    g.pointwise(CUDNN_POINTWISE_SUB, scores, max, OperationGraph::kNone, shifted);
    g.pointwise(CUDNN_POINTWISE_EXP, shifted, OperationGraph::kNone, OperationGraph::kNone, e);
    const TensorId sum = g.virtual_tensor(x.rows()), log_sum = g.virtual_tensor(x.rows());
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    g.pointwise(CUDNN_POINTWISE_LOG, sum, OperationGraph::kNone, OperationGraph::kNone, log_sum);
    g.pointwise(CUDNN_POINTWISE_ADD, max, log_sum, OperationGraph::kNone, lse);
    const TensorId p = g.virtual_tensor(x.scores(), CUDNN_DATA_BFLOAT16);  // the second matmul takes the I/O type
    g.pointwise(CUDNN_POINTWISE_DIV, e, sum, OperationGraph::kNone, p);
    g.matmul(p, v, o);
    return bind;
}

namespace {
// A key or value gradient: the matmul straight into it, or, when query heads share key-value
// heads, into a per-query-head tensor summed over each group (as cudnn-frontend's SDPA backward
// builds it).
void gradient(OperationGraph& g, const Layout& x, TensorId a, TensorId b, TensorId out, std::int64_t d) {
    if (!x.grouped()) {
        g.matmul(a, b, out);
        return;
    }
    const TensorId full = g.virtual_tensor({x.b, x.hq, x.s, d}, CUDNN_DATA_BFLOAT16);
    g.matmul(a, b, full);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}
}  // namespace

BoundGraph attention_backward_graph(const AttentionShape& shape, const AttentionBuffers& buf, AttentionScalars& sc) {
    const Layout x = layout(shape);
    const bool causal = shape.causal;
    BoundGraph bind;
    OperationGraph& g = bind.graph;
    const TensorId q = bind.add(io(x.q()), buf.q), kt = bind.add(Layout::transposed_view(x.b, x.hk, x.s, x.dqk), buf.k);
    const TensorId vt = bind.add(Layout::transposed_view(x.b, x.hk, x.s, x.dv), buf.v);
    const TensorId o = bind.add(io(x.o()), buf.o), d_o = bind.add(io(x.o()), buf.d_o);
    const TensorId lse = bind.add(stats(x.rows()), buf.stats);
    const TensorId d_q = bind.add(io(x.q()), buf.d_q), d_k = bind.add(io(x.k()), buf.d_k), d_v = bind.add(io(x.v()), buf.d_v);
    const TensorId softmax_sum = bind.add(stats(x.rows()), buf.softmax_sum), d_q_accum = bind.add(stats(x.q()), buf.d_q_accum);
    const TensorId scale = bind.add(scalar(), &sc.scale), one = bind.add(scalar(), &sc.one);
    const TensorId neg_inf = causal ? bind.add(scalar(), &sc.negative_infinity) : OperationGraph::kNone;

    // Row sums of dO * O: the softmax backward's correction term.
    const TensorId d_o_o = g.virtual_tensor(x.o()), row_sum = g.virtual_tensor(x.rows());
    g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, OperationGraph::kNone, d_o_o);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sum);
    g.pointwise(CUDNN_POINTWISE_MUL, row_sum, one, OperationGraph::kNone, softmax_sum);

    // Recompute P from the statistics.
    const TensorId s = g.virtual_tensor(x.scores()), scaled = g.virtual_tensor(x.scores()), shifted = g.virtual_tensor(x.scores());
    g.matmul(q, kt, s);
    g.pointwise(CUDNN_POINTWISE_MUL, s, scale, OperationGraph::kNone, scaled);
    g.pointwise(CUDNN_POINTWISE_SUB, scaled, lse, OperationGraph::kNone, shifted);
    const TensorId masked = causal ? causal_mask(g, shifted, neg_inf) : shifted;
    const TensorId p = g.virtual_tensor(x.scores());
    g.pointwise(CUDNN_POINTWISE_EXP, masked, OperationGraph::kNone, OperationGraph::kNone, p);

    // dV = P^T dO.
    const TensorId p_t = g.tensor({x.scores(), x.transposed_score_strides(), CUDNN_DATA_BFLOAT16, true, false});
    g.reshape(p, p_t);
    gradient(g, x, p_t, d_o, d_v, x.dv);

    // dS = P * (dO V^T - row sums) * scale.
    const TensorId d_p = g.virtual_tensor(x.scores()), centered = g.virtual_tensor(x.scores()), d_s_unscaled = g.virtual_tensor(x.scores());
    g.matmul(d_o, vt, d_p);
    g.pointwise(CUDNN_POINTWISE_SUB, d_p, softmax_sum, OperationGraph::kNone, centered);
    g.pointwise(CUDNN_POINTWISE_MUL, centered, p, OperationGraph::kNone, d_s_unscaled);
    const TensorId d_s = g.virtual_tensor(x.scores());
    g.pointwise(CUDNN_POINTWISE_MUL, d_s_unscaled, scale, OperationGraph::kNone, d_s);

    // dK = dS^T Q.
    const TensorId d_s_t = g.tensor({x.scores(), x.transposed_score_strides(), CUDNN_DATA_BFLOAT16, true, false});
    g.reshape(d_s, d_s_t);
    gradient(g, x, d_s_t, q, d_k, x.dqk);

    // dQ = dS K, accumulated in fp32 and then converted.
    const TensorId k = g.virtual_tensor(x.k(), CUDNN_DATA_BFLOAT16);
    g.reshape(kt, k);
    g.matmul(d_s, k, d_q_accum);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, d_q_accum, OperationGraph::kNone, OperationGraph::kNone, d_q);
    return bind;
}

}  // namespace sextant::measure
