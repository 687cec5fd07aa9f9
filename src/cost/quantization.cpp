#include "cost/quantization.hpp"

namespace sextant {

namespace {
// Cast kernels run at 85-94% of the HBM bandwidth an elementwise kernel reaches (torchao's
// blockwise FP8 quantisation on H100: 2.63-2.90 of 3.08 TB/s, pytorch/ao
// benchmarks/prototype/blockwise_fp8_training; its MXFP8 casts on B200: 5.5-6.5 TB/s):
// the traffic below is divided by the low end.
constexpr double kCastEfficiency = 0.85;

QuantizationCost with_efficiency(double gemm_factor, double standalone_bytes, double fused_bytes) {
    return {gemm_factor, standalone_bytes / kCastEfficiency, fused_bytes / kCastEfficiency};
}
}  // namespace

// Bytes per quantised element are the traffic the recipe's kernels must move. Transformer
// Engine's GEMM profiling of standalone Linear layers (docs/examples/gemm_profiling,
// NVIDIA/TransformerEngine@d0067d0; B300 and H200 NVL) shows about twice this much time per
// element: it re-quantises the weights at every call and runs an amax reduction and a scale
// layout kernel per GEMM, which Megatron's training step amortises over the microbatches of a
// step. GEMM factors are kernel-only rates from the same profiling, relative to per-tensor
// FP8's on the same GPU.
QuantizationCost quantization_cost(Scaling scaling, bool delayed) {
    switch (scaling) {
        case Scaling::None: return {1.0, 0.0, 0.0};
        // Per-tensor scaling: delayed scaling takes the scale from the amax history and runs one
        // cast-transpose (read 2 B, write the row-wise and transposed FP8 copies, 1 + 1 B);
        // current scaling (NeMo's FP8-CS, torchao tensorwise) runs an amax pass first (2 B more).
        // Behind a norm, delayed scaling's cast runs inside the norm kernel, which writes the two
        // copies only; current scaling's scale needs the whole tensor's amax before any element
        // is cast, so TE's norm writes its 16-bit output and the amax, and a cast reads it back
        // and writes the copies (TransformerEngine d0067d0, pytorch/csrc/extensions/
        // normalization.cpp: Impl::FUSED_NORM_AMAX_FP8, "compute norm and amax in high precision,
        // then quantize"): 2 + 1 + 1 B. Inductor's casts behind a compiled norm or activation
        // (torchao tensorwise) have the same two passes.
        case Scaling::Tensor: return with_efficiency(1.0, delayed ? 4.0 : 6.0, delayed ? 2.0 : 4.0);
        // torchao row-wise: two axis-wise casts, row scales for the forward GEMM and column scales
        // (one per hidden column, over every token) for the weight gradient. A row's amax fits
        // one kernel with its cast (read 2 B, write 1 B), as it does inside the norm or
        // activation that produces the tensor (write 1 B); a column's amax reduces over all the
        // tokens before any element can be cast, so it is a pass of its own (read 2 B) and a cast
        // after it (read 2 B, write 1 B), as current scaling's amax is (Scaling::Tensor): 3 + 5 B
        // standalone, 1 + 5 B fused. CUTLASS's row-scaled GEMM reaches 90-100% of cuBLAS
        // tensor-wise on H100 for most shapes (pytorch/pytorch#147971; FBGEMM#2764: 1,324 vs
        // 1,355 TFLOP/s): 0.95.
        case Scaling::Row: return with_efficiency(0.95, 8.0, 6.0);
        // 1x128 / 128x128 block scaling on Hopper (TE Float8BlockScaling): one kernel reads the
        // tensor once and writes the row-wise copy and the transposed column-wise one, FP8 with
        // an fp32 scale per 128 elements each (quantize_transpose_vector_blockwise, TE PR #1513:
        // each tile is read once into shared memory, cast, then transposed and cast); the
        // block-scaled GEMM runs at 0.89 of current scaling's autocast rate on H200 NVL (TE gemm
        // profiling: 838 vs 945 TFLOP/s), taken as its kernel ratio.
        case Scaling::Block: return with_efficiency(0.89, 2.0 + 2.0 + 8.0 / 128, 2.0 + 8.0 / 128);
        // MXFP8 (Blackwell): one kernel reads the tensor once and writes row-wise and
        // column-wise FP8 with an E8M0 scale per 32 elements; B300 kernel-only GEMM 2,677 TFLOP/s
        // against 2,815 for per-tensor FP8 (0.95). TE's own norm kernel does not write MXFP8: the
        // norm writes 16 bits and the quantiser runs whole after it (normalization.cpp:
        // Impl::UNFUSED for MXFP8 quantizers unless NVTE_NORM_FWD_USE_CUDNN selects cuDNN's norm,
        // TE v2.2-v2.12), so fused costs what standalone does. Megatron-Bridge's performance
        // scripts unset that variable for every MXFP8 recipe but DeepSeek-V3's on GB200/GB300 in
        // v0.3.0 (scripts/performance/perf_plugins.py, del_cudnn_ln), where cuDNN's norm writes
        // the MXFP8 copies itself; not priced: 4 B less per norm output element, about 0.2% of a
        // DeepSeek-V3 layer. (The same scripts keep cuDNN's norm for some FP8-CS recipes, where
        // TE then leaves Impl::FUSED_NORM_AMAX_FP8 for the unfused path: an amax pass more, under
        // 0.5% of a Llama 3 70B layer; not priced either.)
        case Scaling::Mx: return with_efficiency(0.95, 2.0 + 2.0 + 2.0 / 32, 2.0 + 2.0 + 2.0 / 32);
        // NVFP4 (Transformer Engine's recipe since PR #2177, September 2025: NVFP4Quantizer::
        // quantize_impl): one pass reads the tensor for both amaxes, the row-wise and the
        // post-Hadamard column-wise (2 B); a cast reads it again and writes row-wise FP4 (2 + 0.5
        // B); a fused 16x16 random-Hadamard-transform-and-cast kernel reads it once more and
        // writes the column-wise FP4 (2 + 0.5 B); E4M3 scales per 16 elements each way. Nothing
        // of it fuses into the producer: with the Hadamard transform on (the recipe's default for
        // inputs and gradients), TE's norm writes its 16-bit output and the quantiser runs whole
        // (normalization.cpp: post-RHT amax -> Impl::UNFUSED, since PR #2177). The GEMM's rate
        // against FP8's follows from the FP4 peak (profile.cpp, fp4_from_fp8: only the
        // tensor-core time speeds up), where a profile has no NVFP4 table of its own.
        case Scaling::Nv: {
            const double passes = 2.0 + (2.0 + 0.5) + (2.0 + 0.5) + 2.0 / 16;
            return with_efficiency(1.0, passes, passes);
        }
    }
    return {1.0, 0.0, 0.0};
}

}  // namespace sextant
