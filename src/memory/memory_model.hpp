#pragma once
// Per-GPU memory of every pipeline stage: what fills HBM, and whether the layout fits.
#include <cstdint>
#include <optional>
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
    // In host memory, per GPU: offloaded activations (whole layers or module inputs, for every
    // microbatch in flight) and an offloaded optimizer's states with its fp32 gradient copy.
    Bytes host;

    Bytes other() const { return buffers + context + fragmentation; }
    Bytes total() const { return weights + gradients + optimizer + activations + other(); }
};

struct MemoryReport {
    std::vector<StageMemory> stages;
    Bytes peak;          // the largest stage total
    std::int64_t peak_stage = 0;
    Bytes capacity;      // HBM of one GPU
    Bytes host_peak;     // the most any stage keeps in host memory per GPU
    Bytes host_capacity; // host DRAM per GPU (cluster.host.memory_gib_per_gpu); 0: unknown, unchecked
    bool fits_hbm() const { return peak <= capacity; }
    bool fits_host() const { return host_capacity.value() <= 0 || host_peak <= host_capacity; }
    bool fits() const { return fits_hbm() && fits_host(); }
    Bytes headroom() const { return capacity - peak; }
};

MemoryReport estimate_memory(const Scenario& scenario, const Layout& layout);
// The same with the runtime traits already known (the planner's hot path reads no files).
struct RuntimeTraits;
MemoryReport estimate_memory(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits);
// The planner's memory screen: the report without its per-stage rows where the layout fits and
// every stage leaves `margin` of HBM free (peak <= (1 - margin) x capacity), else nullopt, known
// at the first stage over that limit (most layouts of a search are refused there, before the
// rest are computed). Peak and peak stage are estimate_memory's, bit for bit.
std::optional<MemoryReport> memory_within(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits, double margin);
// The most a layout may use and still be offered with `margin` of HBM left free: one expression
// for the screen above and the planner's final test, so that both compare the same bits.
inline double offered_memory_bytes(double capacity_bytes, double margin) { return (1.0 - margin) * capacity_bytes; }

// ZeRO-3's gathered 16-bit parameters and unsharded gradients while `layer` computes, as the
// runtime's ZeRO-3 holds them (one of a stage's buffers).
double zero3_buffer_bytes(const ModelSpec& model, const Layout& layout, const RuntimeTraits& traits, std::int64_t layer);

}  // namespace sextant
