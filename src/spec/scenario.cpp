#include "spec/scenario.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "spec/field_binding.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"

namespace sextant {

namespace fs = std::filesystem;

namespace {
constexpr FieldDef kScenarioFields[] = {
    {"name", FieldType::String, "scenario name"},
    {"description", FieldType::String, "free text"},
    {"model", FieldType::Any, "model: inline object, models/ preset name, file path, or HF config.json"},
    {"cluster", FieldType::Any, "cluster: inline object, topologies/ preset name or file path"},
    {"training", FieldType::Object, "batch, precision, optimizer (see /training)"},
    {"layout", FieldType::Object, "parallel layout (see /layout)"},
    {"seq_len", FieldType::Integer, "tokens per sequence (published-runs form)", "tokens", "", 1, 1 << 27},
    {"global_batch", FieldType::Integer, "sequences per step (published-runs form)", "", "", 1, 1 << 30},
    {"precision", FieldType::String, "low-precision recipe (published-runs form)", "", "/training/precision's",
     -1e300, 1e300, kPrecisionChoices},
    {"training_mode", FieldType::String, "pretrain or lora (published-runs form)", "", "/training/training_mode's",
     -1e300, 1e300, "", {.names = kTrainingModeNames}},
    {"framework", FieldType::String, "training runtime generation (published-runs form)"},
    {"memory", FieldType::Object, "memory allowances (see /memory)"},
    {"calibration", FieldType::Any, "calibration profile: calibration/ preset name or file path"},
    {"reliability", FieldType::Object, "failure, checkpoint and restart model"},
    {"stragglers", FieldType::Array, "slow GPUs or nodes: [{gpu|node, slowdown}]"},
    {"degraded_links", FieldType::Array, "links running below their rate"},
};

// Keys of a published-runs entry that describe the measurement, not the scenario.
constexpr std::string_view kIgnoredKeys[] = {"id", "source", "source_location", "measured",
                                             "tolerance", "notes"};

constexpr FieldDef kMemoryFields[] = {
    // Bounded by 1 TiB, beyond any GPU's memory (B300: 288 GB): 1e308 made the peak infinite.
    {"context_gib", FieldType::Number, "CUDA context, library workspaces and NCCL buffers", "GiB",
     default_number(1.5), 0, 1024, "", bind<&MemorySettings::context_gib>()},
    {"fragmentation", FieldType::Number, "allocator fragmentation, fraction of tensor bytes", "",
     default_number(0.05), 0, 1, "", bind<&MemorySettings::fragmentation>()},
    {"safety_margin", FieldType::Number,
     "HBM to keep free, fraction: the planner offers no layout above it and the report draws its line; fits uses all of HBM "
     "(source at MemorySettings::safety_margin)", "",
     default_number(0.10), 0, 0.5, "", bind<&MemorySettings::safety_margin>()},
};

ModelSpec read_model(const json& value, const fs::path& base) {
    json object = resolve_part(value, "models", base, "/model");
    if (looks_like_hf_config(object)) return parse_hf_config(object, "/model");
    return parse_model(object, "/model");
}

std::string int_text(std::int64_t v) { return std::to_string(v); }

// FP8 needs FP8 tensor cores (Hopper, Ada and later); the block-scaled MX and NV formats need
// Blackwell's, which this datasheet marks by its FP4 rate.
void check_precision_support(const PrecisionRecipe& p, const GpuSpec& gpu, const std::string& path) {
    const std::string value = "\"" + std::string(p.name) + "\"";
    if (p.block_scaled() && gpu.fp4_tflops <= 0)
        throw InputError(path, value, gpu.name + " has no block-scaled (MX/NVFP4) tensor cores; they start with Blackwell");
    if (p.operands == Precision::Fp8 && gpu.fp8_tflops <= 0)
        throw InputError(path, value, gpu.name + " has no FP8 tensor cores");
}

// Chunks hold at least one layer each, except that with interleaving the first stage's first
// chunk may hold only the embedding and the last stage's last chunk only the loss.
std::int64_t fewest_stage_layers(std::int64_t vp, std::size_t stage, std::size_t stages) {
    if (vp <= 1) return 1;
    const bool end = stage == 0 || stage + 1 == stages;
    return end ? vp - 1 : vp;
}

// A step with more microbatches per replica than this is no training run anyone plans, and would
// keep the discrete-event simulator busy for minutes.
constexpr std::int64_t kMaxMicrobatches = 65536;

// The product of parallel degrees (each at least 1), or nothing once it passes `limit`: an
// absurd degree must be reported, not overflow.
std::optional<std::int64_t> degree_product(std::initializer_list<std::int64_t> degrees, std::int64_t limit) {
    std::int64_t product = 1;
    for (std::int64_t d : degrees) {
        if (d > limit / product) return std::nullopt;
        product *= d;
    }
    return product;
}
}  // namespace

std::span<const FieldDef> scenario_fields() { return kScenarioFields; }
std::span<const FieldDef> memory_fields() { return kMemoryFields; }

GpuSpec load_gpu(const std::string& name, const std::string& path) {
    return parse_gpu(load_preset("topologies/gpus", gpu_preset_name(name), path), path);
}

Scenario load_scenario(const fs::path& file) {
    json doc = load_json_file(file, "");
    return parse_scenario(doc, file.parent_path());
}

Scenario parse_scenario(const json& doc, const fs::path& base) {
    ObjectReader r(doc, "", kScenarioFields, kIgnoredKeys);
    Scenario s;
    s.base_dir = base;
    s.name = r.string("name").value_or("");
    if (s.name.empty() && doc.contains("id") && doc["id"].is_string()) s.name = doc["id"];

    if (!r.has("model")) throw InputError("/model", "", "is required");
    s.model = read_model(doc["model"], base);

    if (!r.has("cluster")) throw InputError("/cluster", "", "is required");
    json cluster = resolve_part(doc["cluster"], "topologies", base, "/cluster");
    s.cluster = parse_cluster(cluster, "/cluster", load_gpu);

    const json training = r.raw("training") ? doc["training"] : json();
    s.training = parse_training(training, doc, training.is_object() ? "/training" : "");
    if (!s.training.framework.empty()) {
        const auto known = preset_names("calibration/runtime");
        if (std::find(known.begin(), known.end(), s.training.framework) == known.end())
            throw InputError(training.is_object() && training.contains("framework") ? "/training/framework" : "/framework",
                             "\"" + s.training.framework + "\"",
                             "unknown framework generation (calibration/runtime/); " + suggestion_text(s.training.framework, known));
    }
    check_precision_support(s.training.precision, s.cluster.gpu,
                            training.is_object() && training.contains("precision") ? "/training/precision" : "/precision");
    if (training.is_object() && training.contains("seq_len")) s.seq_len_path = "/training/seq_len";
    if (training.is_object() && training.contains("global_batch"))
        s.global_batch_path = "/training/global_batch";
    if (s.model.position == PositionKind::Learned && s.model.max_positions == 0)
        s.model.max_positions = s.training.seq_len;

    if (const json* layout = r.raw("layout")) s.layout = parse_layout(*layout, "/layout");

    if (const json* memory = r.raw("memory")) read_fields(ObjectReader(*memory, "/memory", kMemoryFields), s.memory);
    check_fixed_knobs(s, s.layout);  // every rule of the fixed knobs, once, before anything runs
    for (const char* key : {"calibration", "reliability", "stragglers", "degraded_links"})
        set_scenario_part(s, key, r.raw(key) ? *r.raw(key) : json());
    return s;
}

void set_scenario_part(Scenario& s, std::string_view key, const json& value) {
    const std::string path = "/" + std::string(key);
    if (key == "calibration") s.calibration = value.is_null() ? json() : resolve_part(value, "calibration", s.base_dir, path);
    else if (key == "reliability") s.reliability = reliability::parse_reliability(value, path);
    else if (key == "stragglers") s.stragglers = parse_stragglers(value, path, s.cluster);
    else if (key == "degraded_links") s.degraded_links = parse_degraded_links(value, path, s.cluster);
    else throw std::logic_error("set_scenario_part: no part " + std::string(key));
}

Scenario with_gpus_and_batch(const Scenario& base, std::int64_t gpus, std::int64_t global_batch, const std::string& gpus_path) {
    Scenario s = base;
    check_gpu_count(s.cluster, gpus, gpus_path);
    s.cluster.gpus = gpus;
    s.training.global_batch = global_batch;
    check_faults_in_cluster(s.stragglers, s.degraded_links, s.cluster, gpus_path);
    return s;
}

namespace {
// What is known of a layout: the knobs it fixes (a complete Layout fixes all of them), with dp
// derived when tp, pp and cp are fixed and it is not. `complete`: the layer split is final (the
// default one when none is given); otherwise the planner may still choose an uneven split.
struct KnownLayout {
    LayoutSpec knobs;
    bool complete = false;
};

void check_degrees(const Scenario& s, const LayoutSpec& k) {
    const std::int64_t gpus = s.cluster.gpus;
    if (k.tp && k.pp && k.dp && k.cp) {
        const auto product = degree_product({*k.tp, *k.pp, *k.dp, *k.cp}, gpus);
        if (product != gpus)
            throw InputError("/layout",
                             "tp " + int_text(*k.tp) + " x pp " + int_text(*k.pp) + " x dp " + int_text(*k.dp) + " x cp " +
                                 int_text(*k.cp) + (product ? " = " + int_text(*product) : " > /cluster/gpus"),
                             "the degrees must multiply to /cluster/gpus (" + int_text(gpus) + ")");
        return;
    }
    // Some degree is open: the fixed ones must leave a whole number of GPUs for it.
    std::vector<std::string> names;
    std::int64_t product = 1;
    bool overflow = false;
    for (const auto& [name, degree] : {std::pair{"tp", k.tp}, std::pair{"pp", k.pp}, std::pair{"dp", k.dp},
                                       std::pair{"cp", k.cp}}) {
        if (!degree) continue;
        names.push_back(std::string(name) + " " + int_text(*degree));
        const auto next = degree_product({product, *degree}, gpus);
        if (!next) overflow = true;
        else product = *next;
    }
    if (names.empty()) return;
    if (overflow || gpus % product != 0) {
        std::string text;
        for (std::size_t i = 0; i < names.size(); ++i) text += (i ? " x " : "") + names[i];
        throw InputError("/layout", text, "must divide /cluster/gpus (" + int_text(gpus) + ")");
    }
}

void check_tensor_parallel(const Scenario& s, std::int64_t tp) {
    const ModelSpec& m = s.model;
    if (m.heads % tp != 0)
        throw InputError("/layout/tp", int_text(tp), "must divide the attention heads (" + int_text(m.heads) + ")");
    // Above the KV heads, Megatron-Core 0.16+ gathers each rank's QKV output and slices its heads
    // (which frameworks do is checked against the runtime profile: check_kv_heads_split).
    if (m.attention == AttentionKind::Standard && m.kv_heads % tp != 0 && tp % m.kv_heads != 0)
        throw InputError("/layout/tp", int_text(tp),
                         "must divide the key/value heads (" + int_text(m.kv_heads) + ") or be a multiple of them");
    if (m.ffn_hidden > 0 && m.ffn_hidden % tp != 0)
        throw InputError("/layout/tp", int_text(tp), "must divide ffn_hidden (" + int_text(m.ffn_hidden) + ")");
    if (const std::string rule = mixer_split_rule(m, tp, 1); !rule.empty()) throw InputError("/layout/tp", int_text(tp), rule);
}

// The schedule's own rules (src/schedule/): chunks per stage and what it needs of pp.
void check_schedule(const LayoutSpec& k) {
    if (k.vp && *k.vp > 1 && k.pp && *k.pp < 2)
        throw InputError("/layout/vp", int_text(*k.vp), "interleaving (vp > 1) needs pp >= 2");
    if (!k.schedule) return;
    const ScheduleDef& def = schedule_def(*k.schedule);
    const std::string value = "\"" + std::string(def.name) + "\"";
    if (k.vp) {
        if (def.chunks == 0 && *k.vp < 2) throw InputError("/layout/schedule", value, "needs vp >= 2 chunks per stage");
        if (def.placement == Placement::V && *k.vp != 2)
            throw InputError("/layout/vp", int_text(*k.vp), "the " + std::string(def.name) + " schedule holds exactly 2 chunks per stage (vp = 2)");
        if (def.chunks != 0 && def.placement != Placement::V && *k.vp > 1)
            throw InputError("/layout/vp", int_text(*k.vp),
                             "the " + std::string(def.name) + " schedule runs one chunk per stage: vp > 1 needs a schedule with chunks (schedule is " + value + ")");
    }
    if (def.even_pp && k.pp && *k.pp % 2 != 0)
        throw InputError("/layout/pp", int_text(*k.pp), "the " + std::string(def.name) + " schedule feeds both ends of the pipeline: pp must be even");
    if (k.pp_warmup && def.id != Schedule::Interleaved)
        throw InputError("/layout/pp_warmup", int_text(*k.pp_warmup), "a tunable warm-up is the interleaved schedule's (schedule is " + value + ")");
    if (k.pp_warmup && k.pp && k.vp) {
        const std::int64_t least = (*k.vp - 1) * *k.pp + *k.pp - 1, most = 2 * (*k.pp - 1) + (*k.vp - 1) * *k.pp;
        if (*k.pp_warmup < least || *k.pp_warmup > most)
            throw InputError("/layout/pp_warmup", int_text(*k.pp_warmup),
                             "must lie between (vp-1) pp + pp - 1 = " + int_text(least) + " (the first backward's inputs) and Megatron's 2(pp-1) + (vp-1) pp = " +
                                 int_text(most));
    }
}

void check_stage_split(const Scenario& s, const KnownLayout& known) {
    const LayoutSpec& k = known.knobs;
    const std::int64_t layers = s.model.layers;
    if (k.stage_layers) {
        const auto& split = *k.stage_layers;
        if (k.pp && static_cast<std::int64_t>(split.size()) != *k.pp)
            throw InputError("/layout/stage_layers", int_text(static_cast<std::int64_t>(split.size())) + " entries",
                             "must have one entry per pipeline stage (pp = " + int_text(*k.pp) + ")");
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < split.size(); ++i) {
            // Checked entry by entry, so that the sum of absurd entries cannot overflow.
            if (split[i] > layers)
                throw InputError("/layout/stage_layers/" + std::to_string(i), int_text(split[i]),
                                 "exceeds the model's layers (" + int_text(layers) + ")");
            const std::int64_t least = fewest_stage_layers(k.vp.value_or(1), i, split.size());
            if (split[i] < least)
                throw InputError("/layout/stage_layers/" + std::to_string(i), int_text(split[i]),
                                 "this stage needs at least " + int_text(least) + " layers: one per chunk (vp = " +
                                     int_text(k.vp.value_or(1)) + "), less the chunk that holds only the embedding or the loss");
            sum += split[i];
        }
        if (sum != layers)
            throw InputError("/layout/stage_layers", "sum " + int_text(sum),
                             "must add up to the model's layers (" + int_text(layers) + ")");
        return;
    }
    if (!k.pp) return;
    if (!known.complete) {
        // The planner may still split unevenly; only fewer layers than stages (x chunks) is hopeless.
        const std::int64_t chunks = k.vp.value_or(1);
        if (layers < *k.pp)
            throw InputError("/layout/pp", int_text(*k.pp),
                             "cannot split " + int_text(layers) + " layers over this many stages");
        // With interleaving, the first and last chunks may hold only the embedding or the loss.
        if (layers + (chunks > 1 ? 2 : 0) < *k.pp * chunks)
            throw InputError("/layout/vp", int_text(chunks),
                             "pp x vp (" + int_text(*k.pp * chunks) + ") chunks of at least one layer exceed the " +
                                 int_text(layers) + " layers");
        return;
    }
    const auto split = default_stage_split(layers, *k.pp);
    if (split.empty())
        throw InputError("/layout/pp", int_text(*k.pp),
                         "cannot split " + int_text(layers) +
                             " layers over this many stages (middle stages take ceil(layers/pp), "
                             "first and last share the rest); give /layout/stage_layers");
    for (std::size_t i = 0; i < split.size(); ++i)
        if (split[i] < fewest_stage_layers(k.vp.value_or(1), i, split.size()))
            throw InputError("/layout/vp", int_text(*k.vp),
                             "a stage of " + int_text(split[i]) + " layers cannot hold vp chunks of at least one layer");
}

// The split the layers will have, where it is known.
std::optional<std::vector<std::int64_t>> known_split(const Scenario& s, const KnownLayout& known) {
    if (known.knobs.stage_layers) return *known.knobs.stage_layers;
    if (known.complete && known.knobs.pp) return default_stage_split(s.model.layers, *known.knobs.pp);
    return std::nullopt;
}

void check_recompute(const Scenario& s, const KnownLayout& known) {
    const LayoutSpec& k = known.knobs;
    const ModelSpec& m = s.model;
    if (k.recompute_modules) {
        const std::uint8_t modules = *k.recompute_modules;
        if (k.recompute && *k.recompute != Recompute::Selective)
            throw InputError("/layout/recompute_modules", recompute_modules_text(modules),
                             "names what selective recompute re-runs: needs recompute \"selective\"");
        if ((modules & (kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts)) && !m.is_moe())
            throw InputError("/layout/recompute_modules", recompute_modules_text(modules), "moe modules need a MoE model (/model/moe)");
        if ((modules & kRecomputeMlaUpProj) && m.attention != AttentionKind::MultiLatent)
            throw InputError("/layout/recompute_modules", recompute_modules_text(modules),
                             "mla_up_proj needs multi-head latent attention (/model/attention)");
    }
    if (k.activation_offload_layers && *k.activation_offload_layers > 0)
        if (const auto split = known_split(s, known))
            for (std::size_t i = 0; i < split->size(); ++i)
                if (*k.activation_offload_layers > (*split)[i])
                    throw InputError("/layout/activation_offload_layers", int_text(*k.activation_offload_layers),
                                     "exceeds the layers of pipeline stage " + std::to_string(i) + " (" + int_text((*split)[i]) + ")");
}

void check_batch(const Scenario& s, const LayoutSpec& k) {
    const std::int64_t gb = s.training.global_batch;
    if (!k.dp) return;
    const std::int64_t dp = *k.dp;
    if (!k.microbatch) {
        // Whatever microbatch is chosen, each replica needs a whole number of sequences.
        if (gb % dp != 0)
            throw InputError(s.global_batch_path, int_text(gb),
                             "must be a multiple of dp x microbatch (" + int_text(dp) + " x any microbatch)");
        return;
    }
    const std::int64_t mb = *k.microbatch;
    if (mb > gb / dp || gb % (dp * mb) != 0)
        throw InputError(s.global_batch_path, int_text(gb),
                         "must be a multiple of dp x microbatch (" + int_text(dp) + " x " + int_text(mb) + ")");
    const std::int64_t microbatches = gb / (dp * mb);
    if (microbatches > kMaxMicrobatches)
        throw InputError(s.global_batch_path, int_text(gb),
                         "gives " + int_text(microbatches) + " microbatches per data-parallel replica (global_batch / (dp x microbatch)); "
                         "the simulator runs each one and takes at most " + int_text(kMaxMicrobatches) + ": raise dp or microbatch");
    const bool interleaved = (k.vp && *k.vp > 1 && !(k.schedule && !schedule_def(*k.schedule).groups_of_pp)) ||
                             (k.schedule && schedule_def(*k.schedule).groups_of_pp);
    if (interleaved && k.pp && microbatches % *k.pp != 0)
        throw InputError("/layout/vp", int_text(k.vp.value_or(0)),
                         "the interleaved schedule needs the microbatches per step (" + int_text(microbatches) +
                             ") to be a multiple of pp (" + int_text(*k.pp) + "), as Megatron-LM requires");
    if (k.schedule && k.pp && microbatches < schedule_def(*k.schedule).min_microbatches_per_stage * *k.pp)
        throw InputError(s.global_batch_path, int_text(gb),
                         "the " + std::string(schedule_def(*k.schedule).name) + " schedule's warm-up needs at least " +
                             int_text(schedule_def(*k.schedule).min_microbatches_per_stage) + " x pp (" +
                             int_text(schedule_def(*k.schedule).min_microbatches_per_stage * *k.pp) + ") microbatches per step, not " +
                             int_text(microbatches));
    if (k.schedule && schedule_def(*k.schedule).placement == Placement::Dual && microbatches % 2 != 0)
        throw InputError(s.global_batch_path, int_text(gb),
                         "the dualpipe schedule feeds half the microbatches from each end: the microbatches per step (" + int_text(microbatches) +
                             ") must be even");
}

// A stated gradient accumulation is what global_batch / (dp x microbatch) gives: with the microbatch
// fixed it must agree (a source whose GBS, MBS, DP and GA contradict each other states no layout
// that can run); with it open it must leave a whole microbatch, which it then fixes.
void check_grad_accumulation(const Scenario& s, std::int64_t dp, std::optional<std::int64_t> microbatch, std::int64_t grad_accumulation) {
    if (const std::string rule = grad_accumulation_rule(s.training.global_batch, dp, microbatch, grad_accumulation); !rule.empty())
        throw InputError("/layout/grad_accumulation", int_text(grad_accumulation), rule);
}

void check_experts(const Scenario& s, const LayoutSpec& k) {
    const ModelSpec& m = s.model;
    const std::int64_t ep = k.ep.value_or(1);
    if (ep > 1 && !m.is_moe())
        throw InputError("/layout/ep", int_text(ep), "expert parallelism needs a MoE model (/model/moe)");
    if (m.is_moe() && m.moe.experts % ep != 0)
        throw InputError("/layout/ep", int_text(ep), "must divide the experts (" + int_text(m.moe.experts) + ")");
    if (k.moe_dispatcher && !m.is_moe())
        throw InputError("/layout/moe_dispatcher", std::string(name_of(*k.moe_dispatcher)), "dispatches MoE tokens: needs a MoE model (/model/moe)");
    // transformer_config.py (d98e8a64): "Flex token dispatcher with deepep backend does not
    // support moe_pad_expert_input_to_capacity".
    if (k.moe_dispatcher == MoeDispatcher::DeepEP && m.moe.pad_to_capacity)
        throw InputError("/layout/moe_dispatcher", "deepep", "does not pad experts to capacity (/model/moe/pad_to_capacity): use alltoall or hybridep");
    const std::int64_t etp = k.expert_tp.value_or(1);  // an open expert TP can always be 1
    if (etp > 1 && !m.is_moe())
        throw InputError("/layout/expert_tp", int_text(etp), "expert tensor parallelism needs a MoE model (/model/moe)");
    if (m.is_moe() && m.moe.expert_ffn_hidden % etp != 0)
        throw InputError("/layout/expert_tp", int_text(etp), "must divide expert_ffn_hidden (" + int_text(m.moe.expert_ffn_hidden) + ")");
    if (k.tp && k.cp && k.dp) {
        const std::int64_t folded = *k.tp * *k.cp * *k.dp;
        if (folded % (ep * etp) != 0)
            throw InputError(etp > 1 ? "/layout/expert_tp" : "/layout/ep", "ep " + int_text(ep) + " x expert_tp " + int_text(etp),
                             "must divide tp x cp x dp (" + int_text(folded) +
                                 "): expert layers fold a stage's tp x cp x dp ranks into expert_tp x ep x expert-data-parallel groups");
    }
}

// HSDP's shard groups split the data-parallel ranks evenly, and shard only what ZeRO shards; the
// expert-data-parallel ranks split into the same number of replicas (Megatron-Core asserts
// expert_data_parallel_size % num_distributed_optimizer_instances == 0, parallel_state.py).
void check_shard_group(const Scenario& s, const LayoutSpec& k) {
    if (!k.shard_group) return;
    const std::int64_t shard = *k.shard_group;
    const std::string path = "/layout/shard_group";
    if (!k.dp) return;
    if (*k.dp % shard != 0)
        throw InputError(path, int_text(shard), "must divide dp (" + int_text(*k.dp) + "): the shard groups split the data-parallel ranks evenly");
    if (shard == *k.dp) return;
    if (k.zero_stage && *k.zero_stage == 0)
        throw InputError(path, int_text(shard), "below dp (" + int_text(*k.dp) + ") needs ZeRO stage 1-3 (/layout/zero_stage): stage 0 shards nothing");
    const std::int64_t replicas = *k.dp / shard;
    if (s.model.is_moe() && k.tp && k.cp) {
        const std::int64_t folded = *k.tp * *k.cp * *k.dp;
        const std::int64_t edp = folded / (k.ep.value_or(1) * k.expert_tp.value_or(1));
        if (edp % replicas != 0)
            throw InputError(path, int_text(shard),
                             "leaves dp / shard_group = " + int_text(replicas) + " replicas, which must divide the expert-data-parallel ranks (" +
                                 int_text(edp) + ")");
    }
}

}  // namespace

std::string_view ep_overlap_rule(const ModelSpec& model, std::optional<MoeDispatcher> dispatcher, std::optional<std::int64_t> ep, std::optional<std::int64_t> pp,
                            std::optional<std::int64_t> vp, std::optional<Recompute> recompute, std::optional<std::uint8_t> modules) {
    if (!model.is_moe()) return "overlaps the MoE all-to-all: needs a MoE model (/model/moe)";
    // The merged forward-backward schedule is built by GPTModel.build_schedule_plan, which
    // MambaModel lacks (megatron/core/models/mamba/mamba_model.py, core_v0.16.0 and main d98e8a64).
    if (model.is_hybrid()) return "is not implemented for hybrid models: Megatron-Core's MambaModel has no combined 1F1B schedule plan";
    // megatron/core/transformer/transformer_config.py (d98e8a64): "overlap_moe_expert_parallel_comm
    // is supported with alltoall/flex token dispatcher".
    if (dispatcher == MoeDispatcher::AllGather) return "needs an all-to-all dispatcher (layout.moe_dispatcher alltoall, deepep or hybridep)";
    if (ep && *ep < 2) return "needs expert parallelism (ep > 1)";
    if (pp && *pp > 1 && vp && *vp == 1) return "with pipeline parallelism needs the interleaved schedule (vp > 1)";
    if (recompute && *recompute == Recompute::Full) return "excludes full recompute";
    if (modules && (*modules & kRecomputeMoe)) return "excludes recomputing the whole MoE block (recompute_modules moe)";
    return "";
}

std::string_view offload_modules_rule(const ModelSpec& model, std::uint8_t offload, std::optional<std::int64_t> offload_layers,
                                      std::optional<Recompute> recompute, std::optional<std::uint8_t> recompute_modules) {
    if (offload == 0) return "";
    if ((offload & kOffloadAttnProj) && !(offload & kOffloadCoreAttn))
        return "offloads attn_proj only with core_attn: its input is core_attn's output, which core_attn's backward needs";
    if ((offload & (kOffloadExpertFc1 | kOffloadMoeAct)) && !model.is_moe()) return "expert_fc1 and moe_act need a MoE model (/model/moe)";
    if (offload_layers && *offload_layers > 0)
        return "excludes activation_offload_layers: Megatron-Core's fine-grained offload cannot run with its CPU offloading of layers";
    if (recompute && *recompute == Recompute::Full) return "excludes full recompute: a layer recomputed whole keeps only its input";
    if (recompute == Recompute::Selective && recompute_modules && (*recompute_modules & kRecomputeMoe) &&
        (offload & (kOffloadExpertFc1 | kOffloadMoeAct)))
        return "cannot offload expert_fc1 or moe_act while the whole MoE block is recomputed (recompute_modules moe)";
    return "";
}

std::string_view async_tp_rule(std::optional<std::int64_t> tp, std::optional<bool> sequence_parallel) {
    // torch/_inductor/fx_passes/micro_pipeline_tp.py fuses all-gather -> matmul and matmul ->
    // reduce-scatter: the collectives sequence parallelism puts around a TP block.
    if (tp && *tp < 2) return "splits the tensor-parallel collectives: needs tp > 1";
    if (sequence_parallel && !*sequence_parallel) return "pipelines sequence parallelism's all-gathers and reduce-scatters: needs sequence_parallel";
    return "";
}

namespace {
void check_async_tp(const LayoutSpec& k) {
    if (!k.async_tp || !*k.async_tp) return;
    const std::string_view rule = async_tp_rule(k.tp, k.sequence_parallel);
    if (!rule.empty()) throw InputError("/layout/async_tp", "true", std::string(rule));
}

void check_offload_modules(const Scenario& s, const LayoutSpec& k) {
    // Megatron-Core applies its fraction to the module offload's groups: below 1 it needs them (1,
    // the default, changes nothing), and a fraction of 0 moves nothing (say so by naming no modules).
    if (k.activation_offload_fraction) {
        if (*k.activation_offload_fraction <= 0)
            throw InputError("/layout/activation_offload_fraction", fmt::format("{}", *k.activation_offload_fraction),
                             "must be above 0 (to offload nothing, name no activation_offload_modules)");
        if (*k.activation_offload_fraction < 1 && (!k.activation_offload_modules || *k.activation_offload_modules == 0))
            throw InputError("/layout/activation_offload_fraction", fmt::format("{}", *k.activation_offload_fraction),
                             "needs layout.activation_offload_modules: Megatron-Core applies the fraction to the module offload's groups");
    }
    if (!k.activation_offload_modules || *k.activation_offload_modules == 0) return;
    const std::string_view rule =
        offload_modules_rule(s.model, *k.activation_offload_modules, k.activation_offload_layers, k.recompute, k.recompute_modules);
    if (!rule.empty()) throw InputError("/layout/activation_offload_modules", offload_modules_text(*k.activation_offload_modules), std::string(rule));
}

void check_ep_overlap(const Scenario& s, const LayoutSpec& k) {
    if (!k.ep_a2a_overlap || !*k.ep_a2a_overlap) return;
    const std::string_view rule = ep_overlap_rule(s.model, k.moe_dispatcher, k.ep, k.pp, k.vp, k.recompute, k.recompute_modules);
    if (!rule.empty()) throw InputError("/layout/ep_a2a_overlap", "true", std::string(rule));
}

// Every rule, each applied as far as the knobs it involves are known: a rule whose knobs are all
// fixed is the scenario's error; a rule that involves an open knob constrains the search instead
// (the planner enumerates only layouts that pass it).
void check_layout_rules(const Scenario& s, const KnownLayout& known) {
    const LayoutSpec& k = known.knobs;
    check_degrees(s, k);
    if (k.tp) check_tensor_parallel(s, *k.tp);
    check_schedule(k);
    check_stage_split(s, known);
    check_batch(s, k);
    if (k.grad_accumulation && k.dp) check_grad_accumulation(s, *k.dp, k.microbatch, *k.grad_accumulation);
    check_experts(s, k);
    check_shard_group(s, k);
    check_recompute(s, known);
    check_offload_modules(s, k);
    check_ep_overlap(s, k);
    check_async_tp(k);
    if (k.tp && k.cp)
        if (const std::string rule = mixer_split_rule(s.model, *k.tp, *k.cp); !rule.empty()) throw InputError("/layout/cp", int_text(*k.cp), rule);
    if (k.cp && *k.cp > 1 && s.training.seq_len % (2 * *k.cp) != 0)
        throw InputError("/layout/cp", int_text(*k.cp),
                         "seq_len (" + int_text(s.training.seq_len) +
                             ") must divide into 2 x cp chunks for load-balanced causal attention");
}

// The knobs a layout leaves to their defaults, each with the default it took (`l`, resolved for
// the scenario's framework), read from `l` rather than stated again. The microbatch is not open
// where grad_accumulation fixes it (global_batch / (dp x grad_accumulation)).
std::vector<std::pair<std::string, std::string>> open_knobs(const Scenario& s, const LayoutSpec& spec, const Layout& l) {
    std::vector<std::pair<std::string, std::string>> open;
    if (!spec.tp) open.emplace_back("tp", "tp " + int_text(l.tp));
    if (!spec.pp) open.emplace_back("pp", "pp " + int_text(l.pp));
    if (!spec.dp) open.emplace_back("dp", "dp the rest of the GPUs");
    if (!spec.cp) open.emplace_back("cp", "cp " + int_text(l.cp));
    if (!spec.microbatch && !spec.grad_accumulation) open.emplace_back("microbatch", "microbatch " + int_text(l.microbatch));
    if (!spec.zero_stage)
        open.emplace_back("zero_stage", "zero_stage " + int_text(l.zero_stage) + ", " + runtime_name(s.training.framework) + "'s");
    return open;
}
}  // namespace

void check_fixed_knobs(const Scenario& s, const LayoutSpec& spec) {
    KnownLayout known{spec, false};
    LayoutSpec& k = known.knobs;
    if (!k.dp && k.tp && k.pp && k.cp) {
        const auto model_parallel = degree_product({*k.tp, *k.pp, *k.cp}, s.cluster.gpus);
        if (model_parallel && s.cluster.gpus % *model_parallel == 0) k.dp = s.cluster.gpus / *model_parallel;
    }
    check_layout_rules(s, known);
}

Layout resolve_layout(const Scenario& s, const LayoutSpec& spec) {
    LayoutSpec d = spec;
    fill_unset(layout_fields(), d);  // the table's typed defaults; the rules below
    Layout l;
    l.tp = d.tp.value();
    l.pp = d.pp.value();
    l.cp = d.cp.value();
    l.ep = d.ep.value();
    l.vp = d.vp.value();
    if (spec.dp) {
        l.dp = *spec.dp;
    } else {
        const auto model_parallel = degree_product({l.tp, l.pp, l.cp}, s.cluster.gpus);
        if (!model_parallel || s.cluster.gpus % *model_parallel != 0)
            throw InputError("/layout", "tp " + int_text(l.tp) + " x pp " + int_text(l.pp) +
                                            " x cp " + int_text(l.cp),
                             "must divide /cluster/gpus (" + int_text(s.cluster.gpus) + ")");
        l.dp = s.cluster.gpus / *model_parallel;
    }
    // Megatron's default expert TP is the dense TP (--expert-tensor-parallel-size unset); where
    // that cannot fold (ep x tp does not divide tp x cp x dp) only 1 can.
    l.etp = spec.expert_tp.value_or(s.model.is_moe() && (l.tp * l.cp * l.dp) % (l.ep * l.tp) == 0 ? l.tp : 1);
    l.microbatch = d.microbatch.value();
    // The runtime preset is read only where the layout names no stage (value_or would read it always).
    l.zero_stage = static_cast<int>(spec.zero_stage ? *spec.zero_stage : load_runtime_profile(s.training.framework, "").zero_stage);
    // The rule "dp" of /layout/shard_group: one group of every data-parallel rank is plain ZeRO (0).
    if (spec.shard_group && *spec.shard_group != l.dp) l.shard_group = *spec.shard_group;
    l.sequence_parallel = spec.sequence_parallel.value_or(l.tp > 1);
    l.optimizer_offload = d.optimizer_offload.value();
    l.recompute = d.recompute.value();
    if (spec.recompute_modules) l.recompute_modules = *spec.recompute_modules;  // else the era's (active_recompute_modules)
    l.activation_offload_layers = d.activation_offload_layers.value();
    l.offload_modules = spec.activation_offload_modules.value_or(0);
    l.offload_fraction = spec.activation_offload_fraction.value_or(1.0);
    l.ep_a2a_overlap = d.ep_a2a_overlap.value();
    l.async_tp = d.async_tp.value();
    l.moe_dispatcher = spec.moe_dispatcher;
    l.schedule = spec.schedule.value_or(l.vp > 1 ? Schedule::Interleaved : Schedule::OneFOneB);
    if (spec.pp_warmup) l.pp_warmup = *spec.pp_warmup;  // else Megatron's (the schedule's rule)
    if (spec.rank_order) l.rank_order = *spec.rank_order;
    if (spec.stage_layers) l.stage_layers = *spec.stage_layers;
    try {
        if (spec.grad_accumulation) {
            check_grad_accumulation(s, l.dp, spec.microbatch, *spec.grad_accumulation);
            l.microbatch = *accumulation_microbatch(s.training.global_batch, l.dp, *spec.grad_accumulation);
        }
        validate_layout(s, l);
    } catch (const InputError& e) {
        // The scenario itself is valid (its fixed knobs passed at load); the defaults of its open
        // knobs are not a layout that runs. Say so, and where a layout comes from instead.
        const auto open = open_knobs(s, spec, l);
        if (open.empty()) throw;
        std::string names, defaults;
        for (std::size_t i = 0; i < open.size(); ++i) {
            names += (i ? ", " : "") + open[i].first;
            defaults += (i ? ", " : "") + open[i].second;
        }
        throw InputError(e.path(), e.value(),
                         e.rule() + "; /layout leaves " + names + " open and " + (open.size() > 1 ? "their defaults (" : "its default (") +
                             defaults + (open.size() > 1 ? ") do not run: fix them" : ") does not run: fix it") +
                             " in /layout or let `sextant plan` choose");
    }
    if (l.stage_layers.empty()) l.stage_layers = default_stage_split(s.model.layers, l.pp);
    return l;
}

void validate_layout(const Scenario& s, const Layout& l) { check_layout_rules(s, {fixed_spec(l), true}); }

}  // namespace sextant
