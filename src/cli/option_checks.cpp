#include "cli/option_checks.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <string>

#include "core/error.hpp"
#include "core/table.hpp"

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

void add_require_fit_flag(CLI::App* command, bool& require_fit) {
    command->add_flag("--require-fit", require_fit, "refuse a layout that does not fit in GPU (or host) memory instead of warning");
}

void check_fit(const MemoryReport& memory, bool require_fit) {
    if (memory.fits()) return;
    // GPU memory first; a layout that fits there may still offload more than the host holds.
    const bool gpu = !memory.fits_hbm();
    const std::string where = gpu ? "GPU memory" : "host memory";
    const std::string peak = gpu ? "peak " + format_bytes(memory.peak.value()) + " per GPU (stage " + std::to_string(memory.peak_stage) +
                                       ") of " + format_bytes(memory.capacity.value())
                                 : format_bytes(memory.host_peak.value()) + " offloaded per GPU of " + format_bytes(memory.host_capacity.value());
    if (require_fit) throw InputError("--require-fit", peak, "the layout does not fit in " + where + " (`sextant memory` shows where it goes)");
    std::cerr << "warning: the layout does not fit in " << where << ": " << peak << "; the times below are of a run that cannot start\n";
}

}  // namespace sextant::cli
