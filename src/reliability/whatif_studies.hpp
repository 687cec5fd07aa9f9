#pragma once
// The what-if studies of `sextant whatif`: each varies one part of the reliability setup (the
// checkpoint interval, hot spares, failure rates, storage bandwidth, asynchronous saves) and runs
// the same seeded trials at every point. The command only reads options and prints.
#include <cstdint>
#include <string>
#include <vector>

#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "spec/scenario.hpp"

namespace sextant::reliability {

// Trials per point, their seed, and the threads they are split across (the answer does not
// depend on it). A sweep's points run together, each trial on every point, so progress is the
// trials' own line (core/progress.hpp, from simulate_sweep), not one per point.
struct TrialOptions {
    std::int64_t trials = 1000;
    std::uint64_t seed = 1;
    unsigned threads = 1;
};

// One row of a small sweep: a label, the swept value, and the simulated run.
struct SweepRow {
    std::string label;
    double value = 0;
    RunSummary summary;
};

IntervalStudy checkpoint_study(const RunSetup& setup, double low_s, double high_s, int points, const TrialOptions& o);
std::vector<SweepRow> spares_study(const RunSetup& setup, const std::vector<double>& spare_nodes, const TrialOptions& o);
std::vector<SweepRow> failure_rate_study(const RunSetup& setup, const std::vector<double>& multipliers, const TrialOptions& o);
// Storage bandwidth times each multiplier: save and load times follow, the interval stays.
std::vector<SweepRow> storage_study(const Scenario& scenario, const RunSetup& setup, const std::vector<double>& multipliers,
                                    const TrialOptions& o);
// Blocking and asynchronous saves, each at the setup's interval and at Daly's.
std::vector<SweepRow> async_study(const RunSetup& setup, const TrialOptions& o);

}  // namespace sextant::reliability
