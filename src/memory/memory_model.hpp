#pragma once
// Per-GPU memory of every pipeline stage: what fills HBM, and whether the layout fits.
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "spec/scenario.hpp"

namespace sextant {

struct StageMemory {
    std::int64_t stage = 0;
    std::int64_t layers = 0;
    Bytes weights;
    Bytes gradients;
    Bytes optimizer;
    Bytes activations;
    Bytes buffers;       // communication and temporary buffers (ZeRO-3 gathers, DP buckets, logits)
    Bytes context;       // CUDA context, library workspaces
    Bytes fragmentation;

    Bytes other() const { return buffers + context + fragmentation; }
    Bytes total() const { return weights + gradients + optimizer + activations + other(); }
};

struct MemoryReport {
    std::vector<StageMemory> stages;
    Bytes peak;          // the largest stage total
    std::int64_t peak_stage = 0;
    Bytes capacity;      // HBM of one GPU
    bool fits() const { return peak <= capacity; }
    Bytes headroom() const { return capacity - peak; }
};

MemoryReport estimate_memory(const Scenario& scenario, const Layout& layout);
// The same with the runtime traits already known (the planner's hot path reads no files).
struct RuntimeTraits;
MemoryReport estimate_memory(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits);

// ZeRO-3's gathered 16-bit parameters and unsharded gradients while `layer` computes, as the
// runtime's ZeRO-3 holds them (one of a stage's buffers).
double zero3_buffer_bytes(const ModelSpec& model, const Layout& layout, const RuntimeTraits& traits, std::int64_t layer);

}  // namespace sextant
