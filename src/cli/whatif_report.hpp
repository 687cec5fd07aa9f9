#pragma once
// The what-if studies' answers (sextant whatif ...) as outputs (report/output.hpp), and their CSV and SVG.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/whatif_studies.hpp"
#include "report/output.hpp"

namespace sextant::cli {

using reliability::SweepRow;

// What the numbers of a study rest on: step time and its source, budget, checkpoint, failures.
std::string setup_text(const std::string& scenario_name, const reliability::RunSetup& setup,
                       std::int64_t trials, std::uint64_t seed);
nlohmann::json setup_json(const reliability::RunSetup& setup, std::int64_t trials, std::uint64_t seed);

// What every study's output starts with: the scenario and what the numbers rest on.
struct StudyHeader {
    std::string scenario;
    const reliability::RunSetup& setup;
    std::int64_t trials = 0;
    std::uint64_t seed = 0;
};

// The checkpoint-interval study: the curve, optimum, Young and Daly, where the time goes.
Output interval_study_output(const StudyHeader& header, const reliability::IntervalStudy& study);
std::string interval_study_csv(const reliability::IntervalStudy& study);
std::string interval_study_svg(const reliability::IntervalStudy& study, const std::string& title);

// A sweep of one knob (spares, failure rate, storage, async): goodput and where the time goes per value.
Output sweep_output(const StudyHeader& header, const std::string& study, const std::string& value_name,
                    const std::vector<SweepRow>& rows, const std::string& note);
std::string sweep_csv(const std::string& value_name, const std::vector<SweepRow>& rows);

}  // namespace sextant::cli
