#pragma once
// Dense GEMM throughput through cuBLASLt.
#include <stdexcept>

#include "plan.hpp"

namespace sextant::measure {

// cuBLASLt has no kernel for this shape and precision (e.g. FP8 with a dimension that is not a
// multiple of 16): the shape is skipped, the run goes on.
struct GemmUnsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct GemmResult {
    GemmShape shape;
    double time_us = 0;
    double tflops = 0;  // 2mnk / time
};

// Measures one shape on the current device. Operands are rotated through enough buffers that
// together exceed three times the L2 cache, so that no repetition finds its inputs cached.
GemmResult measure_gemm(const GemmShape& shape, int warmup, int reps);

}  // namespace sextant::measure
