#pragma once
// Times a GPU operation with CUDA events: `warmup` untimed runs, then the median of `reps`
// timed samples (the median resists clock ramps and the odd preempted launch). A sample holds
// enough back-to-back launches to last about half a millisecond: timed one by one, a short
// kernel also counts the host's launch gap before it (on an H200, 2026-11-27, PyTorch's 4096^3
// FP8 GEMM read 30% slow that way), while training enqueues its kernels back to back.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "cuda_check.hpp"

namespace sextant::measure {

inline double median_us(const std::function<void(int)>& op, cudaStream_t stream, int warmup, int reps) {
    constexpr double kSampleUs = 500.0;
    constexpr int kMaxPerSample = 64;
    cudaEvent_t start, stop;
    SEXTANT_CHECK(cudaEventCreate(&start));
    SEXTANT_CHECK(cudaEventCreate(&stop));
    const auto elapsed_us = [&] {
        float ms = 0;
        SEXTANT_CHECK(cudaEventSynchronize(stop));
        SEXTANT_CHECK(cudaEventElapsedTime(&ms, start, stop));
        return 1000.0 * double(ms);
    };
    int launch = 0;
    SEXTANT_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < std::max(warmup, 1); ++i) op(launch++);
    SEXTANT_CHECK(cudaEventRecord(stop, stream));
    const double estimate = elapsed_us() / std::max(warmup, 1);
    const int per_sample = std::clamp(static_cast<int>(std::ceil(kSampleUs / std::max(estimate, 1e-3))), 1, kMaxPerSample);
    std::vector<double> us(static_cast<std::size_t>(reps));
    for (double& sample : us) {
        SEXTANT_CHECK(cudaEventRecord(start, stream));
        for (int j = 0; j < per_sample; ++j) op(launch++);
        SEXTANT_CHECK(cudaEventRecord(stop, stream));
        sample = elapsed_us() / per_sample;
    }
    SEXTANT_CHECK(cudaEventDestroy(start));
    SEXTANT_CHECK(cudaEventDestroy(stop));
    std::nth_element(us.begin(), us.begin() + reps / 2, us.end());
    return us[static_cast<std::size_t>(reps / 2)];
}

}  // namespace sextant::measure
