#pragma once
// The low-precision recipe of a training run: which number format the transformer layers' GEMMs
// take their operands in, and how those operands are scaled. The cost model reads it to pick the
// tensor-core rate and to price the quantisation kernels; the memory model to size FP8 weights.
#include <span>
#include <string>
#include <string_view>

#include "spec/hardware_spec.hpp"

namespace sextant {

// How a quantised operand carries its scale: one per tensor (FP8 delayed or current scaling),
// per row (torchao row-wise), per 1x128 tile and 128x128 block (DeepSeek-V3's recipe), per 32
// elements with an E8M0 scale (OCP MX), per 16 elements with an E4M3 scale plus a tensor scale
// (NVFP4).
enum class Scaling { None, Tensor, Row, Block, Mx, Nv };

struct PrecisionRecipe {
    std::string_view name;     // as written in a scenario: bf16, fp8, mxfp8, ...
    Precision operands;        // GEMM operand format (Bf16, Fp16, Fp8, Fp4)
    Scaling scaling;
    std::string_view help;

    bool quantized() const { return scaling != Scaling::None; }
    // Needs block-scaled (MX/NV) tensor cores: Blackwell and later.
    bool block_scaled() const { return scaling == Scaling::Mx || scaling == Scaling::Nv; }
    // Transformer Engine's userbuffers (the TP overlap of --tp-comm-overlap) carry 16-bit,
    // per-tensor FP8 and MXFP8 buffers; an NVFP4 or block-wise FP8 quantiser is refused
    // ("Unsupported quantizer for Userbuffers", module/base.py fill_userbuffers_buffer_for_all_gather,
    // TransformerEngine v2.10 to v2.14), and Megatron-Bridge's performance configs turn
    // tp_comm_overlap off for NVFP4 (scripts/performance/configs, v0.2.1 and v0.3.0).
    bool userbuffers() const { return scaling == Scaling::None || scaling == Scaling::Tensor || scaling == Scaling::Mx; }
};

// What a quantised tensor is used as: its scale blocks differ (DeepSeek-V3's recipe scales
// activations per 1x128 tile and weights per 128x128 block; the others alike for both).
enum class TensorRole { Activation, Weight };

// Bytes per element of a tensor's quantised copy under `recipe`: the low-precision value and its
// share of the scales (16 bits where the recipe quantises nothing). Per-tensor and per-row scales
// are one number a tensor or a row, nothing per element.
double quantized_element_bytes(const PrecisionRecipe& recipe, TensorRole role);

// Whether the recipe's distributed communication (sequence-parallel and ZeRO gathers) stays in
// 16 bits: unquantised recipes, and torchao's row-wise one (pytorch/torchtitan docs, components/
// quantization/float8.md: "for float8 with rowwise scaling, all distributed communication is done
// in high precision").
bool communicates_in_high_precision(const PrecisionRecipe& recipe);

// Bytes per element a sequence-parallel all-gather moves before a GEMM. Transformer Engine
// quantises the sharded input and gathers the quantised copy (FP8, MXFP8, blockwise and NVFP4
// recipes; NVFP4's shards first agree on one amax over the TP group: linear.py
// _customize_quantizers_nvfp4, distributed.py _all_gather_nvfp4, which gathers the FP4 data and
// its scales, 16 bits only for a tensor whose dimensions cannot be quantised; TransformerEngine
// v2.8 to v2.12). torchao's tensor-wise recipe gathers FP8 (torchtitan's Float8ColwiseParallel),
// its row-wise one 16 bits (communicates_in_high_precision).
double sp_gather_element_bytes(const PrecisionRecipe& recipe);

// Every recipe Sextant models, for parsing, `schema` and the docs.
std::span<const PrecisionRecipe> precision_recipes();
// The names of precision_recipes() for the field tables (a test holds the two together).
inline constexpr std::string_view kPrecisionChoices = "bf16|fp16|fp8|fp8_rowwise|fp8_blockwise|mxfp8|nvfp4";
// The recipe of that name; an InputError at `path` naming the valid ones otherwise.
const PrecisionRecipe& precision_recipe(std::string_view name, const std::string& path);

}  // namespace sextant
