#include "validate/published_runs.hpp"

#include <algorithm>
#include <numeric>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.hpp"
#include "memory/memory_model.hpp"
#include "spec/runtime_profile.hpp"

#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "spec/presets.hpp"

namespace sextant {

// The runtime generation a published run ran on: its framework's, refined by the container its
// notes name first ("framework_version=...", the published-runs/1 convention): a run labelled
// nemo-2024 from a NeMo 25.09 container ran NeMo 2025's software, whose recipes, kernels and
// fusions differ from 2024's.
std::string runtime_generation(const std::string& framework, const std::string& notes) {
    const std::string key = "framework_version=";
    if (notes.rfind(key, 0) != 0) return nearest_runtime_profile(framework);
    const std::string version = notes.substr(key.size(), notes.find(';') == std::string::npos ? std::string::npos : notes.find(';') - key.size());
    const auto digits = [&](std::size_t at, std::size_t n) {
        return at + n <= version.size() &&
               std::all_of(version.begin() + static_cast<std::ptrdiff_t>(at), version.begin() + static_cast<std::ptrdiff_t>(at + n),
                           [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    // "NeMo 25.09": the container's year.
    if (const auto at = version.find("NeMo "); at != std::string::npos && digits(at + 5, 2) && framework.rfind("nemo", 0) == 0)
        return nearest_runtime_profile("nemo-20" + version.substr(at + 5, 2));
    // A year the version names ("dev/main 2025", "(2025)"): that year's generation of the family.
    for (std::size_t at = 0; at + 4 <= version.size(); ++at)
        if (version.compare(at, 2, "20") == 0 && digits(at, 4) && (at + 4 == version.size() || !std::isdigit(static_cast<unsigned char>(version[at + 4]))) &&
            (at == 0 || !std::isdigit(static_cast<unsigned char>(version[at - 1]))))
            return nearest_runtime_profile(framework.substr(0, framework.rfind('-') == std::string::npos ? framework.size() : framework.rfind('-')) + "-" +
                                           version.substr(at, 4));
    return nearest_runtime_profile(framework);
}

namespace {
// The planner's search of a whole published layout: tokens/s, the best 20 simulated, and no
// memory margin (the published layout ran, so the planner is held to the same memory).
PlanOptions whole_layout_options() {
    PlanOptions options;
    options.objective = Objective::TokensPerSecond;
    options.simulate_top = 20;
    options.threads = std::max(1u, std::thread::hardware_concurrency());
    options.memory_margin = 0;
    options.search.search_schedule = false;  // a run that names no schedule ran its framework's default
    return options;
}

std::string run_runtime(const json& run) {
    const std::string published = run.contains("framework") && run["framework"].is_string() ? run["framework"].get<std::string>() : "";
    const std::string notes = run.contains("notes") && run["notes"].is_string() ? run["notes"].get<std::string>() : "";
    return runtime_generation(published, notes);
}

std::vector<std::string> open_knobs(const LayoutSpec& spec, const Layout& l) {
    std::vector<std::string> out;
    // The parallel degrees first, where the source left them open.
    if (!spec.tp) out.push_back("tp=" + std::to_string(l.tp));
    if (!spec.pp) out.push_back("pp=" + std::to_string(l.pp));
    if (!spec.cp) out.push_back("cp=" + std::to_string(l.cp));
    if (!spec.dp) out.push_back("dp=" + std::to_string(l.dp));
    if (!spec.ep && l.ep > 1) out.push_back("ep=" + std::to_string(l.ep));
    if (!spec.microbatch) out.push_back("microbatch=" + std::to_string(l.microbatch));
    if (!spec.vp) out.push_back("vp=" + std::to_string(l.vp));
    if (!spec.zero_stage) out.push_back("zero_stage=" + std::to_string(l.zero_stage));
    if (!spec.sequence_parallel) out.push_back(std::string("sequence_parallel=") + (l.sequence_parallel ? "true" : "false"));
    if (!spec.recompute) out.push_back("recompute=" + recompute_name(l.recompute));
    if (!spec.recompute_modules && l.recompute_modules != 0) out.push_back("recompute_modules=" + recompute_modules_text(l.recompute_modules));
    if (!spec.expert_tp && l.etp > 1) out.push_back("expert_tp=" + std::to_string(l.etp));
    if (!spec.activation_offload_layers && l.activation_offload_layers > 0)
        out.push_back("activation_offload_layers=" + std::to_string(l.activation_offload_layers));
    if (!spec.activation_offload_modules && l.offload_modules != 0)
        out.push_back("activation_offload_modules=" + offload_modules_text(l.offload_modules));
    if (!spec.activation_offload_fraction && l.offload_modules != 0 && l.offload_fraction < 1)
        out.push_back("activation_offload_fraction=" + fmt::format("{}", l.offload_fraction));
    if (!spec.optimizer_offload && l.optimizer_offload) out.push_back("optimizer_offload=true");
    if (!spec.ep_a2a_overlap && l.ep_a2a_overlap) out.push_back("ep_a2a_overlap=true");
    if (!spec.async_tp && l.async_tp) out.push_back("async_tp=true");
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
    // The fitting layouts that beat the published one, counted on the planner's threads (each
    // its own slot) without keeping their scores.
    std::vector<std::size_t> fitting(options.threads, 0), better(options.threads, 0);
    planner.visit_fitting(options.threads, [&](unsigned t, std::size_t, std::size_t, const PlanScore& score) {
        ++fitting[t];
        if (planner.objective(score) > mine * (1 + 1e-9)) ++better[t];
    });
    const std::size_t all = std::accumulate(fitting.begin(), fitting.end(), std::size_t{0});
    const std::size_t beaten = std::accumulate(better.begin(), better.end(), std::size_t{0});
    v.published_percentile = all == 0 ? 0.0 : 100.0 * static_cast<double>(beaten) / static_cast<double>(all);
}

// What the layout needs with the framework's defaults for the knobs the source left open: the
// reason a run that ran is refused, for the report.
std::string default_peak(const Scenario& s) {
    try {
        const MemoryReport m = estimate_memory(s, resolve_layout(s, s.layout));
        return fmt::format(" (with the defaults for them, stage {} needs {:.1f} GiB of {:.1f} GiB)", m.peak_stage,
                           m.peak.value() / kGiB, m.capacity.value() / kGiB);
    } catch (const InputError&) {
        return "";
    }
}

}  // namespace

RunValidation validate_run(const json& run, const std::string& path, const std::filesystem::path& base, bool with_planner) {
    const std::string published_framework = run.contains("framework") && run["framework"].is_string() ? run["framework"].get<std::string>() : "";
    const bool other_framework = run_runtime(run) != published_framework;
    const Scenario s = run_scenario(run, path, base);
    if (!run.contains("measured") || !run["measured"].contains("step_time_s") || !run["measured"]["step_time_s"].is_number())
        throw InputError(path + "/measured/step_time_s", "", "is required: the measured seconds per step");
    PlanOptions options;
    options.top = 1;
    options.simulate_top = 4;
    options.search.max_stage_trim = 0;
    options.search.search_schedule = false;  // a run that names no schedule ran its framework's default
    options.search.search_rank_order = false;  // nor does a recipe reorder ranks unless it says so
    options.memory_margin = 0;  // the knobs the source left open are the ones that ran
    Scenario fixed = s;
    // The framework splits layers its default way: the published pp's split, or each candidate
    // pp's where the source left pp open.
    if (!fixed.layout.stage_layers) {
        if (s.layout.pp) fixed.layout.stage_layers = default_stage_split(s.model.layers, *s.layout.pp);
        else options.search.default_split_only = true;
    }
    Planner planner(fixed, options, make_step_evaluator);
    std::vector<Plan> plans = planner.finish(planner.screen({0, 1}));
    if (plans.empty()) throw InputError(path + "/layout", "", "no setting of the unpublished knobs fits in memory" + default_peak(fixed));
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

Scenario run_scenario(const json& run, const std::string& path, const std::filesystem::path& base) {
    // A framework Sextant has no runtime profile for runs on the nearest one, and says so.
    json doc = run;
    const std::string published_framework = run.contains("framework") && run["framework"].is_string() ? run["framework"].get<std::string>() : "";
    if (run_runtime(run) != published_framework) doc["framework"] = run_runtime(run);
    try {
        Scenario s = parse_scenario(doc, base);
        // The MoE all-to-all overlap is a recipe switch, off in Megatron-Core unless set: a run
        // has it where its source (or its release's recipe) says so, and it is not guessed.
        if (!s.layout.ep_a2a_overlap) s.layout.ep_a2a_overlap = false;
        // So is async TP (torchtitan's --parallelism.enable_async_tensor_parallel).
        if (!s.layout.async_tp) s.layout.async_tp = false;
        return s;
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
            v = validate_run(run, path, file.parent_path(), with_planner);
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
