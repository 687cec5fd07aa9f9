#pragma once
// `sextant calibrate fit`: the named factors of a calibration profile (compute, communication,
// overlap) fitted by least squares to step times measured on a live cluster, per GPU type and
// framework generation. Each job is a scenario with a complete layout and its measured seconds.
#include <string>
#include <vector>

#include "fit/least_squares.hpp"
#include "spec/scenario.hpp"

namespace sextant {

struct FitJob {
    std::string id;
    Scenario scenario;
    Layout layout;
    double measured_step_time_s = 0;
};

struct JobFit {
    std::string id;
    double measured = 0, before = 0, after = 0;
};

struct ProfileFit {
    std::vector<std::string> factor_names;
    FitResult result;
    std::vector<JobFit> jobs;
};

// Every job must share one GPU type and one framework generation (InputError otherwise).
ProfileFit fit_profile(const std::vector<FitJob>& jobs, const std::vector<std::string>& factors);

// The jobs of a published-runs/1 file, each with the layout `sextant validate` chooses for it.
std::vector<FitJob> jobs_from_published_runs(const std::string& file);

}  // namespace sextant
