#include <algorithm>
#include <utility>

#include "sim/simulate.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
std::size_t at(Cost c) { return static_cast<std::size_t>(c); }
}  // namespace

std::vector<std::pair<std::string, double>> Breakdown::items() const {
    return {{"compute", compute}, {"recompute", recompute}, {"tp", tp}, {"cp", cp}, {"ep", ep}, {"pp", pp},
            {"dp", dp}, {"bubble", bubble}, {"optimizer", optimizer}, {"offload", offload}, {"host", host}, {"other", other}};
}

StepResult estimate(const StepContext& ctx, const Layout& l) {
    return estimate(ctx, l, estimate_memory(ctx.scenario(), l, ctx.traits()));
}

// The schedule's closed form (src/schedule/) on the stages' per-microbatch times. Exposed
// gradient reduction is what the last microbatch's backward cannot hide, exposed parameter gather
// what the first microbatch's forward cannot.
StepResult estimate(const StepContext& ctx, const Layout& l, MemoryReport memory) {
    // Per-thread scratch: the planner estimates millions of layouts, and their plans' vectors
    // are reused rather than allocated each time (issue 18).
    thread_local StepPlan plan;
    thread_local std::vector<StageTimes> times;
    plan_step(ctx, l, plan);
    stage_times(plan, l, times);
    const double m = d(plan.microbatches);
    double t_max = 0, dp_exposed = 0, optimizer = 0, gather = 0;
    std::int64_t critical = 0;
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
        const StagePlan& sp = plan.stages[s];
        double backward = 0, dp = 0;
        std::int64_t layers = 0;
        for (const auto& c : sp.chunks) {
            backward += c.backward;
            dp += c.dp_reduce;
            layers += c.layers;
        }
        if (times[s].total() > t_max) {
            t_max = times[s].total();
            critical = static_cast<std::int64_t>(s);
        }
        dp_exposed = std::max(dp_exposed, plan.dp_overlap ? exposed_bucketed(dp, backward, layers) : dp);
        optimizer = std::max(optimizer, sp.optimizer);
        if (!plan.gather_overlap) gather = std::max(gather, sp.param_gather);
    }
    const double pipeline = l.schedule_def().pipeline(plan.shape, times);
    // The fill carries pp - 1 forward transfers and the drain pp - 1 backward ones.
    const double transfers = l.pp > 1 ? d(l.pp - 1) * (plan.stages.front().send_forward + plan.stages.back().send_backward) : 0.0;

    StepResult r;
    r.memory = std::move(memory);
    r.critical_stage = critical;
    Breakdown& b = r.breakdown;
    const StagePlan& cs = plan.stages[static_cast<std::size_t>(critical)];
    add_task_parts(b, cs, l, plan.microbatches);
    // DualPipe's pairs hide expert all-to-all the parts above count.
    const double hidden = m * times[static_cast<std::size_t>(critical)].overlap;
    b.ep = std::max(0.0, b.ep - hidden);
    b.pp += transfers;
    b.bubble = pipeline - (m * t_max - hidden);
    // The first stage's wait for overlapped parameter gathers delays the whole pipeline.
    b.dp += dp_exposed + gather + plan.stages.front().param_gather_wait;
    b.optimizer = optimizer;
    b.other += plan.step_overhead;
    finish_result(ctx, l, r);
    return r;
}

void add_task_parts(Breakdown& b, const StagePlan& stage, const Layout& l, std::int64_t microbatches) {
    const ScheduleDef& def = l.schedule_def();
    const PipelineShape shape{l.pp, l.vp, microbatches, l.pp_warmup};
    for (std::size_t i = 0; i < stage.chunks.size(); ++i) {
        const auto& c = stage.chunks[i];
        const double m = d(chunk_visits(def, shape, static_cast<std::int64_t>(i)));
        for (const CostParts* parts : {&c.forward_parts, &c.backward_parts}) {
            b.compute += m * (*parts)[at(Cost::Compute)];
            b.recompute += m * (*parts)[at(Cost::Recompute)];
            b.tp += m * (*parts)[at(Cost::TP)];
            b.cp += m * (*parts)[at(Cost::CP)];
            b.ep += m * (*parts)[at(Cost::EP)];
            b.pp += m * (*parts)[at(Cost::PP)];
            b.dp += m * (*parts)[at(Cost::ZeRO)];
            b.offload += m * (*parts)[at(Cost::Offload)];
            b.host += m * (*parts)[at(Cost::Host)];
            b.other += m * (*parts)[at(Cost::Overhead)];
        }
    }
}

void finish_result(const StepContext& ctx, const Layout& l, StepResult& r) {
    r.step_time_s = r.breakdown.total();
    const Scenario& s = ctx.scenario();
    r.tokens_per_s = s.training.tokens_per_step() / r.step_time_s;
    const double peak = d(s.cluster.gpus) * s.cluster.gpu.peak_tflops(s.training.precision.operands) * 1e12 * r.step_time_s;
    r.mfu = ctx.model_flops() / peak;
    r.hfu = ctx.hardware_flops(l.recompute) / peak;
}

}  // namespace sextant
