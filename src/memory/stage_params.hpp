#pragma once
// The parameters one GPU of a pipeline stage holds: dense ones (sharded over TP, replicated over
// DP x CP) and expert ones (sharded over EP and expert TP, replicated over the expert-data-parallel
// ranks tp x cp x dp / (ep x expert TP)).
#include <cstdint>
#include <optional>
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

// Parameters of one layer on one GPU (the same split as stage_params). A layer's count depends
// only on whether it is an MoE layer.
StageParams layer_params_per_gpu(const ModelSpec& model, const Layout& layout, std::int64_t layer);
StageParams layer_params_of_kind(const ModelSpec& model, const Layout& layout, bool moe);

// layer_params_per_gpu with each kind (dense, MoE) computed once: loops over a model's layers
// (the planner's screen runs several per layout) then cost a lookup a layer.
class LayerParams {
public:
    LayerParams(const ModelSpec& model, const Layout& layout) : model_(model), layout_(layout) {}
    const StageParams& operator()(std::int64_t layer) {
        const bool moe = model_.layer_is_moe(layer);
        std::optional<StageParams>& kind = kinds_[moe ? 1 : 0];
        if (!kind) kind = layer_params_of_kind(model_, layout_, moe);
        return *kind;
    }

private:
    const ModelSpec& model_;
    const Layout& layout_;
    std::optional<StageParams> kinds_[2];
};

StageParams stage_params(const ModelSpec& model, const Layout& layout, std::int64_t stage);
StageParams stage_params(const ModelSpec& model, const Layout& layout, std::int64_t stage, LayerParams& layers);

// LoRA adapters of `layers` layers on one GPU (split over TP like their projections); 0 when
// the run pre-trains.
double adapter_params(const Scenario& scenario, const Layout& layout, std::int64_t layers);

}  // namespace sextant
