#pragma once
// The durations of one step's tasks for a layout: for every pipeline stage and virtual chunk,
// the forward and backward of one microbatch (compute plus the communication it exposes), and the
// stage's transfers, gradient reduction, optimizer and parameter gather. The closed-form estimate
// and the discrete-event simulator both run on this plan, so they agree where the schedule is
// simple.
#include <array>
#include <cstdint>
#include <vector>

#include "sim/step_context.hpp"

namespace sextant {

// Where time goes inside a forward or backward task.
// Host: the GPU waiting for the host to issue a dropless MoE layer's kernels (the host floor of
// cost/layer_costs.cpp moe_host_floor); Overhead: the runtime's per-microbatch overheads.
enum class Cost : std::uint8_t { Compute, Recompute, TP, CP, EP, PP, ZeRO, Offload, Host, Overhead, Count };
using CostParts = std::array<double, static_cast<std::size_t>(Cost::Count)>;

struct ChunkPlan {
    std::int64_t layers = 0;
    double forward = 0;       // seconds, one microbatch
    double backward = 0;
    CostParts forward_parts{};
    CostParts backward_parts{};
    double weight_grad = 0;   // of backward: the weight-gradient GEMMs (a W pass of its own under zero-bubble schedules)
    double dense_params = 0;  // per GPU, whose gradients this chunk produces
    double expert_params = 0;
    double dp_reduce = 0;     // seconds to reduce this chunk's gradients over data parallel
};

struct StagePlan {
    std::vector<ChunkPlan> chunks;  // the schedule's chunks (vp; two under ZB-V and DualPipe)
    double send_forward = 0;        // activations to the next stage, one microbatch
    double send_backward = 0;       // their gradient to the previous stage
    double param_gather = 0;        // ZeRO-1/2 all-gather after the optimizer
    double gather_bytes_dense = 0, gather_bytes_expert = 0;  // what that gather moves per GPU (nccl-tests size)
    double param_gather_wait = 0;   // overlapped gather: what the first forward still waits for
    double optimizer = 0;
    double slowdown = 1.0;          // straggler multiplier on compute
};

struct StepPlan {
    std::vector<StagePlan> stages;
    std::int64_t microbatches = 0;
    PipelineShape shape;  // the schedule's: pp, vp, microbatches, warm-up depth
    double step_overhead = 0;
    bool dp_overlap = true;
    bool gather_overlap = true;
};

StepPlan plan_step(const StepContext& context, const Layout& layout);
// The same into `plan`, whose vectors keep their capacity (the screen plans millions of layouts
// into one per thread: no allocation a layout).
void plan_step(const StepContext& context, const Layout& layout, StepPlan& plan);

// Each stage's per-microbatch times for the schedule's order and closed form: its chunks, each
// weighted by the share of the microbatches that pass through it.
std::vector<StageTimes> stage_times(const StepPlan& plan, const Layout& layout);
void stage_times(const StepPlan& plan, const Layout& layout, std::vector<StageTimes>& out);
// What running chunk f's forward beside chunk b's backward saves (DualPipe): each one's exposed
// expert all-to-all, as far as the other's compute covers it.
double pair_overlap(const ChunkPlan& f, const ChunkPlan& b);
// What a layout's stage plan reads from the cost models and what they depend on: its groups,
// one layer's cost for each kind of layer, indexed by ModelSpec::layer_kind (kinds the model
// lacks are left zero), the embedding's and output layer's, and one pipeline transfer.
// The same for every layout that differs only in how layers are split into stages and chunks,
// the schedule, activation offload and the EP overlap: kept per thread for the layouts seen last.
using LayerKinds = std::array<LayerCost, kLayerKinds>;
struct LayoutCosts {
    const LayoutGroups* groups = nullptr;
    LayerKinds kinds{};
    PhaseCost embed_forward, embed_backward, output_forward, output_backward;
    double transfer = 0;
    double grad_norm = 0;  // the gradient-norm all-reduce over every GPU: the same for every layout
};
// Valid until the thread's next call (a per-thread cache holds it).
const LayoutCosts& layout_costs(const StepContext& context, const Layout& layout);
// How many times this thread's layout-cost cache has turned a generation over (for tests).
std::size_t layout_cost_generations_turned();

// Overlapped gradient reduction and parameter gathers move one bucket per layer: a bucket is
// reduced once its layer's backward is done, gathered before its layer's forward starts. Of
// `comm` seconds overlapped with `compute` seconds over `layers` layers, this much stays exposed:
// the bucket at the far end, plus whatever the communication runs longer than the compute.
double exposed_bucketed(double comm, double compute, std::int64_t layers);
// The share of such communication in one bucket.
double bucket_share(std::int64_t layers);

// The pipeline stage that GPU `gpu` belongs to under the layout's rank order.
std::int64_t stage_of_gpu(const Layout& layout, std::int64_t gpu);

}  // namespace sextant
