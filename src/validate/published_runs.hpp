#pragma once
// `sextant validate`: predicted vs measured step time on runs in the published-runs/1 schema.
// Knobs a run leaves null are chosen as its framework would: the setting with the best predicted
// throughput that fits in memory, among those the framework implements.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "spec/scenario.hpp"

namespace sextant {

struct RunValidation {
    std::string id;
    std::optional<InputError> error;  // the run could not be read; nothing below is set
    std::string tolerance;
    Layout chosen;
    std::vector<std::string> chosen_knobs;  // the knobs that were null, as "name=value"
    double predicted_step_time_s = 0;
    double measured_step_time_s = 0;
    double error_pct = 0;
    double mfu = 0;
    std::vector<std::pair<std::string, double>> breakdown;  // of the predicted step: (cause, seconds)
    // With the whole layout left open (--planner): the planner's best plan, and where the
    // published layout ranks among every candidate that fits (0 = best).
    double planner_tokens_per_s = 0;
    double published_tokens_per_s = 0;
    double published_percentile = 0;
    std::string planner_layout;
};

struct ValidationReport {
    std::vector<RunValidation> runs;  // every run, those with an error included
    std::size_t failed = 0;           // runs with an error, left out of the summary
    double mape_pct = 0;
    double max_abs_error_pct = 0;
    std::string worst_run;
};

// The scenario of one run (`path` is its JSON pointer, for errors), on the nearest runtime profile
// when Sextant has none of the run's framework name.
Scenario run_scenario(const json& run, const std::string& path, const std::filesystem::path& base);

// The planner's best predicted tokens/s for the run's model, cluster and batch with its whole
// layout open (the knobs its framework implements; no memory margin: the published layouts ran).
std::pair<double, Layout> planner_best(const Scenario& scenario);

// The runtime generation (calibration/runtime/) a published run ran on: the nearest profile to its
// framework, refined by the NeMo container its notes name ("framework_version=... NeMo 25.09 ...").
std::string runtime_generation(const std::string& framework, const std::string& notes);

// One run of a published-runs/1 file (`path` its JSON pointer, `base` the file's folder): the
// knobs its source left open chosen as its framework would, the step predicted and compared with
// the measurement. An InputError names the field a run cannot be read or fitted by.
RunValidation validate_run(const json& run, const std::string& path, const std::filesystem::path& base, bool with_planner = false);

// Each run is validated on its own: one the tool cannot read (an unknown GPU, a broken layout)
// carries its error and the others still count.
ValidationReport validate_runs(const std::filesystem::path& file, bool with_planner = false);
// The first run's error, if any run had one.
void throw_first_error(const ValidationReport& report);

}  // namespace sextant
