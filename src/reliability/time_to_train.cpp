#include "reliability/time_to_train.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "reliability/interval_formulas.hpp"

namespace sextant::reliability {

namespace {
const ReliabilitySpec& scenario_spec(const Scenario& s) { return s.reliability; }

TimeToTrain common(const RunSetup& setup) {
    TimeToTrain t;
    t.work_s = setup.model.work_s;
    t.job_mtbf_s = setup.job_mtbf_s();
    t.interval_s = setup.model.checkpoint.interval_s;
    return t;
}

void finish(TimeToTrain& t, double wall_s, double gpus) {
    t.expected_wall_s = wall_s;
    t.goodput = t.work_s / wall_s;
    t.gpu_hours = wall_s / 3600.0 * gpus;
}
}  // namespace

void require_time_to_train_inputs(const Scenario& s) {
    const ReliabilitySpec spec = scenario_spec(s);
    if (!spec.train_tokens && s.training.train_tokens <= 0)
        throw InputError("--objective", "time_to_train",
                         "needs the run's token budget: /training/train_tokens or /reliability/train_tokens");
}

RunSetup run_setup_for_plan(const Scenario& scenario, const Layout& layout, double step_time_s) {
    Scenario s = scenario;
    s.layout = fixed_spec(layout);
    ReliabilitySpec spec = scenario_spec(s);
    spec.step_time_s = step_time_s;
    RunSetup setup = make_run_setup(s, spec);
    const double stall = setup.model.checkpoint.stall_s;
    setup.model.checkpoint.interval_s = setup.model.failure_rate() > 0 ? daly_interval(stall, setup.job_mtbf_s())
                                                                       : setup.model.work_s;
    setup.spec.checkpoint.interval_s = setup.model.checkpoint.interval_s;
    return setup;
}

TimeToTrain expected_time_to_train(const RunSetup& setup, double gpus) {
    TimeToTrain t = common(setup);
    const RunModel& m = setup.model;
    const double restart = m.recovery.detection_s + m.recovery.restart_s();
    double wall = expected_run_time(m.work_s, m.checkpoint.interval_s, m.checkpoint.stall_s, m.failure_rate(), restart);
    // Planned maintenance: each window saves, stops and restarts (no work lost); windows come
    // every mean gap of wall-clock time.
    if (m.maintenance.mean_gap_s > 0) {
        const double window = m.checkpoint.stall_s + m.maintenance.duration_s + m.recovery.process_start_s + m.recovery.load_s;
        wall += wall / m.maintenance.mean_gap_s * window;
    }
    finish(t, wall, gpus);
    return t;
}

TimeToTrain simulated_time_to_train(const RunSetup& setup, double gpus) {
    TimeToTrain t = common(setup);
    const RunSummary summary = simulate_runs(setup.model, setup.spec.trials, setup.spec.seed);
    t.simulated_wall_s = summary.wall_s;
    finish(t, summary.wall_s.mean, gpus);
    t.goodput = summary.goodput.mean;  // the mean of per-trial goodput, as whatif reports it
    return t;
}

TimeToTrainRanking rank_by_time_to_train(const Planner& planner, const std::vector<Plan>& plans, std::size_t finalists) {
    TimeToTrainRanking r;
    const auto& variants = planner.variants();
    std::vector<RunSetup> setups;
    setups.reserve(plans.size());
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const Scenario& s = variants[plans[i].variant].scenario;
        setups.push_back(run_setup_for_plan(s, plans[i].layout, plans[i].simulated.step_time_s));
        r.plans.push_back({i, expected_time_to_train(setups.back(), static_cast<double>(s.cluster.gpus))});
    }
    const auto by_days = [&](const RankedPlan& a, const RankedPlan& b) {
        if (a.time.expected_wall_s != b.time.expected_wall_s) return a.time.expected_wall_s < b.time.expected_wall_s;
        return a.plan < b.plan;
    };
    std::sort(r.plans.begin(), r.plans.end(), by_days);
    r.best.assign(variants.size(), std::nullopt);
    std::vector<std::size_t> simulated(variants.size(), 0);
    for (const RankedPlan& p : r.plans) {
        const std::size_t v = plans[p.plan].variant;
        if (simulated[v] >= finalists) continue;
        ++simulated[v];
        RankedPlan mc{p.plan, simulated_time_to_train(setups[p.plan], static_cast<double>(variants[v].scenario.cluster.gpus))};
        if (!r.best[v] || by_days(mc, *r.best[v])) r.best[v] = mc;
    }
    if (!setups.empty()) {
        const ReliabilitySpec& spec = setups.front().spec;
        r.failures = spec.preset.empty() ? "the scenario's /reliability/failures" : "failure rates of preset " + spec.preset;
        r.train_tokens = setups.front().train_tokens;
        r.trials = spec.trials;
    }
    r.finalists = finalists;
    return r;
}

}  // namespace sextant::reliability
