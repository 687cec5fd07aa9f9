#pragma once
// Validation once: a scenario's parts that later stages read with their own tables (calibration,
// stragglers, degraded_links, reliability) are parsed here, right after the scenario itself, so
// that `sextant check` and every command refuse an invalid part before anything runs, instead of
// the stage that reads it (or never, when no stage does). It lives in reliability/, the last
// stage of the data flow that reads scenario parts, because it calls every part's reader.
#include <filesystem>

#include "spec/scenario.hpp"

namespace sextant {

// Parses every part of `scenario` that spec/ keeps as JSON; throws the part's InputError.
void check_scenario_parts(const Scenario& scenario);

// load_scenario, then check_scenario_parts: what every command reads a scenario file with.
Scenario load_checked_scenario(const std::filesystem::path& file);

}  // namespace sextant
