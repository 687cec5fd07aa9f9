#include "spec/runtime_profile.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr FieldDef kRuntimeFields[] = {
    {"name", FieldType::String, "framework generation"},
    {"flash_attention", FieldType::Boolean, "fused flash attention (no s x s scores in memory)", "", "true"},
    {"memory_traffic_factor", FieldType::Number, "HBM traffic of memory-bound ops relative to unfused kernels", "", "1", 0.1, 2},
    {"moe_efficiency", FieldType::Number, "share of the kernel throughput a MoE layer's expert path sustains (grouped GEMMs, routing, permutation)", "", "1", 0.1, 1.5},
    {"compute_efficiency", FieldType::Number, "kernel throughput this software generation sustains, relative to the calibration profile", "", "1", 0.1, 1.5},
    {"tp_overlap", FieldType::Number, "fraction of TP communication hidden behind GEMMs", "", "0", 0, 1},
    {"dp_grad_reduce_overlap", FieldType::Boolean, "gradient reduction overlaps backward", "", "true"},
    {"dp_param_gather_overlap", FieldType::Boolean, "ZeRO parameter all-gather overlaps the next forward", "", "true"},
    {"cp_overlap", FieldType::Number, "fraction of the context-parallel K/V exchange hidden", "", "0.8", 0, 1},
    {"ep_overlap", FieldType::Number, "fraction of MoE all-to-all hidden", "", "0", 0, 1},
    {"pp_scatter_gather", FieldType::Boolean, "pipeline messages split across TP ranks", "", "false"},
    {"pp_overlap", FieldType::Boolean, "pipeline sends overlap compute (else the sending stage waits)", "", "true"},
    {"sm_contention", FieldType::Number, "compute slowdown while overlapped communication runs", "", "0.05", 0, 1},
    {"microbatch_overhead_us", FieldType::Number, "host overhead per microbatch and stage", "us", "0", 0},
    {"step_overhead_s", FieldType::Number, "per-step host overhead: data loading, logging, optimizer launch (none measured: 0)", "s", "0", 0},
    {"grad_clip", FieldType::Boolean,
     "gradients clipped by their global norm each step: a read of the local gradients and an fp32 all-reduce over every GPU", "", "true"},
    {"grad_dtype", FieldType::String, "gradient buffer and reduction dtype when the scenario's optimizer does not set one", "", "fp32",
     -1e300, 1e300, "fp32|bf16|fp16"},
    {"moe_node_dedup", FieldType::Boolean,
     "MoE dispatch sends a token once per remote node its experts are on (DeepEP, HybridEP) instead of once per expert (NCCL all-to-all)",
     "", "false"},
    {"fused_cross_entropy", FieldType::Boolean, "vocab-parallel cross entropy fused into one kernel (--cross-entropy-loss-fusion, TE's)", "", "false"},
    {"least_pp_warmup", FieldType::Boolean,
     "interleaved warm-up at its least, (vp-1) pp + pp - 1 chunks, where the layout leaves pp_warmup open (Llama 3's tunable schedule)", "", "false"},
    {"fp8_delayed_scaling", FieldType::Boolean,
     "per-tensor FP8 takes its scales from the amax history (delayed scaling) rather than a fresh amax pass (current scaling)", "", "false"},
    {"zero3_reshard_with_pp", FieldType::Boolean, "ZeRO-3 reshards weights after forward when pipelining (else they stay gathered)", "", "true"},
    {"zero3_regather_for_recompute", FieldType::Boolean, "full recompute gathers the parameters again for the recomputed forward", "", "false"},
    {"zero3_max_reuse_distance", FieldType::Number,
     "ZeRO-3 per-module gathers: a released module used again within this many parameters stays gathered", "", "0", 0},
    {"zero3_max_live_params", FieldType::Number,
     "ZeRO-3 per-module gathers: the next module is prefetched only while fewer parameters than this are gathered (0: whole blocks, always prefetched)",
     "", "0", 0},
    {"zero3_reduce_bucket_params", FieldType::Number, "ZeRO-3 gradient elements reduce-scattered per bucket (0: one block's gradient)", "", "0", 0},
    {"zero3_hsdp_all_reduce_every_microbatch", FieldType::Boolean,
     "HSDP: each microbatch's ZeRO-3 gradient shard is all-reduced across the replicas (FSDP2), else once per step", "", "true"},
    {"preset", FieldType::String, "runtime profile this one starts from; its other keys override"},
    {"features", FieldType::Object, "what the framework implements, for the knobs a layout leaves open"},
    {"source", FieldType::String, "what the settings rest on"},
};

constexpr FieldDef kFeatureFields[] = {
    {"zero_stages", FieldType::Array, "ZeRO stages the framework implements", "", "[0, 1, 2, 3]"},
    {"sequence_parallel", FieldType::Boolean, "Megatron sequence parallelism", "", "true"},
    {"context_parallel", FieldType::Boolean, "context parallelism (ring attention over the sequence)", "", "true"},
    {"selective_recompute", FieldType::Boolean, "selective activation recomputation", "", "true"},
    {"uneven_stages", FieldType::Boolean, "pipeline stages of unequal layer counts", "", "true"},
    {"schedules", FieldType::Array, "pipeline schedules it ships (names of layout.schedule)", "",
     "every schedule"},
    {"optimizer_offload", FieldType::Boolean, "optimizer state and step on the host CPU", "", "true"},
    {"activation_offload", FieldType::Boolean, "saved activations of some layers to host memory (Megatron --cpu-offloading)", "", "false"},
    {"ep_a2a_overlap", FieldType::Boolean,
     "the MoE all-to-all hidden behind another microbatch's compute (Megatron-Core 0.14+ --overlap-moe-expert-parallel-comm)", "",
     "false"},
    {"hsdp", FieldType::Boolean, "ZeRO states sharded inside groups of data-parallel ranks, replicated across them (layout.shard_group)", "", "true"},
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
    f.sequence_parallel = r.boolean("sequence_parallel").value_or(true);
    f.context_parallel = r.boolean("context_parallel").value_or(true);
    f.selective_recompute = r.boolean("selective_recompute").value_or(true);
    f.uneven_stages = r.boolean("uneven_stages").value_or(true);
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
    f.optimizer_offload = r.boolean("optimizer_offload").value_or(true);
    f.activation_offload = r.boolean("activation_offload").value_or(false);
    f.ep_a2a_overlap = r.boolean("ep_a2a_overlap").value_or(false);
    f.hsdp = r.boolean("hsdp").value_or(true);
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

std::string nearest_runtime_profile(const std::string& framework) {
    const std::vector<std::string> names = preset_names("calibration/runtime");
    if (framework.empty() || std::find(names.begin(), names.end(), framework) != names.end()) return framework;
    const int named_year = year_in(framework);
    const int year = named_year ? named_year : year_in(kDefaultRuntime);
    const std::string family = family_of(framework);
    const bool family_known = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return family_of(n) == family; });
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

Precision gradient_dtype(const TrainingSpec& training, const RuntimeProfile& runtime) {
    return training.optimizer.grad_dtype.value_or(runtime.grad_dtype);
}

RuntimeProfile load_runtime_profile(const std::string& framework, const std::string& path) {
    const std::string name = framework.empty() ? "megatron-core-2024" : framework;
    const json doc = resolve_inherited(load_preset("calibration/runtime", name, path), "calibration/runtime", path);
    return parse_runtime_profile(doc, name, "/calibration/runtime/" + name);
}

RuntimeProfile parse_runtime_profile(const json& doc, const std::string& name, const std::string& path) {
    ObjectReader r(doc, path, kRuntimeFields);
    RuntimeProfile p;
    p.name = name;
    p.flash_attention = r.boolean("flash_attention").value_or(true);
    p.memory_traffic_factor = r.number("memory_traffic_factor").value_or(1.0);
    p.compute_efficiency = r.number("compute_efficiency").value_or(1.0);
    p.moe_efficiency = r.number("moe_efficiency").value_or(1.0);
    p.overlap.tp = r.number("tp_overlap").value_or(0.0);
    p.overlap.dp_grad_reduce = r.boolean("dp_grad_reduce_overlap").value_or(true);
    p.overlap.dp_param_gather = r.boolean("dp_param_gather_overlap").value_or(true);
    p.overlap.cp = r.number("cp_overlap").value_or(0.8);
    p.overlap.ep = r.number("ep_overlap").value_or(0.0);
    p.overlap.pp_scatter_gather = r.boolean("pp_scatter_gather").value_or(false);
    p.overlap.pp = r.boolean("pp_overlap").value_or(true);
    p.sm_contention = r.number("sm_contention").value_or(0.05);
    p.microbatch_overhead_us = r.number("microbatch_overhead_us").value_or(0.0);
    p.step_overhead_s = r.number("step_overhead_s").value_or(0.0);
    p.grad_clip = r.boolean("grad_clip").value_or(true);
    p.zero3_reshard_with_pp = r.boolean("zero3_reshard_with_pp").value_or(true);
    p.fp8_delayed_scaling = r.boolean("fp8_delayed_scaling").value_or(false);
    p.moe_node_dedup = r.boolean("moe_node_dedup").value_or(false);
    p.fused_cross_entropy = r.boolean("fused_cross_entropy").value_or(false);
    p.least_pp_warmup = r.boolean("least_pp_warmup").value_or(false);
    p.grad_dtype = parse_precision(r.string("grad_dtype").value_or("fp32"));
    const Zero3Traits fsdp{};  // the defaults: FSDP's behaviour
    p.zero3.regather_for_recompute = r.boolean("zero3_regather_for_recompute").value_or(fsdp.regather_for_recompute);
    p.zero3.max_reuse_distance = r.number("zero3_max_reuse_distance").value_or(fsdp.max_reuse_distance);
    p.zero3.max_live_params = r.number("zero3_max_live_params").value_or(fsdp.max_live_params);
    p.zero3.reduce_bucket_params = r.number("zero3_reduce_bucket_params").value_or(fsdp.reduce_bucket_params);
    p.zero3.hsdp_all_reduce_every_microbatch =
        r.boolean("zero3_hsdp_all_reduce_every_microbatch").value_or(fsdp.hsdp_all_reduce_every_microbatch);
    if (const json* features = r.raw("features")) p.features = parse_features(*features, r.path_of("features"));
    p.source = r.string("source").value_or("");
    return p;
}

}  // namespace sextant
