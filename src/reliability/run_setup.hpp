#pragma once
// From a scenario and its reliability spec to the numbers the run simulator loops over, with
// everything a report must say about where they came from.
#include <string>

#include "reliability/checkpoint_cost.hpp"
#include "spec/reliability_spec.hpp"
#include "reliability/run_model.hpp"
#include "reliability/step_time.hpp"
#include "spec/scenario.hpp"

namespace sextant::reliability {

struct RunSetup {
    ReliabilitySpec spec;
    StepTime step;
    double train_tokens = 0;
    double steps = 0;
    CheckpointSize size;
    CheckpointTimes times;
    RunModel model;
    double nodes = 0;

    double job_mtbf_s() const { return 1.0 / model.failure_rate(); }
};

// Reads /reliability of the scenario and derives the run model. The token budget is
// /reliability/train_tokens, else /training/train_tokens; neither is an InputError.
RunSetup make_run_setup(const Scenario& scenario);
RunSetup make_run_setup(const Scenario& scenario, const ReliabilitySpec& spec);

// The run model of `spec` on this scenario, reusing the scenario-derived parts of `base`
// (step time, tokens, checkpoint size): what-if sweeps change the spec and call this.
RunModel derive_run_model(const RunSetup& base, const ReliabilitySpec& spec, const CheckpointTimes& times);

}  // namespace sextant::reliability
