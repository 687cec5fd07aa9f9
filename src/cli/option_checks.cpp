#include "cli/option_checks.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

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

json calibration_part(const std::string& value) {
    const bool is_path = value.find('/') != std::string::npos || (value.size() > 5 && value.substr(value.size() - 5) == ".json");
    return is_path ? json(std::filesystem::absolute(value).string()) : json(value);
}

}  // namespace sextant::cli
