// GPipe, 1F1B and Megatron's interleaved 1F1B: fixed orders with a closed form.
#include <algorithm>

#include "schedule/definitions.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

// (m - 1) max t + sum t; interleaving divides the fill and drain by vp (Narayanan et al. 2021,
// section 2.2: bubble (p - 1)/(v m) of the ideal time).
double one_f_one_b_pipeline(const PipelineShape& shape, std::span<const StageTimes> stages) {
    const StageSum s = stage_sum(stages);
    return d(shape.microbatches) * s.max + (s.sum - s.max) / d(shape.vp);
}

std::vector<std::vector<ScheduledTask>> gpipe_order(const PipelineShape& shape, std::span<const StageTimes>) {
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(shape.pp));
    for (auto& order : out) {
        for (std::int64_t i = 0; i < shape.microbatches; ++i) order.push_back({Pass::Forward, i, 0});
        for (std::int64_t i = 0; i < shape.microbatches; ++i) order.push_back({Pass::Backward, i, 0});
    }
    return out;
}

// Megatron's 1F1B and interleaved 1F1B: virtual microbatch k runs chunk (k mod pp*vp) / pp of
// microbatch (k / (pp*vp)) * pp + k mod pp; backward walks the chunks in reverse. Warm-up
// forwards fill the pipeline, then forward and backward alternate, then the backlog drains.
std::vector<std::vector<ScheduledTask>> megatron_order(const PipelineShape& shape, std::span<const StageTimes>) {
    const std::int64_t pp = shape.pp, vp = shape.vp, total = shape.microbatches * vp, group = pp * vp;
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(pp));
    auto virtual_task = [&](std::int64_t k, bool forward) {
        const std::int64_t in_group = k % group;
        const std::int64_t chunk = forward ? in_group / pp : vp - 1 - in_group / pp;
        const std::int64_t microbatch = (k / group) * pp + k % pp;
        return ScheduledTask{forward ? Pass::Forward : Pass::Backward, vp == 1 ? k : microbatch, vp == 1 ? 0 : chunk};
    };
    for (std::int64_t stage = 0; stage < pp; ++stage) {
        auto& order = out[static_cast<std::size_t>(stage)];
        const std::int64_t warmup = std::min(total, interleaved_warmup(shape, stage));
        for (std::int64_t k = 0; k < warmup; ++k) order.push_back(virtual_task(k, true));
        for (std::int64_t i = 0; i < total - warmup; ++i) {
            order.push_back(virtual_task(warmup + i, true));
            order.push_back(virtual_task(i, false));
        }
        for (std::int64_t i = total - warmup; i < total; ++i) order.push_back(virtual_task(i, false));
    }
    return out;
}
}  // namespace

ScheduleDef make_gpipe() {
    return {.id = Schedule::GPipe,
            .name = "gpipe",
            .summary = "all forwards, then all backwards; holds every microbatch",
            .source = "Huang et al. 2019 (GPipe): bubble (p - 1)/(m + p - 1)",
            .torchtitan = "GPipe",
            .order = gpipe_order,
            .in_flight = [](const PipelineShape& shape, std::int64_t) { return d(shape.microbatches); },
            .pipeline = one_f_one_b_pipeline};
}

ScheduleDef make_one_f_one_b() {
    return {.id = Schedule::OneFOneB,
            .name = "1f1b",
            .summary = "pp - stage - 1 warm-up forwards, then one forward one backward; holds pp - stage microbatches",
            .source = "Narayanan et al. 2021 (PipeDream-Flush / Megatron 1F1B): bubble (p - 1)/(m + p - 1)",
            .torchtitan = "1F1B",
            .order = megatron_order,
            .in_flight = [](const PipelineShape& shape, std::int64_t stage) { return std::min(d(shape.microbatches), d(shape.pp - stage)); },
            .pipeline = one_f_one_b_pipeline};
}

ScheduleDef make_interleaved() {
    return {.id = Schedule::Interleaved,
            .name = "interleaved",
            .summary = "Megatron's interleaved 1F1B over vp chunks per stage; warm-up 2(pp - stage - 1) + (vp - 1) pp chunks, or pp_warmup",
            .source = "Narayanan et al. 2021 section 2.2: bubble (p - 1)/(v m); Megatron-Core's warm-up count "
                      "(schedules.py, forward_backward_pipelining_with_interleaving); Llama 3 (Dubey et al. 2024 section 3.3.2) "
                      "tunes it",
            .torchtitan = "Interleaved1F1B",
            .chunks = 0,
            .groups_of_pp = true,
            .order = megatron_order,
            // The warm-up chunks plus the one in its first steady forward; each chunk is 1/vp of
            // the stage's layers.
            .in_flight =
                [](const PipelineShape& shape, std::int64_t stage) {
                    const double chunks = d(interleaved_warmup(shape, stage)) + 1.0;
                    return std::min(chunks, d(shape.microbatches * shape.vp)) / d(shape.vp);
                },
            .pipeline = one_f_one_b_pipeline};
}

}  // namespace sextant
