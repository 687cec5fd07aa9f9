#pragma once
// Activation memory: what each layer keeps for its backward pass (Korthikanti et al. 2022,
// Table 2, generalised to GQA, SwiGLU, MoE, MLA, flash attention, sequence and context
// parallelism), and how many microbatches each pipeline stage holds at its peak.
#include <cstdint>
#include <vector>

#include "model/layer_gemms.hpp"
#include "spec/runtime_profile.hpp"
#include "spec/scenario.hpp"

namespace sextant {

struct RuntimeTraits {
    bool flash_attention = true;  // no s x s score matrices kept (FlashAttention, cuDNN SDPA)
    bool dropout = false;         // dropout masks kept (GPT-era recipes train with dropout 0.1)
    bool zero3_reshard_with_pp = true;  // see effective_sharding()
    Precision grad_dtype = Precision::Fp32;  // gradient buffers (gradient_dtype())
    double saved_input_bytes = 2.0;  // bytes per element of a GEMM input kept for the weight gradient
    bool sp_input_regathered = true;  // SP keeps the QKV/first-MLP input sharded (RuntimeProfile), else whole
    // A clamped gated activation clamps in eager ops: the unclamped first-GEMM output is kept
    // beside the clamped one (FusedKernels::activation_clamp).
    bool eager_activation_clamp = false;
    Zero3Traits zero3;               // what ZeRO-3 keeps gathered (the runtime profile's)
    bool least_pp_warmup = false;    // the runtime's interleaved warm-up is the least (RuntimeProfile)
    SelectiveCheckpoint selective = SelectiveCheckpoint::Modules;  // what "selective" keeps (RuntimeProfile)
    std::int64_t selective_interval = 2;
    CrossEntropyKernel cross_entropy = CrossEntropyKernel::VocabParallel;  // the loss's transients (RuntimeProfile)
};

// Whether a model's clamped gated activation clamps in eager ops of its own under `runtime`
// (FusedKernels::activation_clamp): extra traffic (cost/) and a second saved copy here.
bool eager_activation_clamp(const ModelSpec& model, const RuntimeProfile& runtime);

// From the scenario's runtime profile (calibration/runtime/): whether attention is fused, and
// dropout where the recipe of an unfused-attention era GPT model used it.
RuntimeTraits runtime_traits(const Scenario& scenario);
RuntimeTraits runtime_traits(const Scenario& scenario, const RuntimeProfile& runtime);

// The ZeRO stage a layout shards like. ZeRO-3 under pipeline parallelism, in a framework that
// keeps the gathered weights between a stage's forward and backward (torchtitan: FSDP does not
// reshard after forward with PP) and accumulates whole gradients over the microbatches, holds
// weights and gradients whole and shards only the optimizer state: ZeRO-1, with one gather and
// one reduce-scatter per step. Callers check shards_like_zero1() first: most layouts are costed
// as they are, without a copy.
bool shards_like_zero1(const Layout& layout, const RuntimeTraits& traits);
Layout effective_sharding(const Layout& layout, const RuntimeTraits& traits);
// The same into a per-thread copy, valid until the thread's next call (the screen's hot path:
// no allocation a layout).
const Layout& effective_sharding_scratch(const Layout& layout, const RuntimeTraits& traits);

// A block's matmuls (aten.mm, block_matmuls: torchtitan's modules in forward order) as
// torchtitan's per-op selective checkpointing counts them (SelectiveCheckpoint::Ops): the policy
// saves the outputs of the 1st, 3rd, ... and recomputes the 2nd, 4th, ... A MoE layer lists its
// attention only: its experts run as torch._grouped_mm, which the policy does not save, so the
// MoE block is recomputed whole (its router and shared-expert matmuls, which would continue the
// count, are taken with it).
BlockMatmuls op_checkpoint_matmuls(const ModelSpec& model, std::int64_t layer);

// Bytes one layer keeps on one GPU for one microbatch, under the layout's TP/SP/CP and recompute.
double layer_activation_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits,
                              std::int64_t layer);

// Of those, the bytes Megatron-Core's fine-grained offload moves to host memory: the inputs of the
// layout's offload_modules that the layer keeps (an input a recomputed module rebuilds is not
// kept, so not moved), at their kept sizes. 0 without offload_modules or under full recompute.
double offloaded_module_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits, std::int64_t layer);

// The bytes one model chunk, layers [first, first + layers), moves: every layer's under an
// offload fraction of 1, else only its leading groups (a layer's module, in forward order) as
// Megatron-Core's --activation-offload-fraction keeps them (layout.offload_fraction).
double offloaded_chunk_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits, std::int64_t first,
                             std::int64_t layers);

// Bytes of one layer's full working set for one microbatch (what full recompute rebuilds).
double layer_working_set_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits,
                               std::int64_t layer);

// Layer-microbatches a stage holds at its peak, counted in units of "all of this stage's layers
// for one microbatch": the schedule's own count (src/schedule/).
double microbatches_in_flight(const Layout& layout, std::int64_t stage, std::int64_t microbatches, const RuntimeTraits& traits = {});
// The pipeline's shape under the layout's schedule: its warm-up depth the layout's pp_warmup,
// else the runtime's (the least an interleaved schedule runs, where the runtime tunes it).
PipelineShape pipeline_shape(const Layout& layout, std::int64_t microbatches, const RuntimeTraits& traits);

}  // namespace sextant
