#include "spec/runtime_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/field_binding.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr double kAny = 1e300;
constexpr FieldDef kRuntimeFields[] = {
    {"name", FieldType::String, "framework generation"},
    {"attention_kernel", FieldType::String,
     "attention kernel: unfused (s x s scores in memory), fused (a flash kernel not named), flash-attention-2, cudnn-fused (TE's FusedAttention); "
     "the calibration profile's attention rates stand as they are for the kernel the profile measured, through the compute factor for any other",
     "", default_string("fused"), -kAny, kAny, "", bind<&RuntimeProfile::attention_kernel>()},
    {"memory_traffic_factor", FieldType::Number, "HBM traffic of memory-bound ops relative to unfused kernels", "", default_number(1), 0.1, 2,
     "", bind<&RuntimeProfile::memory_traffic_factor>()},
    {"torch_compile", FieldType::Boolean, "the model runs under torch.compile (PyTorch runtimes): its exports set compile.enable", "",
     default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::torch_compile>()},
    {"moe_efficiency", FieldType::Number, "share of the kernel throughput a MoE layer's expert path sustains (grouped GEMMs, routing, permutation)",
     "", default_number(1), 0.1, 1.5, "", bind<&RuntimeProfile::moe_efficiency>()},
    {"moe_host_ms_per_layer", FieldType::Number,
     "host issue time of a dropless MoE layer, forward and backward of one microbatch: the expert path's kernels launched one by one "
     "outside any CUDA graph (its shapes follow the routing), a floor under the layer's time",
     "ms", default_number(0), 0, 1000, "", bind<&RuntimeProfile::moe_host_ms_per_layer>()},
    {"moe_overlap_host_factor", FieldType::Number,
     "a dropless MoE layer's host issue time under the all-to-all overlap (ep_a2a_overlap) relative to without: the merged "
     "forward-backward schedule's sub-stages and the synchronisations between them",
     "", default_number(1), 1, 10, "", bind<&RuntimeProfile::moe_overlap_host_factor>()},
    {"compute_efficiency", FieldType::Number, "kernel throughput this software generation sustains, relative to the calibration profile", "",
     default_number(1), 0.1, 1.5, "", bind<&RuntimeProfile::compute_efficiency>()},
    {"tp_overlap", FieldType::Number, "fraction of TP communication hidden behind GEMMs", "", default_number(0), 0, 1, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::tp>()},
    {"dp_grad_reduce_overlap", FieldType::Boolean, "gradient reduction overlaps backward", "", default_bool(true), -kAny, kAny, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::dp_grad_reduce>()},
    {"dp_param_gather_overlap", FieldType::Boolean, "ZeRO parameter all-gather overlaps the next forward", "", default_bool(true), -kAny, kAny, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::dp_param_gather>()},
    {"cp_overlap", FieldType::Number, "fraction of the context-parallel K/V exchange hidden", "", default_number(0.8), 0, 1, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::cp>()},
    {"ep_overlap", FieldType::Number, "fraction of MoE all-to-all hidden", "", default_number(0), 0, 1, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::ep>()},
    {"pp_scatter_gather", FieldType::Boolean, "pipeline messages split across TP ranks", "", default_bool(false), -kAny, kAny, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::pp_scatter_gather>()},
    {"pp_overlap", FieldType::Boolean, "pipeline sends overlap compute (else the sending stage waits)", "", default_bool(true), -kAny, kAny, "",
     bind<&RuntimeProfile::overlap, &OverlapTraits::pp>()},
    {"sm_contention", FieldType::Number, "compute slowdown while overlapped communication runs", "", default_number(0.05), 0, 1, "",
     bind<&RuntimeProfile::sm_contention>()},
    {"microbatch_overhead_us", FieldType::Number, "host overhead per microbatch and stage", "us", default_number(0), 0, kAny, "",
     bind<&RuntimeProfile::microbatch_overhead_us>()},
    {"step_overhead_s", FieldType::Number, "per-step host overhead: data loading, logging, optimizer launch (none measured: 0)", "s", default_number(0), 0, kAny, "",
     bind<&RuntimeProfile::step_overhead_s>()},
    {"grad_clip", FieldType::Boolean,
     "gradients clipped by their global norm each step: a read of the local gradients and an fp32 all-reduce over every GPU", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::grad_clip>()},
    {"grad_dtype", FieldType::String, "gradient buffer and reduction dtype when the scenario's optimizer does not set one", "",
     default_string("fp32"), -kAny, kAny, "fp32|bf16|fp16", bind<&RuntimeProfile::grad_dtype>()},
    {"moe_dispatcher", FieldType::String,
     "the MoE token dispatcher of a layout that names none: alltoall (NCCL, every routed copy), allgather (every token over the EP "
     "group, outputs reduce-scattered), deepep or hybridep (a token once per remote node its experts are on)",
     "", default_string("alltoall"), -kAny, kAny, "", bind<&RuntimeProfile::moe_dispatcher>()},
    {"zero_stage", FieldType::Integer,
     "the ZeRO stage of a layout that names none, as the framework's recipes run it: Megatron-LM's command line shards nothing "
     "(--use-distributed-optimizer off), NeMo's and Megatron-Bridge's recipes run the distributed optimizer (1), torchtitan and "
     "llm-foundry FSDP (3); one of features.zero_stages",
     "", default_integer(0), 0, 3, "", bind<&RuntimeProfile::zero_stage>()},
    {"cp_ring_load_balanced", FieldType::Boolean,
     "context parallelism as a K/V ring over load-balanced chunks: one causal step, cp - 1 unmasked steps on half a block (TE p2p CP)",
     "", default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::cp_ring_load_balanced>()},
    {"selective_checkpoint", FieldType::String,
     "what a layout's selective recompute re-runs: Megatron's modules (recompute_modules, else the era's set), torchtitan's per-op policy "
     "(every other matmul and every memory-bound op of a block; SDPA saved), or every selective_checkpoint_interval-th block whole",
     "", default_string("modules"), -kAny, kAny, "modules|ops|layers", bind<&RuntimeProfile::selective_checkpoint>()},
    {"selective_checkpoint_interval", FieldType::Integer,
     "with selective_checkpoint \"layers\": every this-many-th transformer block is checkpointed whole (torchtitan selective_ac_option N)", "",
     default_integer(2), 1, 1 << 20, "", bind<&RuntimeProfile::selective_checkpoint_interval>()},
    {"cross_entropy", FieldType::String,
     "loss kernel: Megatron's vocab-parallel cross entropy (one fp32 kernel per step), a fused one (TE's, --cross-entropy-loss-fusion), "
     "or PyTorch's F.cross_entropy on pred.float() (torchtitan): its memory traffic and its fp32 transients",
     "", default_string("vocab-parallel"), -kAny, kAny, "vocab-parallel|fused|pytorch", bind<&RuntimeProfile::cross_entropy>()},
    {"least_pp_warmup", FieldType::Boolean,
     "interleaved warm-up at its least, (vp-1) pp + pp - 1 chunks, where the layout leaves pp_warmup open (Llama 3's tunable schedule)", "",
     default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::least_pp_warmup>()},
    {"fp8_delayed_scaling", FieldType::Boolean,
     "per-tensor FP8 takes its scales from the amax history (delayed scaling) rather than a fresh amax pass (current scaling)", "",
     default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::fp8_delayed_scaling>()},
    {"fp8_param_gather", FieldType::Boolean,
     "FP8 recipes keep the transformer layers' weights in FP8 and all-gather them so under ZeRO (Megatron --fp8-param-gather)", "",
     default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::fp8_param_gather>()},
    {"sp_input_regathered", FieldType::Boolean,
     "sequence parallelism keeps the sharded input of the QKV and first MLP GEMMs and all-gathers it again for their weight "
     "gradients (Megatron, Transformer Engine); false: the gathered input is saved whole and the backward gathers only the output "
     "gradient (PyTorch DTensor)", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::sp_input_regathered>()},
    {"activation_cast_fused", FieldType::Boolean,
     "the MLP's activation kernel writes the next GEMM's quantised input (and its backward the quantised gradient); false: the linear "
     "layer quantises the activation's 16-bit output in its own kernels", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::fused, &FusedKernels::activation_cast>()},
    {"moe_expert_bias_fused", FieldType::Boolean,
     "a biased MoE model's experts add their second linear's bias inside the grouped GEMM; false: after it, weighted by the "
     "routing probability, in unfused 16-bit elementwise kernels (Megatron-Core's TEGroupedMLP)", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::fused, &FusedKernels::moe_expert_bias>()},
    {"activation_clamp_fused", FieldType::Boolean,
     "a clamped gated activation (model.activation_clamp) clamps inside the activation kernel; false: two eager clamps and a "
     "concatenation before it (Megatron-Core's fused_bias_geglu wrappers)", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::fused, &FusedKernels::activation_clamp>()},
    {"yarn_rope_fused", FieldType::Boolean,
     "a model with YaRN-scaled rotary embeddings (model.position yarn) runs them in the fused rotary kernel; false: in eager "
     "elementwise kernels (Megatron turns its RoPE fusion off for any position embedding but plain rope)", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::fused, &FusedKernels::yarn_rope>()},
    {"zero3_reshard_with_pp", FieldType::Boolean, "ZeRO-3 reshards weights after forward when pipelining (else they stay gathered)", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::zero3_reshard_with_pp>()},
    {"zero3_regather_for_recompute", FieldType::Boolean, "full recompute gathers the parameters again for the recomputed forward", "",
     default_bool(false), -kAny, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::regather_for_recompute>()},
    {"zero3_max_reuse_distance", FieldType::Number,
     "ZeRO-3 per-module gathers: a released module used again within this many parameters stays gathered", "", default_number(0), 0, kAny,
     "", bind<&RuntimeProfile::zero3, &Zero3Traits::max_reuse_distance>()},
    {"zero3_max_live_params", FieldType::Number,
     "ZeRO-3 per-module gathers: the next module is prefetched only while fewer parameters than this are gathered (0: whole blocks, always prefetched)",
     "", default_number(0), 0, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::max_live_params>()},
    {"zero3_reduce_bucket_params", FieldType::Number, "ZeRO-3 gradient elements reduce-scattered per bucket (0: one block's gradient)", "",
     default_number(0), 0, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::reduce_bucket_params>()},
    {"zero3_hsdp_all_reduce_every_microbatch", FieldType::Boolean,
     "HSDP: each microbatch's ZeRO-3 gradient shard is all-reduced across the replicas (FSDP2), else once per step", "",
     default_bool(true), -kAny, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::hsdp_all_reduce_every_microbatch>()},
    {"zero3_per_tensor_gather_host_s", FieldType::Number,
     "ZeRO-3 gathers one parameter tensor at a time, each after a device synchronisation and this much host time plus zero3_gather_copy_per_rank_s a rank (0: a module's or block's parameters in one collective)", "s",
     default_number(0), 0, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::per_tensor_gather_host_s>()},
    {"zero3_gather_copy_per_rank_s", FieldType::Number,
     "with per-tensor gathers: host time per rank of the group, each rank's chunk copied out of the gathered buffer (PyTorch's list all_gather)", "s",
     default_number(0), 0, kAny, "", bind<&RuntimeProfile::zero3, &Zero3Traits::gather_copy_per_rank_s>()},
    {"preset", FieldType::String, "runtime profile this one starts from; its other keys override"},
    {"features", FieldType::Object, "what the framework implements, for the knobs a layout leaves open"},
    {"source", FieldType::String, "what the settings rest on", "", default_string(""), -kAny, kAny, "", bind<&RuntimeProfile::source>()},
};

constexpr FieldDef kFeatureFields[] = {
    {"zero_stages", FieldType::Array, "ZeRO stages the framework implements", "", "[0, 1, 2, 3]"},
    {"sequence_parallel", FieldType::Boolean, "Megatron sequence parallelism", "", default_bool(true), -kAny, kAny, "",
     bind<&FrameworkFeatures::sequence_parallel>()},
    {"context_parallel", FieldType::Boolean, "context parallelism (ring attention over the sequence)", "", default_bool(true), -kAny, kAny, "",
     bind<&FrameworkFeatures::context_parallel>()},
    {"selective_recompute", FieldType::Boolean, "selective activation recomputation", "", default_bool(true), -kAny, kAny, "",
     bind<&FrameworkFeatures::selective_recompute>()},
    {"uneven_stages", FieldType::Boolean, "pipeline stages of unequal layer counts", "", default_bool(true), -kAny, kAny, "",
     bind<&FrameworkFeatures::uneven_stages>()},
    {"schedules", FieldType::Array, "pipeline schedules it ships (names of layout.schedule)", "",
     "every schedule"},
    {"optimizer_offload", FieldType::Boolean, "optimizer state and step on the host CPU", "", default_bool(true), -kAny, kAny, "",
     bind<&FrameworkFeatures::optimizer_offload>()},
    {"activation_offload", FieldType::Boolean, "saved activations of some layers to host memory (Megatron --cpu-offloading)", "",
     default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::activation_offload>()},
    {"activation_offload_modules", FieldType::Boolean,
     "activation offload by module (Megatron-Core 0.16+ --fine-grained-activation-offloading, layout.activation_offload_modules), "
     "beside pipeline parallelism and recompute; whole layers (--cpu-offloading) need pp 1 and no recompute either way",
     "", default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::activation_offload_modules>()},
    {"activation_offload_fraction", FieldType::Boolean,
     "a leading share of each model chunk's module-offload groups (Megatron-Core 0.19+ --activation-offload-fraction, "
     "layout.activation_offload_fraction)",
     "", default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::activation_offload_fraction>()},
    {"ep_a2a_overlap", FieldType::Boolean,
     "the MoE all-to-all hidden behind another microbatch's compute (Megatron-Core 0.14+ --overlap-moe-expert-parallel-comm)", "",
     default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::ep_a2a_overlap>()},
    {"async_tp", FieldType::Boolean,
     "PyTorch's async tensor parallelism: sequence-parallel collectives pipelined with their GEMMs (layout.async_tp)", "",
     default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::async_tp>()},
    {"tp_beyond_kv_heads", FieldType::Boolean,
     "tensor parallelism above the key/value heads where they divide it: each rank's QKV output gathered over TP and sliced "
     "(Megatron-Core 0.16+)", "", default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::tp_beyond_kv_heads>()},
    {"gdn_context_parallel", FieldType::Boolean,
     "context parallelism for models with gated delta nets: the mixer's sequence split turned into a head split by all-to-alls "
     "(Megatron-Core 0.18+)", "", default_bool(false), -kAny, kAny, "", bind<&FrameworkFeatures::gdn_context_parallel>()},
    {"hsdp", FieldType::Boolean, "ZeRO states sharded inside groups of data-parallel ranks, replicated across them (layout.shard_group)", "",
     default_bool(true), -kAny, kAny, "", bind<&FrameworkFeatures::hsdp>()},
};

FrameworkFeatures parse_features(const json& doc, const std::string& path) {
    ObjectReader r(doc, path, kFeatureFields);
    FrameworkFeatures f;
    if (const json* stages = r.raw("zero_stages")) {
        if (!stages->is_array() || stages->empty()) throw InputError(r.path_of("zero_stages"), value_text(*stages), "must be a non-empty array of ZeRO stages");
        f.zero_stages.clear();
        for (std::size_t i = 0; i < stages->size(); ++i) {
            const json& v = (*stages)[i];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 3)
                throw InputError(r.path_of("zero_stages") + "/" + std::to_string(i), value_text(v), "must be a ZeRO stage 0-3");
            f.zero_stages.push_back(v.get<std::int64_t>());
        }
    }
    read_fields(r, f);
    if (const json* list = r.raw("schedules")) {
        if (!list->is_array()) throw InputError(r.path_of("schedules"), value_text(*list), "must be an array of schedule names");
        f.schedules = 0;
        for (std::size_t i = 0; i < list->size(); ++i) {
            const json& v = (*list)[i];
            const auto s = v.is_string() ? schedule_from_name(v.get<std::string>()) : std::nullopt;
            if (!s) throw InputError(r.path_of("schedules") + "/" + std::to_string(i), value_text(v), std::string("must be one of ") + kScheduleChoices);
            f.schedules |= schedule_bit(*s);
        }
    }
    return f;
}
}  // namespace

std::span<const FieldDef> runtime_profile_fields() { return kRuntimeFields; }

namespace {
constexpr const char* kDefaultRuntime = "megatron-core-2024";

int year_in(const std::string& name) {
    for (std::size_t i = name.size(); i >= 4; --i) {
        const std::string digits = name.substr(i - 4, 4);
        if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::stoi(digits);
    }
    return 0;
}

std::string family_of(std::string name) {
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.find("titan") != std::string::npos) return "torchtitan";
    if (name.find("foundry") != std::string::npos) return "llm-foundry";  // MosaicML's, on Composer FSDP
    if (name.find("deepspeed") != std::string::npos) return "deepspeed";
    if (name.find("nemo") != std::string::npos) return "nemo";  // NeMo's recipes, on Megatron-Core
    if (name.find("megatron") != std::string::npos) return "megatron";
    return "";
}
}  // namespace

std::string runtime_name(const std::string& framework) { return framework.empty() ? kDefaultRuntime : framework; }

std::string nearest_runtime_profile(const std::string& framework) {
    const std::vector<std::string> names = preset_names("calibration/runtime");
    if (framework.empty() || std::find(names.begin(), names.end(), framework) != names.end()) return framework;
    const int named_year = year_in(framework);
    const int year = named_year ? named_year : year_in(kDefaultRuntime);
    const std::string family = family_of(framework);
    // A name of no known family (an in-house stack, Meta's llama3-meta-2024) sets no family apart.
    const bool family_known =
        !family.empty() && std::any_of(names.begin(), names.end(), [&](const std::string& n) { return family_of(n) == family; });
    std::string best = kDefaultRuntime;
    int best_distance = std::abs(year_in(best) - year) + (family_known && family_of(best) != family ? 10000 : 0);
    for (const auto& n : names) {
        const int distance = std::abs(year_in(n) - year) + (family_known && family_of(n) != family ? 10000 : 0);
        if (distance < best_distance) {
            best = n;
            best_distance = distance;
        }
    }
    return best;
}

void check_schedule_shipped(const RuntimeProfile& runtime, Schedule schedule, const std::string& path) {
    if (runtime.features.ships(schedule)) return;
    std::string names;
    for (const ScheduleDef& d : schedules())
        if (runtime.features.ships(d.id)) names += (names.empty() ? "" : ", ") + std::string(d.name);
    throw InputError(path, "\"" + schedule_name(schedule) + "\"", runtime.name + " does not ship this pipeline schedule (it ships " + names + ")");
}

void check_async_tp_offered(const RuntimeProfile& runtime, const std::string& path) {
    if (runtime.features.async_tp) return;
    throw InputError(path, "true",
                     runtime.name + " has no async TP (PyTorch's, torchtitan's --parallelism.enable_async_tensor_parallel); Megatron's "
                                    "--tp-comm-overlap is its runtime's tp_overlap share, not a layout key");
}

void check_kv_heads_split(const RuntimeProfile& runtime, std::int64_t tp, std::int64_t kv_heads, const std::string& path) {
    if (kv_heads % tp == 0 || runtime.features.tp_beyond_kv_heads) return;
    throw InputError(path, std::to_string(tp),
                     "must divide the key/value heads (" + std::to_string(kv_heads) + ") under " + runtime.name +
                         ": TP above them (each rank's QKV output gathered and sliced) came with Megatron-Core 0.16 (nemo-2026)");
}

void check_gdn_context_parallel(const RuntimeProfile& runtime, std::int64_t cp, const std::string& path) {
    if (cp <= 1 || runtime.features.gdn_context_parallel) return;
    throw InputError(path, std::to_string(cp),
                     "must be 1 for a model with gated delta nets under " + runtime.name +
                         ": their context parallelism came with Megatron-Core 0.18 (megatron-core-2026); Megatron-Bridge 26.02's "
                         "Megatron-Core (b0cc2706) has none");
}

std::string_view activation_offload_rule(std::optional<std::int64_t> pp, std::optional<Recompute> recompute) {
    // megatron/core/transformer/transformer_config.py (core_r0.10.0 to d98e8a64dd): "Currently
    // there is no support for Pipeline parallelism with CPU offloading"; "CPU offloading does not
    // work when activation recomputation is enabled".
    if (pp && *pp > 1) return "needs pp 1: Megatron-Core's CPU offloading of whole layers has no pipeline-parallel support";
    if (recompute && *recompute != Recompute::None)
        return "needs recompute \"none\": Megatron-Core's CPU offloading of whole layers does not work with activation recomputation";
    return "";
}

void check_activation_offload(const RuntimeProfile& runtime, std::int64_t offload_layers, std::optional<std::int64_t> pp,
                              std::optional<Recompute> recompute, std::int64_t layers, const std::string& path) {
    if (offload_layers <= 0) return;
    const std::string value = std::to_string(offload_layers);
    if (const std::string_view rule = activation_offload_rule(pp, recompute); !rule.empty())
        throw InputError(path, value,
                         std::string(rule) + (runtime.features.activation_offload_modules
                                                  ? " (" + runtime.name + " offloads module inputs beside them: layout.activation_offload_modules)"
                                                  : " (" + runtime.name + " offloads no modules)"));
    // transformer_config.py: "CPU offloading can be done only for layers less than num_layers".
    if (offload_layers >= layers)
        throw InputError(path, value, "must be below the model's layers (" + std::to_string(layers) + "): Megatron-Core's CPU offloading");
}

void check_offload_fraction_offered(const RuntimeProfile& runtime, double fraction, const std::string& path) {
    if (fraction >= 1 || runtime.features.activation_offload_fraction) return;
    throw InputError(path, fmt::format("{}", fraction),
                     "is Megatron-Core's --activation-offload-fraction (core_v0.19.0+), which " + runtime.name +
                         " does not run (features.activation_offload_fraction): offload every layer's module inputs, or plan on "
                         "megatron-core-2026");
}

void check_offload_modules_offered(const RuntimeProfile& runtime, std::uint8_t modules, const std::string& path) {
    if (modules == 0 || runtime.features.activation_offload_modules) return;
    throw InputError(path, offload_modules_text(modules),
                     "is Megatron-Core's fine-grained activation offload (core_v0.16.0+), which " + runtime.name +
                         " does not run (features.activation_offload_modules)");
}

void check_recompute_modules(const RuntimeProfile& runtime, std::uint8_t modules, const std::string& path) {
    if (runtime.selective_checkpoint == SelectiveCheckpoint::Modules) return;
    throw InputError(path, recompute_modules_text(modules),
                     "names Megatron's recompute modules, but " + runtime.name + "'s selective recompute is its own (selective_checkpoint \"" +
                         std::string(name_of(runtime.selective_checkpoint)) + "\"): leave recompute_modules out");
}

CrossEntropyBytes cross_entropy_bytes(CrossEntropyKernel kernel) {
    switch (kernel) {
        // Megatron-Core's _VocabParallelCrossEntropy, one kernel per step: per logit the bf16 ->
        // fp32 cast (2 + 4 B), max (4), subtract (8), exp (8), sum (4) and divide (8) forward;
        // scaling by the loss gradient (8) and the cast back (4 + 2) backward. It works in place
        // on the fp32 logits, which it keeps for the backward: those and their gradient at most.
        case CrossEntropyKernel::VocabParallel: return {38, 14, 8};
        // Fused (Transformer Engine's, --cross-entropy-loss-fusion): the logits read once and
        // their gradient written in place (2 + 2 B) forward, scaled backward (4). Megatron-Core
        // hands it the bf16 logits as the output layer wrote them (language_module.py,
        // cross_entropy_fusion_impl 'te'), and the kernel stores the gradient over them
        // (transformer_engine/pytorch/triton/cross_entropy.py, cross_entropy_kernel, v2.2 to
        // v2.17): held, the 16-bit logits alone. (v2.18, 01bbe3eea, July 2026, writes an fp32
        // gradient beside them, 6 B; no runtime here pins a Transformer Engine that recent.)
        case CrossEntropyKernel::Fused: return {4, 4, 2};
        // torchtitan's loss, F.cross_entropy(pred.flatten(0, 1).float(), labels) (torchtitan
        // train.py, 2024-2025; `del pred` before backward): the fp32 copy (2 + 4 B), log_softmax
        // in PyTorch's kernel for rows this long, a max pass, a sum pass and a write pass (4 + 4
        // + 4 + 4), saved for the backward; backward, nll_loss's dense fp32 gradient (4), then
        // log_softmax's backward, a sum pass and a write pass over it and the saved output (4 +
        // 4 + 4 + 4), then the cast back (4 + 2). Its peak is that backward's: the saved output,
        // the incoming gradient and the new one, 12 B in fp32 per logit.
        case CrossEntropyKernel::PyTorch: return {22, 26, 12};
    }
    return {38, 14, 8};
}

Precision gradient_dtype(const TrainingSpec& training, const RuntimeProfile& runtime) {
    return training.optimizer.grad_dtype.value_or(runtime.grad_dtype);
}

RuntimeProfile load_runtime_profile(const std::string& framework, const std::string& path) {
    const std::string name = runtime_name(framework);
    const json doc = resolve_inherited(load_preset("calibration/runtime", name, path), "calibration/runtime", path);
    return parse_runtime_profile(doc, name, "/calibration/runtime/" + name);
}

RuntimeProfile parse_runtime_profile(const json& doc, const std::string& name, const std::string& path) {
    ObjectReader r(doc, path, kRuntimeFields);
    RuntimeProfile p;
    p.name = name;
    read_fields(r, p);
    if (const json* features = r.raw("features")) p.features = parse_features(*features, r.path_of("features"));
    p.features.recompute_modules = p.selective_checkpoint == SelectiveCheckpoint::Modules;
    const auto& stages = p.features.zero_stages;
    if (std::find(stages.begin(), stages.end(), std::int64_t{p.zero_stage}) == stages.end())
        throw InputError(r.path_of("zero_stage"), std::to_string(p.zero_stage), "must be one of the stages the framework implements (features.zero_stages)");
    return p;
}

}  // namespace sextant
