#pragma once
// A plan as the launch settings of the frameworks users run. Knobs a framework cannot express
// come back as notes (printed beside the settings, never silently dropped).
#include <string>
#include <vector>

#include "spec/scenario.hpp"

namespace sextant {

enum class EmitFormat { Megatron, Torchtitan, DeepSpeed };

struct Emitted {
    std::string text;                // arguments, TOML fragment or JSON document
    std::vector<std::string> notes;  // what the target cannot express exactly
};

EmitFormat parse_emit_format(const std::string& name);  // InputError on an unknown name
Emitted emit_plan(EmitFormat format, const Scenario& scenario, const Layout& layout);

}  // namespace sextant
