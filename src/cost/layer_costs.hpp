#pragma once
// Time of one transformer layer (and of the embedding, output layer and optimizer) for one
// microbatch on one GPU, from the op shapes of the layout and the calibration profile. These are
// the task durations both the closed-form estimate and the discrete-event simulator use.
#include <cstdint>
#include <functional>

#include "collective/network_model.hpp"
#include "spec/runtime_profile.hpp"
#include "profile/profile.hpp"
#include "spec/scenario.hpp"

namespace sextant {

// One phase (forward or backward) of one layer, one microbatch, one GPU, in seconds.
struct PhaseCost {
    double gemm = 0;       // dense GEMMs (and grouped expert GEMMs)
    double attention = 0;  // attention core (flash kernel, or unfused GEMMs + softmax)
    double memory = 0;     // memory-bound kernels: norms, rotary, activation, residual, dropout
    double tp = 0;         // tensor-parallel collectives, before overlap
    double tp_hidden = 0;  // of tp, what async TP pipelines with the collectives' own GEMMs
    double cp = 0;         // context-parallel exchange (attention's K/V ring, Mamba's all-to-alls), before overlap
    double cp_waited = 0;  // of cp, what runs with no compute beside it (Mamba's all-to-alls)
    double ep = 0;         // expert-parallel all-to-all, before overlap
    double zero3 = 0;      // ZeRO-3 parameter gather (and gradient reduce-scatter), before prefetch
    double zero3_waited = 0;  // the part of zero3 no prefetch can hide (gathered while the device waits)
    // Of `gemm`, backward: the weight-gradient GEMMs, which zero-bubble schedules run as a pass of
    // their own (W) after the input gradient (B).
    double weight_grad = 0;
    double compute() const { return gemm + attention + memory; }
};

// The forward's work ahead of a dropless MoE layer's device-to-host synchronisation (its mixer,
// norms and residuals before the token counts reach the host): what the stage's exposure reads of
// it, in 40 bytes rather than a PhaseCost's 88 (the planner keeps a LayerCost per layer kind and
// layout). It holds no expert path and no ZeRO-3 gather, which come after it in the layer.
struct SyncedWork {
    double kernels = 0, tp = 0, tp_hidden = 0, cp = 0, cp_waited = 0;  // kernels: PhaseCost::compute()
    static SyncedWork of(const PhaseCost& p) { return {p.compute(), p.tp, p.tp_hidden, p.cp, p.cp_waited}; }
    double compute() const { return kernels; }
    // The same work as a phase: the exposure prices it as it would the phase it came from.
    PhaseCost phase() const {
        PhaseCost p;
        p.gemm = kernels;
        p.tp = tp;
        p.tp_hidden = tp_hidden;
        p.cp = cp;
        p.cp_waited = cp_waited;
        return p;
    }
};

struct LayerCost {
    PhaseCost forward;
    PhaseCost backward;   // includes the recomputed forward under full or selective recompute
    double recompute = 0; // the compute part of backward that recomputes the forward
    // The host's issue time of the layer's kernels that run outside a CUDA graph (seconds, one
    // microbatch): a floor under the phase's wall time where the GPU's work is shorter.
    double host_forward = 0, host_backward = 0;
    // The forward's work ahead of the host's device-to-host synchronisation (a dropless MoE
    // layer's mixer, norms and residuals before its token counts reach the host): the host issues
    // the rest only once the GPU has run it, so its wall time adds to host_forward's floor.
    SyncedWork forward_before_sync;
};

// Communicator group shapes of a layout, analysed once (the expensive part of a collective cost).
// dp_dense and dp_expert are the groups ZeRO shards over (under HSDP one shard group, else every
// data-parallel rank); dp_replicas and dp_expert_replicas join a shard's replicas (one rank each).
struct LayoutGroups {
    GroupShape tp, cp, ep, etp, dp_dense, dp_expert, pp, dp_replicas, dp_expert_replicas;
};

// The model says which groups also run all-to-alls: the expert group of a MoE model, the
// context-parallel group of one whose mixers turn the sequence split into a head split (Mamba,
// gated delta nets).
LayoutGroups analyse_groups(const NetworkModel& network, const Layout& layout, const ModelSpec& model);
// The same with each group's placement priced by `analyse` (placement, with all-to-all): the
// network model's analysis, or a cache of it shared by layouts whose groups land alike
// (StepContext).
using PlacementAnalyser = std::function<GroupShape(const GroupPlacement&, bool)>;
LayoutGroups analyse_groups(const Layout& layout, const ModelSpec& model, const PlacementAnalyser& analyse);

struct CostContext {
    const Scenario& scenario;
    const CalibrationProfile& profile;
    const RuntimeProfile& runtime;
    const NetworkModel& network;
};

LayerCost layer_cost(const CostContext& ctx, const Layout& layout, const LayoutGroups& groups, std::int64_t layer);
// Embedding lookup (first stage) and output layer with loss (last stage), forward + backward.
PhaseCost embedding_cost(const CostContext& ctx, const Layout& layout, bool backward);
PhaseCost output_cost(const CostContext& ctx, const Layout& layout, bool backward);
// Pipeline send of one microbatch's activations (or their gradient) to the next stage.
double pp_transfer(const CostContext& ctx, const Layout& layout, const LayoutGroups& groups);
// Data-parallel gradient reduction of `params` parameters (dense or expert), and the parameter
// all-gather ZeRO needs after the optimizer.
double dp_reduce(const CostContext& ctx, const Layout& layout, const GroupShape& group, double params);
double dp_gather(const CostContext& ctx, const Layout& layout, const GroupShape& group, double bytes);
// Bytes per parameter a ZeRO all-gather moves for the transformer layers' weights: the quantised
// weight (quantized_element_bytes) where the recipe's operands are FP8 and the runtime gathers them
// so (fp8_param_gather), else 16 bits; torchao's row-wise recipe gathers 16 bits. The embedding
// and output layer stay 16-bit.
double gathered_weight_bytes(const CostContext& ctx);
// HSDP: the all-reduce of a shard group's gradient shard (`params` of the unsharded gradient,
// divided over the `shard` group) across its `replicas`; 0 without replicas.
double replica_reduce(const CostContext& ctx, const GroupShape& shard, const GroupShape& replicas, double params);

// The same communications described: what moves and how it runs (traces show it). Zero bytes and
// zero time where there is nothing to move.
struct CommDetail {
    CollectiveOp op = CollectiveOp::SendRecv;
    double bytes = 0;     // nccl-tests' size of the op
    CollectiveResult cost;
    GroupShape group;
};
CommDetail pp_transfer_detail(const CostContext& ctx, const Layout& layout, const LayoutGroups& groups);
CommDetail dp_reduce_detail(const CostContext& ctx, const Layout& layout, const GroupShape& group, double params);
CommDetail dp_gather_detail(const CostContext& ctx, const Layout& layout, const GroupShape& group, double bytes);
// The optimizer step over the local shard: memory-bound, on the GPU or (offloaded) on the host.
double optimizer_time(const CostContext& ctx, const Layout& layout, double local_params);
// Gradient clipping by the global norm (where the runtime clips): the pass over a GPU's local
// gradients (the optimizer's `local_params`; on the host where the optimizer is offloaded) for
// their squared norm, and the all-reduce of that one fp32 number over `world`, every GPU of the
// job; 0 without clipping.
double grad_norm_time(const CostContext& ctx, const Layout& layout, double local_params);
double grad_norm_all_reduce(const CostContext& ctx, const GroupShape& world);
// Muon's Newton-Schulz orthogonalisation for a GPU whose optimizer shard holds `local_params`
// (the parameters optimizer_time takes); 0 for AdamW.
double newton_schulz_time(const CostContext& ctx, const Layout& layout, double local_params);

// Model FLOPs of one step (6N per token for the GEMMs incl. the output layer, plus 12 L h s per
// token for attention, as Narayanan et al. and PaLM count; MoE counts the active experts; a
// Mamba layer three times its SSD scan's forward products, a gated delta net layer three times
// its delta rule's as Megatron-LM counts them), and
// hardware FLOPs (the recomputed forward added: under the runtime's selective_checkpoint,
// Megatron's modules with flash attention recompute only memory-bound ops, torchtitan's per-op
// policy its unsaved matmuls, its layer policy 1/N of the forward).
double model_flops_per_step(const Scenario& scenario);
double hardware_flops_per_step(const Scenario& scenario, const Layout& layout, double model_flops, const RuntimeProfile& runtime);

}  // namespace sextant
