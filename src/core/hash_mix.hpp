#pragma once
// A hash built word by word for the per-thread direct-mapped caches of the planner's hot path
// (sim/stage_plan.cpp layout costs, schedule/run_order.cpp executed rounds, memory/stage_params.cpp
// the stages holding the embedding and output layer, profile/profile.cpp GEMM rates): a golden-ratio
// seed, FNV-1a's 64-bit prime per word, and a final fold of the high bits into the low ones the
// cache index uses. Not for anything persisted: only equal keys must hash equal.
#include <cstddef>
#include <cstdint>

namespace sextant {

class HashMix {
public:
    explicit HashMix(std::uint64_t seed) : h_(static_cast<std::size_t>(seed) * 0x9e3779b97f4a7c15ull) {}
    void add(std::uint64_t word) { h_ = (h_ ^ word) * 0x100000001b3ull; }
    std::size_t value() const { return h_ ^ (h_ >> 29); }

private:
    std::size_t h_;
};

}  // namespace sextant
