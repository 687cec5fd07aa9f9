#include "spec/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/work_limits.hpp"
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

namespace {
// The deepest nesting of arrays and objects in JSON text, stopping once past `limit`; brackets
// inside strings do not count. Runs before the parser, whose recursion the depth would overflow.
int nesting_depth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            deepest = std::max(deepest, ++depth);
            if (deepest > limit) return deepest;
        } else if (c == ']' || c == '}') --depth;
    }
    return deepest;
}
}  // namespace

json parse_json_text(std::string_view text, const std::string& path, const std::string& shown) {
    if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
        throw InputError(path, shown, "nests arrays and objects more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    try {
        return json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        // Python's json module writes infinite and undefined floats as bare Infinity and NaN
        // (Hugging Face configs do: Nemotron-H's time_step_limit), which JSON has no token for.
        const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
        for (const std::string_view token : {"Infinity", "-Infinity", "NaN"})
            if (at < text.size() && text.substr(at, token.size()) == token)
                throw InputError(path, shown,
                                 "is not valid JSON (byte " + std::to_string(e.byte) + "): " + std::string(token) +
                                     " is Python's, not JSON; write a number instead (1e308 for Infinity)");
        throw InputError(path, shown, "is not valid JSON (byte " + std::to_string(e.byte) + ")");
    } catch (const json::out_of_range& e) {
        // 406: a number a double cannot hold (1e400); no JSON value Sextant reads is infinite.
        const std::string what = e.what();
        throw InputError(path, shown, "holds a number beyond the range of a double (1.8e308): " + what.substr(what.find(']') + 2));
    } catch (const json::exception& e) {
        throw InputError(path, shown, "is not valid JSON: " + std::string(e.what()));
    }
}

json load_json_file(const fs::path& file, const std::string& path) {
    return parse_json_text(read_input_file(file, path), path, "\"" + file.string() + "\"");
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
