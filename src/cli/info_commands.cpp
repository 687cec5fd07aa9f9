// `sextant schema`: every scenario key, from the one table of settings.
// `sextant presets`: the presets shipped in models/, topologies/, calibration/, scenarios/.
// `sextant check SCENARIO`: parse and validate only.
#include <algorithm>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "model/params.hpp"
#include "reliability/scenario_parts.hpp"
#include "report/schema.hpp"
#include "core/table.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"
#include "spec/scenario.hpp"

namespace sextant::cli {

namespace {
std::string type_text(FieldType t) {
    switch (t) {
        case FieldType::Integer: return "integer";
        case FieldType::Number: return "number";
        case FieldType::Boolean: return "bool";
        case FieldType::String: return "string";
        case FieldType::Object: return "object";
        case FieldType::Array: return "array";
        case FieldType::Any: return "any";
    }
    return "";
}

void print_schema(bool as_json) {
    json doc = json::array();
    for (const auto& table : all_field_tables()) {
        json fields = json::array();
        if (!as_json) std::cout << table.object << " - " << table.help << "\n";
        TextTable text({"key", "type", "unit", "default", "range", "help"});
        for (const auto& f : table.fields) {
            std::string help(f.help);
            if (const std::string choices = choices_text(f); !choices.empty()) help += " (" + choices + ")";
            text.add_row({std::string(f.name), type_text(f.type), std::string(f.unit), default_text(f), range_text(f), help});
            fields.push_back({{"key", f.name}, {"type", type_text(f.type)}, {"unit", f.unit},
                              {"default", default_text(f)}, {"range", range_text(f)}, {"help", help}});
        }
        if (!as_json) std::cout << text.render() << "\n";
        doc.push_back({{"object", table.object}, {"help", table.help}, {"fields", fields}});
    }
    if (as_json) std::cout << doc.dump(2) << "\n";
}

void print_presets(bool as_json) {
    json doc = json::object();
    for (const char* kind : {"models", "topologies", "topologies/gpus", "calibration", "calibration/reliability", "scenarios"}) {
        doc[kind] = preset_names(kind);
        if (as_json) continue;
        std::cout << kind << ":";
        for (const auto& n : preset_names(kind)) std::cout << " " << n;
        std::cout << "\n";
    }
    if (as_json) std::cout << doc.dump(2) << "\n";
}

void print_check(const std::string& file, bool as_json) {
    Scenario s = load_checked_scenario(file);
    ParamCounts p = count_params(s.model);
    // The scenario is valid once loaded; its open knobs at their defaults may still not be a
    // layout that runs (sextant plan chooses them then), which check reports instead of failing.
    std::optional<Layout> l;
    std::string open_reason;
    try {
        l = resolve_layout(s, s.layout);
    } catch (const InputError& e) {
        open_reason = e.what();
    }
    if (as_json) {
        json doc = {{"valid", true},
                    {"model", s.model.name},
                    {"model_source", s.model.source},
                    {"params", p.total()},
                    {"active_params", p.active(s.model)},
                    {"gpus", s.cluster.gpus},
                    {"gpus_per_nvlink_domain", std::min(s.cluster.gpus, s.cluster.job_domain_gpus())}};
        if (l)
            doc["layout"] = {{"tp", l->tp}, {"pp", l->pp}, {"dp", l->dp}, {"cp", l->cp}, {"ep", l->ep},
                             {"vp", l->vp}, {"microbatch", l->microbatch}, {"zero_stage", l->zero_stage},
                             {"stage_layers", l->stage_layers}};
        else
            doc["layout"] = {{"open", open_reason}};
        std::cout << doc.dump(2) << "\n";
        return;
    }
    std::cout << file << ": valid\n"
              << "  model   " << s.model.name << ", " << format_count(p.total()) << " parameters";
    if (s.model.is_moe()) std::cout << " (" << format_count(p.active(s.model)) << " active)";
    if (!s.model.source.empty()) std::cout << "\n          " << s.model.source;
    std::cout << "\n  cluster " << s.cluster.gpus << " x " << s.cluster.gpu.name;
    // Where a job spans domains larger than its nodes, say how it is spread (cluster.segment_nodes).
    const std::int64_t share = s.cluster.job_domain_gpus();
    if (s.cluster.nvlink_domain_gpus > s.cluster.gpus_per_node && s.cluster.gpus > share)
        std::cout << ", " << s.cluster.gpus / share << " NVLink domains holding " << share << " each (segments of "
                  << share / s.cluster.gpus_per_node << " nodes)";
    std::cout << "\n";
    if (l)
        std::cout << "  layout  tp " << l->tp << ", pp " << l->pp << ", dp " << l->dp << ", cp " << l->cp
                  << ", ep " << l->ep << ", vp " << l->vp << ", microbatch " << l->microbatch << ", ZeRO stage " << l->zero_stage
                  // A stage the layout does not name is the framework's (runtime zero_stage).
                  << (s.layout.zero_stage ? "" : " (" + runtime_name(s.training.framework) + "'s default)") << "\n";
    else
        std::cout << "  layout  open: run sextant plan (" << open_reason << ")\n";
}
}  // namespace

void add_info_commands(CLI::App& app) {
    auto* schema = app.add_subcommand("schema", "Print every scenario key: type, unit, default, range, help");
    static bool schema_as_json = false;
    schema->add_flag("--json", schema_as_json, "one JSON document");
    schema->callback([] { print_schema(schema_as_json); });

    static bool presets_as_json = false;
    auto* presets = app.add_subcommand("presets", "List the shipped presets");
    presets->add_flag("--json", presets_as_json, "one JSON document");
    presets->callback([] { print_presets(presets_as_json); });

    static std::string check_file;
    static bool check_as_json = false;
    auto* check = app.add_subcommand("check", "Parse and validate a scenario, print what it resolves to");
    check->add_option("scenario", check_file, "scenario JSON file")->required();
    check->add_flag("--json", check_as_json, "one JSON document");
    check->callback([] { print_check(check_file, check_as_json); });
}

}  // namespace sextant::cli
