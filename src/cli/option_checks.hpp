#pragma once
// Checks of command-line values that say the rule in words: CLI11's own range checks print the
// whole range of a double instead.
#include <CLI/CLI.hpp>

namespace sextant::cli {

// An integer of at least `min`.
CLI::Validator at_least(long long min, const char* rule);
// A finite number above zero.
CLI::Validator positive(const char* rule);
// A number in [low, high).
CLI::Validator in_range(double low, double high, const char* rule);

}  // namespace sextant::cli
