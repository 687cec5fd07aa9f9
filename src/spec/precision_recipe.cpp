#include "spec/precision_recipe.hpp"

#include <vector>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace sextant {

namespace {
// The recipes of the published runs' `precision` field (published-runs-2024-2026.json "fields"):
// per-tensor FP8 covers MLPerf's delayed scaling, NeMo's current scaling (FP8-CS) and torchao's
// tensorwise recipe.
constexpr PrecisionRecipe kRecipes[] = {
    {"bf16", Precision::Bf16, Scaling::None, "BF16 GEMMs"},
    {"fp16", Precision::Fp16, Scaling::None, "FP16 GEMMs (loss scaling)"},
    {"fp8", Precision::Fp8, Scaling::Tensor, "FP8 with one scale per tensor (delayed or current scaling)"},
    {"fp8_rowwise", Precision::Fp8, Scaling::Row, "FP8 with one scale per row (torchao row-wise)"},
    {"fp8_blockwise", Precision::Fp8, Scaling::Block, "FP8 with 1x128 activation tiles and 128x128 weight blocks (DeepSeek-V3)"},
    {"mxfp8", Precision::Fp8, Scaling::Mx, "MXFP8: FP8 with an E8M0 scale per 32 elements (Blackwell)"},
    {"nvfp4", Precision::Fp4, Scaling::Nv, "NVFP4: FP4 with an E4M3 scale per 16 elements and a tensor scale (Blackwell)"},
};
}  // namespace

std::span<const PrecisionRecipe> precision_recipes() { return kRecipes; }

double quantized_element_bytes(const PrecisionRecipe& recipe, TensorRole role) {
    switch (recipe.scaling) {
        case Scaling::None: return 2.0;
        case Scaling::Tensor:
        case Scaling::Row: return 1.0;
        // An fp32 scale per 1x128 activation tile or 128x128 weight block.
        case Scaling::Block: return 1.0 + 4.0 / (role == TensorRole::Activation ? 128.0 : 128.0 * 128.0);
        // An E8M0 (1-byte) scale per 32 elements.
        case Scaling::Mx: return 1.0 + 1.0 / 32;
        // FP4 (half a byte) with an E4M3 (1-byte) scale per 16 elements.
        case Scaling::Nv: return 0.5 + 1.0 / 16;
    }
    return 2.0;
}

bool communicates_in_high_precision(const PrecisionRecipe& recipe) { return !recipe.quantized() || recipe.scaling == Scaling::Row; }

double sp_gather_element_bytes(const PrecisionRecipe& recipe) {
    if (communicates_in_high_precision(recipe)) return 2.0;
    return quantized_element_bytes(recipe, TensorRole::Activation);
}

const PrecisionRecipe& precision_recipe(std::string_view name, const std::string& path) {
    for (const auto& r : kRecipes)
        if (r.name == name) return r;
    std::vector<std::string> names;
    for (const auto& r : kRecipes) names.emplace_back(r.name);
    throw InputError(path, "\"" + std::string(name) + "\"", "unknown precision; " + suggestion_text(std::string(name), names));
}

}  // namespace sextant
