#include "spec/layout_spec.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "spec/field_binding.hpp"

namespace sextant {

namespace {
constexpr FieldDef kLayoutFields[] = {
    {"tp", FieldType::Integer, "tensor-parallel degree", "", default_integer(1), 1, 1 << 24, "", bind<&LayoutSpec::tp>()},
    {"pp", FieldType::Integer, "pipeline-parallel stages", "", default_integer(1), 1, 1 << 24, "", bind<&LayoutSpec::pp>()},
    {"dp", FieldType::Integer, "data-parallel degree", "", "gpus/(tp*pp*cp)", 1, 1 << 24, "", bind<&LayoutSpec::dp>()},
    {"cp", FieldType::Integer, "context-parallel degree", "", default_integer(1), 1, 1 << 24, "", bind<&LayoutSpec::cp>()},
    {"ep", FieldType::Integer, "expert-parallel degree (ep x expert_tp divides tp*cp*dp)", "", default_integer(1), 1, 1 << 24, "",
     bind<&LayoutSpec::ep>()},
    {"expert_tp", FieldType::Integer, "tensor parallelism inside each expert (Megatron --expert-tensor-parallel-size)", "",
     "tp where ep x tp divides tp*cp*dp, else 1", 1, 1 << 24, "", bind<&LayoutSpec::expert_tp>()},
    {"vp", FieldType::Integer, "virtual pipeline chunks per stage (interleaved 1F1B)", "", default_integer(1), 1, 1 << 24, "",
     bind<&LayoutSpec::vp>()},
    {"microbatch", FieldType::Integer, "sequences per microbatch", "sequences", default_integer(1), 1, 1 << 30, "",
     bind<&LayoutSpec::microbatch>()},
    {"grad_accumulation", FieldType::Integer,
     "microbatches each data-parallel replica runs per step (gradient accumulation: DeepSpeed gradient_accumulation_steps, "
     "the GA column of NeMo's and Megatron-Bridge's performance tables); global_batch / (dp x microbatch), so with dp known it "
     "fixes the microbatch",
     "microbatches", "global_batch / (dp x microbatch)", 1, 1 << 30, "", bind<&LayoutSpec::grad_accumulation>()},
    {"zero_stage", FieldType::Integer, "ZeRO stage (FSDP = 3)", "", "the framework generation's (runtime zero_stage)", 0, 3, "",
     bind<&LayoutSpec::zero_stage>()},
    {"shard_group", FieldType::Integer,
     "data-parallel ranks that shard the ZeRO states (HSDP: shard inside a group, replicate across dp / shard_group groups); "
     "divides dp", "", "dp", 1, 1 << 24, "", bind<&LayoutSpec::shard_group>()},
    {"sequence_parallel", FieldType::Boolean, "Megatron sequence parallelism", "", "tp > 1", -1e300, 1e300, "",
     bind<&LayoutSpec::sequence_parallel>()},
    {"optimizer_offload", FieldType::Boolean, "optimizer state and step on the host CPU (ZeRO-Offload)", "", default_bool(false),
     -1e300, 1e300, "", bind<&LayoutSpec::optimizer_offload>()},
    {"recompute", FieldType::String, "activation recomputation", "", default_string("none"), -1e300, 1e300, "",
     bind<&LayoutSpec::recompute>()},
    {"recompute_modules", FieldType::Array,
     "what selective recompute re-runs (Megatron --recompute-modules): core_attn, layernorm, mla_up_proj, mlp, moe_act, moe, "
     "shared_experts, act (every MLP activation)", "", "flash attention: layernorm, act; before it: core_attn"},
    {"activation_offload_layers", FieldType::Integer,
     "layers per pipeline stage whose saved activations move to host memory during the forward and back for the backward "
     "(Megatron --cpu-offloading-num-layers)", "", default_integer(0), 0, 1 << 16, "", bind<&LayoutSpec::activation_offload_layers>()},
    {"activation_offload_modules", FieldType::Array,
     "modules whose inputs move to host memory in every layer during the forward and back for the backward (Megatron-Core "
     "--fine-grained-activation-offloading --offload-modules): attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, "
     "expert_fc1, moe_act", "", "none"},
    {"activation_offload_fraction", FieldType::Number,
     "the share of each model chunk's module-offload groups (one per layer and module, in forward order) whose inputs move; "
     "the later groups stay on the GPU (Megatron-Core --activation-offload-fraction, core_v0.19.0); needs "
     "activation_offload_modules",
     "", default_number(1), 0, 1, "", bind<&LayoutSpec::activation_offload_fraction>()},
    {"ep_a2a_overlap", FieldType::Boolean,
     "the MoE all-to-all of one microbatch runs behind the compute of another, a forward and a backward merged "
     "(Megatron --overlap-moe-expert-parallel-comm, Megatron-Bridge moe_a2a_overlap)", "", default_bool(false), -1e300, 1e300, "",
     bind<&LayoutSpec::ep_a2a_overlap>()},
    {"async_tp", FieldType::Boolean,
     "each sequence-parallel all-gather and reduce-scatter split into tp chunks pipelined with the GEMM it feeds or drains "
     "(PyTorch async TP; torchtitan --parallelism.enable_async_tensor_parallel); needs tp > 1 and sequence parallelism", "",
     default_bool(false), -1e300, 1e300, "", bind<&LayoutSpec::async_tp>()},
    {"moe_dispatcher", FieldType::String,
     "how MoE tokens reach their experts (Megatron --moe-token-dispatcher-type, flex backend): alltoall, allgather, deepep, hybridep",
     "", "the framework generation's (runtime moe_dispatcher)", -1e300, 1e300, "",
     bind<&LayoutSpec::moe_dispatcher>()},
    {"schedule", FieldType::String, "pipeline schedule (README: Pipeline schedules)", "", "1f1b (interleaved when vp > 1)",
     -1e300, 1e300, kScheduleChoices},
    {"pp_warmup", FieldType::Integer,
     "interleaved 1F1B: forward chunks the first stage runs before its first backward, each later stage two fewer (Llama 3's "
     "tunable warm-up); at least (vp-1) pp + pp - 1", "chunks", "2(pp-1) + (vp-1) pp (Megatron)", 1, 1 << 24, "",
     bind<&LayoutSpec::pp_warmup>()},
    {"stage_layers", FieldType::Array, "explicit layers per pipeline stage"},
    {"rank_order", FieldType::String, "parallel dimensions, fastest-varying first", "", default_string("tp-cp-ep-dp-pp")},
};

constexpr std::pair<std::string_view, std::uint8_t> kRecomputeModuleNames[] = {
    {"core_attn", kRecomputeCoreAttn}, {"layernorm", kRecomputeLayerNorm}, {"mla_up_proj", kRecomputeMlaUpProj},
    {"mlp", kRecomputeMlp}, {"moe_act", kRecomputeMoeAct}, {"moe", kRecomputeMoe},
    {"shared_experts", kRecomputeSharedExperts}, {"act", kRecomputeAct},
};

// Megatron's order (transformer_config.py's offload_modules choices).
constexpr std::pair<std::string_view, std::uint8_t> kOffloadModuleNames[] = {
    {"attn_norm", kOffloadAttnNorm}, {"qkv_linear", kOffloadQkvLinear}, {"core_attn", kOffloadCoreAttn},
    {"attn_proj", kOffloadAttnProj}, {"mlp_norm", kOffloadMlpNorm},     {"expert_fc1", kOffloadExpertFc1},
    {"moe_act", kOffloadMoeAct},
};

// A JSON array of module names as bits of `table`; `what` names the kind in errors.
template <std::size_t N>
std::uint8_t parse_module_bits(const json& list, const std::string& path, const std::pair<std::string_view, std::uint8_t> (&table)[N],
                               const std::string& what) {
    std::uint8_t modules = 0;
    std::vector<std::string> names;
    for (const auto& [name, bit] : table) names.emplace_back(name);
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& v = list[i];
        const std::string at = path + "/" + std::to_string(i);
        if (!v.is_string()) throw InputError(at, value_text(v), "must be a module name");
        const auto it = std::find_if(std::begin(table), std::end(table), [&](const auto& m) { return m.first == v.get<std::string>(); });
        if (it == std::end(table)) throw InputError(at, value_text(v), "unknown " + what + " module; " + suggestion_text(v.get<std::string>(), names));
        modules = static_cast<std::uint8_t>(modules | it->second);
    }
    if (modules == 0) throw InputError(path, "[]", "must name at least one module");
    return modules;
}

template <std::size_t N>
std::string module_bits_text(std::uint8_t modules, const std::pair<std::string_view, std::uint8_t> (&table)[N]) {
    std::string text;
    for (const auto& [name, bit] : table)
        if (modules & bit) text += (text.empty() ? "" : ",") + std::string(name);
    return text;
}

std::array<ParallelDim, 5> parse_rank_order(const std::string& text, const std::string& path) {
    const std::string rule =
        "must name tp, cp, ep, dp and pp once each, fastest first, joined by '-' (e.g. "
        "tp-cp-ep-dp-pp)";
    std::array<ParallelDim, 5> order{};
    std::array<bool, 5> seen{};
    std::size_t count = 0, start = 0;
    while (start <= text.size()) {
        std::size_t dash = text.find('-', start);
        if (dash == std::string::npos) dash = text.size();
        std::string token = text.substr(start, dash - start);
        start = dash + 1;
        const auto dim = enum_from_name<ParallelDim>(token);
        if (!dim || seen[static_cast<std::size_t>(*dim)] || count >= 5) throw InputError(path, "\"" + text + "\"", rule);
        seen[static_cast<std::size_t>(*dim)] = true;
        order[count++] = *dim;
    }
    if (count != 5) throw InputError(path, "\"" + text + "\"", rule);
    return order;
}
}  // namespace

std::span<const FieldDef> layout_fields() { return kLayoutFields; }

LayoutSpec fixed_spec(const Layout& l) {
    LayoutSpec k;
    k.tp = l.tp;
    k.pp = l.pp;
    k.dp = l.dp;
    k.cp = l.cp;
    k.ep = l.ep;
    k.expert_tp = l.etp;
    k.vp = l.vp;
    k.microbatch = l.microbatch;
    k.zero_stage = l.zero_stage;
    if (l.shard_group > 0) k.shard_group = l.shard_group;
    k.sequence_parallel = l.sequence_parallel;
    k.optimizer_offload = l.optimizer_offload;
    k.recompute = l.recompute;
    if (l.recompute_modules != 0) k.recompute_modules = l.recompute_modules;
    k.activation_offload_layers = l.activation_offload_layers;
    k.activation_offload_modules = l.offload_modules;
    k.activation_offload_fraction = l.offload_fraction;
    k.ep_a2a_overlap = l.ep_a2a_overlap;
    k.async_tp = l.async_tp;
    k.moe_dispatcher = l.moe_dispatcher;
    k.schedule = l.schedule;
    if (l.pp_warmup > 0) k.pp_warmup = l.pp_warmup;
    k.rank_order = l.rank_order;
    if (!l.stage_layers.empty()) k.stage_layers = l.stage_layers;
    return k;
}

LayoutSpec parse_layout(const json& object, const std::string& path) {
    ObjectReader r(object, path, kLayoutFields);
    LayoutSpec l;
    read_given(r, l);  // unset knobs stay open: the planner or the framework defaults decide
    if (const json* m = r.raw("recompute_modules"))
        l.recompute_modules = parse_module_bits(*m, r.path_of("recompute_modules"), kRecomputeModuleNames, "recompute");
    if (const json* m = r.raw("activation_offload_modules"))  // [] offloads none
        l.activation_offload_modules =
            m->empty() ? std::uint8_t{0} : parse_module_bits(*m, r.path_of("activation_offload_modules"), kOffloadModuleNames, "offload");
    if (auto s = r.string("schedule")) l.schedule = schedule_from_name(*s).value_or(Schedule::OneFOneB);
    if (auto s = r.string("rank_order")) l.rank_order = parse_rank_order(*s, r.path_of("rank_order"));
    if (const json* split = r.raw("stage_layers")) {
        std::vector<std::int64_t> layers;
        for (std::size_t i = 0; i < split->size(); ++i) {
            const json& v = (*split)[i];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
                throw InputError(r.path_of("stage_layers") + "/" + std::to_string(i), value_text(v),
                                 "must be a positive integer (layers of that stage)");
            layers.push_back(v.get<std::int64_t>());
        }
        l.stage_layers = std::move(layers);
    }
    return l;
}

std::optional<std::int64_t> accumulation_microbatch(std::int64_t global_batch, std::int64_t dp, std::int64_t grad_accumulation) {
    if (dp < 1 || grad_accumulation < 1 || global_batch % dp != 0 || (global_batch / dp) % grad_accumulation != 0) return std::nullopt;
    return global_batch / dp / grad_accumulation;
}

std::string grad_accumulation_rule(std::int64_t global_batch, std::int64_t dp, std::optional<std::int64_t> microbatch,
                                   std::int64_t grad_accumulation) {
    const auto n = [](std::int64_t v) { return std::to_string(v); };
    const auto mb = accumulation_microbatch(global_batch, dp, grad_accumulation);
    if (microbatch && mb != microbatch) {
        const std::int64_t per_step = *microbatch * dp;
        return "must equal global_batch / (dp x microbatch) = " + n(global_batch) + " / (" + n(dp) + " x " + n(*microbatch) + ")" +
               (global_batch % per_step == 0 ? " = " + n(global_batch / per_step) : std::string(", not a whole number")) +
               ": the global batch, dp, microbatch and gradient accumulation given contradict each other";
    }
    if (!mb)
        return "must divide global_batch / dp = " + n(global_batch) + " / " + n(dp) +
               (global_batch % dp == 0 ? " = " + n(global_batch / dp) + " sequences a replica runs" : std::string(", not a whole number")) +
               ": the microbatch is global_batch / (dp x grad_accumulation)";
    return "";
}

std::vector<std::int64_t> default_stage_split(std::int64_t layers, std::int64_t pp) {
    if (pp < 1 || layers < pp) return {};
    if (layers % pp == 0) return std::vector<std::int64_t>(static_cast<std::size_t>(pp), layers / pp);
    if (pp == 2) return {layers / 2, layers - layers / 2};
    const std::int64_t middle = (layers + pp - 1) / pp;
    const std::int64_t rest = layers - (pp - 2) * middle;
    const std::int64_t first = rest / 2, last = rest - first;
    if (first < 1 || last > middle) return {};
    std::vector<std::int64_t> split(static_cast<std::size_t>(pp), middle);
    split.front() = first;
    split.back() = last;
    return split;
}

std::vector<std::int64_t> chunk_layers(std::int64_t n, std::int64_t vp, bool first_stage, bool last_stage) {
    std::vector<std::int64_t> chunks;
    chunk_layers(n, vp, first_stage, last_stage, chunks);
    return chunks;
}

void chunk_layers(std::int64_t n, std::int64_t vp, bool first_stage, bool last_stage, std::vector<std::int64_t>& chunks) {
    chunks.assign(static_cast<std::size_t>(vp), n / vp);
    for (std::int64_t c = 0; c < n % vp; ++c) chunks[static_cast<std::size_t>(c)] += 1;
    const std::int64_t full = (n + vp - 1) / vp, rest = n - full * (vp - 1);
    if (n % vp == 0 || rest < 0 || (!first_stage && !last_stage)) return;
    std::fill(chunks.begin(), chunks.end(), full);
    chunks[first_stage ? 0 : static_cast<std::size_t>(vp - 1)] = rest;
}

std::uint8_t active_recompute_modules(Recompute recompute, std::uint8_t modules, bool flash_attention) {
    if (recompute != Recompute::Selective) return 0;
    if (modules != 0) return modules;
    return flash_attention ? kRecomputeLayerNorm | kRecomputeAct : kRecomputeCoreAttn;
}

std::string recompute_modules_text(std::uint8_t modules) { return module_bits_text(modules, kRecomputeModuleNames); }

std::string offload_modules_text(std::uint8_t modules) { return module_bits_text(modules, kOffloadModuleNames); }

std::vector<std::string_view> offload_module_names(std::uint8_t modules) {
    std::vector<std::string_view> names;
    for (const auto& [name, bit] : kOffloadModuleNames)
        if (modules & bit) names.push_back(name);
    return names;
}

json layout_json(const Layout& l) {
    json j = {{"tp", l.tp}, {"pp", l.pp}, {"dp", l.dp}, {"cp", l.cp}, {"ep", l.ep}, {"expert_tp", l.etp}, {"vp", l.vp},
              {"microbatch", l.microbatch}, {"zero_stage", l.zero_stage}, {"shard_group", l.shard_dp()},
              {"sequence_parallel", l.sequence_parallel}, {"optimizer_offload", l.optimizer_offload},
              {"recompute", recompute_name(l.recompute)}};
    if (l.recompute == Recompute::Selective && l.recompute_modules != 0) {
        json modules = json::array();
        for (const auto& [name, bit] : kRecomputeModuleNames)
            if (l.recompute_modules & bit) modules.push_back(name);
        j["recompute_modules"] = std::move(modules);
    }
    j["activation_offload_layers"] = l.activation_offload_layers;
    if (l.offload_modules != 0) {
        json modules = json::array();
        for (const std::string_view name : offload_module_names(l.offload_modules)) modules.push_back(name);
        j["activation_offload_modules"] = std::move(modules);
        if (l.offload_fraction < 1) j["activation_offload_fraction"] = l.offload_fraction;
    }
    j["ep_a2a_overlap"] = l.ep_a2a_overlap;
    j["async_tp"] = l.async_tp;
    if (l.moe_dispatcher) j["moe_dispatcher"] = name_of(*l.moe_dispatcher);
    j["schedule"] = schedule_name(l.schedule);
    if (l.pp_warmup > 0) j["pp_warmup"] = l.pp_warmup;
    j["stage_layers"] = l.stage_layers;
    j["rank_order"] = rank_order_text(l.rank_order);
    return j;
}

std::string recompute_name(Recompute r) { return std::string(name_of(r)); }

std::string dim_name(ParallelDim d) { return std::string(name_of(d)); }

std::string rank_order_text(const std::array<ParallelDim, 5>& order) {
    std::string s;
    for (std::size_t i = 0; i < order.size(); ++i) s += (i ? "-" : "") + dim_name(order[i]);
    return s;
}

}  // namespace sextant
