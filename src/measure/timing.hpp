#pragma once
// Times a GPU operation with CUDA events: `warmup` untimed runs, then the median of `reps`
// individually timed runs (the median resists clock ramps and the odd preempted launch).
#include <algorithm>
#include <functional>
#include <vector>

#include "cuda_check.hpp"

namespace sextant::measure {

inline double median_us(const std::function<void(int)>& op, cudaStream_t stream, int warmup, int reps) {
    for (int i = 0; i < warmup; ++i) op(i);
    cudaEvent_t start, stop;
    SEXTANT_CHECK(cudaEventCreate(&start));
    SEXTANT_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms(static_cast<std::size_t>(reps));
    for (int i = 0; i < reps; ++i) {
        SEXTANT_CHECK(cudaEventRecord(start, stream));
        op(warmup + i);
        SEXTANT_CHECK(cudaEventRecord(stop, stream));
        SEXTANT_CHECK(cudaEventSynchronize(stop));
        SEXTANT_CHECK(cudaEventElapsedTime(&ms[static_cast<std::size_t>(i)], start, stop));
    }
    SEXTANT_CHECK(cudaEventDestroy(start));
    SEXTANT_CHECK(cudaEventDestroy(stop));
    std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
    return 1000.0 * ms[static_cast<std::size_t>(reps / 2)];
}

}  // namespace sextant::measure
