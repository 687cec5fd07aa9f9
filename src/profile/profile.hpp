#pragma once
// A calibration profile: what one GPU type achieves (GEMM, attention, memory-bound kernels,
// collectives), measured by sextant-calibrate or taken from published numbers, with provenance.
// Cost models ask it for achieved throughput at a shape; it interpolates between measured points.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "profile/comm_calibration.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {

class CalibrationProfile {
public:
    // calibration/<gpu name>.json when it exists, else datasheet-derived defaults (documented).
    static CalibrationProfile for_gpu(const GpuSpec& gpu);
    static CalibrationProfile load(const std::filesystem::path& file, const GpuSpec& gpu);
    static CalibrationProfile from_json(const json& document, const std::string& path, const GpuSpec& gpu);

    // Achieved dense GEMM throughput for C[m,n] = A[m,k] B[k,n], TFLOP/s.
    double gemm_tflops(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) const;
    // Achieved fused flash-attention throughput (FlashAttention FLOP convention), TFLOP/s.
    double attention_tflops(Precision p, std::int64_t seq, std::int64_t head_dim, bool causal,
                            bool backward) const;
    // Achieved HBM bandwidth of memory-bound kernels (norms, elementwise, optimizer), TB/s.
    double memory_tbps() const;
    const CommCalibration& comm() const;

    const std::string& gpu_name() const;
    const std::string& source() const;  // provenance summary

    struct Data;  // defined in profile.cpp

private:
    std::shared_ptr<const Data> data_;
};

}  // namespace sextant
