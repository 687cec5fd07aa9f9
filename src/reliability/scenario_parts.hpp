#pragma once
// Validation once: parse_scenario reads every part of a scenario into its typed spec
// (stragglers, degraded_links, reliability) and resolves the calibration part to its profile
// document; the profile itself is read by src/profile/, below spec/, so it is checked here, right
// after the scenario, so that `sextant check` and every command refuse an invalid profile before
// anything runs. It lives in reliability/, the last stage of the data flow.
#include <filesystem>

#include "spec/scenario.hpp"

namespace sextant {

// Reads the calibration profile of `scenario`; throws its InputError.
void check_scenario_parts(const Scenario& scenario);

// load_scenario, then check_scenario_parts: what every command reads a scenario file with.
Scenario load_checked_scenario(const std::filesystem::path& file);

}  // namespace sextant
