// `sextant validate RUNS.json [--json]`: predicted vs measured step time, per run and as MAPE.
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "report/breakdown_json.hpp"
#include "report/table.hpp"
#include "validate/published_runs.hpp"

namespace sextant::cli {

namespace {
void run(const std::string& file, bool as_json, bool planner) {
    const ValidationReport r = validate_runs(file, planner);
    if (as_json) {
        json runs = json::array();
        for (const auto& v : r.runs) {
            json chosen = json::object();
            for (const auto& k : v.chosen_knobs) {
                const auto eq = k.find('=');
                chosen[k.substr(0, eq)] = k.substr(eq + 1);
            }
            runs.push_back({{"id", v.id}, {"predicted_step_time_s", v.predicted_step_time_s},
                            {"measured_step_time_s", v.measured_step_time_s}, {"error_pct", v.error_pct},
                            {"mfu", v.mfu}, {"tolerance", v.tolerance}, {"chosen", chosen}, {"breakdown", breakdown_json(v.breakdown)}});
            if (planner)
                runs.back()["planner"] = {{"best_layout", v.planner_layout}, {"best_tokens_per_s", v.planner_tokens_per_s},
                                          {"published_tokens_per_s", v.published_tokens_per_s},
                                          {"published_percentile", v.published_percentile}};
        }
        std::cout << json({{"runs", runs}, {"mape_pct", r.mape_pct}, {"max_abs_error_pct", r.max_abs_error_pct},
                           {"worst_run", r.worst_run}})
                         .dump(2)
                  << "\n";
        return;
    }
    TextTable t({"run", "measured", "predicted", "error", "MFU", "chosen (knobs the source left open)"});
    for (const auto& v : r.runs) {
        std::string chosen;
        for (const auto& k : v.chosen_knobs) chosen += (chosen.empty() ? "" : " ") + k;
        t.add_row({v.id, fmt::format("{:.3f} s", v.measured_step_time_s), fmt::format("{:.3f} s", v.predicted_step_time_s),
                   fmt::format("{:+.1f}%", v.error_pct), fmt::format("{:.1f}%", 100 * v.mfu), chosen});
    }
    std::cout << t.render();
    std::cout << fmt::format("\n{} runs: MAPE {:.1f}%, worst {} at {:.1f}%\n", r.runs.size(), r.mape_pct, r.worst_run, r.max_abs_error_pct);
    if (!planner) return;
    TextTable q({"run", "planner's best layout", "vs published", "published ranks in top"});
    std::size_t at_least = 0, top10 = 0;
    for (const auto& v : r.runs) {
        const double gain = v.planner_tokens_per_s / v.published_tokens_per_s - 1;
        at_least += gain >= -1e-9 ? 1 : 0;
        top10 += v.published_percentile <= 10.0 ? 1 : 0;
        q.add_row({v.id, v.planner_layout, fmt::format("{:+.1f}%", 100 * gain), fmt::format("{:.1f}%", v.published_percentile)});
    }
    std::cout << "\n" << q.render();
    std::cout << fmt::format("\nplanner >= published layout on {} of {} runs; published layout in the top 10% on {} of {}\n", at_least,
                             r.runs.size(), top10, r.runs.size());
}
}  // namespace

void add_validate_command(CLI::App& app) {
    static std::string file;
    static bool as_json = false;
    static bool planner = false;
    auto* cmd = app.add_subcommand("validate", "Compare predicted and measured step times of published runs");
    cmd->add_flag("--planner", planner, "also search each run's whole layout and rank the published one");
    cmd->add_option("runs", file, "a published-runs/1 JSON file")->required();
    cmd->add_flag("--json", as_json, "one JSON document");
    cmd->callback([] { run(file, as_json, planner); });
}

}  // namespace sextant::cli
