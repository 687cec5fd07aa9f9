#include "spec/scenario.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "spec/presets.hpp"

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
    {"precision", FieldType::String, "compute precision (published-runs form)", "", "bf16",
     -1e300, 1e300, "bf16|fp16|fp8"},
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
    {"context_gib", FieldType::Number, "CUDA context, library workspaces and NCCL buffers", "GiB",
     "1.5", 0},
    {"fragmentation", FieldType::Number, "allocator fragmentation, fraction of tensor bytes", "",
     "0.05", 0, 1},
    {"safety_margin", FieldType::Number, "HBM to keep free, fraction: the report draws the line; fits uses all of HBM", "",
     "0.05", 0, 0.5},
};

ModelSpec read_model(const json& value, const fs::path& base) {
    json object = resolve_part(value, "models", base, "/model");
    if (looks_like_hf_config(object)) return parse_hf_config(object, "/model");
    return parse_model(object, "/model");
}

std::string int_text(std::int64_t v) { return std::to_string(v); }

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
    return parse_gpu(load_preset("topologies/gpus", name, path), path);
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
    if (training.is_object() && training.contains("seq_len")) s.seq_len_path = "/training/seq_len";
    if (training.is_object() && training.contains("global_batch"))
        s.global_batch_path = "/training/global_batch";
    if (s.model.position == PositionKind::Learned && s.model.max_positions == 0)
        s.model.max_positions = s.training.seq_len;

    if (const json* layout = r.raw("layout")) s.layout = parse_layout(*layout, "/layout");

    if (const json* memory = r.raw("memory")) {
        ObjectReader mr(*memory, "/memory", kMemoryFields);
        s.memory.context_gib = mr.number("context_gib").value_or(s.memory.context_gib);
        s.memory.fragmentation = mr.number("fragmentation").value_or(s.memory.fragmentation);
        s.memory.safety_margin = mr.number("safety_margin").value_or(s.memory.safety_margin);
    }
    for (const char* key : {"calibration", "reliability", "stragglers", "degraded_links"})
        if (const json* v = r.raw(key)) s.extensions[key] = *v;

    resolve_layout(s, s.layout);  // every rule, once, before anything runs
    return s;
}

Layout resolve_layout(const Scenario& s, const LayoutSpec& spec) {
    Layout l;
    l.tp = spec.tp.value_or(1);
    l.pp = spec.pp.value_or(1);
    l.cp = spec.cp.value_or(1);
    l.ep = spec.ep.value_or(1);
    l.vp = spec.vp.value_or(1);
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
    l.microbatch = spec.microbatch.value_or(1);
    l.zero_stage = static_cast<int>(spec.zero_stage.value_or(0));
    l.sequence_parallel = spec.sequence_parallel.value_or(l.tp > 1);
    l.optimizer_offload = spec.optimizer_offload.value_or(false);
    l.recompute = spec.recompute.value_or(Recompute::None);
    l.schedule = spec.schedule.value_or(l.vp > 1 ? Schedule::Interleaved : Schedule::OneFOneB);
    if (spec.rank_order) l.rank_order = *spec.rank_order;
    if (spec.stage_layers) l.stage_layers = *spec.stage_layers;
    validate_layout(s, l);
    if (l.stage_layers.empty()) l.stage_layers = default_stage_split(s.model.layers, l.pp);
    return l;
}

void validate_layout(const Scenario& s, const Layout& l) {
    const ModelSpec& m = s.model;
    const auto gpus = degree_product({l.tp, l.pp, l.dp, l.cp}, s.cluster.gpus);
    if (gpus != s.cluster.gpus)
        throw InputError("/layout",
                         "tp " + int_text(l.tp) + " x pp " + int_text(l.pp) + " x dp " + int_text(l.dp) + " x cp " +
                             int_text(l.cp) + (gpus ? " = " + int_text(*gpus) : " > /cluster/gpus"),
                         "the degrees must multiply to /cluster/gpus (" + int_text(s.cluster.gpus) + ")");
    if (m.heads % l.tp != 0)
        throw InputError("/layout/tp", int_text(l.tp),
                         "must divide the attention heads (" + int_text(m.heads) + ")");
    if (m.attention == AttentionKind::Standard && m.kv_heads % l.tp != 0)
        throw InputError("/layout/tp", int_text(l.tp),
                         "must divide the key/value heads (" + int_text(m.kv_heads) +
                             "); Megatron does not replicate KV heads across TP ranks");
    if (m.ffn_hidden > 0 && m.ffn_hidden % l.tp != 0)
        throw InputError("/layout/tp", int_text(l.tp),
                         "must divide ffn_hidden (" + int_text(m.ffn_hidden) + ")");
    if (l.vp > 1 && l.pp < 2)
        throw InputError("/layout/vp", int_text(l.vp), "interleaving (vp > 1) needs pp >= 2");
    if (l.schedule == Schedule::Interleaved && l.vp < 2)
        throw InputError("/layout/schedule", "\"interleaved\"", "needs vp >= 2 chunks per stage");
    if (l.schedule != Schedule::Interleaved && l.vp > 1)
        throw InputError("/layout/vp", int_text(l.vp),
                         "vp > 1 needs the interleaved schedule (schedule is \"" +
                             schedule_name(l.schedule) + "\")");
    if (!l.stage_layers.empty()) {
        if (static_cast<std::int64_t>(l.stage_layers.size()) != l.pp)
            throw InputError("/layout/stage_layers", int_text(static_cast<std::int64_t>(l.stage_layers.size())) + " entries",
                             "must have one entry per pipeline stage (pp = " + int_text(l.pp) + ")");
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < l.stage_layers.size(); ++i) {
            sum += l.stage_layers[i];
            if (l.stage_layers[i] < l.vp)
                throw InputError("/layout/stage_layers/" + std::to_string(i), int_text(l.stage_layers[i]),
                                 "each stage needs at least vp (" + int_text(l.vp) + ") layers");
        }
        if (sum != m.layers)
            throw InputError("/layout/stage_layers", "sum " + int_text(sum),
                             "must add up to the model's layers (" + int_text(m.layers) + ")");
    } else {
        auto split = default_stage_split(m.layers, l.pp);
        if (split.empty())
            throw InputError("/layout/pp", int_text(l.pp),
                             "cannot split " + int_text(m.layers) +
                                 " layers over this many stages (middle stages take ceil(layers/pp), "
                                 "first and last share the rest); give /layout/stage_layers");
        for (auto n : split)
            if (n < l.vp)
                throw InputError("/layout/vp", int_text(l.vp),
                                 "a stage of " + int_text(n) + " layers cannot hold vp chunks of at least one layer");
    }
    const std::int64_t gb = s.training.global_batch;
    if (l.microbatch > gb / l.dp || gb % (l.dp * l.microbatch) != 0)
        throw InputError(s.global_batch_path, int_text(gb),
                         "must be a multiple of dp x microbatch (" + int_text(l.dp) + " x " + int_text(l.microbatch) + ")");
    if (l.microbatches(gb) > kMaxMicrobatches)
        throw InputError(s.global_batch_path, int_text(gb),
                         "gives " + int_text(l.microbatches(gb)) + " microbatches per data-parallel replica (global_batch / (dp x microbatch)); "
                         "the simulator runs each one and takes at most " + int_text(kMaxMicrobatches) + ": raise dp or microbatch");
    if (l.schedule == Schedule::Interleaved && l.microbatches(gb) % l.pp != 0)
        throw InputError("/layout/vp", int_text(l.vp),
                         "the interleaved schedule needs the microbatches per step (" + int_text(l.microbatches(gb)) +
                             ") to be a multiple of pp (" + int_text(l.pp) + "), as Megatron-LM requires");
    if (l.ep > 1 && !m.is_moe())
        throw InputError("/layout/ep", int_text(l.ep), "expert parallelism needs a MoE model (/model/moe)");
    if (m.is_moe() && m.moe.experts % l.ep != 0)
        throw InputError("/layout/ep", int_text(l.ep),
                         "must divide the experts (" + int_text(m.moe.experts) + ")");
    if (l.dp % l.ep != 0)
        throw InputError("/layout/ep", int_text(l.ep),
                         "must divide dp (" + int_text(l.dp) + "): expert-parallel groups are carved out of the data-parallel ranks (one expert group per CP rank)");
    if (l.cp > 1 && s.training.seq_len % (2 * l.cp) != 0)
        throw InputError("/layout/cp", int_text(l.cp),
                         "seq_len (" + int_text(s.training.seq_len) +
                             ") must divide into 2 x cp chunks for load-balanced causal attention");
    if (s.training.precision == Precision::Fp8 && s.cluster.gpu.fp8_tflops <= 0)
        throw InputError("/precision", "\"fp8\"", s.cluster.gpu.name + " has no FP8 tensor cores");
}

}  // namespace sextant
