#include "kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <stdexcept>

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

// RMSNorm as the frameworks' fused kernels run it (Transformer Engine, Apex, PyTorch's fused
// rms_norm): one row per block, 16-byte loads, the row held in registers so that x is read once
// and y written once, which are the bytes the profile counts. A scalar two-pass version of this
// kernel reached 1.29 TB/s on an H200 whose copy ran at 4.26 (2026-11-27): the profile describes
// what training kernels achieve, so it must not be bound by its own proxy's loads.
constexpr int kNormThreads = 256;
constexpr int kNormChunks = 8;  // 16-byte chunks per thread: rows up to 256 x 8 x 8 = 16,384 columns

__device__ float sum_of_squares(const uint4& chunk) {
    const auto* pairs = reinterpret_cast<const __nv_bfloat162*>(&chunk);
    float sum = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 f = __bfloat1622float2(pairs[j]);
        sum += f.x * f.x + f.y * f.y;
    }
    return sum;
}

__device__ uint4 scaled(const uint4& chunk, const uint4& weight, float scale) {
    uint4 out;
    const auto* x = reinterpret_cast<const __nv_bfloat162*>(&chunk);
    const auto* w = reinterpret_cast<const __nv_bfloat162*>(&weight);
    auto* y = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const float2 a = __bfloat1622float2(x[j]), b = __bfloat1622float2(w[j]);
        y[j] = __floats2bfloat162_rn(a.x * scale * b.x, a.y * scale * b.y);
    }
    return out;
}

__global__ void __launch_bounds__(kNormThreads) rmsnorm_kernel(const uint4* x, const uint4* w, uint4* y, unsigned chunks,
                                                               unsigned cols) {
    const uint4* row = x + std::size_t(blockIdx.x) * chunks;
    uint4* out = y + std::size_t(blockIdx.x) * chunks;
    uint4 held[kNormChunks];
    float sum = 0;
#pragma unroll
    for (int i = 0; i < kNormChunks; ++i) {
        const unsigned c = threadIdx.x + unsigned(i) * kNormThreads;
        if (c < chunks) {
            held[i] = row[c];
            sum += sum_of_squares(held[i]);
        }
    }
    __shared__ float partial[kNormThreads / 32];
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    float total = 0;
#pragma unroll
    for (int i = 0; i < kNormThreads / 32; ++i) total += partial[i];
    const float scale = rsqrtf(total / static_cast<float>(cols) + 1e-6f);
#pragma unroll
    for (int i = 0; i < kNormChunks; ++i) {
        const unsigned c = threadIdx.x + unsigned(i) * kNormThreads;
        if (c < chunks) out[c] = scaled(held[i], w[c], scale);
    }
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
    constexpr std::size_t kPerChunk = 8;  // bf16 values in 16 bytes
    if (cols % kPerChunk != 0 || cols > kPerChunk * kNormChunks * kNormThreads)
        throw std::invalid_argument("rmsnorm_proxy: columns must be a multiple of 8 and at most 16384");
    rmsnorm_kernel<<<static_cast<unsigned>(rows), kNormThreads, 0, stream>>>(
        static_cast<const uint4*>(x), static_cast<const uint4*>(w), static_cast<uint4*>(y),
        static_cast<unsigned>(cols / kPerChunk), static_cast<unsigned>(cols));
    SEXTANT_CHECK(cudaGetLastError());
}

}  // namespace sextant::measure
