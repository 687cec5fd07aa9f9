#include "gemm_recipes.hpp"

namespace sextant::measure {

namespace {
constexpr GemmRecipe kRecipes[] = {
    {"bf16", ElementType::Bf16, ScaleMode::None, ScaleMode::None, false},
    {"fp16", ElementType::Fp16, ScaleMode::None, ScaleMode::None, false},
    {"fp8", ElementType::Fp8E4m3, ScaleMode::Scalar, ScaleMode::Scalar, false},
    {"fp8_rowwise", ElementType::Fp8E4m3, ScaleMode::OuterVector, ScaleMode::OuterVector, false},
    {"fp8_blockwise", ElementType::Fp8E4m3, ScaleMode::Vec128, ScaleMode::Block128x128, false},
    {"mxfp8", ElementType::Fp8E4m3, ScaleMode::Vec32Ue8m0, ScaleMode::Vec32Ue8m0, true},
    {"nvfp4", ElementType::Fp4E2m1, ScaleMode::Vec16Ue4m3, ScaleMode::Vec16Ue4m3, true},
};

std::size_t up(std::int64_t value, std::int64_t multiple) {
    return static_cast<std::size_t>((value + multiple - 1) / multiple * multiple);
}
std::size_t blocks(std::int64_t value, std::int64_t block) { return static_cast<std::size_t>((value + block - 1) / block); }
}  // namespace

std::span<const GemmRecipe> gemm_recipes() { return kRecipes; }

const GemmRecipe* find_gemm_recipe(std::string_view name) {
    for (const GemmRecipe& r : kRecipes)
        if (r.name == name) return &r;
    return nullptr;
}

std::size_t scale_tensor_bytes(ScaleMode mode, std::int64_t rows, std::int64_t k) {
    switch (mode) {
        case ScaleMode::None: return 0;
        case ScaleMode::Scalar: return 4;
        case ScaleMode::OuterVector: return up(rows, 4) * 4;
        case ScaleMode::Vec128: return up(rows, 4) * blocks(k, 128) * 4;
        case ScaleMode::Block128x128: return up(static_cast<std::int64_t>(blocks(rows, 128)), 4) * blocks(k, 128) * 4;
        case ScaleMode::Vec32Ue8m0: return up(rows, 128) * up(static_cast<std::int64_t>(blocks(k, 32)), 4);
        case ScaleMode::Vec16Ue4m3: return up(rows, 128) * up(static_cast<std::int64_t>(blocks(k, 16)), 4);
    }
    return 0;
}

}  // namespace sextant::measure
