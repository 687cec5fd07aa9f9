#include "kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "cuda_check.hpp"

namespace sextant::measure {

namespace {
__device__ float hash_uniform(std::uint64_t i, std::uint64_t seed) {
    std::uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    // 24 random bits in [-1, 1), offset by half a step so that no value is exactly zero.
    return (static_cast<float>(z >> 40) + 0.5f) / 8388608.0f - 1.0f;
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        data[i] = T(hash_uniform(i, seed));
}

// Two random E2M1 codes per byte.
__global__ void fill_bytes_kernel(std::uint8_t* data, std::size_t count, std::uint64_t seed) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        data[i] = static_cast<std::uint8_t>((hash_uniform(i, seed) + 1.0f) * 128.0f);
}

__global__ void fill_value_kernel(float* data, std::size_t count, float value) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        data[i] = value;
}

__global__ void rmsnorm_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, std::size_t cols) {
    const __nv_bfloat16* row = x + blockIdx.x * cols;
    __nv_bfloat16* out = y + blockIdx.x * cols;
    float sum = 0;
    for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = __bfloat162float(row[c]);
        sum += v * v;
    }
    __shared__ float partial[32];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        float s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
        if (threadIdx.x == 0) partial[0] = s;
    }
    __syncthreads();
    const float scale = rsqrtf(partial[0] / static_cast<float>(cols) + 1e-6f);
    for (std::size_t c = threadIdx.x; c < cols; c += blockDim.x)
        out[c] = __float2bfloat16(__bfloat162float(row[c]) * scale * __bfloat162float(w[c]));
}

template <typename T>
void launch_fill(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
    fill_kernel<<<1024, 256, 0, stream>>>(static_cast<T*>(data), count, seed);
    SEXTANT_CHECK(cudaGetLastError());
}
}  // namespace

std::size_t buffer_bytes(ElementType t, std::size_t count) {
    switch (t) {
        case ElementType::Bf16:
        case ElementType::Fp16: return 2 * count;
        case ElementType::Fp8E4m3: return count;
        case ElementType::Fp4E2m1: return (count + 1) / 2;
        case ElementType::Fp32: return 4 * count;
    }
    return 4 * count;
}

void fill_random(void* data, std::size_t count, ElementType t, std::uint64_t seed, cudaStream_t stream) {
    switch (t) {
        case ElementType::Bf16: return launch_fill<__nv_bfloat16>(data, count, seed, stream);
        case ElementType::Fp16: return launch_fill<__half>(data, count, seed, stream);
        case ElementType::Fp8E4m3: return launch_fill<__nv_fp8_e4m3>(data, count, seed, stream);
        case ElementType::Fp4E2m1:
            fill_bytes_kernel<<<1024, 256, 0, stream>>>(static_cast<std::uint8_t*>(data), (count + 1) / 2, seed);
            SEXTANT_CHECK(cudaGetLastError());
            return;
        case ElementType::Fp32: return launch_fill<float>(data, count, seed, stream);
    }
}

void fill_float(void* data, std::size_t count, float value, cudaStream_t stream) {
    fill_value_kernel<<<1024, 256, 0, stream>>>(static_cast<float*>(data), count, value);
    SEXTANT_CHECK(cudaGetLastError());
}

void rmsnorm_proxy(const void* x, const void* w, void* y, std::size_t rows, std::size_t cols, cudaStream_t stream) {
    rmsnorm_kernel<<<static_cast<unsigned>(rows), 1024, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w), static_cast<__nv_bfloat16*>(y), cols);
    SEXTANT_CHECK(cudaGetLastError());
}

}  // namespace sextant::measure
