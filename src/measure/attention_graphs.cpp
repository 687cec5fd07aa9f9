#include "attention_graphs.hpp"

namespace sextant::measure {

namespace {
using Dims = std::vector<std::int64_t>;

// Q, K, V, O and their gradients are [b, h, s, d], packed; cuDNN's graph takes K and V
// transposed ([b, h, d, s]) through strides, without moving data.
struct Layout {
    std::int64_t b, h, s, d;
    Dims bhsd() const { return {b, h, s, d}; }
    Dims bhds() const { return {b, h, d, s}; }
    Dims bhss() const { return {b, h, s, s}; }
    Dims bhs1() const { return {b, h, s, 1}; }
    Dims transposed_strides() const { return {h * s * d, s * d, 1, d}; }  // [b, h, d, s] view of [b, h, s, d]
    Dims transposed_score_strides() const { return {h * s * s, s * s, 1, s}; }  // S^T as a view of S
};

TensorSpec io(Dims dims) { return {dims, packed_strides(dims), CUDNN_DATA_BFLOAT16, false, false}; }
TensorSpec stats(Dims dims) { return {dims, packed_strides(dims), CUDNN_DATA_FLOAT, false, false}; }
TensorSpec scalar() { return {{1, 1, 1, 1}, {1, 1, 1, 1}, CUDNN_DATA_FLOAT, false, true}; }
TensorSpec transposed(const Layout& x) { return {x.bhds(), x.transposed_strides(), CUDNN_DATA_BFLOAT16, false, false}; }

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

BoundGraph attention_forward_graph(const AttentionShape& shape, const AttentionBuffers& buf, AttentionScalars& sc) {
    const Layout x{shape.batch, shape.heads, shape.seq, shape.head_dim};
    const bool causal = shape.causal;
    BoundGraph bind;
    OperationGraph& g = bind.graph;
    const TensorId q = bind.add(io(x.bhsd()), buf.q), kt = bind.add(transposed(x), buf.k), v = bind.add(io(x.bhsd()), buf.v);
    const TensorId o = bind.add(io(x.bhsd()), buf.o), lse = bind.add(stats(x.bhs1()), buf.stats);
    const TensorId scale = bind.add(scalar(), &sc.scale);
    const TensorId neg_inf = causal ? bind.add(scalar(), &sc.negative_infinity) : OperationGraph::kNone;

    const TensorId s = g.virtual_tensor(x.bhss());
    g.matmul(q, kt, s);
    TensorId scores = g.virtual_tensor(x.bhss());
    g.pointwise(CUDNN_POINTWISE_MUL, s, scale, OperationGraph::kNone, scores);
    if (causal) scores = causal_mask(g, scores, neg_inf);
    // Softmax with its statistics: max, exp of the difference, sum, log-sum-exp for backward.
    const TensorId max = g.virtual_tensor(x.bhs1()), shifted = g.virtual_tensor(x.bhss()), e = g.virtual_tensor(x.bhss());
    g.reduction(CUDNN_REDUCE_TENSOR_MAX, scores, max);
    g.pointwise(CUDNN_POINTWISE_SUB, scores, max, OperationGraph::kNone, shifted);
    g.pointwise(CUDNN_POINTWISE_EXP, shifted, OperationGraph::kNone, OperationGraph::kNone, e);
    const TensorId sum = g.virtual_tensor(x.bhs1()), log_sum = g.virtual_tensor(x.bhs1());
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    g.pointwise(CUDNN_POINTWISE_LOG, sum, OperationGraph::kNone, OperationGraph::kNone, log_sum);
    g.pointwise(CUDNN_POINTWISE_ADD, max, log_sum, OperationGraph::kNone, lse);
    const TensorId p = g.virtual_tensor(x.bhss(), CUDNN_DATA_BFLOAT16);  // the second matmul takes the I/O type
    g.pointwise(CUDNN_POINTWISE_DIV, e, sum, OperationGraph::kNone, p);
    g.matmul(p, v, o);
    return bind;
}

BoundGraph attention_backward_graph(const AttentionShape& shape, const AttentionBuffers& buf, AttentionScalars& sc) {
    const Layout x{shape.batch, shape.heads, shape.seq, shape.head_dim};
    const bool causal = shape.causal;
    BoundGraph bind;
    OperationGraph& g = bind.graph;
    const TensorId q = bind.add(io(x.bhsd()), buf.q), kt = bind.add(transposed(x), buf.k), vt = bind.add(transposed(x), buf.v);
    const TensorId o = bind.add(io(x.bhsd()), buf.o), d_o = bind.add(io(x.bhsd()), buf.d_o);
    const TensorId lse = bind.add(stats(x.bhs1()), buf.stats);
    const TensorId d_q = bind.add(io(x.bhsd()), buf.d_q), d_k = bind.add(io(x.bhsd()), buf.d_k), d_v = bind.add(io(x.bhsd()), buf.d_v);
    const TensorId softmax_sum = bind.add(stats(x.bhs1()), buf.softmax_sum), d_q_accum = bind.add(stats(x.bhsd()), buf.d_q_accum);
    const TensorId scale = bind.add(scalar(), &sc.scale), one = bind.add(scalar(), &sc.one);
    const TensorId neg_inf = causal ? bind.add(scalar(), &sc.negative_infinity) : OperationGraph::kNone;

    // Row sums of dO * O: the softmax backward's correction term.
    const TensorId d_o_o = g.virtual_tensor(x.bhsd()), row_sum = g.virtual_tensor(x.bhs1());
    g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, OperationGraph::kNone, d_o_o);
    g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, row_sum);
    g.pointwise(CUDNN_POINTWISE_MUL, row_sum, one, OperationGraph::kNone, softmax_sum);

    // Recompute P from the statistics.
    const TensorId s = g.virtual_tensor(x.bhss()), scaled = g.virtual_tensor(x.bhss()), shifted = g.virtual_tensor(x.bhss());
    g.matmul(q, kt, s);
    g.pointwise(CUDNN_POINTWISE_MUL, s, scale, OperationGraph::kNone, scaled);
    g.pointwise(CUDNN_POINTWISE_SUB, scaled, lse, OperationGraph::kNone, shifted);
    const TensorId masked = causal ? causal_mask(g, shifted, neg_inf) : shifted;
    const TensorId p = g.virtual_tensor(x.bhss());
    g.pointwise(CUDNN_POINTWISE_EXP, masked, OperationGraph::kNone, OperationGraph::kNone, p);

    // dV = P^T dO.
    const TensorId p_t = g.tensor({x.bhss(), x.transposed_score_strides(), CUDNN_DATA_BFLOAT16, true, false});
    g.reshape(p, p_t);
    g.matmul(p_t, d_o, d_v);

    // dS = P * (dO V^T - row sums) * scale.
    const TensorId d_p = g.virtual_tensor(x.bhss()), centered = g.virtual_tensor(x.bhss()), d_s_unscaled = g.virtual_tensor(x.bhss());
    g.matmul(d_o, vt, d_p);
    g.pointwise(CUDNN_POINTWISE_SUB, d_p, softmax_sum, OperationGraph::kNone, centered);
    g.pointwise(CUDNN_POINTWISE_MUL, centered, p, OperationGraph::kNone, d_s_unscaled);
    const TensorId d_s = g.virtual_tensor(x.bhss());
    g.pointwise(CUDNN_POINTWISE_MUL, d_s_unscaled, scale, OperationGraph::kNone, d_s);

    // dK = dS^T Q.
    const TensorId d_s_t = g.tensor({x.bhss(), x.transposed_score_strides(), CUDNN_DATA_BFLOAT16, true, false});
    g.reshape(d_s, d_s_t);
    g.matmul(d_s_t, q, d_k);

    // dQ = dS K, accumulated in fp32 and then converted.
    const TensorId k = g.virtual_tensor(x.bhsd(), CUDNN_DATA_BFLOAT16);
    g.reshape(kt, k);
    g.matmul(d_s, k, d_q_accum);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, d_q_accum, OperationGraph::kNone, OperationGraph::kNone, d_q);
    return bind;
}


}  // namespace sextant::measure
