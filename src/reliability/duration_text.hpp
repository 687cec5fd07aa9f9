#pragma once
// Durations as people type them on a command line: "90s", "5m", "4h", "1.5d", or bare seconds;
// ranges as "5m..4h". Errors name the flag.
#include <string>
#include <vector>

namespace sextant::reliability {

double parse_duration(const std::string& text, const std::string& flag);

struct DurationRange {
    double low_s = 0;
    double high_s = 0;
};
DurationRange parse_duration_range(const std::string& text, const std::string& flag);

// "0,4,16" -> {0, 4, 16}; every entry at least `min`.
std::vector<double> parse_number_list(const std::string& text, const std::string& flag, double min);

// "1h 05m", "12m 30s", "45.0s": compact, for tables; "never" for an infinite time (no failures).
std::string duration_label(double seconds);

}  // namespace sextant::reliability
