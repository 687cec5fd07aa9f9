#pragma once
// Where presets live and how a scenario part names one: an inline object, a preset name
// ("llama3-70b"), or a file path ("my/model.json", relative to the scenario's folder).
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "spec/fields.hpp"

namespace sextant {

// The folder holding models/, topologies/, calibration/ and scenarios/: $SEXTANT_DATA_DIR, else
// the source tree the binary was built from.
std::filesystem::path data_dir();

// Names of the presets of one kind ("models", "topologies", "topologies/gpus", "calibration",
// "scenarios"): the JSON file names without extension, sorted.
std::vector<std::string> preset_names(std::string_view kind);

// Reads a JSON file (core/input_file.hpp); a missing file or invalid JSON is an InputError at `path`.
json load_json_file(const std::filesystem::path& file, const std::string& path);
// Parses JSON text; a syntax error, a number no double holds (1e400) or nesting deeper than
// kMaxJsonDepth is an InputError at `path` showing `shown` (the file's name).
json parse_json_text(std::string_view text, const std::string& path, const std::string& shown);

// Loads a preset by name; an unknown name is an InputError at `path` naming the closest presets.
json load_preset(std::string_view kind, const std::string& name, const std::string& path);

// Turns a part reference into its JSON object. Strings that look like paths (contain '/' or end
// in .json) are files relative to `base_dir`; other strings are presets of `kind`. An object with
// a "preset" key is that preset with the object's other keys laid over it.
json resolve_part(const json& value, std::string_view kind, const std::filesystem::path& base_dir,
                  const std::string& path);

// A preset that starts from another of its kind ("preset": NAME) and overrides some of its keys,
// resolved through at most four levels.
json resolve_inherited(const json& doc, std::string_view kind, const std::string& path);

}  // namespace sextant
