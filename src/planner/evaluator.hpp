#pragma once
// What the planner needs from the cost models: a fast closed-form screen and the full
// discrete-event simulation of one layout. Both are const and thread-safe.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spec/layout_spec.hpp"

namespace sextant {

struct PlanScore {
    bool fits = false;              // peak memory within HBM
    double step_time_s = 0;
    double mfu = 0;
    double tokens_per_s = 0;
    double peak_memory_bytes = 0;
    double capacity_bytes = 0;
    // Where the step goes, in seconds per step, by cost name (compute, bubble, tp, dp, ...).
    std::vector<std::pair<std::string, double>> breakdown;
};

class Evaluator {
public:
    virtual ~Evaluator() = default;
    virtual PlanScore screen(const Layout& layout) const = 0;
    // The screen as the planner ranks by it: the score without its breakdown where the layout
    // fits with `margin` of HBM left free (Planner::offered), else nullopt. The default asks
    // screen(); an evaluator may refuse from memory alone, before any timing.
    virtual std::optional<PlanScore> screen_within(const Layout& layout, double margin) const {
        PlanScore s = screen(layout);
        if (!s.fits || !(s.peak_memory_bytes <= (1.0 - margin) * s.capacity_bytes)) return std::nullopt;
        return s;
    }
    virtual PlanScore simulate(const Layout& layout) const = 0;
};

}  // namespace sextant
