#pragma once
// What the run-level simulator consumes: plain seconds and rates, already derived from the
// scenario (see run_setup.hpp). Keeping the engine's input this small lets tests build cases
// with a known closed-form answer directly.
#include <string>
#include <vector>

#include "spec/reliability_spec.hpp"

namespace sextant::reliability {

// One source of interruptions for the whole job: the gap between two of its events is drawn
// from `gap` with mean `mean_s` (Weibull: shape `shape`).
struct FailureProcess {
    std::string cause;        // e.g. "gpu", "software"
    GapKind gap = GapKind::Exponential;
    double mean_s = 0;        // mean time between interruptions of the job from this cause
    double shape = 1;         // Weibull shape; ignored otherwise
    bool needs_spare = false; // recovery swaps the failed node for a hot spare
};

struct RecoveryCosts {
    double detection_s = 0;        // failure -> job known to be down
    double reschedule_s = 0;       // job torn down and rescheduled (spare swap included)
    double process_start_s = 0;    // processes started, NCCL communicators built
    double load_s = 0;             // checkpoint read back
    int hot_spares = 0;            // nodes ready to replace a failed one (0: wait for repair)
    double replacement_s = 0;      // a failed node's repair, after which it is a spare again

    double restart_s() const { return reschedule_s + process_start_s + load_s; }
};

struct CheckpointPolicy {
    double interval_s = 0;   // training time between two saves
    double stall_s = 0;      // training blocked per save
    bool async = false;      // the write continues in the background after the stall
    double write_s = 0;      // background write duration (async only); durable when it ends
};

// Planned maintenance: the job checkpoints, stops for `duration_s`, restarts (start + load).
struct Maintenance {
    double mean_gap_s = 0;   // 0: none
    GapKind gap = GapKind::Fixed;
    double duration_s = 0;
};

struct RunModel {
    double work_s = 0;  // failure-free training time of the token budget
    std::vector<FailureProcess> failures;
    RecoveryCosts recovery;
    CheckpointPolicy checkpoint;
    Maintenance maintenance;

    double failure_rate() const;  // interruptions per second, all processes together
};

}  // namespace sextant::reliability
