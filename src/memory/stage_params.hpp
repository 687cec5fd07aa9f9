#pragma once
// The parameters one GPU of a pipeline stage holds: dense ones (sharded over TP, replicated over
// DP x CP) and expert ones (sharded over EP and expert TP, replicated over the expert-data-parallel
// ranks tp x cp x dp / (ep x expert TP)).
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
// Whether the stage runs the output layer and loss under the layout's schedule.
bool stage_holds_output(const Layout& layout, std::int64_t stage);

// LoRA adapters of `layers` layers on one GPU (split over TP like their projections); 0 when
// the run pre-trains.
double adapter_params(const Scenario& scenario, const Layout& layout, std::int64_t layers);

// Parameters of one layer on one GPU (the same split as stage_params).
StageParams layer_params_per_gpu(const ModelSpec& model, const Layout& layout, std::int64_t layer);

}  // namespace sextant
