#include "reliability/step_time.hpp"

#include <fmt/format.h>

#include "sim/simulate.hpp"

namespace sextant::reliability {

StepTime step_time(const Scenario& s, const ReliabilitySpec& spec) {
    if (spec.step_time_s) return {*spec.step_time_s, "scenario /reliability/step_time_s"};
    const Layout layout = resolve_layout(s, s.layout);
    const StepResult r = simulate(StepContext(s), layout).result;
    return {r.step_time_s, fmt::format("sextant simulate of the scenario's layout (MFU {:.1f}%)", 100 * r.mfu)};
}

}  // namespace sextant::reliability
