#pragma once
// What a training framework generation does at run time, beyond the hardware: which attention
// kernel, how much it fuses memory-bound ops, which communication it overlaps, and its fixed
// overheads. One profile per framework generation (calibration/runtime/<name>.json), never per run.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/schedule.hpp"
#include "spec/fields.hpp"
#include "spec/hardware_spec.hpp"
#include "spec/layout_spec.hpp"
#include "spec/training_spec.hpp"

namespace sextant {

struct OverlapTraits {
    double tp = 0.0;             // fraction of TP communication hidden behind GEMMs (--tp-comm-overlap)
    bool dp_grad_reduce = true;  // gradient reduce-scatter/all-reduce overlaps backward (--overlap-grad-reduce)
    bool dp_param_gather = true; // ZeRO parameter all-gather overlaps the next forward (--overlap-param-gather)
    double cp = 0.8;             // fraction of the ring K/V exchange hidden behind attention
    double ep = 0.0;             // fraction of MoE all-to-all hidden (dispatch/compute pipelining)
    bool pp_scatter_gather = false;  // pipeline messages split over TP ranks (Narayanan et al. 2021)
    bool pp = true;              // pipeline sends run beside compute; false: the sender waits for them
};

// How a framework runs ZeRO-3 / fully sharded data parallelism: when it gathers a layer's (or a
// module's) parameters, which gathers run beside compute, and what it keeps gathered.
// The defaults are FSDP's (PyTorch FSDP1/FSDP2, Megatron-FSDP): one transformer block at a time,
// the next block prefetched while this one computes, one block's gradient reduce-scattered at
// once; runtime profiles state where their framework differs (README "ZeRO-3 and FSDP").
struct Zero3Traits {
    // The recomputed forward of full recompute gathers the parameters once more: hook-based
    // runtimes (DeepSpeed) release them after every sub-module forward, recompute included,
    // unless the module is used again within max_reuse_distance parameters
    // (stage3_max_reuse_distance; regathered_after_recompute()); FSDP unshards once in its
    // pre-backward hook for both the recompute and the backward.
    bool regather_for_recompute = false;
    double max_reuse_distance = 0;
    // DeepSpeed's per-module gathers: the next module is prefetched only while the gathered
    // parameters are under this cap (stage3_max_live_parameters), and the device synchronises
    // before every module (fetch_sub_module), so a module whose predecessor fills the cap is
    // gathered while nothing else runs (stage_params.hpp, zero3_prefetched_share()); 16-bit
    // gradients are reduce-scattered in buckets of reduce_bucket_params elements.
    // 0: whole blocks (FSDP): one computing, one prefetched, one block's gradient at a time.
    double max_live_params = 0;
    double reduce_bucket_params = 0;
    // HSDP (layout.shard_group): FSDP2 all-reduces each microbatch's reduce-scattered gradient
    // shard across the replicas (torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
    // foreach_reduce, pytorch 010ae4a8; torchtitan b5bcd76c never calls set_requires_all_reduce);
    // Megatron-FSDP (megatron_fsdp.py, Megatron-LM d98e8a64: outer_fsdp_group_grad_reduce only
    // on is_last_microbatch) and DeepSpeed MiCS (mics.py allreduce_mics_shard_grads at the
    // gradient-accumulation boundary, DeepSpeed edaa7221) once per step.
    bool hsdp_all_reduce_every_microbatch = true;
    // DeepSpeed before PR #1188 ("ZeRO3, improved parameter all-gather operation", September
    // 2021) launched one all_gather per parameter tensor of a module, each after a device-wide
    // synchronisation and host time, so nothing overlaps them: this much (seconds) plus
    // gather_copy_per_rank_s for each rank, which together make DeepSpeed issue #1069's Nsight
    // profile on 8 GPUs (~130 us of pre-launch work and ~250 us of launch per gather). 0: a
    // module's (or block's) parameters are gathered as one collective.
    double per_tensor_gather_host_s = 0;
    // Host time per rank of each such gather: DeepSpeed passed torch.distributed.all_gather a
    // list of one output view per rank, and PyTorch's NCCL all_gather gathers into a flat buffer
    // and then copies each rank's chunk out to its view (ProcessGroupNCCL::allgather: a copy_
    // and a recordStream per output tensor), so a gather over N ranks launches N copies.
    double gather_copy_per_rank_s = 0;
};

// What the framework offers when a layout knob is left open (null in a published run, open in
// `sextant plan`): the planner searches only layouts the framework can run.
struct FrameworkFeatures {
    std::vector<std::int64_t> zero_stages = {0, 1, 2, 3};
    bool sequence_parallel = true;
    bool context_parallel = true;
    bool selective_recompute = true;
    bool uneven_stages = true;  // first/last stages with fewer layers; pp need not divide the layers
    // The pipeline schedules it ships (src/schedule/), as bits; a scenario naming another is
    // refused. Every one where nothing is said (plan --any-framework).
    std::uint32_t schedules = kEverySchedule;
    bool ships(Schedule s) const { return (schedules & schedule_bit(s)) != 0; }
    bool optimizer_offload = true;  // optimizer state and step on the host (ZeRO-Offload)
    bool activation_offload = false;  // saved activations to host memory (Megatron --cpu-offloading)
    // The offload by module (Megatron-Core --fine-grained-activation-offloading --offload-modules,
    // b97184db56, core_v0.16.0; the MoE model zoo's 2025 dev builds): the inputs of the modules
    // layout.activation_offload_modules names, in every layer, beside pipeline parallelism and
    // recompute. Whole layers (--cpu-offloading) still need pp 1 and no recompute
    // (activation_offload_rule).
    bool activation_offload_modules = false;
    // Of each model chunk's module-offload groups, only a leading share (Megatron-Core
    // --activation-offload-fraction, 69c486825c, core_v0.19.0): layout.activation_offload_fraction.
    bool activation_offload_fraction = false;
    bool ep_a2a_overlap = false;      // MoE all-to-all behind another microbatch (Megatron-Core 0.14+)
    bool async_tp = false;            // PyTorch's async TP (layout.async_tp; torchtitan with torch.compile)
    // TP above the key/value heads, where they divide it: each rank's QKV output gathered over TP
    // and sliced (Megatron-Core f7dfb99, December 2025, in core_v0.16.0).
    bool tp_beyond_kv_heads = false;
    // A gated delta net's sequence split turned into a head split by all-to-alls (Megatron-Core
    // 20ba03fec0, April 2026, in core_v0.18.0): context parallelism for models with one.
    bool gdn_context_parallel = false;
    // HSDP: ZeRO states sharded inside groups of data-parallel ranks and replicated across them
    // (layout.shard_group; torchtitan data_parallel_shard_degree, Megatron-Core
    // --num-distributed-optimizer-instances, DeepSpeed MiCS mics_shard_size).
    bool hsdp = true;
    // Megatron's recompute module sets (layout.recompute_modules): where the runtime's selective
    // recompute is Megatron's (selective_checkpoint "modules"), set from it, not a key of its own.
    bool recompute_modules = true;
};

// The loss kernel over the (vocabulary-parallel) logits: Megatron's vocab-parallel autograd
// function, one kernel per step in fp32; a fused kernel (Transformer Engine's, Megatron's
// --cross-entropy-loss-fusion); or PyTorch's F.cross_entropy on pred.float() (torchtitan's loss).
enum class CrossEntropyKernel { VocabParallel, Fused, PyTorch };
inline constexpr std::string_view kCrossEntropyKernelNames[] = {"vocab-parallel", "fused", "pytorch"};
constexpr std::span<const std::string_view> enum_names(CrossEntropyKernel) { return kCrossEntropyKernelNames; }

// What a loss kernel moves and holds, in bytes per (local) logit.
struct CrossEntropyBytes {
    double forward_traffic;   // HBM bytes read + written in the forward
    double backward_traffic;  // the same, backward
    double peak;              // the largest live transient beside the stored activations
};
CrossEntropyBytes cross_entropy_bytes(CrossEntropyKernel kernel);

// Which small kernels a runtime fuses into its neighbours; false where its framework runs them
// in eager PyTorch kernels of their own, each priced by the bytes it moves (cost/layer_costs.cpp).
struct FusedKernels {
    // The MLP's activation kernel writes the quantised input of the GEMM after it (and its
    // backward the quantised output gradient of the GEMM before): Transformer Engine's
    // LayerNormMLP, or a compiler fusing the cast into it. False: the activation writes 16 bits
    // and the next linear layer quantises them in its own kernels (Megatron-Core's
    // bias_swiglu_impl / bias_gelu_impl before a TE linear layer).
    bool activation_cast = true;
    // A biased MoE model's experts add the second linear layer's bias in the grouped GEMM's
    // epilogue. False: the grouped GEMM skips it and the bias, weighted by each copy's routing
    // probability, is added after it in unfused elementwise kernels (Megatron-Core's TEGroupedMLP:
    // fc2 built with skip_bias_add=True, then _apply_bias; core_v0.15.0-v0.17.0 experts.py).
    bool moe_expert_bias = true;
    // A clamped gated activation (ModelSpec::activation_clamp) clamps inside the activation
    // kernel. False: the clamps of its two halves and their concatenation run as eager PyTorch
    // ops before the fused activation, and autograd keeps the unclamped input beside the clamped
    // one (Megatron-Core's weighted_bias_quick_geglu_impl, fused_bias_geglu.py, core_v0.15.0 to
    // v0.17.0; mlp.py's glu() the same).
    bool activation_clamp = true;
    // A model whose rotary embedding carries YaRN's scaling runs it in the fused rotary kernel.
    // False: in eager PyTorch kernels, as Megatron does for any position_embedding_type but
    // "rope" (Megatron-LM arguments.py and Megatron-Bridge's validate_rope_fusion_compatibility
    // turn apply_rope_fusion off; gpt-oss's provider says "yarn").
    bool yarn_rope = true;
};

struct RuntimeProfile {
    std::string name;
    // The attention kernel it runs (AttentionKernel): unfused GEMMs and softmax, or a fused flash
    // kernel, named where the framework's sources say which. Where it is the kernel the
    // calibration profile's attention points measured, attention runs at those rates as they
    // stand; any other kernel at the profile's rates through the GPU's fitted compute factor and
    // compute_efficiency, like every other kernel (cost/layer_costs.cpp, Kernels::flash).
    AttentionKernel attention_kernel = AttentionKernel::Fused;
    // Fused flash attention: no s x s score matrices in memory, the scores recomputed backward.
    bool flash_attention() const { return attention_kernel != AttentionKernel::Unfused; }
    double memory_traffic_factor = 1.0;  // bytes moved by norms/activations/residuals vs unfused kernels
    // The model runs under torch.compile (torchtitan's compile.enable): Inductor fuses its
    // elementwise ops (memory_traffic_factor) and async TP's micro-pipeline pass needs it. An
    // export for such a runtime compiles the model; for an eager one it does not.
    bool torch_compile = false;
    // Share of the calibration profile's kernel throughput (GEMM, attention, memory-bound) this
    // generation's software stack sustains; fitted per generation on runs that validate nothing.
    double compute_efficiency = 1.0;
    // Share of that throughput a MoE layer's expert path sustains (grouped GEMMs over many small
    // expert matrices, routing, permutation, dropless synchronisation); fitted per generation.
    double moe_efficiency = 1.0;
    // Host issue time of a dropless MoE layer's expert path, forward and backward of one
    // microbatch (milliseconds): its kernels launched one by one, which no CUDA graph can hold
    // while their shapes follow the routing; fitted per generation.
    double moe_host_ms_per_layer = 0.0;
    // That host time relative to itself under the all-to-all overlap (layout.ep_a2a_overlap):
    // the merged forward-backward schedule splits each layer into sub-stages and synchronises
    // between them, which adds host work; fitted per generation.
    double moe_overlap_host_factor = 1.0;
    OverlapTraits overlap;
    double sm_contention = 0.05;         // compute slowdown while overlapped communication runs
    double microbatch_overhead_us = 0;   // host launch and scheduling overhead per microbatch and stage
    double step_overhead_s = 0;          // per optimizer step: data loading, logging, host sync
    // Gradients clipped by their global norm every step (Megatron --clip-grad 1.0, torchtitan
    // max_norm 1.0 by default): a read of the local gradients and an all-reduce over every GPU.
    bool grad_clip = true;
    bool zero3_reshard_with_pp = true;   // ZeRO-3 frees gathered weights after forward under PP too
    bool fp8_delayed_scaling = false;    // per-tensor FP8 scales from the amax history, no amax pass
    // FP8 recipes keep the transformer layers' weights in FP8 and all-gather them so under ZeRO
    // (Megatron --fp8-param-gather, NeMo fp8_params / Megatron-Bridge fp8_param_gather).
    bool fp8_param_gather = false;
    // Which of the layers' small kernels the runtime runs fused, where its framework runs some
    // in eager PyTorch ops of their own.
    FusedKernels fused;
    // Sequence parallelism keeps only the sharded input of the QKV and first MLP projections, and
    // the weight-gradient GEMMs all-gather it again (Megatron's and Transformer Engine's linear
    // layers). False: autograd saves the gathered input whole on every TP rank and the backward
    // gathers nothing more (PyTorch DTensor's sequence parallelism in torchtitan: the matmul after
    // the all-gather saves its input).
    bool sp_input_regathered = true;
    // The MoE token dispatcher a layout runs unless it names one (layout.moe_dispatcher).
    MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
    // The ZeRO stage a layout runs unless it names one (layout.zero_stage): what the framework's
    // own recipes run, one of features.zero_stages.
    int zero_stage = 0;
    // Context parallelism as a ring of K/V over load-balanced chunks (each rank holds chunks i
    // and 2 cp - 1 - i): of a layer's cp attention steps, the first runs the causal kernel on the
    // local chunks and the other cp - 1 an unmasked kernel on half a block (Transformer Engine's
    // p2p CP, AttnFuncWithCPAndKVP2P). False: one causal kernel over the whole attention, as an
    // all-gather of K/V before a masked kernel runs it.
    bool cp_ring_load_balanced = false;
    // What a layout's "selective" recompute means here (SelectiveCheckpoint in spec/layout_spec):
    // Megatron's module list, torchtitan's per-op policy, or every interval-th block whole.
    SelectiveCheckpoint selective_checkpoint = SelectiveCheckpoint::Modules;
    std::int64_t selective_checkpoint_interval = 2;
    CrossEntropyKernel cross_entropy = CrossEntropyKernel::VocabParallel;
    // Where a layout leaves layout.pp_warmup open, the interleaved schedule warms up the least,
    // (vp-1) pp + pp - 1 chunks (1F1B's memory), not Megatron's 2(pp-1) + (vp-1) pp: Llama 3's
    // schedule tunes it (Dubey et al. 2024, section 3.3.2).
    bool least_pp_warmup = false;
    Precision grad_dtype = Precision::Fp32;  // Megatron-LM forces fp32 gradients for bf16 training
    Zero3Traits zero3;
    FrameworkFeatures features;
    std::string source;
};

// The MoE token dispatcher a layout runs: its own, else its framework generation's.
inline MoeDispatcher moe_dispatcher(const Layout& layout, const RuntimeProfile& runtime) {
    return layout.moe_dispatcher.value_or(runtime.moe_dispatcher);
}

// How a layout's TP collectives overlap. A runtime's TP overlap (overlap.tp, Megatron's
// --tp-comm-overlap) is Transformer Engine's userbuffers, which need sequence parallelism
// (Megatron-LM arguments.py validate_args) and a recipe whose buffers they carry
// (PrecisionRecipe::userbuffers). Where such a runtime cannot use them, TE's linear layers run
// their NCCL path: the forward's collectives and the output gradient's gather wait, and the
// backward launches its input gradient's reduce-scatter (all-reduce without sequence
// parallelism) and the regathered input asynchronously beside the other GEMM of the pair
// (module/linear.py, async_op=True). A runtime without userbuffers prices its TP as it says.
enum class TpOverlap { RuntimeShare, Userbuffers, TeNcclBackward };
inline TpOverlap tp_overlap(const RuntimeProfile& runtime, const Layout& layout, const PrecisionRecipe& recipe) {
    if (runtime.overlap.tp <= 0) return TpOverlap::RuntimeShare;
    return layout.sequence_parallel && recipe.userbuffers() ? TpOverlap::Userbuffers : TpOverlap::TeNcclBackward;
}
// The share of a layout's TP collectives (less what ran apart beside GEMMs) its runtime overlaps:
// the runtime's fraction, none on TE's NCCL path.
inline double tp_overlap_share(const RuntimeProfile& runtime, const Layout& layout, const PrecisionRecipe& recipe) {
    return tp_overlap(runtime, layout, recipe) == TpOverlap::TeNcclBackward ? 0.0 : runtime.overlap.tp;
}

// The dtype gradients are kept and reduced in: the scenario's optimizer setting, else the framework's.
Precision gradient_dtype(const TrainingSpec& training, const RuntimeProfile& runtime);

// Refuses a schedule the framework does not ship, naming `path` (exit 2).
void check_schedule_shipped(const RuntimeProfile& runtime, Schedule schedule, const std::string& path);
// Refuses layout.async_tp under a runtime without PyTorch's async TP, naming `path` (exit 2).
void check_async_tp_offered(const RuntimeProfile& runtime, const std::string& path);
// A tensor-parallel degree the key/value heads do not divide needs tp_beyond_kv_heads.
void check_kv_heads_split(const RuntimeProfile& runtime, std::int64_t tp, std::int64_t kv_heads, const std::string& path);
// Context parallelism on a model with gated delta nets needs gdn_context_parallel.
void check_gdn_context_parallel(const RuntimeProfile& runtime, std::int64_t cp, const std::string& path);

// What Megatron-Core's CPU offloading of whole layers needs (layout.activation_offload_layers > 0;
// TransformerConfig.__post_init__ from core_r0.10.0 to d98e8a64dd), as far as the knobs are
// known: the rule broken, or empty.
std::string_view activation_offload_rule(std::optional<std::int64_t> pp, std::optional<Recompute> recompute);
// Refuses whole-layer activation offload beside pipeline parallelism or recompute
// (activation_offload_rule), or of every layer, naming `path`.
void check_activation_offload(const RuntimeProfile& runtime, std::int64_t offload_layers, std::optional<std::int64_t> pp,
                              std::optional<Recompute> recompute, std::int64_t layers, const std::string& path);

// Refuses a layout's activation_offload_modules under a runtime without Megatron-Core's offload by
// module (features.activation_offload_modules), naming `path`.
void check_offload_modules_offered(const RuntimeProfile& runtime, std::uint8_t modules, const std::string& path);
// Refuses an activation_offload_fraction below 1 under a runtime without it
// (features.activation_offload_fraction), naming `path`.
void check_offload_fraction_offered(const RuntimeProfile& runtime, double fraction, const std::string& path);

// Refuses a layout's recompute_modules (Megatron's modules) under a runtime whose selective
// recompute is not Megatron's, naming `path` (exit 2).
void check_recompute_modules(const RuntimeProfile& runtime, std::uint8_t modules, const std::string& path);

// The runtime generation a scenario's /training/framework names; "megatron-core-2024" where it
// names none.
std::string runtime_name(const std::string& framework);
// calibration/runtime/<framework>.json, for runtime_name(framework).
RuntimeProfile load_runtime_profile(const std::string& framework, const std::string& path);
// A runtime profile document (presets resolved) named `name`, read at JSON pointer `path`.
RuntimeProfile parse_runtime_profile(const json& document, const std::string& name, const std::string& path);

// For a framework named by someone else's data (a published run): the runtime profile of that
// name, else of the same family (deepspeed, megatron, NeMo, torchtitan, llm-foundry) and the nearest year in the
// name, else the nearest year of any family (a tie keeps Megatron-Core 2024 if it is in it, else
// the first by name).
std::string nearest_runtime_profile(const std::string& framework);
std::span<const FieldDef> runtime_profile_fields();

}  // namespace sextant
