#pragma once
// Time to train with failures: for each GPU count (and batch) of a plan, which layout reaches the
// token budget in the fewest expected wall-clock days once failures, restarts, checkpoint stalls
// and planned maintenance are counted, and how long, at what goodput and for how many GPU-hours.
//
// The checkpoint interval of every plan is Daly's optimum for its stall and job MTBF (what
// `whatif checkpoint` finds the simulated optimum next to). Every plan is screened with the
// closed form of the simple model (Poisson failures, restarts that failures also interrupt,
// blocking saves; interval_formulas.hpp) plus its maintenance windows; the best few of each GPU
// count are then simulated run by run (Monte Carlo, run_simulator.hpp), which adds spare
// shortages and failure processes of any shape, and the simulated mean decides.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "planner/planner.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/run_simulator.hpp"

namespace sextant::reliability {

struct TimeToTrain {
    double work_s = 0;          // failure-free training time of the token budget
    double interval_s = 0;      // checkpoint interval (Daly's optimum)
    double job_mtbf_s = 0;      // all failure processes of the job together
    double expected_wall_s = 0; // closed form, or the simulated mean when simulated
    double goodput = 0;         // work / expected wall time
    double gpu_hours = 0;       // expected wall time x GPUs
    std::optional<Estimate> simulated_wall_s;  // Monte Carlo mean and 95% CI (finalists only)
};

// Before any search: the scenario has a token budget and a readable /reliability.
void require_time_to_train_inputs(const Scenario& scenario);

// The run of `layout` on `scenario` (its cluster size, batch, token budget and /reliability) at
// `step_time_s` per step: the checkpoint size and load time follow the layout's sharding.
RunSetup run_setup_for_plan(const Scenario& scenario, const Layout& layout, double step_time_s);

// The closed form: expected wall time at Daly's interval, with maintenance windows.
TimeToTrain expected_time_to_train(const RunSetup& setup, double gpus);

// The Monte Carlo of the same run at the same interval (setup.spec's trials and seed).
TimeToTrain simulated_time_to_train(const RunSetup& setup, double gpus);

struct RankedPlan {
    std::size_t plan = 0;  // index into the planner's ranked plans
    TimeToTrain time;
};

struct TimeToTrainRanking {
    std::vector<RankedPlan> plans;               // every plan, fewest expected days first
    std::vector<std::optional<RankedPlan>> best; // per variant: the simulated best (none fits: empty)
    std::string failures;                        // where the failure rates come from
    double train_tokens = 0;                     // the token budget
    std::int64_t trials = 0;                     // Monte Carlo runs per finalist
    std::size_t finalists = 0;                   // simulated per variant
};

// Ranks the planner's simulated plans by expected days to the token budget: closed form for all,
// then Monte Carlo for each variant's `finalists` best, which picks the variant's best.
TimeToTrainRanking rank_by_time_to_train(const Planner& planner, const std::vector<Plan>& plans,
                                         std::size_t finalists = 3);

}  // namespace sextant::reliability
