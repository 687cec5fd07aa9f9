#pragma once
// How far to trust a prediction: how the model did on the published runs most like a scenario.
// The runs are those of the validation files shipped with Sextant (tests/validation/), less every
// run a fit used (calibration/fit/): the runs on the scenario's GPU type that are of its kind
// (dense or MoE), each predicted afresh, so the figures always belong to the model that answers.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "spec/scenario.hpp"

namespace sextant {

struct SimilarRun {
    std::string id;
    std::string runtime;    // the runtime generation it ran on
    std::string precision;  // its precision recipe
    std::int64_t gpus = 0;
    double error_pct = 0;   // signed: + predicted slower than measured
};

struct AccuracyContext {
    std::string gpu;                // the scenario's GPU type
    bool moe = false;               // the scenario's kind
    bool other_gpus = false;        // no run of this GPU type is of its kind: the runs are of its kind on every GPU
    std::vector<SimilarRun> runs;   // the runs like the scenario, most alike first
    std::size_t refused = 0;        // runs like it that the model could not predict (their reasons: sextant validate)
    double mape_pct = 0;
    double mean_error_pct = 0;
    std::string worst_run;
    double worst_error_pct = 0;     // signed
    std::int64_t largest_gpus = 0;  // the largest GPU count among them
    // Where the scenario's measured step would fall if it erred as they did: the 10th and 90th
    // percentiles of their errors (linear between order statistics), and the step times that
    // turns the prediction into. Set only with at least kRangeRuns runs.
    bool has_range = false;
    double error_p10_pct = 0, error_p90_pct = 0;
    double predicted_step_time_s = 0;
    double step_time_low_s = 0, step_time_high_s = 0;
    std::int64_t scenario_gpus = 0;  // the scenario's
    std::string runtime;             // the scenario's runtime generation
    std::string precision;           // the scenario's precision recipe
    bool own_calibration = false;    // the scenario reads its own calibration, not the shipped one the errors are of
};

// The fewest runs whose errors make a range: below five, a 10th percentile is the smallest error.
inline constexpr std::size_t kRangeRuns = 5;

// The p-quantile (0..1) of `values`, linear between order statistics (Hyndman and Fan's type 7,
// numpy's default); `values` must not be empty.
double quantile(std::vector<double> values, double p);

// The published runs of `validation_dir`'s published-runs/1 files that are like `scenario` (same
// GPU type and kind; of the kind on any GPU where none is), less those of `fit_dir`'s fit sets,
// ordered by likeness (the same runtime generation, then the same precision recipe, then the
// nearest GPU count). Each is predicted with its own published calibration.
// `predicted_step_time_s` is the scenario's own prediction, which the range brackets.
AccuracyContext accuracy_context(const Scenario& scenario, double predicted_step_time_s, const std::filesystem::path& validation_dir,
                                 const std::filesystem::path& fit_dir);
// The same over the files Sextant ships: data_dir()'s tests/validation/ and calibration/fit/.
AccuracyContext accuracy_context(const Scenario& scenario, double predicted_step_time_s);

}  // namespace sextant
