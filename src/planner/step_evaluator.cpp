#include "planner/step_evaluator.hpp"

#include <utility>

#include "sim/simulate.hpp"

namespace sextant {

namespace {
// What ranks a layout; the breakdown is left to score().
PlanScore ranking(const StepResult& r) {
    PlanScore s;
    s.fits = r.memory.fits();
    s.step_time_s = r.step_time_s;
    s.mfu = r.mfu;
    s.tokens_per_s = r.tokens_per_s;
    s.peak_memory_bytes = r.memory.peak.value();
    s.capacity_bytes = r.memory.capacity.value();
    return s;
}

PlanScore score(const StepResult& r) {
    PlanScore s = ranking(r);
    s.breakdown = r.breakdown.items();
    return s;
}

class StepEvaluator : public Evaluator {
public:
    explicit StepEvaluator(const Scenario& scenario) : context_(scenario) {}

    PlanScore screen(const Layout& layout) const override {
        // Memory first: a layout that does not fit needs no timing.
        MemoryReport memory = estimate_memory(context_.scenario(), layout, context_.traits());
        if (!memory.fits()) {
            PlanScore s;
            s.peak_memory_bytes = memory.peak.value();
            s.capacity_bytes = memory.capacity.value();
            return s;
        }
        return score(estimate(context_, layout, std::move(memory)));
    }

    std::optional<PlanScore> screen_within(const Layout& layout, double margin) const override {
        std::optional<MemoryReport> memory = memory_within(context_.scenario(), layout, context_.traits(), margin);
        if (!memory) return std::nullopt;
        return ranking(estimate(context_, layout, std::move(*memory)));
    }

    PlanScore simulate(const Layout& layout) const override { return score(sextant::simulate(context_, layout).result); }

private:
    StepContext context_;
};
}  // namespace

std::unique_ptr<Evaluator> make_step_evaluator(const Scenario& scenario) { return std::make_unique<StepEvaluator>(scenario); }

}  // namespace sextant
