#include "spec/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace sextant {

namespace fs = std::filesystem;

fs::path data_dir() {
    if (const char* env = std::getenv("SEXTANT_DATA_DIR"); env && *env) return fs::path(env);
    return fs::path(SEXTANT_SOURCE_DIR);
}

std::vector<std::string> preset_names(std::string_view kind) {
    std::vector<std::string> names;
    fs::path dir = data_dir() / std::string(kind);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return names;
    for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
            names.push_back(entry.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

json load_json_file(const fs::path& file, const std::string& path) {
    std::ifstream in(file);
    if (!in) throw InputError(path, "\"" + file.string() + "\"", "file not found or not readable");
    std::stringstream text;
    text << in.rdbuf();
    try {
        return json::parse(text.str());
    } catch (const json::parse_error& e) {
        throw InputError(path, "\"" + file.string() + "\"",
                         "is not valid JSON (byte " + std::to_string(e.byte) + ")");
    }
}

json load_preset(std::string_view kind, const std::string& name, const std::string& path) {
    fs::path file = data_dir() / std::string(kind) / (name + ".json");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
        auto names = preset_names(kind);
        throw InputError(path, "\"" + name + "\"",
                         "unknown " + std::string(kind) + " preset; " + suggestion_text(name, names));
    }
    return load_json_file(file, path);
}

json resolve_part(const json& value, std::string_view kind, const fs::path& base_dir,
                  const std::string& path) {
    if (value.is_string()) {
        const std::string ref = value.get<std::string>();
        bool is_path = ref.find('/') != std::string::npos ||
                       (ref.size() > 5 && ref.substr(ref.size() - 5) == ".json");
        if (!is_path) return load_preset(kind, ref, path);
        fs::path file = fs::path(ref).is_absolute() ? fs::path(ref) : base_dir / ref;
        std::error_code ec;
        if (!fs::exists(file, ec) && fs::exists(ref, ec)) file = ref;
        return load_json_file(file, path);
    }
    if (value.is_object() && value.contains("preset")) {
        const json& name = value["preset"];
        if (!name.is_string()) throw InputError(path + "/preset", value_text(name), "must be a string");
        json base = load_preset(kind, name.get<std::string>(), path + "/preset");
        json overrides = value;
        overrides.erase("preset");
        base.merge_patch(overrides);
        return base;
    }
    if (!value.is_object())
        throw InputError(path, value_text(value), "must be an object, a preset name or a file path");
    return value;
}

json resolve_inherited(const json& doc, std::string_view kind, const std::string& path) {
    json resolved = doc;
    for (int depth = 0; resolved.is_object() && resolved.contains("preset"); ++depth) {
        if (depth == 4) throw InputError(path + "/preset", value_text(resolved["preset"]), "presets inherit at most 4 levels deep");
        resolved = resolve_part(resolved, kind, data_dir() / std::string(kind), path);
    }
    return resolved;
}

}  // namespace sextant
