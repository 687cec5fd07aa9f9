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

// The global layer indices of each stage, in order, into `out` (its capacity reused).
void stage_layer_ranges(const Layout& layout, std::vector<std::pair<std::int64_t, std::int64_t>>& out);

// Parameters of one layer on one GPU (the same split as stage_params). A layer's count depends
// only on its blocks (ModelSpec::block_kind: its mixer and its MLP block).
StageParams layer_params_per_gpu(const ModelSpec& model, const Layout& layout, std::int64_t layer);

// layer_params_per_gpu with each kind computed once, at the first layer of it asked for: loops
// over a model's layers (the planner's screen runs several per layout) then cost a lookup a layer.
class LayerParams {
public:
    LayerParams(const ModelSpec& model, const Layout& layout) : model_(model), layout_(layout) {}
    const StageParams& operator()(std::int64_t layer) {
        std::optional<StageParams>& kind = kinds_[model_.block_kind(layer)];
        if (!kind) kind = layer_params_per_gpu(model_, layout_, layer);
        return *kind;
    }
    // Stage `stage`'s [first, end) layers, without allocating: asked stage by stage in order (as
    // the screen does, for every stage of every layout) it costs one step per stage.
    std::pair<std::int64_t, std::int64_t> stage_range(std::int64_t stage) {
        if (stage < stage_) stage_ = first_ = 0;
        for (; stage_ < stage; ++stage_) first_ += layout_.stage_layers[static_cast<std::size_t>(stage_)];
        return {first_, first_ + layout_.stage_layers[static_cast<std::size_t>(stage)]};
    }

private:
    const ModelSpec& model_;
    const Layout& layout_;
    std::optional<StageParams> kinds_[kLayerKinds];
    std::int64_t stage_ = 0, first_ = 0;  // stage_range's cursor: stage_ starts at layer first_
};

StageParams stage_params(const ModelSpec& model, const Layout& layout, std::int64_t stage);
StageParams stage_params(const ModelSpec& model, const Layout& layout, std::int64_t stage, LayerParams& layers);
// Whether the stage runs the output layer and loss under the layout's schedule.
bool stage_holds_output(const Layout& layout, std::int64_t stage);
// Whether the stage holds neither the embedding nor the output layer: its parameters and costs
// are its layers' alone.
// `def` is the layout's schedule_def(), looked up once by callers that ask for every stage.
bool middle_stage(const ScheduleDef& def, const Layout& layout, std::int64_t stage);
// Whether two ranges of layers hold the same kinds of layer (ModelSpec::layer_kind: mixer, dense
// or MoE MLP, full or windowed attention) in the same order: what their parameters, activations and costs depend on.
bool same_layer_kinds(const ModelSpec& model, std::pair<std::int64_t, std::int64_t> a, std::pair<std::int64_t, std::int64_t> b);

// LoRA adapters of `layers` layers on one GPU (split over TP like their projections); 0 when
// the run pre-trains.
double adapter_params(const Scenario& scenario, const Layout& layout, std::int64_t layers);

// A layer's parameter tensors on one GPU (elements), as a runtime that gathers tensor by tensor
// holds them: the two norms' weights (and LayerNorm's biases), each linear layer's weight and
// bias, multi-latent attention's projections as three tensors, the router, each shared and local
// expert as two (gate and up fused, then down). Finer than the modules that the per-module
// functions below gather (a layer's linear layers, a MoE layer's local experts as one each way).
std::vector<double> layer_parameter_tensors(const ModelSpec& model, const Layout& layout, std::int64_t layer);

// ZeRO-3 per module (DeepSpeed), with `max_live` its stage3_max_live_parameters (0: FSDP's whole
// blocks, always one prefetched). The coordinator prefetches the next module while the gathered
// parameters are under the cap: after module k, module k + 1 is prefetched iff module k alone is
// under it (the default prefetch bucket, 5e7 elements, is below one module of these models, and
// whole parameters are prefetched, so exactly the next module).
// The share of a layer's parameters gathered by prefetch (beside the previous module's compute);
// the rest are gathered while the device waits.
double zero3_prefetched_share(const ModelSpec& model, const Layout& layout, std::int64_t layer, double max_live);
// The largest module of a layer on one GPU (what a per-module gather holds whole).
double largest_module_params(const ModelSpec& model, const Layout& layout, std::int64_t layer);
// The most parameters gathered at once: a module and the one prefetched after it.
double zero3_gathered_peak(const ModelSpec& model, const Layout& layout, std::int64_t layer, double max_live);

// Parameters a per-module ZeRO-3 (DeepSpeed) gathers again for a layer's backward after its
// recomputed forward: the recompute runs the modules in order and the backward in reverse, so a
// module's parameters are next used after twice the parameters of the modules that follow it;
// DeepSpeed keeps a released module gathered when that reuse distance is within
// `max_reuse_distance` parameters (stage3_max_reuse_distance) and gathers it again otherwise.
double regathered_after_recompute(const ModelSpec& model, const Layout& layout, std::int64_t layer, double max_reuse_distance);

}  // namespace sextant
