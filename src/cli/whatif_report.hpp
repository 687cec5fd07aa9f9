#pragma once
// Text and JSON output of the what-if studies (sextant whatif ...).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/whatif_studies.hpp"

namespace sextant::cli {

using reliability::SweepRow;

// What the numbers of a study rest on: step time and its source, budget, checkpoint, failures.
std::string setup_text(const std::string& scenario_name, const reliability::RunSetup& setup,
                       std::int64_t trials, std::uint64_t seed);
nlohmann::json setup_json(const reliability::RunSetup& setup, std::int64_t trials, std::uint64_t seed);

std::string interval_study_text(const reliability::IntervalStudy& study);
nlohmann::json interval_study_json(const reliability::IntervalStudy& study);
std::string interval_study_csv(const reliability::IntervalStudy& study);
std::string interval_study_svg(const reliability::IntervalStudy& study, const std::string& title);

std::string sweep_text(const std::string& value_name, const std::vector<SweepRow>& rows);
nlohmann::json sweep_json(const std::string& value_name, const std::vector<SweepRow>& rows);
std::string sweep_csv(const std::string& value_name, const std::vector<SweepRow>& rows);

// Where the time of one run goes, per cause: events, lost work, downtime.
std::string breakdown_text(const reliability::RunSummary& summary);
nlohmann::json summary_json(const reliability::RunSummary& summary);

}  // namespace sextant::cli
