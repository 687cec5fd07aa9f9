#include "validate/summary.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr std::pair<std::string_view, GroupKey> kKeys[] = {
    {"gpu", GroupKey::Gpu}, {"precision", GroupKey::Precision}, {"moe", GroupKey::Moe}, {"source", GroupKey::Source}, {"runtime", GroupKey::Runtime}};

std::string text_at(const json& object, const char* key) {
    return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>() : "";
}

std::string value_of(const json& run, GroupKey key) {
    switch (key) {
        case GroupKey::Gpu: return run.contains("cluster") ? text_at(run["cluster"], "gpu") : "";
        case GroupKey::Precision: return text_at(run, "precision").empty() ? "bf16" : text_at(run, "precision");
        case GroupKey::Moe: return run.contains("model") && run["model"].is_object() && run["model"].contains("moe") ? "moe" : "dense";
        case GroupKey::Source: return text_at(run, "source");
        case GroupKey::Runtime: return runtime_generation(text_at(run, "framework"), text_at(run, "notes"));
    }
    return "";
}
}  // namespace

std::vector<GroupKey> parse_group_keys(const std::string& text, const std::string& flag) {
    std::vector<GroupKey> keys;
    std::size_t start = 0;
    while (start < text.size()) {
        const std::size_t comma = std::min(text.find(',', start), text.size());
        const std::string name = text.substr(start, comma - start);
        start = comma + 1;
        const auto it = std::find_if(std::begin(kKeys), std::end(kKeys), [&](const auto& k) { return k.first == name; });
        if (it == std::end(kKeys)) throw InputError(flag, "\"" + name + "\"", "must be gpu, precision, moe, source or runtime (comma separated)");
        keys.push_back(it->second);
    }
    return keys;
}

std::set<std::string> run_ids(const std::vector<std::string>& files) {
    std::set<std::string> ids;
    for (const auto& f : files) {
        const json doc = load_json_file(f, "");
        if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array())
            throw InputError("--exclude", "\"" + f + "\"", "must be a published-runs/1 file");
        for (const auto& r : doc["runs"])
            if (!text_at(r, "id").empty()) ids.insert(text_at(r, "id"));
    }
    return ids;
}

std::vector<GroupSummary> summarize(const ValidationReport& report, const std::string& file, const std::vector<GroupKey>& keys,
                                    const std::set<std::string>& excluded) {
    const json doc = load_json_file(file, "");
    std::map<std::string, json> by_id;
    for (const auto& r : doc["runs"]) by_id[text_at(r, "id")] = r;
    std::map<std::string, GroupSummary> groups;
    for (const auto& v : report.runs) {
        if (v.error || excluded.count(v.id) || !by_id.count(v.id)) continue;
        std::string name;
        for (GroupKey k : keys) name += (name.empty() ? "" : " / ") + value_of(by_id[v.id], k);
        if (keys.empty()) name = "all";
        GroupSummary& g = groups[name];
        g.group = name;
        ++g.runs;
        g.mape_pct += std::fabs(v.error_pct);
        g.mean_error_pct += v.error_pct;
        g.max_abs_error_pct = std::max(g.max_abs_error_pct, std::fabs(v.error_pct));
    }
    std::vector<GroupSummary> out;
    for (auto& [name, g] : groups) {
        g.mape_pct /= static_cast<double>(g.runs);
        g.mean_error_pct /= static_cast<double>(g.runs);
        out.push_back(g);
    }
    return out;
}

}  // namespace sextant
