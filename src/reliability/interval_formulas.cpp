#include "reliability/interval_formulas.hpp"

#include <cmath>

namespace sextant::reliability {

double young_interval(double stall_s, double mtbf_s) { return std::sqrt(2.0 * stall_s * mtbf_s); }

double daly_interval(double stall_s, double mtbf_s) {
    if (stall_s >= 2.0 * mtbf_s) return mtbf_s;
    const double x = stall_s / (2.0 * mtbf_s);
    return std::sqrt(2.0 * stall_s * mtbf_s) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - stall_s;
}

double expected_segment_time(double length_s, double rate_per_s, double restart_s) {
    if (rate_per_s <= 0) return length_s;
    return std::expm1(rate_per_s * length_s) * std::exp(rate_per_s * restart_s) / rate_per_s;
}

double expected_run_time(double work_s, double interval_s, double stall_s, double rate_per_s,
                         double restart_s) {
    const double saves = std::ceil(work_s / interval_s) - 1.0;
    const double last = work_s - saves * interval_s;
    return saves * expected_segment_time(interval_s + stall_s, rate_per_s, restart_s) +
           expected_segment_time(last, rate_per_s, restart_s);
}

}  // namespace sextant::reliability
