// `sextant plan SCENARIO`: search every open layout knob, simulate the best, explain the winner.
// Under mpirun the candidates are split across processes and rank 0 prints what one process
// would.
#include <chrono>
#include <optional>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/mpi_session.hpp"
#include "cli/option_checks.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"
#include "core/flag_values.hpp"
#include "core/output_file.hpp"
#include "core/suggest.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"
#include "planner/emit.hpp"
#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "reliability/duration_text.hpp"
#include "reliability/scenario_parts.hpp"
#include "reliability/time_to_train.hpp"
#include "report/accuracy_view.hpp"
#include "report/html_report.hpp"
#include "report/output.hpp"
#include "report/planner_view.hpp"

namespace sextant::cli {

namespace {
struct PlanArgs {
    std::string scenario;
    std::size_t top = 10;
    std::size_t simulate_top = 50;
    unsigned threads = 0;
    std::string objective = "mfu";
    std::string gpus;
    std::string global_batch;
    std::string emit;
    std::string framework;
    std::string html;
    bool json = false;
    bool search_all = false;
    bool any_framework = false;
    bool accuracy = false;
    std::optional<double> memory_margin;  // unset: the scenario's /memory/safety_margin
};

PlanOptions options_from(const PlanArgs& a) {
    PlanOptions o;
    o.top = a.top;
    o.simulate_top = std::max(a.simulate_top, a.top);
    o.threads = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
    if (a.objective != "mfu" && a.objective != "tokens_per_s" && a.objective != "time_to_train")
        throw InputError("--objective", "\"" + a.objective + "\"", "must be mfu, tokens_per_s or time_to_train");
    // time_to_train screens and simulates by throughput (a layout's failures, checkpoints and
    // restarts depend on its GPU count, not its knobs), then ranks the simulated plans by the
    // expected days of src/reliability/time_to_train.hpp.
    o.objective = a.objective == "mfu" ? Objective::Mfu : Objective::TokensPerSecond;
    o.framework_features = !a.any_framework;
    o.memory_margin = a.memory_margin;
    if (!a.gpus.empty()) o.gpu_counts = parse_count_sweep(a.gpus, "--gpus");
    if (!a.global_batch.empty()) o.global_batches = parse_count_sweep(a.global_batch, "--global-batch");
    return o;
}

// The largest cost besides compute with its share of the step ("tp 9.0%"): a name alone read as
// a bottleneck where it was 3 ms of a second. "-" where compute is all there is.
std::string dominant_cost(const PlanScore& s) {
    std::string name;
    double most = 0;
    for (const auto& [n, v] : s.breakdown)
        if (n != "compute" && v > most) { most = v; name = n; }
    if (name.empty() || s.step_time_s <= 0) return "-";
    return fmt::format("{} {:.1f}%", name, 100.0 * most / s.step_time_s);
}

// The share of HBM a plan leaves free.
double memory_margin(const PlanScore& s) { return 1.0 - s.peak_memory_bytes / s.capacity_bytes; }

// A layout as JSON (its knobs) and as text (its label).
Value layout_cell(const Layout& l) { return Value::structured(layout_json(l), layout_label(l)); }

// The columns a per-GPU-count table starts with (the sweep's and the time to train's), then its own.
std::vector<Column> variant_columns(std::vector<Column> own) {
    std::vector<Column> c = {{"gpus", "gpus"},          {"global_batch", "batch"}, {"fits", ""},
                             {"layout", "best layout"}, {"step_time_s", "step"},   {"mfu", "MFU"}};
    c.insert(c.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
    return c;
}

// A row of such a table: the variant, and its best plan's cells then `own`; no plan: "no layout fits".
std::vector<Value> variant_row(const Scenario& s, const Plan* best, std::vector<Value> own = {}) {
    if (!best) return {s.cluster.gpus, s.training.global_batch, false, Value::structured(nullptr, "no layout fits")};
    std::vector<Value> row = {s.cluster.gpus, s.training.global_batch, true, layout_cell(best->layout),
                              Value(best->simulated.step_time_s, Style::Duration), Value(best->simulated.mfu, Style::Fraction)};
    row.insert(row.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
    return row;
}

// For "how many GPUs should I ask for?": each GPU count's (and batch's) best layout, with the
// time and GPU-hours of the run's token budget.
Table sweep_table(const Planner& planner, const std::vector<Plan>& plans) {
    const bool budget = planner.variants().front().scenario.training.train_tokens > 0;
    Table t{.pointer = "/variants",
            .columns = variant_columns({{"tokens_per_s", "tokens/s"},
                                        {"train_days", budget ? "train days" : ""},
                                        {"gpu_hours", budget ? "GPU-hours" : ""}})};
    t.title = std::string("Best layout per GPU count and batch") + (budget ? " (train days: the token budget without failures)" : "") + ":";
    const auto best = planner.best_per_variant(plans);
    for (std::size_t v = 0; v < best.size(); ++v) {
        const Scenario& s = planner.variants()[v].scenario;
        if (!best[v]) {
            t.rows.push_back(variant_row(s, nullptr));
            continue;
        }
        const Plan& p = *best[v];
        const RunLength run = run_length(s, p);
        const bool days = run.days > 0;
        t.rows.push_back(variant_row(s, &p,
                                     {Value(p.simulated.tokens_per_s, Style::Plain, 0), days ? Value(run.days, Style::Plain, 1) : Value(),
                                      days ? Value(run.gpu_hours, Style::Plain, 0) : Value()}));
    }
    return t;
}

// Time to train with failures, per plan (in the ranking's order) and per GPU count and batch.
struct TrainingTimes {
    reliability::TimeToTrainRanking ranking;
    std::vector<reliability::TimeToTrain> per_plan;  // aligned with the reordered plans
};

TrainingTimes rank_plans_by_time_to_train(const Planner& planner, std::vector<Plan>& plans) {
    TrainingTimes t;
    t.ranking = reliability::rank_by_time_to_train(planner, plans);
    std::vector<Plan> ordered;
    std::vector<std::size_t> new_index(plans.size());
    for (const auto& r : t.ranking.plans) {
        new_index[r.plan] = ordered.size();
        ordered.push_back(plans[r.plan]);
        t.per_plan.push_back(r.time);
    }
    for (auto& r : t.ranking.plans) r.plan = new_index[r.plan];
    for (auto& best : t.ranking.best)
        if (best) best->plan = new_index[best->plan];
    plans = std::move(ordered);
    return t;
}

constexpr double kDay = 86400.0;

// Each GPU count's (and batch's) fastest plan to the token budget, failures included.
Table time_to_train_table(const Planner& planner, const std::vector<Plan>& plans, const TrainingTimes& t) {
    Table table{.pointer = "/time_to_train",
                .columns = variant_columns({{"failure_free_days", "no-failure days"},
                                            {"job_mtbf_s", "job MTBF"},
                                            {"checkpoint_interval_s", "checkpoint"},
                                            {"goodput", "goodput"},
                                            {"expected_days", "expected days"},
                                            {"expected_days_ci", "95% CI"},
                                            {"gpu_hours", "GPU-hours"}})};
    table.title = fmt::format("Time to train {:.3g} tokens with failures ({}; checkpoints every Daly interval; each GPU count's best {} "
                              "layouts by the closed form, then {} simulated runs of each):",
                              t.ranking.train_tokens, t.ranking.failures, t.ranking.finalists, t.ranking.trials);
    for (std::size_t v = 0; v < t.ranking.best.size(); ++v) {
        const Scenario& s = planner.variants()[v].scenario;
        const auto& best = t.ranking.best[v];
        if (!best) {
            table.rows.push_back(variant_row(s, nullptr));
            continue;
        }
        const reliability::TimeToTrain& time = best->time;
        const double low = time.simulated_wall_s->ci_low / kDay, high = time.simulated_wall_s->ci_high / kDay;
        table.rows.push_back(variant_row(s, &plans[best->plan],
                                         {Value(time.work_s / kDay, Style::Plain, 1),
                                          Value::structured(time.job_mtbf_s, reliability::duration_label(time.job_mtbf_s)),
                                          Value::structured(time.interval_s, reliability::duration_label(time.interval_s)),
                                          Value(time.goodput, Style::Fraction), Value(time.expected_wall_s / kDay, Style::Plain, 1),
                                          Value::structured({low, high}, fmt::format("[{:.1f}, {:.1f}]", low, high)),
                                          Value(time.gpu_hours, Style::Plain, 0)}));
    }
    return table;
}

// The ranked plans, the sweep or time-to-train table, the search's size and why the winner wins.
Output plans_output(const Planner& planner, const std::vector<Plan>& plans, std::size_t simulated, std::size_t top, double seconds,
                    const TrainingTimes* times) {
    const bool sweep = planner.variants().size() > 1;
    Output out;
    Table& t = out.table("/plans", {{"rank", "#"},
                                    {"layout", "layout"},
                                    {"gpus", sweep ? "gpus" : ""},
                                    {"global_batch", sweep ? "batch" : ""},
                                    {"step_time_s", "step"},
                                    {"mfu", "MFU"},
                                    {"tokens_per_s", "tokens/s"},
                                    {"peak_memory_bytes", "peak mem"},
                                    {"", "headroom"},
                                    {"capacity_bytes", ""},
                                    {"memory_margin", "margin"},
                                    {"", "dominant"},
                                    {"screened_step_time_s", ""},
                                    {"breakdown", ""},
                                    {"expected_days", times ? "expected days" : ""}});
    for (std::size_t i = 0; i < std::min(top, plans.size()); ++i) {
        const Plan& p = plans[i];
        const Scenario& s = planner.variants()[p.variant].scenario;
        json breakdown = json::object();
        for (const auto& [n, v] : p.simulated.breakdown) breakdown[n] = v;
        t.rows.push_back({i + 1, layout_cell(p.layout), s.cluster.gpus, s.training.global_batch,
                          Value(p.simulated.step_time_s, Style::Duration), Value(p.simulated.mfu, Style::Fraction),
                          Value(p.simulated.tokens_per_s, Style::Plain, 0), Value(p.simulated.peak_memory_bytes, Style::ByteSize),
                          Value(p.simulated.capacity_bytes - p.simulated.peak_memory_bytes, Style::ByteSize), p.simulated.capacity_bytes,
                          Value(memory_margin(p.simulated), Style::Fraction), dominant_cost(p.simulated), p.screened.step_time_s,
                          Value::structured(breakdown, ""),
                          times ? Value(times->per_plan[i].expected_wall_s / kDay, Style::Plain, 1) : Value()});
    }
    // Text shows the time to train when it was asked for, else the sweep; JSON has both.
    if (times) out.blocks.emplace_back(time_to_train_table(planner, plans, *times));
    if (sweep) {
        out.blocks.emplace_back(sweep_table(planner, plans));
        std::get<Table>(out.blocks.back()).hidden_in_text = times != nullptr;
    }
    const std::vector<std::string> why = explain_winner(plans);
    out.add_facts({{"/explanation", "", Value::structured(why, "")},
                   {"/candidates_screened", "", planner.candidate_count()},
                   {"/candidates_simulated", "", simulated},
                   {"/seconds", "", seconds}});
    out.note(fmt::format("{} candidates screened, {} simulated, in {:.2f} s; layouts leaving less than {:.0f}% of HBM free are not "
                         "offered (--memory-margin)",
                         planner.candidate_count(), simulated, seconds, 100 * planner.memory_margin()));
    if (!plans.empty()) {
        std::string text = "Why " + layout_label(plans.front().layout) + " wins:";
        for (const auto& line : why) text += "\n  - " + line;
        out.note(text);
    }
    return out;
}

void emit_winner(const Planner& planner, const std::vector<Plan>& plans, const PlanArgs& a) {
    if (plans.empty()) return;
    const Plan& p = plans.front();
    const Emitted e = emit_plan(parse_emit_format(a.emit), planner.variants()[p.variant].scenario, p.layout);
    if (a.json) {
        json doc = e.to_json();
        doc["layout"] = layout_json(p.layout);
        std::cout << doc.dump(2) << "\n";
        return;
    }
    std::cout << "# " << emit_target(e.format).version << "; plan: " << layout_label(p.layout) << "\n" << e.text;
    for (const auto& n : e.notes) std::cerr << "note: " << n << "\n";
}

// The framework generation the plan is for: --framework, else the family --emit writes for when
// the scenario's framework is of another family, else the scenario's. Its runtime profile prices
// the plan and its features bound the search.
std::string search_framework(const PlanArgs& a, const Scenario& s) {
    const auto known = preset_names("calibration/runtime");
    if (!a.framework.empty()) {
        if (std::find(known.begin(), known.end(), a.framework) == known.end())
            throw InputError("--framework", "\"" + a.framework + "\"",
                             "unknown framework generation (calibration/runtime/); " + suggestion_text(a.framework, known));
        return a.framework;
    }
    const std::string current = runtime_name(s.training.framework);
    if (a.emit.empty()) return current;
    const std::string family = emit_target(parse_emit_format(a.emit)).framework;
    // NeMo runs Megatron-Core: its plans launch with Megatron-LM's arguments.
    const bool same_family = current.find(family) != std::string::npos || (family == "megatron" && current.starts_with("nemo"));
    if (same_family) return current;
    return emit_target(parse_emit_format(a.emit)).runtime;
}

void run_plan(const PlanArgs& a) {
    MpiSession mpi;
    const auto start = std::chrono::steady_clock::now();
    if (!a.emit.empty()) parse_emit_format(a.emit);
    Scenario scenario = load_checked_scenario(a.scenario);
    if (a.search_all) scenario.layout = LayoutSpec{};
    scenario.training.framework = search_framework(a, scenario);
    const bool time_to_train = a.objective == "time_to_train";
    if (time_to_train) reliability::require_time_to_train_inputs(scenario);
    Planner planner(scenario, options_from(a), make_step_evaluator);
    std::vector<ScreenedCandidate> mine = planner.screen({mpi.rank(), mpi.size()});
    std::vector<ScreenedCandidate> all = mpi.gather_to_root(mine);
    if (!mpi.is_root()) return;
    if (planner.candidate_count() == 0 || all.empty())
        throw InputError("/layout", "",
                         fmt::format("no candidate layout fits in memory with {:.0f}% of HBM left free (--memory-margin) and the knobs "
                                     "the scenario fixes", 100 * planner.memory_margin()));
    std::vector<Plan> plans = planner.finish(std::move(all));
    const std::size_t simulated = plans.size();
    plans = planner.distinct(std::move(plans));
    std::optional<TrainingTimes> times;
    if (time_to_train) times = rank_plans_by_time_to_train(planner, plans);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The winner's scenario: with --gpus or --global-batch, the variant it plans.
    std::optional<AccuracyContext> accuracy;
    if (a.accuracy && !plans.empty())
        accuracy = accuracy_context(planner.variants()[plans.front().variant].scenario, plans.front().simulated.step_time_s);
    if (!a.html.empty()) {
        ReportModel report{.title = "sextant plan: " + scenario.name, .generator = version_text(), .facts = scenario_facts(scenario, nullptr)};
        report.planner = planner_view(planner, plans, a.top);
        report.accuracy = accuracy;
        write_output_file(a.html, html_report(report), "--html");
    }
    if (!a.emit.empty()) emit_winner(planner, plans, a);
    else {
        Output out = plans_output(planner, plans, simulated, a.top, seconds, times ? &*times : nullptr);
        if (accuracy) add_accuracy(out, *accuracy);
        std::cout << (a.json ? render_json(out).dump(2) + "\n" : render_text(out));
    }
}
}  // namespace

void add_plan_command(CLI::App& app) {
    static PlanArgs args;
    auto* cmd = app.add_subcommand("plan", "Search every layout the scenario leaves open; rank by predicted MFU");
    cmd->add_option("scenario", args.scenario, "scenario JSON file")->required();
    cmd->add_option("--top", args.top, "plans to print")->check(at_least(1, "must be a positive integer"));
    cmd->add_option("--simulate-top", args.simulate_top, "screened candidates to simulate")
        ->check(at_least(1, "must be a positive integer"));
    cmd->add_option("--threads", args.threads, "worker threads (default or 0: all cores)")
        ->check(at_least(0, "must be 0 (all cores) or a positive integer"));
    cmd->add_option("--objective", args.objective,
                    "mfu, tokens_per_s, or time_to_train (expected days to the token budget with failures, checkpoints and restarts)");
    cmd->add_option("--gpus", args.gpus, "also search the GPU count: N, N1,N2 or LO..HI (doubling)");
    cmd->add_option("--global-batch", args.global_batch, "also search the global batch: N, N1,N2 or LO..HI");
    cmd->add_option("--framework", args.framework,
                    "framework generation to plan for (calibration/runtime/; default: the scenario's, or the --emit target's)");
    cmd->add_option("--emit", args.emit, "print the winner's launch settings: megatron (Megatron-LM arguments), megatron-bridge (run_recipe.py overrides), torchtitan (Python config), torchtitan-toml (v0.2.2) or deepspeed; with --json one document");
    cmd->add_option("--memory-margin", args.memory_margin,
                    "share of HBM a plan must leave free to be offered (default: the scenario's /memory/safety_margin, 0.1; 0 offers all that fits)")
        ->check(in_range(0, 0.9, "must be a fraction of HBM from 0 to below 0.9 (e.g. 0.1)"));
    cmd->add_option("--html", args.html, "also write the search as an HTML report to FILE (screens every candidate once more)");
    cmd->add_flag("--search-all", args.search_all, "ignore the scenario's layout: search every knob");
    cmd->add_flag("--any-framework", args.any_framework,
                  "also search what the scenario's framework does not implement (ZeRO stages, CP, selective recompute, interleaving, uneven stages, offload)");
    cmd->add_flag("--accuracy", args.accuracy,
                  "also show how the model did on the published runs like the winner (same GPU type, dense or MoE; none a fit used)");
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run_plan(args); });
}

}  // namespace sextant::cli
