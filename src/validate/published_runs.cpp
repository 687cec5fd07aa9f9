#include "validate/published_runs.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "cost/runtime_profile.hpp"

#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
// The planner's search of a whole published layout: tokens/s, the best 20 simulated, and no
// memory margin (the published layout ran, so the planner is held to the same memory).
PlanOptions whole_layout_options() {
    PlanOptions options;
    options.objective = Objective::TokensPerSecond;
    options.simulate_top = 20;
    options.threads = std::max(1u, std::thread::hardware_concurrency());
    options.memory_margin = 0;
    return options;
}

std::vector<std::string> open_knobs(const LayoutSpec& spec, const Layout& l) {
    std::vector<std::string> out;
    if (!spec.microbatch) out.push_back("microbatch=" + std::to_string(l.microbatch));
    if (!spec.vp) out.push_back("vp=" + std::to_string(l.vp));
    if (!spec.zero_stage) out.push_back("zero_stage=" + std::to_string(l.zero_stage));
    if (!spec.sequence_parallel) out.push_back(std::string("sequence_parallel=") + (l.sequence_parallel ? "true" : "false"));
    if (!spec.recompute) out.push_back("recompute=" + recompute_name(l.recompute));
    if (!spec.recompute_modules && l.recompute_modules != 0) out.push_back("recompute_modules=" + recompute_modules_text(l.recompute_modules));
    if (!spec.expert_tp && l.etp > 1) out.push_back("expert_tp=" + std::to_string(l.etp));
    if (!spec.activation_offload_layers && l.activation_offload_layers > 0)
        out.push_back("activation_offload_layers=" + std::to_string(l.activation_offload_layers));
    if (!spec.optimizer_offload && l.optimizer_offload) out.push_back("optimizer_offload=true");
    if (!spec.rank_order && l.rank_order != Layout{}.rank_order) out.push_back("rank_order=" + rank_order_text(l.rank_order));
    return out;
}

// The planner's quality on this run: search the whole layout, compare its best plan with the
// published layout (as chosen above), and rank the published layout among all candidates.
void rate_planner(const Scenario& s, RunValidation& v) {
    Scenario open = s;
    open.layout = LayoutSpec{};
    const PlanOptions options = whole_layout_options();
    Planner planner(open, options, make_step_evaluator);
    const std::vector<Plan> plans = planner.finish(planner.screen({0, 1}));
    if (plans.empty()) return;
    v.planner_tokens_per_s = plans.front().simulated.tokens_per_s;
    v.planner_layout = layout_label(plans.front().layout);
    const auto published = make_step_evaluator(s)->screen(v.chosen);
    const double mine = planner.objective(published);
    const std::vector<double> all = planner.fitting_objectives();
    const auto better = std::count_if(all.begin(), all.end(), [&](double o) { return o > mine * (1 + 1e-9); });
    v.published_percentile = all.empty() ? 0.0 : 100.0 * static_cast<double>(better) / static_cast<double>(all.size());
}

RunValidation validate_one(const json& run, const std::string& path, const std::filesystem::path& base, bool with_planner) {
    const std::string published_framework = run.contains("framework") && run["framework"].is_string() ? run["framework"].get<std::string>() : "";
    const bool other_framework = nearest_runtime_profile(published_framework) != published_framework;
    const Scenario s = run_scenario(run, path, base);
    if (!run.contains("measured") || !run["measured"].contains("step_time_s") || !run["measured"]["step_time_s"].is_number())
        throw InputError(path + "/measured/step_time_s", "", "is required: the measured seconds per step");
    PlanOptions options;
    options.top = 1;
    options.simulate_top = 4;
    options.search.max_stage_trim = 0;
    options.memory_margin = 0;  // the knobs the source left open are the ones that ran
    Scenario fixed = s;
    // The framework splits layers its default way; the published layout fixes tp, pp, dp, cp.
    if (!fixed.layout.stage_layers) fixed.layout.stage_layers = default_stage_split(s.model.layers, s.layout.pp.value_or(1));
    Planner planner(fixed, options, make_step_evaluator);
    std::vector<Plan> plans = planner.finish(planner.screen({0, 1}));
    if (plans.empty()) throw InputError(path + "/layout", "", "no setting of the unpublished knobs fits in memory");
    const Plan& best = plans.front();
    RunValidation v;
    v.id = string_member(run, "id", path, path);
    v.tolerance = string_member(run, "tolerance", "normal", path);
    v.chosen = best.layout;
    v.chosen_knobs = open_knobs(s.layout, best.layout);
    if (other_framework) v.chosen_knobs.push_back("runtime=" + s.training.framework);
    v.predicted_step_time_s = best.simulated.step_time_s;
    v.measured_step_time_s = run["measured"]["step_time_s"].get<double>();
    v.error_pct = 100.0 * (v.predicted_step_time_s / v.measured_step_time_s - 1.0);
    v.mfu = best.simulated.mfu;
    v.breakdown = best.simulated.breakdown;
    v.published_tokens_per_s = best.simulated.tokens_per_s;
    if (with_planner) rate_planner(s, v);
    return v;
}
}  // namespace

Scenario run_scenario(const json& run, const std::string& path, const std::filesystem::path& base) {
    // A framework Sextant has no runtime profile for runs on the nearest one, and says so.
    json doc = run;
    const std::string published_framework = run.contains("framework") && run["framework"].is_string() ? run["framework"].get<std::string>() : "";
    if (nearest_runtime_profile(published_framework) != published_framework) doc["framework"] = nearest_runtime_profile(published_framework);
    try {
        return parse_scenario(doc, base);
    } catch (const InputError& e) {
        throw InputError(path + e.path(), e.value(), e.rule());
    }
}

std::pair<double, Layout> planner_best(const Scenario& s) {
    Scenario open = s;
    open.layout = LayoutSpec{};
    Planner planner(open, whole_layout_options(), make_step_evaluator);
    const std::vector<Plan> plans = planner.finish(planner.screen({0, 1}));
    if (plans.empty()) return {0.0, Layout{}};
    return {plans.front().simulated.tokens_per_s, plans.front().layout};
}

ValidationReport validate_runs(const std::filesystem::path& file, bool with_planner) {
    const json doc = load_json_file(file, "");
    if (!doc.is_object() || !doc.contains("schema") || doc["schema"] != "published-runs/1")
        throw InputError("/schema", doc.is_object() && doc.contains("schema") ? value_text(doc["schema"]) : "",
                         "must be \"published-runs/1\"");
    if (!doc.contains("runs") || !doc["runs"].is_array() || doc["runs"].empty())
        throw InputError("/runs", "", "must be a non-empty array of runs");
    ValidationReport report;
    double total = 0;
    for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
        const json& run = doc["runs"][i];
        const std::string path = "/runs/" + std::to_string(i);
        RunValidation v;
        try {
            v = validate_one(run, path, file.parent_path(), with_planner);
        } catch (const InputError& e) {
            v.id = run.is_object() && run.contains("id") && run["id"].is_string() ? run["id"].get<std::string>() : path;
            v.error = e;
            ++report.failed;
            report.runs.push_back(std::move(v));
            continue;
        }
        total += std::fabs(v.error_pct);
        if (std::fabs(v.error_pct) >= report.max_abs_error_pct) {
            report.max_abs_error_pct = std::fabs(v.error_pct);
            report.worst_run = v.id;
        }
        report.runs.push_back(std::move(v));
    }
    const std::size_t counted = report.runs.size() - report.failed;
    report.mape_pct = counted ? total / static_cast<double>(counted) : 0.0;
    return report;
}

void throw_first_error(const ValidationReport& report) {
    for (const auto& v : report.runs)
        if (v.error) throw *v.error;
}

}  // namespace sextant
