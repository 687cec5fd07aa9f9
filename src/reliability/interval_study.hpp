#pragma once
// The checkpoint-interval sweep: the simulated goodput curve, its optimum, and the closed-form
// optima of Young and Daly beside it.
#include <cstdint>
#include <vector>

#include "reliability/run_simulator.hpp"

namespace sextant::reliability {

struct IntervalPoint {
    double interval_s = 0;
    RunSummary summary;
};

struct IntervalStudy {
    std::vector<IntervalPoint> curve;  // ascending intervals
    double optimal_interval_s = 0;     // simulated
    RunSummary at_optimum;
    double young_interval_s = 0;
    double daly_interval_s = 0;
    double stall_s = 0;                // delta of the closed forms: the blocking stall per save
    double mtbf_s = 0;                 // M of the closed forms: all failure processes together
};

// `points` intervals spaced evenly in log between low_s and high_s; every point runs the same
// trial seeds (common random numbers), so differences between points are not sampling noise of
// the failure times. The optimum is the vertex of a parabola in log(interval) through the best
// grid point and its neighbours, kept only if it simulates at least as well as that point.
// The grid's points run together (simulate_sweep), their trials split across `threads` (the
// answer does not depend on it).
IntervalStudy sweep_intervals(const RunModel& base, double low_s, double high_s, int points,
                              std::int64_t trials, std::uint64_t seed, unsigned threads = 1);

}  // namespace sextant::reliability
