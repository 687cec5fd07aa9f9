#include "reliability/interval_study.hpp"

#include <algorithm>
#include <cmath>

#include "reliability/interval_formulas.hpp"

namespace sextant::reliability {

namespace {
RunModel at_interval(const RunModel& base, double interval) {
    RunModel m = base;
    m.checkpoint.interval_s = interval;
    return m;
}

// Vertex of the parabola through (x0,y0), (x1,y1), (x2,y2); x1 when they are collinear.
double parabola_vertex(double x0, double y0, double x1, double y1, double x2, double y2) {
    const double d = (x0 - x1) * (x0 - x2) * (x1 - x2);
    const double a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / d;
    const double b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / d;
    if (!(a < 0)) return x1;
    return std::clamp(-b / (2 * a), x0, x2);
}
}  // namespace

IntervalStudy sweep_intervals(const RunModel& base, double low_s, double high_s, int points,
                              std::int64_t trials, std::uint64_t seed, unsigned threads) {
    IntervalStudy s;
    const int n = std::max(points, 2);
    check_study_work(base, trials, n + 1);  // the points and the refined optimum
    const double step = std::log(high_s / low_s) / (n - 1);
    // The grid's points run together, each trial on every point (its draws made once).
    std::vector<RunModel> grid;
    for (int i = 0; i < n; ++i) grid.push_back(at_interval(base, low_s * std::exp(step * i)));
    std::vector<RunSummary> summaries = simulate_sweep(grid, trials, seed, threads);
    for (int i = 0; i < n; ++i) s.curve.push_back({grid[i].checkpoint.interval_s, std::move(summaries[i])});
    std::size_t best = 0;
    for (std::size_t i = 1; i < s.curve.size(); ++i)
        if (s.curve[i].summary.goodput.mean > s.curve[best].summary.goodput.mean) best = i;
    s.optimal_interval_s = s.curve[best].interval_s;
    s.at_optimum = s.curve[best].summary;
    if (best > 0 && best + 1 < s.curve.size()) {
        auto x = [&](std::size_t i) { return std::log(s.curve[i].interval_s); };
        auto y = [&](std::size_t i) { return s.curve[i].summary.goodput.mean; };
        const double vertex = std::exp(parabola_vertex(x(best - 1), y(best - 1), x(best), y(best),
                                                       x(best + 1), y(best + 1)));
        RunSummary there = simulate_runs(at_interval(base, vertex), trials, seed, threads);
        if (there.goodput.mean >= s.at_optimum.goodput.mean) {
            s.optimal_interval_s = vertex;
            s.at_optimum = there;
        }
    }
    s.stall_s = base.checkpoint.stall_s;
    s.mtbf_s = 1.0 / base.failure_rate();
    s.young_interval_s = young_interval(s.stall_s, s.mtbf_s);
    s.daly_interval_s = daly_interval(s.stall_s, s.mtbf_s);
    return s;
}

}  // namespace sextant::reliability
