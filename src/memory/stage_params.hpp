#pragma once
// The parameters one GPU of a pipeline stage holds: dense ones (sharded over TP, replicated over
// DP x CP) and expert ones (sharded over EP and TP, replicated over the expert-data-parallel
// ranks dp x cp / ep).
#include <cstdint>
#include <vector>

#include "spec/scenario.hpp"

namespace sextant {

struct StageParams {
    double dense = 0;   // per GPU
    double expert = 0;  // per GPU
    double total() const { return dense + expert; }
};

// The global layer indices of each stage, in order.
std::vector<std::pair<std::int64_t, std::int64_t>> stage_layer_ranges(const Layout& layout);

StageParams stage_params(const ModelSpec& model, const Layout& layout, std::int64_t stage);

// Parameters of one layer on one GPU (the same split as stage_params).
StageParams layer_params_per_gpu(const ModelSpec& model, const Layout& layout, std::int64_t layer);

}  // namespace sextant
