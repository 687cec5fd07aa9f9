#include "reliability/duration_text.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.hpp"

namespace sextant::reliability {

namespace {
bool parse_number(const std::string& text, double& out) {
    if (text.empty()) return false;
    char* end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(out);
}
}  // namespace

double parse_duration(const std::string& text, const std::string& flag) {
    const std::string rule = "must be a positive duration such as 90s, 5m, 4h or 1.5d";
    if (text.empty()) throw InputError(flag, "\"\"", rule);
    double scale = 1;
    std::string digits = text;
    switch (text.back()) {
        case 's': scale = 1; digits.pop_back(); break;
        case 'm': scale = 60; digits.pop_back(); break;
        case 'h': scale = 3600; digits.pop_back(); break;
        case 'd': scale = 86400; digits.pop_back(); break;
        default: break;
    }
    double value = 0;
    if (!parse_number(digits, value) || value <= 0) throw InputError(flag, "\"" + text + "\"", rule);
    return value * scale;
}

DurationRange parse_duration_range(const std::string& text, const std::string& flag) {
    const auto dots = text.find("..");
    if (dots == std::string::npos)
        throw InputError(flag, "\"" + text + "\"", "must be a range LOW..HIGH such as 5m..4h");
    DurationRange r{parse_duration(text.substr(0, dots), flag), parse_duration(text.substr(dots + 2), flag)};
    if (!(r.low_s < r.high_s))
        throw InputError(flag, "\"" + text + "\"", "the low end must be below the high end");
    return r;
}

std::vector<double> parse_number_list(const std::string& text, const std::string& flag, double min) {
    std::vector<double> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = text.substr(start, comma - start);
        double v = 0;
        if (!parse_number(item, v) || v < min)
            throw InputError(flag, "\"" + text + "\"",
                             fmt::format("must be a comma-separated list of numbers, each at least {}", min));
        out.push_back(v);
        start = comma + 1;
    }
    return out;
}

std::string duration_label(double s) {
    if (!std::isfinite(s)) return "never";
    if (s >= 3600) {
        const double h = std::floor(s / 3600);
        return fmt::format("{:.0f}h {:02.0f}m", h, std::floor((s - h * 3600) / 60));
    }
    if (s >= 60) {
        const double m = std::floor(s / 60);
        return fmt::format("{:.0f}m {:02.0f}s", m, std::floor(s - m * 60));
    }
    return fmt::format("{:.1f}s", s);
}

}  // namespace sextant::reliability
