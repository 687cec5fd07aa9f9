#include "memory_bench.hpp"

#include "device_buffers.hpp"
#include "kernels.hpp"
#include "timing.hpp"

namespace sextant::measure {

MemoryResult measure_memory(std::size_t bytes, int warmup, int reps) {
    constexpr std::size_t kCols = 8192;  // a hidden size: one row per thread block
    const std::size_t rows = std::max<std::size_t>(1, bytes / (2 * kCols));
    const std::size_t used = rows * kCols * 2;
    cudaStream_t stream;
    SEXTANT_CHECK(cudaStreamCreate(&stream));
    DeviceBuffers buffers;
    void* x = buffers.allocate(used);
    void* y = buffers.allocate(used);
    void* w = buffers.allocate(kCols * 2);
    fill_random(x, used / 2, ElementType::Bf16, 11, stream);
    fill_random(w, kCols, ElementType::Bf16, 12, stream);
    const double copy_us = median_us(
        [&](int) { SEXTANT_CHECK(cudaMemcpyAsync(y, x, used, cudaMemcpyDeviceToDevice, stream)); }, stream, warmup, reps);
    const double norm_us = median_us([&](int) { rmsnorm_proxy(x, w, y, rows, kCols, stream); }, stream, warmup, reps);
    cudaStreamDestroy(stream);
    const double moved = 2.0 * double(used);
    return {used, moved / (copy_us * 1e-6) / 1e12, moved / (norm_us * 1e-6) / 1e12};
}

}  // namespace sextant::measure
