#include "fit/job_logs.hpp"

#include <algorithm>
#include <sstream>

#include "core/error.hpp"

namespace sextant {

namespace {
// The number right after `key` on the line, with thousands separators removed; < 0 when absent.
double number_after(const std::string& line, const std::string& key) {
    const auto at = line.find(key);
    if (at == std::string::npos) return -1;
    std::string digits;
    for (std::size_t i = at + key.size(); i < line.size(); ++i) {
        const char c = line[i];
        if (c == ' ' && digits.empty()) continue;
        if ((c >= '0' && c <= '9') || c == '.') digits += c;
        else if (c == ',') continue;
        else break;
    }
    if (digits.empty()) return -1;
    try {
        return std::stod(digits);
    } catch (const std::exception&) {
        return -1;
    }
}
}  // namespace

std::vector<double> parse_step_times(const std::string& text, LogFormat format, double global_tokens, double gpus) {
    std::vector<double> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (format == LogFormat::Megatron) {
            const double ms = number_after(line, "elapsed time per iteration (ms):");
            if (ms > 0) out.push_back(ms / 1000.0);
        } else {
            if (line.find("step:") == std::string::npos) continue;
            const double tps = number_after(line, "tps:");
            if (tps > 0) {
                if (global_tokens <= 0 || gpus <= 0)
                    throw InternalError("torchtitan logs need the step's tokens and the GPU count");
                out.push_back(global_tokens / (tps * gpus));
            }
        }
    }
    return out;
}

double steady_step_time(const std::vector<double>& steps, const std::string& log, std::size_t warmup) {
    if (steps.size() <= warmup)
        throw InputError(log, std::to_string(steps.size()) + " steps",
                         "needs more than " + std::to_string(warmup) + " logged steps (the first are warm-up)");
    std::vector<double> steady(steps.begin() + static_cast<std::ptrdiff_t>(warmup), steps.end());
    std::sort(steady.begin(), steady.end());
    const std::size_t n = steady.size();
    return n % 2 ? steady[n / 2] : 0.5 * (steady[n / 2 - 1] + steady[n / 2]);
}

}  // namespace sextant
