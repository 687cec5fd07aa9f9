// `sextant validate RUNS.json [--json]`: predicted vs measured step time, per run and as MAPE.
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "report/breakdown_json.hpp"
#include "report/output.hpp"
#include "core/table.hpp"
#include "validate/published_runs.hpp"
#include "validate/summary.hpp"
#include "validate/sweeps.hpp"

namespace sextant::cli {

namespace {
void print_planner_quality(const ValidationReport& r) {
    TextTable q({"run", "planner's best layout", "vs published", "published ranks in top"});
    std::size_t at_least = 0, top10 = 0, rated = 0;
    for (const auto& v : r.runs) {
        if (v.error) continue;
        ++rated;
        const double gain = v.planner_tokens_per_s / v.published_tokens_per_s - 1;
        at_least += gain >= -1e-9 ? 1 : 0;
        top10 += v.published_percentile <= 10.0 ? 1 : 0;
        q.add_row({v.id, v.planner_layout, fmt::format("{:+.1f}%", 100 * gain), fmt::format("{:.1f}%", v.published_percentile)});
    }
    std::cout << "\n" << q.render();
    std::cout << fmt::format("\nplanner >= published layout on {} of {} runs; published layout in the top 10% on {} of {}\n", at_least,
                             rated, top10, rated);
}

// Measured sweeps of several layouts of one model on one machine: does Sextant order them as
// measured, and does its top plan reach every one?
void run_sweeps(const std::string& file, bool as_json) {
    const std::vector<Sweep> sweeps = measured_sweeps(file);
    if (as_json) {
        json out = json::array();
        for (const auto& s : sweeps) {
            json members = json::array();
            for (const auto& m : s.members)
                members.push_back({{"id", m.id}, {"layout", m.layout}, {"measured_tokens_per_s", m.measured_tokens_per_s},
                                   {"predicted_tokens_per_s", m.predicted_tokens_per_s}});
            json row = {{"sweep", s.key}, {"members", members}, {"skipped", s.skipped}, {"rated", s.rated()}};
            if (s.rated())
                row.update({{"kendall_tau", s.kendall_tau}, {"planner_layout", s.planner_layout},
                            {"planner_tokens_per_s", s.planner_tokens_per_s}, {"planner_at_least_all", s.planner_at_least_all}});
            out.push_back(row);
        }
        std::cout << json({{"sweeps", out}}).dump(2) << "\n";
        return;
    }
    TextTable t({"sweep (model, GPUs, precision, seq)", "layouts", "Kendall tau", "planner's best", "planner >= all"});
    std::size_t rated = 0, ordered = 0, reached = 0;
    for (const auto& s : sweeps) {
        if (!s.rated()) continue;
        ++rated;
        ordered += s.kendall_tau > 0.999 ? 1 : 0;
        reached += s.planner_at_least_all ? 1 : 0;
        t.add_row({s.key, std::to_string(s.members.size()), fmt::format("{:+.2f}", s.kendall_tau), s.planner_layout,
                   s.planner_at_least_all ? "yes" : "no"});
    }
    std::cout << t.render();
    std::cout << fmt::format("\n{} sweeps rated: ordered exactly as measured in {}, the planner's top plan at least every "
                             "published layout in {}\n",
                             rated, ordered, reached);
    for (const auto& s : sweeps) {
        if (s.rated()) {
            std::cout << "\n" << s.key << ": measured / predicted tokens/s\n";
            for (const auto& m : s.members)
                std::cout << fmt::format("  {:<58} {:>10.0f} {:>10.0f}  {}\n", m.id, m.measured_tokens_per_s, m.predicted_tokens_per_s, m.layout);
        }
    }
    std::cout << "\nskipped (not expressible yet, or a repeat of a layout):\n";
    for (const auto& s : sweeps) {
        if (s.skipped.empty()) continue;
        std::cout << "  " << s.key << (s.rated() ? "" : " (not rated: fewer than two layouts left)") << "\n";
        for (const auto& k : s.skipped) std::cout << "    " << k << "\n";
    }
}

// The summary per group (--by, --exclude).
void add_summary(Output& out, const std::vector<GroupSummary>& groups, const std::string& by, std::size_t excluded) {
    Table& t = out.table("/groups", {{"group", by.empty() ? "runs" : by},
                                     {"runs", "runs"},
                                     {"mape_pct", "MAPE"},
                                     {"mean_error_pct", "mean error"},
                                     {"max_abs_error_pct", "worst"}});
    for (const auto& g : groups)
        t.rows.push_back({g.group, g.runs, Value(g.mape_pct, Style::Percent), Value(g.mean_error_pct, Style::SignedPercent),
                          Value(g.max_abs_error_pct, Style::Percent)});
    if (excluded) out.note(fmt::format("({} runs of the --exclude files left out: they fed a fit)", excluded), true);
}

// Per run: predicted against measured, what was chosen for the knobs the source left open.
Output validation_output(const ValidationReport& r, bool planner) {
    Output out;
    Table& t = out.table("/runs", {{"id", "run"},
                                   {"measured_step_time_s", "measured"},
                                   {"predicted_step_time_s", "predicted"},
                                   {"error_pct", "error"},
                                   {"mfu", "MFU"},
                                   {"chosen", "chosen (knobs the source left open)"},
                                   {"tolerance", ""},
                                   {"breakdown", ""},
                                   {"planner", ""},
                                   {"error", ""}});
    for (const auto& v : r.runs) {
        if (v.error) {
            t.rows.push_back({v.id, {}, {}, {}, {}, Value::structured(nullptr, std::string("error: ") + v.error->what()), {}, {}, {},
                              v.error->what()});
            continue;
        }
        json chosen = json::object();
        std::string chosen_text;
        for (const auto& k : v.chosen_knobs) {
            const auto eq = k.find('=');
            chosen[k.substr(0, eq)] = k.substr(eq + 1);
            chosen_text += (chosen_text.empty() ? "" : " ") + k;
        }
        json planner_json;  // null: not asked for
        if (planner)
            planner_json = {{"best_layout", v.planner_layout}, {"best_tokens_per_s", v.planner_tokens_per_s},
                            {"published_tokens_per_s", v.published_tokens_per_s}, {"published_percentile", v.published_percentile}};
        t.rows.push_back({v.id, Value(v.measured_step_time_s, Style::FixedDuration, 3),
                          Value(v.predicted_step_time_s, Style::FixedDuration, 3), Value(v.error_pct, Style::SignedPercent),
                          Value(v.mfu, Style::Fraction), Value::structured(chosen, chosen_text), v.tolerance,
                          Value::structured(breakdown_json(v.breakdown), ""), Value::structured(planner_json, ""), {}});
    }
    out.add_facts({{"/mape_pct", "", r.mape_pct},
                   {"/max_abs_error_pct", "", r.max_abs_error_pct},
                   {"/worst_run", "", r.worst_run},
                   {"/failed_runs", "", r.failed}});
    out.note(fmt::format("{} runs: MAPE {:.1f}%, worst {} at {:.1f}%", r.runs.size() - r.failed, r.mape_pct, r.worst_run,
                         r.max_abs_error_pct));
    if (r.failed)
        out.note(fmt::format("{} runs not predicted (a run Sextant cannot express, whose published numbers contradict each other, "
                             "or whose layout it says does not fit; reasons above); they are not in the summary",
                             r.failed),
                 true);
    return out;
}

void run(const std::string& file, bool as_json, bool planner, const std::string& by, const std::vector<std::string>& exclude) {
    const std::vector<GroupKey> keys = parse_group_keys(by, "--by");
    const std::set<std::string> excluded = run_ids(exclude);
    const ValidationReport r = validate_runs(file, planner);
    Output out = validation_output(r, planner);
    if (!by.empty() || !exclude.empty()) {
        std::size_t left_out = 0;
        for (const auto& v : r.runs) left_out += excluded.count(v.id);
        add_summary(out, summarize(r, file, keys, excluded), by, left_out);
    }
    if (as_json) std::cout << render_json(out).dump(2) << "\n";
    else {
        std::cout << render_text(out);
        if (planner) print_planner_quality(r);
    }
    throw_first_error(r);  // exit 2 once the rest is reported
}
}  // namespace

void add_validate_command(CLI::App& app) {
    static std::string file;
    static bool as_json = false;
    static bool planner = false;
    static bool sweeps = false;
    static std::string by;
    static std::vector<std::string> exclude;
    auto* cmd = app.add_subcommand("validate", "Compare predicted and measured step times of published runs");
    cmd->add_flag("--planner", planner, "also search each run's whole layout and rank the published one");
    cmd->add_option("runs", file, "a published-runs/1 JSON file")->required();
    cmd->add_flag("--json", as_json, "one JSON document");
    cmd->add_flag("--sweeps", sweeps,
                  "the runs that measure several layouts of one model on one machine: Kendall's tau of predicted against measured "
                  "throughput, and whether the planner's top plan reaches every published layout");
    cmd->add_option("--by", by, "also summarise the runs by gpu, precision, moe, source or runtime (comma separated)");
    cmd->add_option("--exclude", exclude,
                    "published-runs files whose runs fed a fit (calibration/fit/*.json): left out of the summary")
        ->check(CLI::ExistingFile);
    cmd->callback([] {
        if (sweeps) run_sweeps(file, as_json);
        else run(file, as_json, planner, by, exclude);
    });
}

}  // namespace sextant::cli
