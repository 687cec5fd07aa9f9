// Zero-bubble schedules (Qi et al., ICLR 2024, "Zero Bubble Pipeline Parallelism"): the backward
// splits into the input gradient (B), on the critical path, and the weight gradient (W), which
// waits to fill what would otherwise be bubble.
#include <algorithm>

#include "schedule/definitions.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

// What the critical stage's m microbatches take, plus the fill and drain of the others at
// `drain` each (zero where W covers it).
double critical_plus(const PipelineShape& shape, std::span<const StageTimes> stages, double (*drain)(const StageTimes&)) {
    const StageSum s = stage_sum(stages);
    double fill = 0;
    for (std::size_t i = 0; i < stages.size(); ++i)
        if (i != s.critical) fill += std::max(0.0, drain(stages[i]));
    return d(shape.microbatches) * s.max + fill;
}
}  // namespace

// ZB-H1: 1F1B's warm-up and memory, the W passes deferred into the drain. Qi et al. Table 1:
// bubble (p - 1)(T_F + T_B - T_W) with T_B the input gradient alone, peak memory p M_B, as 1F1B;
// with T_F = T_B = T_W a third of 1F1B's (p - 1)(T_F + T_B + T_W).
ScheduleDef make_zero_bubble_h1() {
    return {.id = Schedule::ZeroBubbleH1,
            .name = "zb-h1",
            .summary = "zero-bubble H1: 1F1B's memory, weight gradients (W) deferred into the bubble; bubble (p-1)(F+B-W)",
            .source = "Qi et al., ICLR 2024, Zero Bubble Pipeline Parallelism, section 3.1 and Table 1",
            .split_backward = true,
            .order =
                [](const PipelineShape& shape, std::span<const StageTimes> times) {
                    ListRules rules;
                    for (std::int64_t s = 0; s < shape.pp; ++s) rules.cap.push_back(d(shape.pp - s));
                    return list_schedule(schedule_def(Schedule::ZeroBubbleH1), shape, times, rules);
                },
            .in_flight = [](const PipelineShape& shape, std::int64_t stage) { return std::min(d(shape.microbatches), d(shape.pp - stage)); },
            // Per stage: F + B + W is the whole backward plus forward; F + B - W = t - 2W.
            .pipeline = [](const PipelineShape& shape, std::span<const StageTimes> stages) {
                return critical_plus(shape, stages, [](const StageTimes& t) { return t.forward + t.backward - 2 * t.weight; });
            }};
}

// ZB-V's order on one stage, PyTorch's ScheduleZBVZeroBubble (pytorch/pytorch
// torch/distributed/pipelining/schedules.py at 00722e64, _calculate_single_rank_operations),
// the construction of Qi et al.'s section 6 figure: 2(p - s) - 1 forwards of chunk 0; s pairs of
// chunk-1 and chunk-0 forwards; p - s rounds of a chunk-1 forward, its input gradient and its
// weight gradient; then, steadily, chunk 0's forward, B and W and chunk 1's; then the drain: s
// pairs of B on both chunks, p - s of chunk 0's B with a deferred W, and the remaining Ws.
// With F = B = W every stage then works without a gap from its first task to its last (the
// paper's zero bubble); stage s starts s chunk forwards after the first, so one synchronised
// step ends (p - 1) chunk forwards after m (F + B + W): no order can do better, as the last
// stage cannot start earlier nor work less (tests/test_schedules.cpp holds both).
static std::vector<std::vector<ScheduledTask>> zbv_order(const PipelineShape& shape, std::span<const StageTimes>) {
    const std::int64_t p = shape.pp, m = shape.microbatches;
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(p));
    for (std::int64_t s = 0; s < p; ++s) {
        auto& order = out[static_cast<std::size_t>(s)];
        std::int64_t f0 = 0, f1 = 0, b0 = 0, b1 = 0;
        const auto F = [&](std::int64_t chunk) { order.push_back({Pass::Forward, chunk == 0 ? f0++ : f1++, chunk}); };
        const auto B = [&](std::int64_t chunk) { order.push_back({Pass::Backward, chunk == 0 ? b0 : b1, chunk}); };
        const auto W = [&](std::int64_t chunk, std::int64_t mb) { order.push_back({Pass::Weight, mb, chunk}); };
        for (std::int64_t i = 0; i < 2 * (p - s) - 1; ++i) F(0);
        for (std::int64_t i = 0; i < s; ++i) {
            F(1);
            F(0);
        }
        for (std::int64_t i = 0; i < p - s; ++i) {
            F(1);
            B(1);
            W(1, b1++);
        }
        while (f1 < f0 || f0 < m) {
            if (f0 < m) F(0);
            B(0);
            W(0, b0++);
            F(1);
            B(1);
            W(1, b1++);
        }
        std::int64_t w0 = b0, w1 = b1;
        for (std::int64_t i = 0; i < s; ++i) {
            B(0);
            ++b0;
            B(1);
            ++b1;
        }
        for (std::int64_t i = 0; i < p - s; ++i) {
            B(0);
            ++b0;
            W(0, w0++);
        }
        while (w1 < b1) W(1, w1++);
        while (w0 < b0) W(0, w0++);
    }
    return out;
}

// ZB-V: two chunks per stage in a V (down, then back up, so the first stage holds the embedding
// and the loss); Qi et al. section 6: peak memory p M_B, 1F1B's first-stage peak, and no bubble
// when T_F = T_B = T_W.
ScheduleDef make_zero_bubble_v() {
    return {.id = Schedule::ZeroBubbleV,
            .name = "zb-v",
            .summary = "zero-bubble V: two chunks per stage in a V (vp = 2), 1F1B's first-stage memory; no bubble within a stage at F = B = W",
            .source = "Qi et al., ICLR 2024, section 6 (ZB-V); Qi et al. 2024, Pipeline Parallelism with Controllable Memory "
                      "(V-shape building blocks); PyTorch's ScheduleZBVZeroBubble (schedules.py at 00722e64)",
            .torchtitan = "ZBVZeroBubble",
            .placement = Placement::V,
            .chunks = 2,
            .split_backward = true,
            .min_microbatches_per_stage = 2,
            .order = zbv_order,
            .in_flight = [](const PipelineShape& shape, std::int64_t) { return std::min(d(shape.microbatches), d(shape.pp)); },
            // The order executed: no formula holds for unequal F, B and W (PyTorch's docstring:
            // zero bubble "only if" they are equal), and the execution is exact for any.
            .pipeline = [](const PipelineShape& shape, std::span<const StageTimes> stages) {
                return executed_pipeline(schedule_def(Schedule::ZeroBubbleV), shape, stages);
            }};
}

}  // namespace sextant
