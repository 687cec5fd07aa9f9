#include "validate/sweeps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "planner/explain.hpp"
#include "spec/presets.hpp"
#include "validate/published_runs.hpp"

namespace sextant {

namespace {
std::string text_of(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) return "?";
    return object[key].is_string() ? object[key].get<std::string>() : object[key].dump();
}

// What identifies "one model on one machine": the model, the GPU type and count, the precision
// and the sequence length.
std::string sweep_key(const json& run) {
    const json& m = run.contains("model") ? run["model"] : json();
    const std::string model = m.is_string() ? m.get<std::string>() : text_of(m, "name");
    const json& c = run.contains("cluster") ? run["cluster"] : json();
    return model + ", " + text_of(c, "gpus") + " x " + text_of(c, "gpu") + ", " + text_of(run, "precision") + ", seq " +
           text_of(run, "seq_len");
}

double measured_tokens_per_s(const json& run) {
    return run["global_batch"].get<double>() * run["seq_len"].get<double>() / run["measured"]["step_time_s"].get<double>();
}

int sign(double v) { return (v > 0) - (v < 0); }
}  // namespace

double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y) {
    double concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = i + 1; j < x.size(); ++j) {
            const int a = sign(x[i] - x[j]), b = sign(y[i] - y[j]);
            if (a == 0 && b == 0) continue;
            if (a == 0) ++ties_x;
            else if (b == 0) ++ties_y;
            else if (a == b) ++concordant;
            else ++discordant;
        }
    const double n_x = concordant + discordant + ties_y, n_y = concordant + discordant + ties_x;
    if (n_x == 0 || n_y == 0) return 0;
    return (concordant - discordant) / std::sqrt(n_x * n_y);
}

std::vector<Sweep> measured_sweeps(const std::filesystem::path& file) {
    const json doc = load_json_file(file, "");
    const ValidationReport report = validate_runs(file, false);
    const json& runs = doc["runs"];
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string key = sweep_key(runs[i]);
        if (!groups.count(key)) order.push_back(key);
        groups[key].push_back(i);
    }
    std::vector<Sweep> out;
    for (const std::string& key : order) {
        const auto& indices = groups[key];
        if (indices.size() < 2) continue;
        Sweep s;
        s.key = key;
        std::vector<std::pair<std::string, std::string>> layouts;  // published layout, first id
        std::vector<std::size_t> member_index;  // run index of each member
        for (std::size_t i : indices) {
            const RunValidation& v = report.runs[i];
            const json& run = runs[i];
            if (v.error) {
                s.skipped.push_back(v.id + ": " + v.error->what());
                continue;
            }
            // Several containers measuring one layout (as Sextant resolves it) are one point, not a
            // sweep: the first listed (the file lists the newest container first) stands for it.
            const std::string published = layout_label(v.chosen) + " batch " + text_of(run, "global_batch");
            const auto same = std::find_if(layouts.begin(), layouts.end(), [&](const auto& l) { return l.first == published; });
            if (same != layouts.end()) {
                s.skipped.push_back(v.id + ": the same layout and batch as " + same->second + " (another container)");
                continue;
            }
            member_index.push_back(i);
            layouts.emplace_back(published, v.id);
            s.members.push_back({v.id, layout_label(v.chosen), measured_tokens_per_s(run), v.published_tokens_per_s});
        }
        if (s.rated()) {
            std::vector<double> measured, predicted;
            for (const auto& m : s.members) {
                measured.push_back(m.measured_tokens_per_s);
                predicted.push_back(m.predicted_tokens_per_s);
            }
            s.kendall_tau = kendall_tau_b(measured, predicted);
            // The planner searches each batch of the sweep; every published layout is held to the
            // planner's best at its own batch.
            std::map<std::string, std::pair<double, Layout>> best_at;
            s.planner_at_least_all = true;
            for (std::size_t k = 0; k < s.members.size(); ++k) {
                const std::size_t i = member_index[k];
                const std::string batch = text_of(runs[i], "global_batch");
                if (!best_at.count(batch)) best_at[batch] = planner_best(run_scenario(runs[i], "/runs/" + std::to_string(i), file.parent_path()));
                const auto& [best, layout] = best_at[batch];
                if (k == 0) {
                    s.planner_tokens_per_s = best;
                    s.planner_layout = layout_label(layout);
                }
                s.planner_at_least_all = s.planner_at_least_all && best >= s.members[k].predicted_tokens_per_s * (1 - 1e-9);
            }
        }
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace sextant
