#pragma once
// Achieved HBM bandwidth: device-to-device copy and an RMSNorm-shaped proxy kernel, both counted
// as bytes read plus bytes written over time (STREAM's convention).
#include <cstddef>

namespace sextant::measure {

struct MemoryResult {
    std::size_t bytes;  // size of one buffer
    double copy_tbps;
    double elementwise_tbps;
};

MemoryResult measure_memory(std::size_t bytes, int warmup, int reps);

}  // namespace sextant::measure
