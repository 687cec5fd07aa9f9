#pragma once
// The GEMM recipes sextant-calibrate measures, named as training.precision names them, with the
// operand format and the scale mode cuBLASLt reads for A and B (cublasLtMatmulMatrixScale_t of
// CUDA 13's cublasLt.h): tensor-wise FP8 (one FP32 scalar each), row-wise (an FP32 per row of A
// and column of B), block-wise as DeepSeek-V3 trains (1 x 128 tiles of activations, 128 x 128
// blocks of weights), and the Blackwell block formats MXFP8 (an E8M0 scale per 32 elements) and
// NVFP4 (an E4M3 scale per 16 FP4 elements). Host code without CUDA types, so it can be tested
// anywhere.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "kernels.hpp"

namespace sextant::measure {

enum class ScaleMode { None, Scalar, OuterVector, Vec128, Block128x128, Vec32Ue8m0, Vec16Ue4m3 };

struct GemmRecipe {
    std::string_view name;
    ElementType operands;
    ScaleMode a_scale, b_scale;  // A: activations [m, k]; B: weights [k, n]
    bool block_scaled;           // needs block-scaled tensor cores (compute capability 10.0+)
};

std::span<const GemmRecipe> gemm_recipes();
const GemmRecipe* find_gemm_recipe(std::string_view name);

// Bytes of one operand's scale tensor: `rows` is m for A and n for B, `k` the inner dimension
// the 1D blocks run along. The MX/NV scales are padded to the 128 x 4 tiles cuBLASLt reads them
// in (Transformer Engine swizzle.h: "padded to 128x4 for row-scale"); FP32 vectors to 16 bytes.
std::size_t scale_tensor_bytes(ScaleMode mode, std::int64_t rows, std::int64_t k);

}  // namespace sextant::measure
