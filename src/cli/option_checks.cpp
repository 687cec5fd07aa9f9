#include "cli/option_checks.hpp"

#include <cmath>
#include <string>

namespace sextant::cli {

CLI::Validator at_least(long long min, const char* rule) {
    return CLI::Validator(
        [min, rule](std::string& text) -> std::string {
            try {
                std::size_t used = 0;
                const long long v = std::stoll(text, &used);
                if (used == text.size() && v >= min) return "";
            } catch (const std::exception&) {
            }
            return "\"" + text + "\": " + rule;
        },
        "", "");
}

CLI::Validator positive(const char* rule) {
    return CLI::Validator(
        [rule](std::string& text) -> std::string {
            try {
                std::size_t used = 0;
                const double v = std::stod(text, &used);
                if (used == text.size() && std::isfinite(v) && v > 0) return "";
            } catch (const std::exception&) {
            }
            return "\"" + text + "\": " + rule;
        },
        "", "");
}

CLI::Validator in_range(double low, double high, const char* rule) {
    return CLI::Validator(
        [low, high, rule](std::string& text) -> std::string {
            try {
                std::size_t used = 0;
                const double v = std::stod(text, &used);
                if (used == text.size() && v >= low && v < high) return "";
            } catch (const std::exception&) {
            }
            return "\"" + text + "\": " + rule;
        },
        "", "");
}

}  // namespace sextant::cli
