#include "reliability/scenario_parts.hpp"

#include "reliability/reliability_spec.hpp"
#include "sim/step_context.hpp"

namespace sextant {

void check_scenario_parts(const Scenario& s) {
    if (s.extensions.contains("calibration")) (void)scenario_profile(s);  // else the GPU's shipped profile
    (void)parse_stragglers(s);
    (void)parse_degraded_links(s);
    if (s.extensions.contains("reliability")) (void)reliability::parse_reliability(s.extensions.at("reliability"), "/reliability");
}

Scenario load_checked_scenario(const std::filesystem::path& file) {
    Scenario s = load_scenario(file);
    check_scenario_parts(s);
    return s;
}

}  // namespace sextant
