#pragma once
// Device kernels of the tool (kernels.cu): random fill and the memory-bound proxy.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace sextant::measure {

enum class ElementType { Bf16, Fp16, Fp8E4m3, Fp4E2m1, Fp32 };

// Bytes of `count` elements (FP4 packs two to a byte).
std::size_t buffer_bytes(ElementType t, std::size_t count);
// Uniform values in [-1, 1) from a counter hash: never zeros, so tensor cores see real data
// (FP4: random codes, every one of which is a finite E2M1 value).
void fill_random(void* data, std::size_t count, ElementType t, std::uint64_t seed, cudaStream_t stream);
// `count` FP32 values of `value` (scale factors).
void fill_float(void* data, std::size_t count, float value, cudaStream_t stream);
// y = x * rsqrt(mean(x^2) over rows of `cols`) * w: an RMSNorm-shaped pass over BF16 that reads
// x and writes y once (w stays in cache), the memory pattern of norms and elementwise ops.
void rmsnorm_proxy(const void* x, const void* w, void* y, std::size_t rows, std::size_t cols, cudaStream_t stream);

}  // namespace sextant::measure
