#pragma once
// A plan as the launch settings of the frameworks users run, written for a named version of each
// (the commit whose argument checks the tests hold the output against). What a framework cannot
// express comes back as notes, printed beside the settings and kept in --json: never dropped.
//
// Model features (attention kind, MLP, norm, positions, MoE, MLA, MTP, precision) map to each
// framework's settings through one table in emit.cpp, kFeatures: a new model feature is one entry
// there, with what Megatron-LM, torchtitan and DeepSpeed each say for it (or that they cannot).
// Megatron-Bridge builds the model from its recipe, so that table has no column for it: its
// overrides set the layout from the same decisions as the Megatron export (pipeline split,
// recompute modules, dispatcher, data-parallel mode).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/scenario.hpp"

namespace sextant {

enum class EmitFormat { Megatron, Torchtitan, TorchtitanToml, DeepSpeed, MegatronBridge };

// The framework version each format is written for.
struct EmitTarget {
    const char* framework;  // runtime family: megatron, torchtitan, deepspeed
    const char* version;    // what the settings are written for, with the commit
    // The runtime generation (calibration/runtime/) a plan for this target is priced on when the
    // scenario's framework is of another family.
    const char* runtime;
};
EmitTarget emit_target(EmitFormat format);

struct Emitted {
    EmitFormat format = EmitFormat::Megatron;
    // Megatron-LM: the command-line arguments in order, each a flag and its value (none for a
    // switch). torchtitan: the configuration as {section: {key: value}}. DeepSpeed: the config.
    // Megatron-Bridge: the ConfigContainer overrides as {section: {field: value}} (and
    // mixed_precision: the recipe's name).
    std::vector<std::pair<std::string, std::optional<std::string>>> args;
    json settings = json::object();
    std::vector<std::string> notes;  // what the target cannot express, or expresses differently
    std::string text;                // what to paste: arguments, Python, TOML or JSON

    json to_json() const;            // {format, target, settings or args, notes, text}
};

EmitFormat parse_emit_format(const std::string& name);  // InputError on an unknown name
std::string emit_format_name(EmitFormat format);
Emitted emit_plan(EmitFormat format, const Scenario& scenario, const Layout& layout);

}  // namespace sextant
