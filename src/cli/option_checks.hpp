#pragma once
// Checks of command-line values that say the rule in words: CLI11's own range checks print the
// whole range of a double instead.
#include <CLI/CLI.hpp>
#include <string>

#include "memory/memory_model.hpp"
#include "spec/fields.hpp"

namespace sextant::cli {

// An integer of at least `min`.
CLI::Validator at_least(long long min, const char* rule);
// A finite number above zero.
CLI::Validator positive(const char* rule);
// A number in [low, high).
CLI::Validator in_range(double low, double high, const char* rule);

// A --calibration value as a scenario's "calibration" part: a calibration/ preset name as given,
// a profile file made absolute (scenario parts are read relative to the scenario's folder, a flag
// relative to the working directory).
json calibration_part(const std::string& value);

// --require-fit: a layout that does not fit in HBM is refused instead of priced with a warning.
void add_require_fit_flag(CLI::App* command, bool& require_fit);
// Prices of a layout that does not fit describe no run: a warning on stderr, or with
// --require-fit an InputError naming the peak and the capacity.
void check_fit(const MemoryReport& memory, bool require_fit);

}  // namespace sextant::cli
