#include "core/flag_values.hpp"

#include <cmath>
#include <stdexcept>

#include "core/error.hpp"

namespace sextant {

// "1024..16384" doubles from the first to the last; "1024,1536" lists; "2048" is one value.
std::vector<std::int64_t> parse_count_sweep(const std::string& text, const std::string& flag) {
    const std::string rule = "must be N, N1,N2,... or LO..HI (doubling from LO to HI), positive integers";
    auto number = [&](const std::string& s) {
        std::size_t used = 0;
        long long v = 0;
        try {
            v = std::stoll(s, &used);
        } catch (const std::exception&) {
            throw InputError(flag, "\"" + text + "\"", rule);
        }
        if (used != s.size() || v < 1) throw InputError(flag, "\"" + text + "\"", rule);
        return static_cast<std::int64_t>(v);
    };
    std::vector<std::int64_t> out;
    if (auto dots = text.find(".."); dots != std::string::npos) {
        std::int64_t lo = number(text.substr(0, dots)), hi = number(text.substr(dots + 2));
        if (hi < lo) throw InputError(flag, "\"" + text + "\"", "LO..HI needs LO <= HI");
        // Stops before doubling past HI, so that a HI near 2^63 cannot overflow.
        for (std::int64_t v = lo;; v *= 2) {
            out.push_back(v);
            if (v > hi / 2) break;
        }
        return out;
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        out.push_back(number(text.substr(start, comma - start)));
        start = comma + 1;
    }
    return out;
}

double parse_byte_size(const std::string& text, const std::string& flag) {
    const std::string rule = "must be a size in bytes with an optional K, M or G suffix (powers of 1024), e.g. 8, 64K, 8G";
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        throw InputError(flag, "\"" + text + "\"", rule);
    }
    std::string suffix = text.substr(used);
    double scale = 1;
    if (suffix == "K" || suffix == "k") scale = 1024.0;
    else if (suffix == "M" || suffix == "m") scale = 1024.0 * 1024;
    else if (suffix == "G" || suffix == "g") scale = 1024.0 * 1024 * 1024;
    else if (!suffix.empty()) throw InputError(flag, "\"" + text + "\"", rule);
    if (!std::isfinite(v * scale) || v <= 0) throw InputError(flag, "\"" + text + "\"", rule + ", finite");
    return v * scale;
}

}  // namespace sextant
