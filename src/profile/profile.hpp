#pragma once
// A calibration profile: what one GPU type achieves (GEMM, attention, memory-bound kernels,
// collectives), measured by sextant-calibrate or taken from published numbers, with provenance.
// Cost models ask it for achieved throughput at a shape; it interpolates between measured points
// (inverse-distance weighting in log2 of the dimensions: exact at measured points, bounded by
// their range, flat outside it).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "profile/comm_calibration.hpp"
#include "profile/measurements.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {

// Multipliers that `sextant calibrate fit` adjusts to match a live cluster: achieved compute,
// achieved communication bandwidth, and how much of the overlappable communication hides.
struct ProfileFactors {
    double compute = 1.0;
    double communication = 1.0;
    double overlap = 1.0;
    // Multiplier on the MoE expert path (grouped GEMMs, routing, permutation): fitted to measured
    // MoE steps, it becomes a runtime generation's moe_efficiency.
    double moe = 1.0;
    // Milliseconds added to the host's issue time of a dropless MoE layer (forward and backward,
    // one microbatch) on top of the runtime's: fitted to measured MoE steps, it becomes a runtime
    // generation's moe_host_ms_per_layer.
    double moe_host_ms = 0.0;
    // Multiplier on that host time under the all-to-all overlap: fitted, it becomes a runtime
    // generation's moe_overlap_host_factor (times the one it had).
    double moe_overlap_host = 1.0;
};

// One fused attention call: the query-key and value head sizes (MLA: 192 and 128), query heads
// per key-value head (GQA; 1 for multi-head), the mask and the pass.
struct AttentionQuery {
    std::int64_t seq = 0, head_dim = 0, head_dim_v = 0, group = 1;
    bool causal = true, backward = false;
};

class CalibrationProfile {
public:
    // calibration/<gpu name>.json when it exists, else an InputError naming the missing profile.
    static CalibrationProfile for_gpu(const GpuSpec& gpu);
    static CalibrationProfile load(const std::filesystem::path& file, const GpuSpec& gpu);
    static CalibrationProfile from_json(const json& document, const std::string& path, const GpuSpec& gpu);

    // Achieved dense GEMM throughput for C[m,n] = A[m,k] B[k,n], TFLOP/s. FP4 operands read the
    // nvfp4 table; without one, FP8's rate with its tensor-core share at FP4's peak (fp4_from_fp8).
    double gemm_tflops(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) const;
    // The same for a precision recipe's own table ("fp8_rowwise", "mxfp8", "nvfp4": the names of
    // training.precision), on tensor cores of `operands`; a scaled FP8 recipe without a table
    // reads tensor-wise FP8's, NVFP4 without one the rate derived from FP8's.
    double gemm_tflops(std::string_view recipe, Precision operands, std::int64_t m, std::int64_t n, std::int64_t k) const;
    // Achieved fused flash-attention throughput (FlashAttention FLOP convention), TFLOP/s. FP8
    // attention is not modelled: the frameworks Sextant covers run flash attention in 16 bits.
    double attention_tflops(Precision p, std::int64_t seq, std::int64_t head_dim, bool causal,
                            bool backward) const;
    // The same for GQA and MLA shapes: interpolated also over the head sizes' split and the
    // query heads per key-value head (points without them are multi-head, head_dim_v = head_dim).
    double attention_tflops(Precision p, const AttentionQuery& query) const;
    // The same rates as the points give them, without the fitted compute factor: what the kernel
    // the points measured (attention_kernel()) sustains where it runs.
    double measured_attention_tflops(Precision p, std::int64_t seq, std::int64_t head_dim, bool causal, bool backward) const;
    double measured_attention_tflops(Precision p, const AttentionQuery& query) const;
    // The profile's attention kernel (its attention points without a "kernel" of their own).
    AttentionKernel attention_kernel() const;
    // Whether the profile holds points of this named kernel (its own, or points marked with it:
    // the H200's FlashAttention-2 points beside its cuDNN ones), and their rates as they stand.
    bool measures_attention(AttentionKernel kernel) const;
    double measured_attention_tflops(AttentionKernel kernel, Precision p, const AttentionQuery& query) const;
    // Achieved HBM bandwidth of memory-bound kernels (norms, elementwise, optimizer), TB/s.
    double memory_tbps() const;
    const CommCalibration& comm() const;
    // Measured collective sweeps (nccl-tests logs, sextant-calibrate); empty for published profiles.
    const std::vector<CollectiveSweep>& collective_sweeps() const;
    const ProfileFactors& factors() const;
    CalibrationProfile with_factors(const ProfileFactors& factors) const;

    const GpuSpec& gpu() const;
    const std::string& source() const;  // provenance summary

    struct Data;

private:
    double fp4_from_fp8(std::int64_t m, std::int64_t n, std::int64_t k) const;
    double gemm_tflops_uncached(std::string_view recipe, Precision operands, std::int64_t m, std::int64_t n, std::int64_t k) const;
    std::shared_ptr<const Data> data_;
};

std::span<const FieldDef> profile_fields();

}  // namespace sextant
