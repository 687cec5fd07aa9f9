#pragma once
// What a low-precision recipe costs beyond its faster GEMMs: the rate its scaled GEMM reaches on
// the operand format's tensor cores, and the memory-bound kernels that quantise each GEMM input
// (the activation forward, the output gradient backward). One entry per scaling kind, each with
// the source of its numbers.
#include "spec/precision_recipe.hpp"

namespace sextant {

struct QuantizationCost {
    // Achieved throughput of the scaled GEMM relative to the operand format's GEMM curve in the
    // calibration profile (per-tensor scaling = 1: the curve was measured that way).
    double gemm_factor = 1.0;
    // HBM bytes moved per element of a GEMM input to produce its quantised copies: the reads of
    // the 16-bit tensor (an amax pass where the scale is global), the row-wise copy for the
    // forward or input-gradient GEMM and the column-wise (transposed) copy for the weight-gradient
    // GEMM, with their scales.
    double bytes_per_element = 0.0;
    // The same where the quantisation is fused into the kernel producing the tensor: only the
    // low-precision copies are written (where the recipe lets it fuse: NVFP4's does not).
    double fused_bytes_per_element = 0.0;
};

// `delayed`: per-tensor scaling takes its scale from the amax history (delayed scaling) and
// skips the amax pass that current scaling runs.
QuantizationCost quantization_cost(Scaling scaling, bool delayed);

}  // namespace sextant
