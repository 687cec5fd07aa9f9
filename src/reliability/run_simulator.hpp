#pragma once
// Discrete-event simulation of a whole training run under failures, checkpoints, restarts,
// spares and planned maintenance, and the Monte Carlo over seeded trials.
//
// Time is a double in seconds throughout. Failures of every process arrive in wall-clock time
// whatever the job is doing; one that strikes while the job computes or saves loses the work
// since the last durable checkpoint; one that strikes during a recovery starts the recovery
// over. Failures that arrive while the job is down for planned maintenance are repaired in the
// window and cost nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "reliability/rng.hpp"
#include "reliability/run_model.hpp"

namespace sextant::reliability {

// Where one trial's wall-clock time went. The buckets add up to wall_s exactly:
// wall = work + lost_work + stall + detection + spare_wait + restart + maintenance.
struct TrialResult {
    double wall_s = 0;
    double work_s = 0;
    double stall_s = 0;          // blocked by saves (including saves a failure then destroyed)
    double detection_s = 0;
    double spare_wait_s = 0;     // no hot spare: waiting for a repaired node
    double restart_s = 0;        // reschedule, process start and checkpoint load
    double maintenance_s = 0;    // planned window: final save and the maintenance itself
    double lost_checkpoints = 0; // async writes a failure struck before they were durable
    // Per cause (the failure processes in order, then planned maintenance):
    std::vector<double> events;
    std::vector<double> lost_work_s;  // training redone after rolling back
    std::vector<double> downtime_s;   // detection + spare wait + restart charged to this cause

    double lost_work_total() const;
    void reset(std::size_t causes);
};

// One trial, deterministic for its seed. A run that cannot finish (wall time past 100x the
// failure-free time) is an InputError at /reliability. Reuses the buffers of `out` and of the simulator, so a
// loop over trials allocates nothing.
class RunSimulator {
public:
    explicit RunSimulator(const RunModel& model);
    void run_trial(std::uint64_t seed, TrialResult& out);
    // The same, on the draws of a seed that other models' runs of the trial read too (each run
    // reads them from the first); `draws` is reset to the trial's seed by the caller.
    void run_trial(LogUniforms& draws, TrialResult& out);

private:
    const RunModel& model_;
    std::vector<double> scales_;       // scale of each gap distribution (for its mean)
    std::vector<double> next_failure_;
    std::vector<double> repairs_;  // ring of the times at which nodes in repair become spares again
    LogUniforms own_draws_;        // for run_trial(seed)
};

struct Estimate {
    double mean = 0;
    double ci_low = 0;   // 95% confidence interval of the mean (normal approximation)
    double ci_high = 0;
};

struct CauseSummary {
    std::string cause;
    double events = 0;       // mean per run
    double lost_work_s = 0;  // mean per run
    double downtime_s = 0;   // mean per run
};

struct RunSummary {
    std::int64_t trials = 0;
    double work_s = 0;
    Estimate wall_s;
    Estimate goodput;  // work_s / wall_s per trial, averaged
    double stall_s = 0, detection_s = 0, spare_wait_s = 0, restart_s = 0, maintenance_s = 0;
    double lost_checkpoints = 0;
    std::vector<CauseSummary> causes;
    double lost_work_s() const;
};

// `trials` trials with seeds trial_seed(seed, 0..trials-1), split across `threads` threads; the
// summary is the same to the bit for any thread count. Refuses work beyond the RunEvents limit
// (check_study_work with one point) before the first trial.
RunSummary simulate_runs(const RunModel& model, std::int64_t trials, std::uint64_t seed, unsigned threads = 1);
// simulate_runs of each model, the same summaries to the bit, with each trial run on every model
// in turn: the trial's draws (the logarithms of its uniforms) are made once and read by every
// model's run of it, instead of once per model. Each model is checked as simulate_runs checks
// it, all before the first trial.
std::vector<RunSummary> simulate_sweep(const std::vector<RunModel>& models, std::int64_t trials, std::uint64_t seed,
                                       unsigned threads = 1);

// The events one trial draws, from above: each failure and maintenance costs an interruption and
// a restart, and the quiet cycles between them are skipped whole (a run is periodic there).
double expected_events_per_trial(const RunModel& model);
// Refuses `trials` x `points` runs of `model` beyond the RunEvents work limit, naming --trials.
void check_study_work(const RunModel& model, std::int64_t trials, std::int64_t points);

// Checks a model before it runs (positive work and interval, finite costs); InternalError when
// a caller built an impossible model, since user input is checked where it is parsed.
void check_run_model(const RunModel& model);

}  // namespace sextant::reliability
