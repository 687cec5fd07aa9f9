#include "reliability/scenario_parts.hpp"

#include "sim/step_context.hpp"

namespace sextant {

void check_scenario_parts(const Scenario& s) {
    if (!s.calibration.is_null()) (void)scenario_profile(s);  // else the GPU's shipped profile
    check_layout_runtime(s, load_runtime_profile(s.training.framework, "/framework"));
}

Scenario load_checked_scenario(const std::filesystem::path& file) {
    Scenario s = load_scenario(file);
    check_scenario_parts(s);
    return s;
}

}  // namespace sextant
