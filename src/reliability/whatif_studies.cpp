#include "reliability/whatif_studies.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "reliability/duration_text.hpp"
#include "reliability/interval_formulas.hpp"

namespace sextant::reliability {

namespace {
// Runs the models together (each trial on every model, its draws made once).
std::vector<SweepRow> run_rows(std::vector<std::pair<SweepRow, RunModel>> points, const TrialOptions& o) {
    std::vector<RunModel> models;
    for (const auto& point : points) models.push_back(point.second);
    std::vector<RunSummary> summaries = simulate_sweep(models, o.trials, o.seed, o.threads);
    std::vector<SweepRow> rows;
    for (std::size_t i = 0; i < points.size(); ++i) {
        rows.push_back(std::move(points[i].first));
        rows.back().summary = std::move(summaries[i]);
    }
    return rows;
}
}  // namespace

IntervalStudy checkpoint_study(const RunSetup& setup, double low_s, double high_s, int points, const TrialOptions& o) {
    return sweep_intervals(setup.model, low_s, high_s, points, o.trials, o.seed, o.threads);
}

std::vector<SweepRow> spares_study(const RunSetup& setup, const std::vector<double>& spare_nodes, const TrialOptions& o) {
    std::vector<std::pair<SweepRow, RunModel>> points;
    for (double n : spare_nodes) {
        ReliabilitySpec spec = setup.spec;
        spec.restart.hot_spares = static_cast<std::int64_t>(n);
        points.push_back({{fmt::format("{:.0f}", n), n, {}}, derive_run_model(setup, spec, setup.times)});
    }
    return run_rows(std::move(points), o);
}

std::vector<SweepRow> failure_rate_study(const RunSetup& setup, const std::vector<double>& multipliers, const TrialOptions& o) {
    std::vector<std::pair<SweepRow, RunModel>> points;
    for (double k : multipliers) {
        ReliabilitySpec spec = setup.spec;
        spec.rate_multiplier *= k;
        points.push_back({{fmt::format("x{:g}", k), k, {}}, derive_run_model(setup, spec, setup.times)});
    }
    return run_rows(std::move(points), o);
}

std::vector<SweepRow> storage_study(const Scenario& scenario, const RunSetup& setup, const std::vector<double>& multipliers,
                                    const TrialOptions& o) {
    std::vector<std::pair<SweepRow, RunModel>> points;
    for (double k : multipliers) {
        Scenario scaled = scenario;
        scaled.cluster.storage.write_gbps *= k;
        scaled.cluster.storage.read_gbps *= k;
        ReliabilitySpec spec = setup.spec;
        if (spec.checkpoint.write_s) spec.checkpoint.write_s = *spec.checkpoint.write_s / k;
        if (spec.restart.load_s) spec.restart.load_s = *spec.restart.load_s / k;
        const CheckpointTimes times = checkpoint_times(scaled, spec, setup.size);
        points.push_back({{fmt::format("x{:g} (write {}, load {})", k, duration_label(times.write_s), duration_label(times.load_s)), k, {}},
                          derive_run_model(setup, spec, times)});
    }
    return run_rows(std::move(points), o);
}

std::vector<SweepRow> async_study(const RunSetup& setup, const TrialOptions& o) {
    std::vector<std::pair<SweepRow, RunModel>> points;
    for (bool async : {false, true}) {
        ReliabilitySpec spec = setup.spec;
        spec.checkpoint.async = async;
        RunModel m = derive_run_model(setup, spec, setup.times);
        const char* kind = async ? "async" : "blocking";
        const double value = async ? 1.0 : 0.0;
        points.push_back({{fmt::format("{} every {} (stall {})", kind, duration_label(m.checkpoint.interval_s),
                                       duration_label(m.checkpoint.stall_s)),
                           value, {}},
                          m});
        // Saves queue behind the previous background write, and happen at step boundaries.
        m.checkpoint.interval_s = std::max({daly_interval(m.checkpoint.stall_s, 1.0 / m.failure_rate()), m.checkpoint.write_s, setup.step.seconds});
        points.push_back({{fmt::format("{} every {} (Daly)", kind, duration_label(m.checkpoint.interval_s)), value, {}}, m});
    }
    return run_rows(std::move(points), o);
}

}  // namespace sextant::reliability
