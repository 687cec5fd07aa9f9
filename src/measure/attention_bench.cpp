#include "attention_bench.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <cuda_bf16.h>

#include "attention_graphs.hpp"
#include "device_buffers.hpp"
#include "kernels.hpp"
#include "timing.hpp"

namespace sextant::measure {

namespace {
// A stream and a cuDNN handle bound to it, released however the measurement ends.
struct CudnnSession {
    cudaStream_t stream = nullptr;
    cudnnHandle_t handle = nullptr;
    CudnnSession() {
        SEXTANT_CHECK(cudaStreamCreate(&stream));
        SEXTANT_CHECK(cudnnCreate(&handle));
        SEXTANT_CHECK(cudnnSetStream(handle, stream));
    }
    ~CudnnSession() {
        if (handle) cudnnDestroy(handle);
        if (stream) cudaStreamDestroy(stream);
    }
    CudnnSession(const CudnnSession&) = delete;
    CudnnSession& operator=(const CudnnSession&) = delete;
};

// A few outputs copied back: a graph that runs but computes garbage would show NaN or infinity.
void require_finite(const void* device, const char* what) {
    std::vector<__nv_bfloat16> host(1024);
    SEXTANT_CHECK(cudaMemcpy(host.data(), device, host.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    for (const auto& v : host)
        if (!std::isfinite(__bfloat162float(v))) throw std::runtime_error(std::string("cuDNN attention produced a non-finite ") + what);
}
}  // namespace

double attention_forward_flops(const AttentionShape& a) {
    const double full = 2.0 * double(a.batch) * double(a.heads) * double(a.seq) * double(a.seq) * double(a.head_dim + a.head_dim_v);
    return a.causal ? full / 2 : full;
}

AttentionResult measure_attention(const AttentionShape& shape, int warmup, int reps) {
    const AttentionBufferBytes bytes = attention_buffer_bytes(shape);
    DeviceBuffers device;
    const CudnnSession session;
    cudaStream_t stream = session.stream;
    cudnnHandle_t handle = session.handle;
    AttentionBuffers buf;
    for (void** p : {&buf.q, &buf.d_q}) *p = device.allocate(bytes.q);
    for (void** p : {&buf.k, &buf.d_k}) *p = device.allocate(bytes.k);
    for (void** p : {&buf.v, &buf.d_v}) *p = device.allocate(bytes.v);
    for (void** p : {&buf.o, &buf.d_o}) *p = device.allocate(bytes.o);
    buf.stats = device.allocate(bytes.stats);
    buf.softmax_sum = device.allocate(bytes.stats);
    buf.d_q_accum = device.allocate(bytes.d_q_accum);
    std::uint64_t seed = 31;
    fill_random(buf.q, bytes.q / 2, ElementType::Bf16, seed++, stream);
    fill_random(buf.k, bytes.k / 2, ElementType::Bf16, seed++, stream);
    fill_random(buf.v, bytes.v / 2, ElementType::Bf16, seed++, stream);
    fill_random(buf.d_o, bytes.o / 2, ElementType::Bf16, seed++, stream);
    AttentionScalars sc;
    sc.scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));

    AttentionResult r;
    r.shape = shape;
    BoundGraph fwd = attention_forward_graph(shape, buf, sc), bwd = attention_backward_graph(shape, buf, sc);
    const OperationGraph::Plan fwd_plan = fwd.graph.build(handle), bwd_plan = bwd.graph.build(handle);
    void* workspace = device.allocate(static_cast<std::size_t>(std::max<std::int64_t>({fwd_plan.workspace_bytes, bwd_plan.workspace_bytes, 1})));
    const auto fwd_pack = variant_pack(fwd.ids, fwd.pointers, workspace), bwd_pack = variant_pack(bwd.ids, bwd.pointers, workspace);
    r.fwd_us = median_us([&](int) { execute(handle, fwd_plan, *fwd_pack); }, stream, warmup, reps);
    // The accumulator starts from zero every pass, as the frontend's workspace does.
    r.bwd_us = median_us(
        [&](int) {
            SEXTANT_CHECK(cudaMemsetAsync(buf.d_q_accum, 0, bytes.d_q_accum, stream));
            execute(handle, bwd_plan, *bwd_pack);
        },
        stream, warmup, reps);
    SEXTANT_CHECK(cudaStreamSynchronize(stream));
    require_finite(buf.o, "output");
    require_finite(buf.d_q, "dQ");
    r.engine = "forward " + fwd_plan.engine + ", backward " + bwd_plan.engine;
    const double flops = attention_forward_flops(shape);
    r.fwd_tflops = flops / (r.fwd_us * 1e-6) / 1e12;
    r.bwd_tflops = 2.5 * flops / (r.bwd_us * 1e-6) / 1e12;
    return r;
}

}  // namespace sextant::measure
