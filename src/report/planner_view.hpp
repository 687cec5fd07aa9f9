#pragma once
// What reports show of a scenario and of a planner's search, built from the planner's results.
#include <string>
#include <vector>

#include "planner/planner.hpp"
#include "report/report_model.hpp"

namespace sextant {

// Failure-free days and GPU-hours to train the scenario's token budget at a plan's throughput
// (zero without a budget).
struct RunLength {
    double days = 0;
    double gpu_hours = 0;
};
RunLength run_length(const Scenario& scenario, const Plan& plan);

// The screened cloud (every candidate that fits, closed form: a second screening pass), the best
// `top` of `ranked`, why the winner wins, and each variant's best when the search swept GPU counts
// or batches.
PlannerView planner_view(const Planner& planner, const std::vector<Plan>& ranked, std::size_t top);

// One line each: the model, the cluster, the training setup and the layout (when there is one),
// for a report's header.
std::vector<std::string> scenario_facts(const Scenario& scenario, const Layout* layout);

// The memory and step sections of a simulated layout.
void add_step_sections(ReportModel& report, const Scenario& scenario, const Layout& layout, const Simulation& simulation);

}  // namespace sextant
