// The exporters against the frameworks' own argument checks: every flag or key Sextant emits, and
// every cross-flag rule, is held against what a named commit of Megatron-LM, torchtitan (current
// and the last TOML release) and DeepSpeed accept, transcribed from their sources into
// tests/data/ (each entry names the file and check it comes from). Every preset scenario is
// exported with its own layout and with the best layout a search limited to that framework's
// features finds.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>

#include "spec/runtime_profile.hpp"
#include "planner/emit.hpp"
#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "sim/stage_plan.hpp"
#include "sim/step_context.hpp"
#include "spec/precision_recipe.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
json load_data(const std::string& name) {
    return load_json_file(std::filesystem::path(SEXTANT_SOURCE_DIR) / "tests" / "data" / name, "");
}

// What a rule sees: the emitted values by flag or key, the framework's defaults for the rest, and
// the launch ($world GPUs, $dp data-parallel ranks).
struct Values {
    std::map<std::string, json> given;
    json defaults = json::object();
    std::map<std::string, std::int64_t> launch;

    bool has(const std::string& name) const { return given.count(name) > 0; }
    std::optional<json> get(const std::string& name) const {
        if (auto it = given.find(name); it != given.end()) return it->second;
        if (defaults.contains(name) && defaults[name].contains("default")) return defaults[name]["default"];
        return std::nullopt;
    }
    std::int64_t number(const json& term) const {
        if (term.is_number_integer()) return term.get<std::int64_t>();
        const std::string name = term.get<std::string>();
        if (name.starts_with("$")) return launch.at(name);
        const auto v = get(name);
        REQUIRE_MESSAGE(v, "no value or default for " << name);
        return v->is_string() ? std::stoll(v->get<std::string>()) : v->get<std::int64_t>();
    }
    std::int64_t product(const json& terms) const {
        if (!terms.is_array()) return number(terms);
        std::int64_t p = 1;
        for (const auto& t : terms) p *= number(t);
        return p;
    }
};

bool equal_value(const json& a, const json& b) {
    const auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
    return text(a) == text(b);
}

// The generic rule kinds of tests/data/*.json (conditions: if, when_present, if_value,
// if_contains (a word of a list value), when_gt, when_equal; demands: requires, requires_any,
// forbids, equals, value_in, at_most_one, multiple_of, multiple_or_divisor, at_least, less_than,
// min_value, product_equals); "check" rules name a structural check the caller runs.
void check_rule(const json& rule, const Values& v) {
    CAPTURE(rule["id"].get<std::string>());
    if (rule.contains("if") && !v.has(rule["if"])) return;
    if (rule.contains("when_present") && !v.has(rule["when_present"])) return;
    if (rule.contains("if_value"))
        for (const auto& [name, value] : rule["if_value"].items())
            if (!v.get(name) || !equal_value(*v.get(name), value)) return;
    if (rule.contains("if_contains"))
        for (const auto& [name, word] : rule["if_contains"].items()) {
            const auto got = v.get(name);
            if (!got || !got->is_string()) return;
            std::istringstream words(got->get<std::string>());
            std::string w;
            bool found = false;
            while (words >> w) found = found || w == word.get<std::string>();
            if (!found) return;
        }
    if (rule.contains("when_gt"))
        for (const auto& [name, value] : rule["when_gt"].items())
            if (v.number(name) <= value.get<std::int64_t>()) return;
    if (rule.contains("when_equal"))
        for (const auto& [name, value] : rule["when_equal"].items())
            if (v.number(name) != value.get<std::int64_t>()) return;
    if (rule.contains("requires"))
        for (const auto& name : rule["requires"]) CHECK_MESSAGE(v.has(name), "missing " << name);
    if (rule.contains("requires_any")) {
        bool any = false;
        for (const auto& name : rule["requires_any"]) any = any || v.has(name);
        CHECK(any);
    }
    if (rule.contains("forbids"))
        for (const auto& name : rule["forbids"]) CHECK_MESSAGE(!v.has(name), "must not set " << name);
    if (rule.contains("equals"))
        for (const auto& [name, value] : rule["equals"].items()) {
            const auto got = v.get(name);
            REQUIRE(got);
            CHECK_MESSAGE(equal_value(*got, value), name << " = " << got->dump());
        }
    if (rule.contains("value_in"))
        for (const auto& [name, values] : rule["value_in"].items()) {
            const auto got = v.get(name);
            REQUIRE(got);
            CHECK(std::any_of(values.begin(), values.end(), [&](const json& x) { return equal_value(*got, x); }));
        }
    if (rule.contains("at_most_one")) {
        int n = 0;
        for (const auto& name : rule["at_most_one"]) n += v.has(name) ? 1 : 0;
        CHECK(n <= 1);
    }
    if (rule.contains("multiple_of")) {
        const std::int64_t a = v.product(rule["multiple_of"][0]), b = v.product(rule["multiple_of"][1]);
        CHECK_MESSAGE(b > 0, "divisor 0");
        if (b > 0) CHECK_MESSAGE(a % b == 0, a << " is not a multiple of " << b);
    }
    if (rule.contains("multiple_or_divisor")) {
        const std::int64_t a = v.product(rule["multiple_or_divisor"][0]), b = v.product(rule["multiple_or_divisor"][1]);
        CHECK_MESSAGE((a > 0 && b > 0 && (a % b == 0 || b % a == 0)), a << " is neither a multiple nor a divisor of " << b);
    }
    if (rule.contains("at_least")) CHECK(v.number(rule["at_least"][0]) >= v.number(rule["at_least"][1]));
    if (rule.contains("less_than")) CHECK(v.number(rule["less_than"][0]) < v.number(rule["less_than"][1]));
    if (rule.contains("min_value"))
        for (const auto& [name, least] : rule["min_value"].items()) CHECK(v.number(name) >= least.get<std::int64_t>());
    if (rule.contains("product_equals")) CHECK(v.product(rule["product_equals"][0]) == v.number(rule["product_equals"][1]));
}

// Every value has the kind the parser takes and one of its choices.
void check_kind(const std::string& name, const json& value, const json& spec) {
    CAPTURE(name);
    const std::string kind = spec["kind"];
    if (kind == "switch") {
        CHECK(value.is_null());
        return;
    }
    if (kind == "int") {
        if (value.is_string()) {
            std::size_t used = 0;
            (void)std::stoll(value.get<std::string>(), &used);
            CHECK(used == value.get<std::string>().size());
        } else {
            CHECK(value.is_number_integer());
        }
    }
    if (kind == "float") CHECK_NOTHROW((void)std::stod(value.get<std::string>()));
    if (kind == "bool") CHECK(value.is_boolean());
    if (kind == "int_tuple") {
        // arguments.py tuple_type: "(a,b)" or "a,b", integers.
        std::string text = value.get<std::string>();
        if (text.size() >= 2 && text.front() == '(' && text.back() == ')') text = text.substr(1, text.size() - 2);
        std::istringstream parts(text);
        std::string part;
        int n = 0;
        while (std::getline(parts, part, ',')) {
            std::size_t used = 0;
            (void)std::stoll(part, &used);
            CHECK(used == part.size());
            ++n;
        }
        CHECK(n >= 1);
    }
    if (kind == "str_list") {
        // nargs='+': one shell word per item, each one of the choices.
        std::istringstream words(value.get<std::string>());
        std::string w;
        int n = 0;
        for (; words >> w; ++n)
            if (spec.contains("choices")) CHECK_MESSAGE(std::find(spec["choices"].begin(), spec["choices"].end(), w) != spec["choices"].end(), w);
        CHECK(n >= 1);
        return;
    }
    if (kind == "list_of_lists") {
        REQUIRE(value.is_array());
        for (const auto& part : value) CHECK(part.is_array());
    }
    if (spec.contains("choices")) {
        const auto& choices = spec["choices"];
        const auto in = [&](const json& x) {
            return std::any_of(choices.begin(), choices.end(), [&](const json& c) { return equal_value(x, c); });
        };
        if (value.is_array()) {
            for (const auto& x : value) CHECK_MESSAGE(in(x), x.dump());
        } else {
            CHECK_MESSAGE(in(value), value.dump());
        }
    }
}

// --pipeline-model-parallel-layout, first/last stages and even splits, as Megatron checks them.
void megatron_pipeline_split(const Values& v) {
    const std::int64_t layers = v.number("--num-layers"), pp = v.number("--pipeline-model-parallel-size");
    const std::int64_t vp = v.has("--num-virtual-stages-per-pipeline-rank") ? v.number("--num-virtual-stages-per-pipeline-rank") : 1;
    if (v.has("--pipeline-model-parallel-layout")) {
        const std::string layout = v.given.at("--pipeline-model-parallel-layout");
        const auto stages = std::count(layout.begin(), layout.end(), '|') + 1;
        CHECK(stages % pp == 0);
        CHECK(layout.front() == 'E');
        CHECK(layout.back() == 'L');
        CHECK(std::count(layout.begin(), layout.end(), 't') == layers);
        CHECK(std::count(layout.begin(), layout.end(), 'm') == (v.has("--mtp-num-layers") ? v.number("--mtp-num-layers") : 0));
        CHECK(layout.find_first_not_of("Etm|L") == std::string::npos);
        return;
    }
    if (v.has("--decoder-first-pipeline-num-layers") || v.has("--decoder-last-pipeline-num-layers")) {
        std::int64_t rest = layers, middle = pp;
        for (const char* f : {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"})
            if (v.has(f)) {
                CHECK(v.number(f) > 0);
                CHECK(v.number(f) % vp == 0);
                rest -= v.number(f);
                --middle;
            }
        CHECK((rest == 0) == (middle == 0));
        if (middle > 0) {
            CHECK(rest % middle == 0);
            CHECK((rest / middle) % vp == 0);
        }
        return;
    }
    CHECK(layers % pp == 0);
    CHECK((layers / pp) % vp == 0);
}

void torchtitan_pipeline_parts(const Values& v, const json& rule) {
    const std::int64_t pp = v.number("parallelism.pipeline_parallel_degree");
    if (pp == 1) return;
    REQUIRE(v.has("parallelism.module_fqns_per_model_part"));
    const json& parts = v.given.at("parallelism.module_fqns_per_model_part");
    const std::int64_t per_rank = static_cast<std::int64_t>(parts.size()) / pp;
    CHECK(static_cast<std::int64_t>(parts.size()) % pp == 0);
    const std::string schedule = *v.get("parallelism.pipeline_parallel_schedule");
    const auto& single = rule["single_stage_schedules"];
    if (std::find(single.begin(), single.end(), schedule) != single.end()) CHECK(per_rank == 1);
    else CHECK(per_rank >= 2);
    CHECK(parts.front().front() == "tok_embeddings");
    CHECK(parts.back().back() == "output");
}

struct Case {
    Scenario scenario;
    Layout layout;
};

// The launch of a plan: GPUs and data-parallel ranks.
Values launch_of(const Case& c) {
    Values v;
    v.launch["$world"] = c.scenario.cluster.gpus;
    v.launch["$dp"] = c.layout.dp;
    return v;
}

void check_megatron(const Case& c, const json& data) {
    const Emitted e = emit_plan(EmitFormat::Megatron, c.scenario, c.layout);
    Values v = launch_of(c);
    v.defaults = data["flags"];
    for (const auto& [name, value] : e.args) {
        REQUIRE_MESSAGE(data["flags"].contains(name), name << " is not a flag of Megatron-LM at " << data["commit"]);
        CHECK_MESSAGE(!v.has(name), name << " given twice");
        v.given[name] = value ? json(*value) : json();
        check_kind(name, v.given[name], data["flags"][name]);
    }
    for (const auto& rule : data["rules"]) {
        if (rule.contains("check")) megatron_pipeline_split(v);
        else check_rule(rule, v);
    }
    // The whole model shape is there (Megatron's defaults would build a GPT-2-style model).
    const ModelSpec& m = c.scenario.model;
    CHECK(v.number("--num-layers") == m.layers);
    CHECK(v.number("--hidden-size") == m.hidden);
    CHECK(v.number("--vocab-size") == m.vocab);
    CHECK(v.has("--normalization"));
    CHECK(v.has("--position-embedding-type"));
    CHECK(v.has("--swiglu") == (m.mlp == MlpKind::SwiGlu));
    CHECK(v.has("--untie-embeddings-and-output-weights") == !m.tied_embeddings);
    CHECK(v.has("--multi-latent-attention") == (m.attention == AttentionKind::MultiLatent));
    if (m.is_moe()) {
        CHECK(v.number("--num-experts") == m.moe.experts);
        CHECK(v.number("--expert-model-parallel-size") == c.layout.ep);
    }
    CHECK(v.number("--tensor-model-parallel-size") * v.number("--pipeline-model-parallel-size") *
              v.number("--context-parallel-size") * c.layout.dp ==
          c.scenario.cluster.gpus);
}

// torchtitan's settings as section.key -> value.
Values flatten(const Case& c, const Emitted& e, const json& data) {
    Values v = launch_of(c);
    v.defaults = data["keys"];
    for (const auto& [section, keys] : e.settings.items())
        for (const auto& [name, value] : keys.items()) {
            const std::string path = section + "." + name;
            REQUIRE_MESSAGE(data["keys"].contains(path), path << " is not a key of torchtitan " << data["commit"]);
            v.given[path] = value;
            check_kind(path, value, data["keys"][path]);
        }
    return v;
}

void check_torchtitan(const Case& c, const json& data, EmitFormat format) {
    const Emitted e = emit_plan(format, c.scenario, c.layout);
    Values v = flatten(c, e, data);
    const std::int64_t dp = v.number("parallelism.data_parallel_replicate_degree") * v.number("parallelism.data_parallel_shard_degree");
    CHECK(dp == c.layout.dp);
    for (const auto& rule : data["rules"]) {
        if (!rule.contains("check")) {
            check_rule(rule, v);
            continue;
        }
        const std::string check = rule["check"];
        if (check == "torchtitan_pipeline_parts") torchtitan_pipeline_parts(v, rule);
        if (check == "torchtitan_token_budget") {
            const std::int64_t pp_microbatches = v.number("parallelism.pipeline_parallel_degree") > 1 ? v.number("parallelism.num_pp_microbatches") : 1;
            const std::int64_t per_iteration = v.number("training.num_tokens_per_microbatch_per_dp_rank") * pp_microbatches * dp;
            CHECK(v.number("training.num_tokens_per_train_step") % per_iteration == 0);
            // The plan's batch: microbatch x seq tokens per forward, global x seq per step.
            CHECK(v.number("training.num_tokens_per_microbatch_per_dp_rank") == c.layout.microbatch * c.scenario.training.seq_len);
            CHECK(v.number("training.num_tokens_per_train_step") == c.scenario.training.global_batch * c.scenario.training.seq_len);
        }
        if (check == "torchtitan_toml_batch") {
            CHECK(v.number("training.global_batch_size") % (v.number("training.local_batch_size") * dp) == 0);
            if (v.number("parallelism.pipeline_parallel_degree") > 1)
                CHECK(v.number("training.local_batch_size") % v.number("parallelism.pipeline_parallel_microbatch_size") == 0);
            // One forward carries the plan's microbatch.
            const std::int64_t forward = v.number("parallelism.pipeline_parallel_degree") > 1
                                             ? v.number("parallelism.pipeline_parallel_microbatch_size")
                                             : v.number("training.local_batch_size");
            CHECK(forward == c.layout.microbatch);
        }
    }
    // A known model shape is named by its registry flavor.
    if (v.has("model.name")) {
        const std::string model = v.given.at("model.name");
        REQUIRE(data["flavors"].contains(model));
        const auto& flavors = data["flavors"][model];
        CHECK(std::find(flavors.begin(), flavors.end(), *v.get("model.flavor")) != flavors.end());
    } else {
        CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) { return n.find("ships no model") != std::string::npos; }));
    }
    if (c.scenario.training.precision.name == "fp8") CHECK(v.has("model.converters"));
}

void check_deepspeed(const Case& c, const json& data) {
    const Emitted e = emit_plan(EmitFormat::DeepSpeed, c.scenario, c.layout);
    Values v = launch_of(c);
    std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& prefix) {
        for (const auto& [name, value] : node.items()) {
            const std::string path = prefix.empty() ? name : prefix + "." + name;
            if (value.is_object()) {
                walk(value, path);
                continue;
            }
            REQUIRE_MESSAGE(data["keys"].contains(path), path << " is not a DeepSpeed key at " << data["commit"]);
            v.given[path] = value;
            check_kind(path, value, data["keys"][path]);
        }
    };
    walk(e.settings, "");
    CHECK(v.number("train_batch_size") == v.number("train_micro_batch_size_per_gpu") * v.number("gradient_accumulation_steps") * c.layout.dp);
    CHECK(v.has("bf16.enabled") != v.has("fp16.enabled"));
    if (v.has("zero_optimization.offload_optimizer.device")) CHECK(v.number("zero_optimization.stage") >= 1);
    // Whatever the config cannot hold is said beside it.
    if (c.layout.pp > 1) CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) { return n.find("PipelineModule") != std::string::npos; }));
    if (c.scenario.model.is_moe()) CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) { return n.find("ep_size") != std::string::npos; }));
    if (c.scenario.training.precision.quantized())
        CHECK(std::any_of(e.notes.begin(), e.notes.end(), [&](const std::string& n) {
            return n.find(std::string(c.scenario.training.precision.name)) != std::string::npos;
        }));
}

// An OmegaConf dot-list value as run_recipe.py reads it back: null, true/false, integers,
// decimals, [a,b] lists, double-quoted or plain strings.
json read_override(const std::string& text) {
    if (text == "null") return json();
    if (text == "true" || text == "false") return text == "true";
    if (text.size() >= 2 && text.front() == '"') return json::parse(text);
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
        json list = json::array();
        std::string item;
        std::istringstream parts(text.substr(1, text.size() - 2));
        while (std::getline(parts, item, ',')) list.push_back(read_override(item));
        return list;
    }
    std::size_t used = 0;
    try {
        const std::int64_t i = std::stoll(text, &used);
        if (used == text.size()) return i;
        const double d = std::stod(text, &used);
        if (used == text.size()) return d;
    } catch (const std::exception&) {
    }
    return text;
}

// The printed overrides, read back as the shell and the launcher would: one key=value a line.
std::map<std::string, json> bridge_text_overrides(const Emitted& e) {
    std::map<std::string, json> out;
    std::istringstream lines(e.text);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.starts_with("#")) continue;
        std::string word = line.substr(line.find_first_not_of(' '));
        if (word.ends_with(" \\")) word.resize(word.size() - 2);
        if (word.size() >= 2 && word.front() == '\'' && word.back() == '\'') word = word.substr(1, word.size() - 2);
        const auto eq = word.find('=');
        REQUIRE(eq != std::string::npos);
        out[word.substr(0, eq)] = read_override(word.substr(eq + 1));
    }
    return out;
}

// A list value's words (Bridge's JSON lists).
bool has_word(const Values& v, const std::string& name, const std::string& word) {
    const auto got = v.get(name);
    return got && got->is_array() && std::find(got->begin(), got->end(), json(word)) != got->end();
}

// The structural checks Megatron-Bridge's data names ("check" rules).
void bridge_checks(const Case& c, const Values& v, const Emitted& e, const json& data) {
    const ModelSpec& m = c.scenario.model;
    const std::int64_t pp = v.number("model.pipeline_model_parallel_size"), layers = v.number("model.num_layers");
    const auto vp_value = v.get("model.virtual_pipeline_model_parallel_size");
    const std::int64_t vp = vp_value && !vp_value->is_null() ? vp_value->get<std::int64_t>() : 1;
    const auto layout = v.get("model.pipeline_model_parallel_layout");
    const auto note = [&](const std::string& text) {
        return std::any_of(e.notes.begin(), e.notes.end(), [&](const std::string& n) { return n.find(text) != std::string::npos; });
    };
    // bridge_pipeline_split: Megatron-Core's, on Bridge's keys.
    if (layout && !layout->is_null()) {
        const std::string text = *layout;
        const auto stages = std::count(text.begin(), text.end(), '|') + 1;
        CHECK(stages % pp == 0);
        CHECK(text.front() == 'E');
        CHECK(text.back() == 'L');
        CHECK(std::count(text.begin(), text.end(), 't') == layers);
        CHECK(std::count(text.begin(), text.end(), 'm') == m.mtp_layers);
        CHECK(text.find_first_not_of("Etm|L") == std::string::npos);
        CHECK((!vp_value || vp_value->is_null() || vp == stages / pp));
    } else if (pp > 1 && m.is_hybrid()) {
        // A hybrid model's split: its pattern cut with | into pp x vp stages, the recipe's MTP
        // pattern left to the provider.
        REQUIRE(v.has("model.hybrid_layer_pattern"));
        const std::string pattern = v.given.at("model.hybrid_layer_pattern");
        CHECK(std::count(pattern.begin(), pattern.end(), '|') + 1 == pp * vp);
        std::string blocks = pattern;
        std::erase(blocks, '|');
        CHECK(blocks == m.hybrid_pattern);
        CHECK(pattern.find('/') == std::string::npos);
    } else if (pp > 1) {
        const auto first = v.get("model.num_layers_in_first_pipeline_stage"), last = v.get("model.num_layers_in_last_pipeline_stage");
        std::int64_t rest = layers, middle = pp;
        for (const auto& edge : {first, last})
            if (edge && !edge->is_null()) {
                CHECK(edge->get<std::int64_t>() > 0);
                CHECK(edge->get<std::int64_t>() % vp == 0);
                rest -= edge->get<std::int64_t>();
                --middle;
            }
        if (middle > 0) {
            CHECK(rest % middle == 0);
            CHECK((rest / middle) % vp == 0);
        }
    }
    // bridge_expert_grid: world divisible by etp x ep x pp; under the tp-pp-dp order with PP the
    // expert and dense data-parallel sizes agree.
    if (m.is_moe()) {
        const auto etp_value = v.get("model.expert_tensor_parallel_size");
        const std::int64_t ep = v.number("model.expert_model_parallel_size");
        const std::int64_t etp = etp_value && !etp_value->is_null() ? etp_value->get<std::int64_t>() : (ep > 1 ? 1 : v.number("model.tensor_model_parallel_size"));
        CHECK(c.scenario.cluster.gpus % (etp * ep * pp) == 0);
        if (*v.get("dist.use_tp_pp_dp_mapping") == true && pp > 1)
            CHECK(etp * ep == v.number("model.tensor_model_parallel_size") * v.number("model.context_parallel_size"));
    }
    // bridge_recompute_modules: no shared-expert recompute beside their overlap, no moe_act or
    // layernorm recompute under delayed scaling.
    if (has_word(v, "model.recompute_modules", "shared_experts")) CHECK(*v.get("model.moe_shared_expert_overlap") == false);
    if (v.get("mixed_precision") && v.get("mixed_precision")->get<std::string>().find("delayed") != std::string::npos)
        CHECK_FALSE((has_word(v, "model.recompute_modules", "moe_act") || has_word(v, "model.recompute_modules", "layernorm")));
    // bridge_fine_grained_offloading: attn_proj with core_attn; no MoE-internal inputs while the
    // whole MoE block is recomputed.
    if (*v.get("model.fine_grained_activation_offloading") == true) {
        if (has_word(v, "model.offload_modules", "attn_proj")) CHECK(has_word(v, "model.offload_modules", "core_attn"));
        if (has_word(v, "model.recompute_modules", "moe"))
            CHECK_FALSE((has_word(v, "model.offload_modules", "expert_fc1") || has_word(v, "model.offload_modules", "moe_act")));
    }
    // bridge_flex_backend_gpu: DeepEP on Ampere, Hopper, B200 and B300; HybridEP there and on
    // GB200/GB300 NVL72.
    if (v.has("model.moe_flex_dispatcher_backend")) {
        const std::string gpu = c.scenario.cluster.gpu.name;
        if (*v.get("model.moe_flex_dispatcher_backend") == "deepep") CHECK(gpu.find("GB") != 0);
    }
    // bridge_comm_overlap_owns_knobs: the overlaps are set where the recipe's section reads them.
    for (const char* owned : {"model.tp_comm_overlap", "model.overlap_moe_expert_parallel_comm", "model.delay_wgrad_compute"})
        CHECK_FALSE(v.has(owned));
    CHECK(v.has("comm_overlap.tp_comm_overlap"));
    if (*v.get("ddp.use_distributed_optimizer") == true)
        for (const char* knob : {"overlap_grad_reduce", "overlap_param_gather"})
            CHECK(v.get(std::string("comm_overlap.") + knob) == v.get(std::string("ddp.") + knob));
    // bridge_fsdp_env: said beside the settings.
    if (*v.get("ddp.use_megatron_fsdp") == true) CHECK(note("CUDA_DEVICE_MAX_CONNECTIONS"));
    // bridge_fp8_bf16_edge_layers: the recipe's BF16 edge layers fit a pipeline stage.
    if (v.has("mixed_precision")) {
        const json& recipe = data["mixed_precision_recipes"][v.given.at("mixed_precision").get<std::string>()];
        if (recipe.contains("bf16_layers_at_start_end") && recipe["bf16_layers_at_start_end"].is_array())
            for (const auto& n : recipe["bf16_layers_at_start_end"]) CHECK(layers / pp >= n.get<std::int64_t>());
    }
}

void check_bridge(const Case& c, const json& data) {
    const Emitted e = emit_plan(EmitFormat::MegatronBridge, c.scenario, c.layout);
    Values v = launch_of(c);
    v.defaults = data["keys"];
    // The recipe's architecture, which the overrides leave to it.
    const ModelSpec& m = c.scenario.model;
    const auto recipe = [&](const std::string& key, const json& value) {
        if (value.is_null()) v.defaults[key]["default"] = value;
        else v.given[key] = value;
    };
    recipe("model.num_layers", m.layers);
    recipe("model.num_attention_heads", m.heads);
    recipe("model.num_query_groups", m.kv_heads);
    recipe("model.num_moe_experts", m.is_moe() ? json(m.moe.experts) : json());
    recipe("model.multi_latent_attention", m.attention == AttentionKind::MultiLatent);
    recipe("model.mtp_num_layers", m.mtp_layers);
    std::set<std::string> printed_keys;
    for (const auto& [section, value] : e.settings.items()) {
        const auto visit = [&](const std::string& path, const json& x) {
            REQUIRE_MESSAGE(data["keys"].contains(path), path << " is not a ConfigContainer key of Megatron-Bridge " << data["tag"]);
            CHECK_MESSAGE(printed_keys.insert(path).second, path << " set twice");
            const json& spec = data["keys"][path];
            const std::string kind = spec["kind"];
            // A null leaves the field unset: no value, its default gone.
            if (x.is_null()) {
                CHECK_MESSAGE(kind.ends_with("_or_null"), path << " cannot be null");
                v.defaults[path]["default"] = x;
                return;
            }
            v.given[path] = x;
            if (kind == "str_list") {
                REQUIRE(x.is_array());
                CHECK(!x.empty());
                for (const auto& w : x) CHECK_MESSAGE(std::find(spec["choices"].begin(), spec["choices"].end(), w) != spec["choices"].end(), w);
                return;
            }
            json plain = {{"kind", kind.substr(0, kind.find("_or_null"))}};
            if (spec.contains("choices")) plain["choices"] = spec["choices"];
            if (plain["kind"] == "float") CHECK(x.is_number());
            else check_kind(path, x, plain);
        };
        if (value.is_object())
            for (const auto& [field, x] : value.items()) visit(section + "." + field, x);
        else
            visit(section, value);
    }
    for (const auto& rule : data["rules"]) {
        if (!rule.contains("check")) {
            // Bridge's lists are JSON arrays: if_contains reads a word of one.
            if (rule.contains("if_contains")) {
                bool all = true;
                for (const auto& [name, word] : rule["if_contains"].items()) all = all && has_word(v, name, word);
                if (!all) continue;
                json rest = rule;
                rest.erase("if_contains");
                check_rule(rest, v);
            } else {
                check_rule(rule, v);
            }
        }
    }
    bridge_checks(c, v, e, data);
    // What the shell and the launcher read back is what was set.
    const auto printed = bridge_text_overrides(e);
    CHECK(printed.size() == printed_keys.size());
    for (const auto& path : printed_keys) {
        REQUIRE_MESSAGE(printed.count(path), path << " is not printed");
        const json set = v.given.count(path) ? v.given.at(path) : json();
        CHECK_MESSAGE(printed.at(path) == set, path << ": printed " << printed.at(path).dump() << ", set " << set.dump());
    }
    // The plan's degrees and batch, every knob set (a recipe's default cannot survive).
    CHECK(v.number("model.tensor_model_parallel_size") * v.number("model.pipeline_model_parallel_size") *
              v.number("model.context_parallel_size") * c.layout.dp ==
          c.scenario.cluster.gpus);
    CHECK(v.number("train.micro_batch_size") == c.layout.microbatch);
    CHECK(v.number("train.global_batch_size") == c.scenario.training.global_batch);
    CHECK(v.number("dataset.seq_length") == c.scenario.training.seq_len);
    for (const char* always : {"model.virtual_pipeline_model_parallel_size", "model.pipeline_model_parallel_layout", "model.recompute_granularity",
                               "model.cpu_offloading", "model.fine_grained_activation_offloading", "model.sequence_parallel",
                               "ddp.use_distributed_optimizer", "ddp.use_megatron_fsdp", "comm_overlap.tp_comm_overlap"})
        CHECK_MESSAGE(printed_keys.count(always), always);
    CHECK(*v.get("model.sequence_parallel") == (c.layout.sequence_parallel && c.layout.tp > 1));
    if (m.is_moe()) {
        CHECK(v.number("model.expert_model_parallel_size") == c.layout.ep);
        CHECK(*v.get("comm_overlap.overlap_moe_expert_parallel_comm") == c.layout.ep_a2a_overlap);
    }
    // The launcher's model: a recipe v0.6.0 ships for this shape, named by its stem, or a note.
    const auto model_at = e.text.find("--model ");
    if (model_at != std::string::npos) {
        const std::string stem = e.text.substr(model_at + 8, e.text.find(' ', model_at + 8) - model_at - 8);
        const auto& stems = data["model_recipes"]["stems"];
        CHECK_MESSAGE(std::find(stems.begin(), stems.end(), stem) != stems.end(), stem);
    } else {
        CHECK(std::any_of(e.notes.begin(), e.notes.end(), [](const std::string& n) { return n.find("ships no recipe") != std::string::npos; }));
    }
    // The precision's recipe runs the plan's GEMM precision.
    REQUIRE(v.has("mixed_precision"));
    const json& mp = data["mixed_precision_recipes"][v.given.at("mixed_precision").get<std::string>()];
    const PrecisionRecipe& p = c.scenario.training.precision;
    CHECK(mp["fp8"].is_null() == (p.operands != Precision::Fp8));
    CHECK(mp["fp4"].is_null() == (p.name != std::string_view("nvfp4")));
    if (p.name == std::string_view("mxfp8")) CHECK(mp["fp8_recipe"] == "mxfp8");
    if (p.name == std::string_view("fp8")) CHECK(mp["fp8_recipe"] == "tensorwise");
}

// A cost model that prefers what a framework's search must get right: deep pipelines with
// interleaving and uneven stages, many microbatches, sharded optimizers; it fits anything.
class PreferAll : public Evaluator {
public:
    explicit PreferAll(const Scenario& s) : s_(s) {}
    PlanScore screen(const Layout& l) const override {
        PlanScore p;
        p.fits = true;
        p.capacity_bytes = 80e9;
        p.peak_memory_bytes = 1e9;
        const bool uneven = l.stage_layers.front() != l.stage_layers[l.stage_layers.size() / 2];
        p.mfu = static_cast<double>(l.pp * l.vp + l.ep + l.zero_stage * 3 + (uneven ? 5 : 0) + l.cp + (l.optimizer_offload ? 2 : 0) +
                                    (l.recompute == Recompute::Selective ? 1 : 0)) /
                1e4;
        p.step_time_s = 1;
        p.tokens_per_s = p.mfu;
        return p;
    }
    PlanScore simulate(const Layout& l) const override { return screen(l); }

private:
    Scenario s_;
};

// Every preset with its own layout, and with the layout a search limited to `framework` picks.
std::vector<Case> cases(const std::string& framework) {
    std::vector<Case> out;
    for (const auto& name : preset_names("scenarios")) {
        Scenario s = load_scenario(data_dir() / "scenarios" / (name + ".json"));
        out.push_back({s, resolve_layout(s, s.layout)});
        Scenario open = s;
        open.layout = LayoutSpec{};
        open.training.framework = framework;
        PlanOptions o;
        o.simulate_top = 1;
        o.threads = 2;
        Planner p(open, o, [](const Scenario& sc) { return std::make_unique<PreferAll>(sc); });
        const auto plans = p.finish(p.screen({0, 1}));
        REQUIRE(!plans.empty());
        out.push_back({open, plans.front().layout});
    }
    return out;
}
}  // namespace

TEST_CASE("Megatron-LM: every preset's settings pass the flags and cross-flag checks of arguments.py at d98e8a64dd") {
    const json data = load_data("megatron-args-d98e8a64dd.json");
    for (const Case& c : cases("megatron-core-2024")) {
        CAPTURE(c.scenario.name);
        CAPTURE(layout_label(c.layout));
        check_megatron(c, data);
    }
}

TEST_CASE("torchtitan (config classes at b5bcd76c66 and TOML of v0.2.2): every preset passes its keys and checks") {
    const json current = load_data("torchtitan-config-b5bcd76c66.json");
    const json toml = load_data("torchtitan-toml-v0.2.2.json");
    for (const Case& c : cases("torchtitan-2024")) {
        CAPTURE(c.scenario.name);
        CAPTURE(layout_label(c.layout));
        check_torchtitan(c, current, EmitFormat::Torchtitan);
        check_torchtitan(c, toml, EmitFormat::TorchtitanToml);
    }
}

TEST_CASE("Megatron-Bridge (v0.6.0): every preset's overrides are ConfigContainer keys that pass its checks and read back as set") {
    const json data = load_data("megatron-bridge-config-v0.6.0.json");
    for (const Case& c : cases("nemo-2026")) {
        CAPTURE(c.scenario.name);
        CAPTURE(layout_label(c.layout));
        check_bridge(c, data);
    }
}

TEST_CASE("Megatron-Bridge exports set every knob the plan has, the ones it leaves off included, where the recipe's sections read them") {
    const json data = load_data("megatron-bridge-config-v0.6.0.json");
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-70b-h100.json");
    s.training.framework = "nemo-2026";
    Layout l = resolve_layout(s, s.layout);
    // The launcher starts from Llama 3 70B's library recipe; a shape Bridge has none of is said.
    CHECK(emit_plan(EmitFormat::MegatronBridge, s, l).text.find("run_recipe.py --model llama3_70b --mode pretrain") != std::string::npos);
    Scenario odd = s;
    odd.model.layers = 81;
    CHECK(emit_plan(EmitFormat::MegatronBridge, odd, l).text.find("--recipe <the model's pretrain recipe>") != std::string::npos);
    const auto settings = [&](const Layout& layout) { return emit_plan(EmitFormat::MegatronBridge, s, layout).settings; };
    // Llama 3 70B's 80 layers over PP 4 with VP 5: an even split, interleaved.
    l.pp = 4;
    l.vp = 5;
    l.tp = 8;
    l.cp = 1;
    l.dp = s.cluster.gpus / (l.tp * l.pp);
    l.stage_layers = {20, 20, 20, 20};
    json st = settings(l);
    CHECK(st["model"]["pipeline_model_parallel_size"] == 4);
    CHECK(st["model"]["virtual_pipeline_model_parallel_size"] == 5);
    CHECK(st["model"]["pipeline_model_parallel_layout"].is_null());
    CHECK(st["model"]["num_layers_in_first_pipeline_stage"].is_null());
    check_bridge({s, l}, data);
    // Megatron's uneven split (first and last given, the middle even): its two fields.
    l.vp = 1;
    l.stage_layers = {19, 21, 21, 19};
    st = settings(l);
    CHECK(st["model"]["virtual_pipeline_model_parallel_size"].is_null());
    CHECK(st["model"]["num_layers_in_first_pipeline_stage"] == 19);
    CHECK(st["model"]["num_layers_in_last_pipeline_stage"] == 19);
    check_bridge({s, l}, data);
    // Any other split: the layout naming every stage, which the shell and Hydra read quoted.
    l.stage_layers = {18, 22, 21, 19};
    const Emitted irregular = emit_plan(EmitFormat::MegatronBridge, s, l);
    CHECK(irregular.settings["model"]["pipeline_model_parallel_layout"] ==
          "E" + std::string(18, 't') + "|" + std::string(22, 't') + "|" + std::string(21, 't') + "|" + std::string(19, 't') + "L");
    CHECK(irregular.text.find("'model.pipeline_model_parallel_layout=\"Etttttttttttttttttt|") != std::string::npos);
    check_bridge({s, l}, data);
    // Off is said too: no recompute, no offload, VP null, where a recipe may have set them.
    l.pp = 1;
    l.stage_layers = {80};
    l.dp = s.cluster.gpus / l.tp;
    l.recompute = Recompute::None;
    st = settings(l);
    CHECK(st["model"]["recompute_granularity"].is_null());
    CHECK(st["model"]["cpu_offloading"] == false);
    CHECK(st["model"]["fine_grained_activation_offloading"] == false);
    CHECK(st["model"]["virtual_pipeline_model_parallel_size"].is_null());
    check_bridge({s, l}, data);
    // Selective recompute: Megatron's module names as a list.
    l.recompute = Recompute::Selective;
    l.recompute_modules = kRecomputeCoreAttn | kRecomputeLayerNorm;
    st = settings(l);
    CHECK(st["model"]["recompute_granularity"] == "selective");
    CHECK(st["model"]["recompute_modules"] == json({"core_attn", "layernorm"}));
    check_bridge({s, l}, data);
    // ZeRO-3 without PP or EP: torch FSDP2; with PP, Megatron-FSDP, with the distributed
    // optimizer Bridge switches on for it, its checkpoint format and its environment note.
    l.zero_stage = 3;
    st = settings(l);
    CHECK(st["dist"]["use_torch_fsdp2"] == true);
    CHECK(st["ddp"]["use_megatron_fsdp"] == false);
    check_bridge({s, l}, data);
    l.pp = 2;
    l.stage_layers = {40, 40};
    l.dp = s.cluster.gpus / (l.tp * l.pp);
    const Emitted fsdp = emit_plan(EmitFormat::MegatronBridge, s, l);
    CHECK(fsdp.settings["dist"]["use_torch_fsdp2"] == false);
    CHECK(fsdp.settings["ddp"]["use_megatron_fsdp"] == true);
    CHECK(fsdp.settings["dist"]["use_megatron_fsdp"] == true);
    CHECK(fsdp.settings["ddp"]["use_distributed_optimizer"] == true);
    CHECK(fsdp.settings["checkpoint"]["ckpt_format"] == "fsdp_dtensor");
    check_bridge({s, l}, data);
    // The TP overlap the plan priced is the comm_overlap section's, with sequence parallelism.
    l.zero_stage = 1;
    l.sequence_parallel = true;
    st = settings(l);
    CHECK(st["comm_overlap"]["tp_comm_overlap"] == true);
    CHECK(st["model"]["sequence_parallel"] == true);
    CHECK_FALSE(st["model"].contains("tp_comm_overlap"));
    check_bridge({s, l}, data);
    // Each precision's named recipe.
    for (const auto& [precision, recipe] : {std::pair{"bf16", "bf16_mixed"}, std::pair{"fp8", "bf16_with_fp8_current_scaling_mixed"},
                                            std::pair{"mxfp8", "bf16_with_mxfp8_mixed"}, std::pair{"nvfp4", "bf16_with_nvfp4_mixed"},
                                            std::pair{"fp8_blockwise", "bf16_with_fp8_subchannel_scaling_mixed"}}) {
        Scenario p = s;
        p.training.precision = precision_recipe(precision, "/training/precision");
        CHECK(emit_plan(EmitFormat::MegatronBridge, p, l).settings["mixed_precision"] == recipe);
        CHECK(data["mixed_precision_recipes"].contains(recipe));
    }
    // Per-tensor FP8 under a generation that prices delayed scaling (megatron-core-2024) runs
    // Bridge's delayed recipe; torchao's row-wise FP8 has no Bridge recipe, and a note says so.
    Scenario delayed = s;
    delayed.training.framework = "megatron-core-2024";
    delayed.training.precision = precision_recipe("fp8", "/training/precision");
    const json d = emit_plan(EmitFormat::MegatronBridge, delayed, l).settings;
    CHECK(d["mixed_precision"] == "bf16_with_fp8_delayed_scaling_mixed");
    CHECK(data["mixed_precision_recipes"]["bf16_with_fp8_delayed_scaling_mixed"]["fp8_recipe"] == "delayed");
    Scenario rowwise = s;
    rowwise.training.precision = precision_recipe("fp8_rowwise", "/training/precision");
    const Emitted r = emit_plan(EmitFormat::MegatronBridge, rowwise, l);
    CHECK_FALSE(r.settings.contains("mixed_precision"));
    CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("no mixed-precision recipe for fp8_rowwise") != std::string::npos; }));
    // A MoE plan: expert degrees, the dispatcher and the all-to-all overlap with its delayed
    // weight gradients, in the comm_overlap section.
    Scenario dsv3 = load_scenario(data_dir() / "scenarios" / "deepseek-v3-h100.json");
    dsv3.training.framework = "nemo-2026";
    dsv3.layout.moe_dispatcher = MoeDispatcher::HybridEP;
    Layout moe = resolve_layout(dsv3, dsv3.layout);
    const json m = emit_plan(EmitFormat::MegatronBridge, dsv3, moe).settings;
    CHECK(m["model"]["expert_model_parallel_size"] == moe.ep);
    CHECK(m["model"]["moe_token_dispatcher_type"] == "flex");
    CHECK(m["model"]["moe_flex_dispatcher_backend"] == "hybridep");
    CHECK(m["model"]["moe_expert_capacity_factor"].is_null());
    CHECK(m["comm_overlap"]["overlap_moe_expert_parallel_comm"] == moe.ep_a2a_overlap);
    CHECK(m["comm_overlap"]["delay_wgrad_compute"] == moe.ep_a2a_overlap);
    check_bridge({dsv3, moe}, data);
}

TEST_CASE("DeepSpeed: every preset's config passes the keys and batch checks of runtime/config.py at edaa722126") {
    const json data = load_data("deepspeed-config-edaa722126.json");
    for (const Case& c : cases("megatron-deepspeed-2022")) {
        CAPTURE(c.scenario.name);
        CAPTURE(layout_label(c.layout));
        check_deepspeed(c, data);
    }
}

TEST_CASE("Megatron exports: FSDP without --overlap-param-gather, offload with the precision-aware optimizer, MLA and MoE flags") {
    const json data = load_data("megatron-args-d98e8a64dd.json");
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-8b-h100.json");
    Layout l = resolve_layout(s, s.layout);
    l.zero_stage = 3;
    l.tp = 1;
    l.dp = 64;
    l.sequence_parallel = false;
    const Emitted fsdp = emit_plan(EmitFormat::Megatron, s, l);
    const auto has = [](const Emitted& e, const std::string& f) {
        return std::any_of(e.args.begin(), e.args.end(), [&](const auto& a) { return a.first == f; });
    };
    CHECK(has(fsdp, "--use-torch-fsdp2"));
    CHECK_FALSE(has(fsdp, "--overlap-param-gather"));
    CHECK_FALSE(has(fsdp, "--use-distributed-optimizer"));
    check_megatron({s, l}, data);
    l.zero_stage = 1;
    l.optimizer_offload = true;
    const Emitted offload = emit_plan(EmitFormat::Megatron, s, l);
    CHECK(has(offload, "--optimizer-cpu-offload"));
    CHECK(has(offload, "--use-precision-aware-optimizer"));
    check_megatron({s, l}, data);

    Scenario dsv3 = load_scenario(data_dir() / "scenarios" / "deepseek-v3-h100.json");
    const Emitted d = emit_plan(EmitFormat::Megatron, dsv3, resolve_layout(dsv3, dsv3.layout));
    for (const char* f : {"--multi-latent-attention", "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim",
                          "--v-head-dim", "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size",
                          "--moe-shared-expert-intermediate-size", "--moe-layer-freq", "--expert-model-parallel-size", "--mtp-num-layers"})
        CHECK_MESSAGE(has(d, f), f);
    CHECK_FALSE(has(d, "--group-query-attention"));
    CHECK_FALSE(has(d, "--moe-expert-capacity-factor"));  // dropless
    // Token dropping at a capacity, padded: Megatron's two flags, which its checks accept together.
    dsv3.model.moe.capacity_factor = 1.25;
    dsv3.model.moe.pad_to_capacity = true;
    const Emitted dropping = emit_plan(EmitFormat::Megatron, dsv3, resolve_layout(dsv3, dsv3.layout));
    CHECK(has(dropping, "--moe-expert-capacity-factor"));
    CHECK(has(dropping, "--moe-pad-expert-input-to-capacity"));
    check_megatron({dsv3, resolve_layout(dsv3, dsv3.layout)}, data);
    // The dispatcher: the layout's, else the runtime's (megatron-core-2024: NCCL all-to-all).
    const auto value_of = [](const Emitted& e, const std::string& f) {
        for (const auto& [name, value] : e.args)
            if (name == f) return value.value_or("");
        return std::string();
    };
    CHECK(value_of(dropping, "--moe-token-dispatcher-type") == "alltoall");
    CHECK_FALSE(has(dropping, "--moe-flex-dispatcher-backend"));
    dsv3.layout.moe_dispatcher = MoeDispatcher::HybridEP;
    const Layout hybrid = resolve_layout(dsv3, dsv3.layout);
    const Emitted flex = emit_plan(EmitFormat::Megatron, dsv3, hybrid);
    CHECK(value_of(flex, "--moe-token-dispatcher-type") == "flex");
    CHECK(value_of(flex, "--moe-flex-dispatcher-backend") == "hybridep");
    check_megatron({dsv3, hybrid}, data);
}

TEST_CASE("module offload and its fraction pass Megatron-LM's and Megatron-Bridge's own checks") {
    // Llama 3 70B on 64 GB200s under Megatron-Core 2026 (the offload by module and its fraction),
    // PP 2: no preset reaches these flags, so the transcribed rules on them are held here.
    const json doc = {{"model", "llama3-70b"},
                      {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
                      {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "fp8"}, {"framework", "megatron-core-2026"}}},
                      {"layout", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"},
                                  {"activation_offload_modules", {"core_attn", "attn_proj"}}, {"activation_offload_fraction", 0.5}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const Layout l = resolve_layout(s, s.layout);
    check_megatron({s, l}, load_data("megatron-args-d98e8a64dd.json"));
    check_bridge({s, l}, load_data("megatron-bridge-config-v0.6.0.json"));
}

TEST_CASE("a pipeline layout the exports write is the split the plan was priced with, chunk by chunk") {
    // Llama 3 8B (32 layers) over PP 4 x VP 2 as 7/9/9/7: the first stage's 7 leave a layer over,
    // and the simulator shortens the chunk holding the embedding (3 + 4), the last stage's the
    // chunk holding the loss (4 + 3); the middle stages' 9 split 5 + 4.
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-8b-h100.json");
    Layout l = resolve_layout(s, s.layout);
    l.tp = 1;
    l.cp = 1;
    l.pp = 4;
    l.vp = 2;
    l.schedule = Schedule::Interleaved;
    l.dp = s.cluster.gpus / l.pp;
    l.sequence_parallel = false;
    l.stage_layers = {7, 9, 9, 7};
    const StepPlan plan = plan_step(StepContext(s), l);
    std::string priced = "E";
    for (std::size_t v = 0; v < 2; ++v)
        for (std::size_t p = 0; p < 4; ++p)
            priced += std::string(v + p ? "|" : "") + std::string(static_cast<std::size_t>(plan.stages[p].chunks[v].layers), 't');
    priced += "L";
    CHECK(priced == "E" + std::string(3, 't') + "|" + std::string(5, 't') + "|" + std::string(5, 't') + "|" + std::string(4, 't') + "|" +
                        std::string(4, 't') + "|" + std::string(4, 't') + "|" + std::string(4, 't') + "|" + std::string(3, 't') + "L");
    std::string exported;
    for (const auto& [flag, value] : emit_plan(EmitFormat::Megatron, s, l).args)
        if (flag == "--pipeline-model-parallel-layout") exported = value.value_or("");
    CHECK(exported == priced);
    CHECK(emit_plan(EmitFormat::MegatronBridge, s, l).settings["model"]["pipeline_model_parallel_layout"] == priced);
}

TEST_CASE("Megatron exports the TP overlap the plan priced: --tp-comm-overlap with sequence parallelism, none where userbuffers cannot carry the recipe") {
    const json data = load_data("megatron-args-d98e8a64dd.json");
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-8b-h100.json");  // megatron-core-2024: TP overlap 0.7
    Layout l = resolve_layout(s, s.layout);
    l.tp = 2;
    l.dp = s.cluster.gpus / (l.tp * l.pp * l.cp);
    l.sequence_parallel = true;
    const auto has = [](const Emitted& e, const std::string& f) {
        return std::any_of(e.args.begin(), e.args.end(), [&](const auto& a) { return a.first == f; });
    };
    CHECK(has(emit_plan(EmitFormat::Megatron, s, l), "--tp-comm-overlap"));
    check_megatron({s, l}, data);
    // Megatron refuses the overlap without sequence parallelism (arguments.py validate_args).
    Layout no_sp = l;
    no_sp.sequence_parallel = false;
    CHECK_FALSE(has(emit_plan(EmitFormat::Megatron, s, no_sp), "--tp-comm-overlap"));
    check_megatron({s, no_sp}, data);
    // NVFP4: Transformer Engine's userbuffers refuse its buffers; the export says why it has none.
    s.training.precision = precision_recipe("nvfp4", "/training/precision");
    const Emitted nvfp4 = emit_plan(EmitFormat::Megatron, s, l);
    CHECK_FALSE(has(nvfp4, "--tp-comm-overlap"));
    CHECK(std::any_of(nvfp4.notes.begin(), nvfp4.notes.end(), [](const std::string& n) { return n.find("no --tp-comm-overlap") == 0; }));
    // A runtime without that overlap (Megatron-LM of 2021: tp_overlap 0) exports none.
    s.training.precision = precision_recipe("bf16", "/training/precision");
    s.training.framework = "megatron-lm-2021";
    CHECK_FALSE(has(emit_plan(EmitFormat::Megatron, s, l), "--tp-comm-overlap"));
}

TEST_CASE("Megatron exports of today's model features: squared ReLU, sliding windows, expert TP, recompute modules, offload, Muon") {
    const json data = load_data("megatron-args-d98e8a64dd.json");
    const auto value = [](const Emitted& e, const std::string& f) -> std::optional<std::string> {
        for (const auto& [name, v] : e.args)
            if (name == f) return v ? *v : std::string();
        return std::nullopt;
    };
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-8b-h100.json");
    Layout l = resolve_layout(s, s.layout);
    // Nemotron-4's MLP; gpt-oss's window: 128 tokens, windowed and full layers alternating.
    s.model.mlp = MlpKind::SquaredRelu;
    s.model.window = {128, 1, 1, false};
    l.recompute = Recompute::Selective;
    const Emitted a = emit_plan(EmitFormat::Megatron, s, l);
    CHECK(value(a, "--squared-relu"));
    CHECK_FALSE(value(a, "--swiglu"));
    CHECK(value(a, "--window-size") == "(128,0)");
    const std::string pattern = value(a, "--window-attn-skip-freq").value_or("");
    REQUIRE(pattern.size() == static_cast<std::size_t>(2 * s.model.layers + 1));
    CHECK(pattern.starts_with("[1,0,1,0"));
    // Flash attention's default set: the norms (and the activation, which Megatron cannot
    // recompute alone in a dense MLP: a note says so).
    CHECK(value(a, "--recompute-modules") == "layernorm");
    CHECK(std::any_of(a.notes.begin(), a.notes.end(), [](const std::string& n) { return n.find("recompute module mlp") != std::string::npos; }));
    check_megatron({s, l}, data);
    // Every window layer: no pattern.
    s.model.window = {4096, 1, 0, false};
    CHECK_FALSE(value(emit_plan(EmitFormat::Megatron, s, l), "--window-attn-skip-freq"));

    // Layer offloading: a flag without pipeline parallelism or recompute, a note otherwise.
    Scenario o = load_scenario(data_dir() / "scenarios" / "llama3-8b-h100.json");
    Layout lo = resolve_layout(o, o.layout);
    lo.recompute = Recompute::None;
    lo.activation_offload_layers = 4;
    o.training.optimizer.kind = OptimizerKind::Muon;
    const Emitted b = emit_plan(EmitFormat::Megatron, o, lo);
    CHECK(value(b, "--optimizer") == "muon");
    CHECK(value(b, "--cpu-offloading-num-layers").has_value() == (lo.pp == 1));
    check_megatron({o, lo}, data);
    const Emitted ds = emit_plan(EmitFormat::DeepSpeed, o, lo);
    CHECK(ds.settings["optimizer"]["type"] == "muon");
    lo.pp = 1;
    lo.dp *= resolve_layout(o, o.layout).pp;
    lo.stage_layers = {o.model.layers};
    CHECK(value(emit_plan(EmitFormat::Megatron, o, lo), "--cpu-offloading-num-layers") == "4");
    check_megatron({o, lo}, data);

    // DeepSeek-V3: the plan's expert TP, and MoE recompute modules in Megatron's names.
    Scenario d = load_scenario(data_dir() / "scenarios" / "deepseek-v3-h100.json");
    Layout ld = resolve_layout(d, d.layout);
    ld.recompute = Recompute::Selective;
    ld.recompute_modules = kRecomputeMlaUpProj | kRecomputeMoeAct | kRecomputeLayerNorm | kRecomputeSharedExperts;
    const Emitted c = emit_plan(EmitFormat::Megatron, d, ld);
    CHECK(value(c, "--expert-tensor-parallel-size") == std::to_string(ld.etp));
    CHECK(value(c, "--recompute-modules") == "layernorm mla_up_proj moe_act shared_experts");
    check_megatron({d, ld}, data);
    // The EP all-to-all overlap, with the delayed weight gradients Megatron-Bridge pairs it with
    // (an interleaved pipeline, as Megatron requires under pp > 1).
    ld.pp = 1;
    ld.vp = 1;
    ld.dp = d.cluster.gpus / (ld.tp * ld.cp);
    ld.stage_layers = {d.model.layers};
    d.training.global_batch = ld.dp * ld.microbatch * 8;
    ld.ep_a2a_overlap = true;
    const Emitted overlap = emit_plan(EmitFormat::Megatron, d, ld);
    CHECK(value(overlap, "--overlap-moe-expert-parallel-comm"));
    CHECK(value(overlap, "--delay-wgrad-compute"));
    check_megatron({d, ld}, data);
}

TEST_CASE("torchtitan exports compile the model, and switch on async TP where the plan runs it") {
    // The runtime prices torch.compile's fused elementwise kernels; async TP needs the compiled
    // model (CompileConfig.__post_init__ at b5bcd76c; v0.2.2 keeps the switch under [parallelism]).
    const json current = load_data("torchtitan-config-b5bcd76c66.json");
    const json toml = load_data("torchtitan-toml-v0.2.2.json");
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-70b-h100.json");
    s.training.framework = "torchtitan-2024";
    Layout l = resolve_layout(s, s.layout);
    REQUIRE(l.tp > 1);
    l.sequence_parallel = true;
    for (const bool async : {false, true}) {
        CAPTURE(async);
        l.async_tp = async;
        const Emitted e = emit_plan(EmitFormat::Torchtitan, s, l);
        CHECK(e.settings["compile"]["enable"] == true);
        CHECK(e.settings["compile"].contains("enable_async_tensor_parallel") == async);
        CHECK(e.text.find("config.compile = CompileConfig(") != std::string::npos);
        CHECK((e.text.find("enable_async_tensor_parallel=True") != std::string::npos) == async);
        check_torchtitan({s, l}, current, EmitFormat::Torchtitan);
        const Emitted t = emit_plan(EmitFormat::TorchtitanToml, s, l);
        CHECK(t.settings["parallelism"].contains("enable_async_tensor_parallel") == async);
        CHECK(t.text.find("[compile]") != std::string::npos);
        check_torchtitan({s, l}, toml, EmitFormat::TorchtitanToml);
        const Emitted m = emit_plan(EmitFormat::Megatron, s, l);
        CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) { return n.find("async TP") != std::string::npos; }) == async);
    }
    // torchtitan as first released ran eager (torchtitan-eager-2024, torch_compile false): its
    // export leaves the compiler off, in both formats.
    s.training.framework = "torchtitan-eager-2024";
    l.async_tp = false;
    const Emitted eager = emit_plan(EmitFormat::Torchtitan, s, l);
    CHECK(eager.settings["compile"]["enable"] == false);
    CHECK(emit_plan(EmitFormat::TorchtitanToml, s, l).settings["compile"]["enable"] == false);
    check_torchtitan({s, l}, current, EmitFormat::Torchtitan);
}

TEST_CASE("emit --json carries the settings, the target version and the notes") {
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json");
    const Layout l = resolve_layout(s, s.layout);
    for (EmitFormat f : {EmitFormat::Megatron, EmitFormat::MegatronBridge, EmitFormat::Torchtitan, EmitFormat::TorchtitanToml, EmitFormat::DeepSpeed}) {
        const json doc = emit_plan(f, s, l).to_json();
        CHECK(doc["format"] == emit_format_name(f));
        CHECK(doc["target"].get<std::string>().find(emit_target(f).framework == std::string("deepspeed") ? "DeepSpeed" : "") != std::string::npos);
        CHECK(doc.contains(f == EmitFormat::Megatron ? "args" : "settings"));
        CHECK(doc["notes"].is_array());
        CHECK(!doc["text"].get<std::string>().empty());
    }
    // ZeRO-1 with TP and PP is not torchtitan's: said next to the settings.
    const Emitted t = emit_plan(EmitFormat::Torchtitan, s, [&] {
        Layout z1 = l;
        z1.zero_stage = 1;
        return z1;
    }());
    CHECK(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) { return n.find("no ZeRO-1") != std::string::npos; }));
    CHECK_THROWS_AS(parse_emit_format("megatorn"), InputError);
}

TEST_CASE("sextant plan end to end: the issue's scenario plans and emits one JSON document, bad flags exit 2") {
    // Llama 3 70B on 1,024 H100s, batch 512, no layout (issue 15).
    const auto dir = std::filesystem::temp_directory_path() / "sextant-plan-cli-test";
    std::filesystem::create_directories(dir);
    const json scenario = {{"model", "llama3-70b"},
                           {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 1024}}},
                           {"training", {{"seq_len", 8192}, {"global_batch", 512}, {"precision", "bf16"}}}};
    std::ofstream(dir / "s.json") << scenario.dump();
    const std::string plan = std::string(SEXTANT_BINARY) + " plan " + (dir / "s.json").string() + " --threads 2";
    const auto out = (dir / "out.txt").string();
    const auto status = [&](const std::string& flags) {
        return WEXITSTATUS(std::system((plan + " " + flags + " >" + out + " 2>&1").c_str()));
    };
    REQUIRE(status("--emit megatron --json") == 0);
    std::ifstream in(out);
    const json doc = json::parse(in);
    CHECK(doc["format"] == "megatron");
    CHECK(doc["layout"]["dp"].get<std::int64_t>() * doc["layout"]["microbatch"].get<std::int64_t>() <= 512);
    CHECK(doc["args"].is_array());
    CHECK(doc["notes"].is_array());
    CHECK(status("--framework torchtan") == 2);
    CHECK(status("--memory-margin 2") == 2);
    CHECK(status("--objective time_to_train") == 2);  // no token budget in the scenario
    CHECK(status("--emit megatorn") == 2);
    // Megatron-Bridge's overrides, planned on the scenario's framework (the default here).
    REQUIRE(status("--emit megatron-bridge --json") == 0);
    std::ifstream bridge(out);
    const json b = json::parse(bridge);
    CHECK(b["format"] == "megatron-bridge");
    CHECK(b["settings"]["train"]["global_batch_size"] == 512);
    CHECK(b["settings"]["model"]["tensor_model_parallel_size"] == b["layout"]["tp"]);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a plan's JSON layout, given back as the scenario's layout, simulates to the plan's step time and labels apart") {
    // Every knob the plan chose must be in its JSON (layout_json), or the plan cannot be run as it
    // was priced: 128 GB200s offer activation offload over NVLink-C2C and HSDP; Mixtral offers
    // expert parallelism and selective recompute.
    const auto dir = std::filesystem::temp_directory_path() / ("sextant-plan-roundtrip-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const json gb200 = {{"model", "llama3-70b"},
                        {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 128}}},
                        {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "fp8"}, {"framework", "nemo-2026"}}}};
    json mixtral = load_json_file(data_dir() / "scenarios" / "mixtral-8x7b-h100.json", "");
    mixtral.erase("layout");
    for (const json& scenario : {gb200, mixtral}) {
        const auto file = (dir / "s.json").string();
        std::ofstream(file) << scenario.dump();
        const std::string out = (dir / "plan.json").string();
        REQUIRE(std::system((std::string(SEXTANT_BINARY) + " plan " + file + " --threads 2 --top 6 --json >" + out + " 2>/dev/null").c_str()) == 0);
        const json plans = json::parse(std::ifstream(out))["plans"];
        REQUIRE(plans.size() >= 3);
        std::set<std::string> labels;
        for (std::size_t i = 0; i < 3; ++i) {
            CAPTURE(plans[i]["layout"].dump());
            json fixed = scenario;
            fixed["layout"] = plans[i]["layout"];
            const auto again = (dir / "fixed.json").string();
            std::ofstream(again) << fixed.dump();
            const std::string sim = (dir / "sim.json").string();
            REQUIRE(std::system((std::string(SEXTANT_BINARY) + " simulate " + again + " --json >" + sim + " 2>/dev/null").c_str()) == 0);
            const json doc = json::parse(std::ifstream(sim));
            CHECK(doc["step_time_s"].get<double>() == doctest::Approx(plans[i]["step_time_s"].get<double>()).epsilon(1e-9));
            CHECK(doc["peak_memory_bytes"].get<double>() == doctest::Approx(plans[i]["peak_memory_bytes"].get<double>()).epsilon(1e-9));
            labels.insert(layout_label(resolve_layout(parse_scenario(fixed, data_dir()), parse_layout(plans[i]["layout"], "/layout"))));
        }
        CHECK(labels.size() == 3);  // three different layouts read as three different labels
    }
    std::filesystem::remove_all(dir);
}
