#pragma once
// The parallel layout. LayoutSpec is what the user wrote (null = not fixed: the planner or the
// framework's default decides); Layout is a complete, concrete choice.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "schedule/schedule.hpp"
#include "spec/fields.hpp"

namespace sextant {

enum class Recompute : std::uint8_t { None, Selective, Full };
inline constexpr std::string_view kRecomputeNames[] = {"none", "selective", "full"};
constexpr std::span<const std::string_view> enum_names(Recompute) { return kRecomputeNames; }

// What "selective" recompute means in a framework (the runtime profile's selective_checkpoint):
// Megatron's module list (below), torchtitan's per-op policy, or torchtitan's every-n-th block.
// - Modules: the layout's recompute_modules, else the era's default set.
// - Ops: torchtitan selective_ac_option "op" (pytorch/torchtitan 1ea476e9f, 2024-04, and
//   820504e20, 2025-06, parallelize_llama.py): a policy saves the outputs of every other matmul
//   (aten.mm, counted in forward order within a block; the 2nd, 4th, ... are recomputed), of
//   SDPA (flash and memory-efficient), of reduce_scatter and of max; everything else in the block
//   (norms, rotary, activation, residual add, the other matmuls, all-gathers, grouped expert
//   GEMMs, all-to-alls) is recomputed in the backward.
// - Layers: torchtitan selective_ac_option N (an integer): every N-th transformer block is
//   checkpointed whole (its wrapper counts blocks from 1: blocks N, 2N, ...), the others keep
//   everything. Sextant prices every layer alike (its caches and stage reuse rest on layers of
//   one kind costing the same), so each layer carries 1/N of a full recompute and of the
//   activations full recompute frees: exact for a stage whose layer count N divides, within one
//   layer's difference otherwise.
enum class SelectiveCheckpoint { Modules, Ops, Layers };
inline constexpr std::string_view kSelectiveCheckpointNames[] = {"modules", "ops", "layers"};
constexpr std::span<const std::string_view> enum_names(SelectiveCheckpoint) { return kSelectiveCheckpointNames; }

// What selective recompute re-runs (Megatron-Core --recompute-modules, plus "act"): a bit each.
// 0 with selective recompute means the era's default: the attention core before flash attention
// (Korthikanti et al. 2022), the norms and MLP activation functions with it.
enum RecomputeModule : std::uint8_t {
    kRecomputeCoreAttn = 1,       // attention core (scores, softmax, dropout)
    kRecomputeLayerNorm = 2,      // the two norms of a layer
    kRecomputeMlaUpProj = 4,      // MLA's up-projections from the compressed latents
    kRecomputeMlp = 8,            // a dense MLP whole
    kRecomputeMoeAct = 16,        // the experts' activation function
    kRecomputeMoe = 32,           // a MoE block whole (router, dispatch, experts, combine)
    kRecomputeSharedExperts = 64, // the shared experts
    kRecomputeAct = 128,          // every MLP activation function (dense and experts)
};
// The modules a layout's selective recompute re-runs: its own list, else the era's default (0
// without selective recompute).
std::uint8_t active_recompute_modules(Recompute recompute, std::uint8_t modules, bool flash_attention);
// The modules of a "a,b,c" list or a JSON array's names, for error messages and exports.
std::string recompute_modules_text(std::uint8_t modules);
// The modules whose inputs Megatron-Core's fine-grained activation offload moves to host memory
// in every layer (--fine-grained-activation-offloading --offload-modules, b97184db56,
// core_v0.16.0; transformer_config.py offload_modules): a bit each. Not modelled: the fused
// grouped MLP (fused_group_mlp, TE's op fuser) and the gated delta product's gdp_qkv.
enum OffloadModule : std::uint8_t {
    kOffloadAttnNorm = 1,    // the attention norm's input (the residual stream)
    kOffloadQkvLinear = 2,   // the QKV projection's input (the norm's output)
    kOffloadCoreAttn = 4,    // the attention core's Q, K and V
    kOffloadAttnProj = 8,    // the output projection's input (the attention's output)
    kOffloadMlpNorm = 16,    // the pre-MLP norm's input
    kOffloadExpertFc1 = 32,  // the experts' first GEMM input (the permuted tokens)
    kOffloadMoeAct = 64,     // the experts' activation input (their first GEMM's output)
};
inline constexpr std::size_t kOffloadModuleCount = 7;  // the bits above, lowest first
// The modules of a "a,b,c" list, for error messages, labels and exports (Megatron's names).
std::string offload_modules_text(std::uint8_t modules);
// Megatron's names of `modules`, in its order.
std::vector<std::string_view> offload_module_names(std::uint8_t modules);
// How a MoE layer's tokens reach their experts (Megatron --moe-token-dispatcher-type, and the
// flex dispatcher's backend): NCCL all-to-all of every routed copy; all-gather of every token
// over the expert-parallel group and a reduce-scatter of the outputs; DeepEP or HybridEP, which
// send a token once to each remote node its experts are on and forward it over NVLink there.
enum class MoeDispatcher { AllToAll, AllGather, DeepEP, HybridEP };
inline constexpr std::string_view kMoeDispatcherNames[] = {"alltoall", "allgather", "deepep", "hybridep"};
constexpr std::span<const std::string_view> enum_names(MoeDispatcher) { return kMoeDispatcherNames; }
// DeepEP and HybridEP deduplicate the copies bound for one remote node.
constexpr bool dedups_nodes(MoeDispatcher d) { return d == MoeDispatcher::DeepEP || d == MoeDispatcher::HybridEP; }

enum class ParallelDim { TP, CP, EP, DP, PP };
inline constexpr std::string_view kParallelDimNames[] = {"tp", "cp", "ep", "dp", "pp"};
constexpr std::span<const std::string_view> enum_names(ParallelDim) { return kParallelDimNames; }

struct LayoutSpec {
    std::optional<std::int64_t> tp, pp, dp, cp, ep, expert_tp, vp, microbatch, zero_stage;
    // Microbatches per replica and step, where a source states it: global_batch / (dp x microbatch)
    // must give it (a check, and with dp known the microbatch); never stored in a Layout.
    std::optional<std::int64_t> grad_accumulation;
    std::optional<std::int64_t> shard_group;  // HSDP: data-parallel ranks per shard group
    std::optional<bool> sequence_parallel;
    std::optional<bool> optimizer_offload;
    std::optional<Recompute> recompute;
    std::optional<std::uint8_t> recompute_modules;
    std::optional<std::int64_t> activation_offload_layers;
    std::optional<std::uint8_t> activation_offload_modules;  // OffloadModule bits; 0: none
    std::optional<double> activation_offload_fraction;       // of each chunk's offload groups, in (0, 1]
    std::optional<bool> ep_a2a_overlap;
    std::optional<bool> async_tp;
    std::optional<MoeDispatcher> moe_dispatcher;
    std::optional<Schedule> schedule;
    std::optional<std::int64_t> pp_warmup;
    std::optional<std::vector<std::int64_t>> stage_layers;
    std::optional<std::array<ParallelDim, 5>> rank_order;  // fastest-varying first
};

struct Layout {
    std::int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
    std::int64_t etp = 1;  // expert tensor parallelism: expert layers fold tp x cp x dp into etp x ep x edp
    std::int64_t microbatch = 1;
    int zero_stage = 0;
    // HSDP: ZeRO shards over shard_group data-parallel ranks (consecutive dp coordinates, with
    // cp) and replicates across dp / shard_group such groups; 0 = all of dp (plain ZeRO/FSDP).
    std::int64_t shard_group = 0;
    bool sequence_parallel = false;
    bool optimizer_offload = false;  // optimizer state and step on the host (ZeRO-Offload)
    Recompute recompute = Recompute::None;
    std::uint8_t recompute_modules = 0;      // with Selective; 0 = the era's default set
    std::int64_t activation_offload_layers = 0;  // layers per stage whose activations wait in host memory
    std::uint8_t offload_modules = 0;  // OffloadModule bits: module inputs of every layer in host memory
    // Of each model chunk's offload groups (a layer's module, in forward order), the share that
    // moves; Megatron-Core keeps the later ones on the GPU (activation_offload_fraction).
    double offload_fraction = 1.0;
    bool ep_a2a_overlap = false;  // MoE all-to-all hidden behind another microbatch's compute (combined 1F1B)
    // Each sequence-parallel all-gather and reduce-scatter split into tp steps pipelined with its
    // GEMM (PyTorch's async TP: torchtitan --parallelism.enable_async_tensor_parallel).
    bool async_tp = false;
    // Unset: the framework generation's (RuntimeProfile::moe_dispatcher, read where it is priced).
    std::optional<MoeDispatcher> moe_dispatcher;
    Schedule schedule = Schedule::OneFOneB;
    std::int64_t pp_warmup = 0;  // interleaved: forward chunks before the first stage's first backward; 0 = Megatron's
    std::vector<std::int64_t> stage_layers;  // layers held by each pipeline stage
    std::array<ParallelDim, 5> rank_order = {ParallelDim::TP, ParallelDim::CP, ParallelDim::EP,
                                             ParallelDim::DP, ParallelDim::PP};

    std::int64_t gpus() const { return tp * pp * dp * cp; }
    // The merged forward-backward all-to-all overlap is in effect: asked for, with an expert-
    // parallel group to overlap (its pairing in the schedule, its host time in the MoE layer).
    bool ep_overlapped() const { return ep_a2a_overlap && ep > 1; }
    // Expert-data-parallel degree: the replicas of each expert shard.
    std::int64_t edp() const { return tp * cp * dp / (ep * etp); }
    // Data-parallel ranks of one shard group, and the groups that replicate it.
    std::int64_t shard_dp() const { return shard_group > 0 ? shard_group : dp; }
    std::int64_t dp_replicas() const { return dp / shard_dp(); }
    // Ranks over which ZeRO shards dense and expert parameters (dp x cp and the expert-data-
    // parallel ranks, each divided by the replicas).
    std::int64_t dense_shards() const { return shard_dp() * cp; }
    std::int64_t expert_shards() const { return edp() / dp_replicas(); }
    std::int64_t microbatches(std::int64_t global_batch) const {
        return global_batch / (dp * microbatch);
    }
    const ScheduleDef& schedule_def() const { return sextant::schedule_def(schedule); }
};

// The spec that fixes every knob of `layout` (the layer split too).
LayoutSpec fixed_spec(const Layout& layout);

std::span<const FieldDef> layout_fields();
LayoutSpec parse_layout(const json& object, const std::string& path);
// Every knob of a resolved layout under its /layout key: as a scenario's `layout`, the object
// fixes this layout again (parse_layout's inverse), so a plan can be run as it was priced.
json layout_json(const Layout& layout);

// The microbatch a stated gradient accumulation leaves each of dp replicas of a global batch:
// global_batch / (dp x grad_accumulation), where that is a whole number of sequences.
std::optional<std::int64_t> accumulation_microbatch(std::int64_t global_batch, std::int64_t dp, std::int64_t grad_accumulation);
// What a stated gradient accumulation breaks at this dp (and microbatch, where fixed), or empty.
std::string grad_accumulation_rule(std::int64_t global_batch, std::int64_t dp, std::optional<std::int64_t> microbatch,
                                   std::int64_t grad_accumulation);

// The layer split frameworks use when layers do not divide by pp: the middle stages take
// ceil(L/pp) and the first and last stages, which also hold the embedding and the loss, share
// the rest (Llama 3 405B: 126 layers on 16 stages = 7, 8 x 14, 7). Empty when impossible.
std::vector<std::int64_t> default_stage_split(std::int64_t layers, std::int64_t pp);
// The layers of each of a stage's vp chunks: as even as they go, with any shortage on the chunk
// that also holds the embedding (first stage) or the loss (last stage), as Megatron-Core's
// pipeline layouts do (--account-for-embedding/loss-in-pipeline-split, "Et|(tt|)*30L"): such a
// chunk may hold no layer at all.
std::vector<std::int64_t> chunk_layers(std::int64_t stage_layers, std::int64_t vp, bool first_stage, bool last_stage);
// The same into `chunks` (its capacity reused: the screen splits millions of stages).
void chunk_layers(std::int64_t stage_layers, std::int64_t vp, bool first_stage, bool last_stage, std::vector<std::int64_t>& chunks);

std::string recompute_name(Recompute r);
std::string dim_name(ParallelDim d);
std::string rank_order_text(const std::array<ParallelDim, 5>& order);

}  // namespace sextant
