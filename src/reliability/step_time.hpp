#pragma once
// The one place the run-level simulator gets its step time from. Today: the scenario's
// /reliability/step_time_s, else a closed form at an assumed MFU; the step simulator will
// become the second source here.
#include <string>

#include "reliability/reliability_spec.hpp"
#include "spec/scenario.hpp"

namespace sextant::reliability {

struct StepTime {
    double seconds = 0;
    std::string source;  // said in every report, since goodput is only as good as this
};

// Closed form: 6 N_active tokens_per_step / (gpus x peak(precision) x assumed_mfu), the usual
// 6N FLOPs per token of a dense forward and backward pass (attention FLOPs left out).
StepTime step_time(const Scenario& scenario, const ReliabilitySpec& spec);

}  // namespace sextant::reliability
