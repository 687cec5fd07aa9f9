#pragma once
// The one place the run-level simulator gets its step time from: the scenario's
// /reliability/step_time_s when given, else Sextant's discrete-event simulation of the scenario's
// layout (open knobs at their framework defaults).
#include <string>

#include "spec/reliability_spec.hpp"
#include "spec/scenario.hpp"

namespace sextant::reliability {

struct StepTime {
    double seconds = 0;
    std::string source;  // said in every report, since goodput is only as good as this
};

StepTime step_time(const Scenario& scenario, const ReliabilitySpec& spec);

}  // namespace sextant::reliability
