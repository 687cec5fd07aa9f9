// Interleaved zero bubble: Megatron's interleaved placement (vp chunks per stage, looped) run
// ZB-H1's way, the backward split into the input gradient (B) and the weight gradient (W), each
// stage's Ws deferred by its rank. PyTorch's ScheduleInterleavedZeroBubble ("implementing the
// ZB1P schedule in the paper"; pytorch/pytorch torch/distributed/pipelining/schedules.py at
// 00722e64: _get_warmup_ops with multiply_factor 1, _get_1f1b_rank_ops with enable_zero_bubble).
#include <algorithm>
#include <deque>

#include "schedule/definitions.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

// Forward chunks before the stage's first B: the (vp - 1) pp that bring microbatch 0 to the
// last chunk, plus one per stage after this one (1F1B's count, not Megatron's two).
std::int64_t warmup(const PipelineShape& shape, std::int64_t stage) {
    return std::min((shape.vp - 1) * shape.pp + shape.pp - 1 - stage, shape.microbatches * shape.vp);
}

// The k-th forward runs chunk (k / pp) mod vp, the i-th backward chunk vp - 1 - (i / pp) mod
// vp, microbatches in turn on each chunk; after its warm-up a stage alternates a forward with a
// B, and from its (stage + 1)-th B on, each B is followed by the oldest pending W.
std::vector<std::vector<ScheduledTask>> order(const PipelineShape& shape, std::span<const StageTimes>) {
    const std::int64_t pp = shape.pp, vp = shape.vp, total = shape.microbatches * vp;
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(pp));
    for (std::int64_t s = 0; s < pp; ++s) {
        auto& o = out[static_cast<std::size_t>(s)];
        std::vector<std::int64_t> forwards(static_cast<std::size_t>(vp), 0), backwards(forwards);
        std::deque<ScheduledTask> pending;
        const auto F = [&](std::int64_t k) {
            const std::int64_t chunk = (k / pp) % vp;
            o.push_back({Pass::Forward, forwards[static_cast<std::size_t>(chunk)]++, chunk});
        };
        const auto B = [&](std::int64_t i) {
            const std::int64_t chunk = vp - 1 - (i / pp) % vp;
            const std::int64_t mb = backwards[static_cast<std::size_t>(chunk)]++;
            o.push_back({Pass::Backward, mb, chunk});
            pending.push_back({Pass::Weight, mb, chunk});
            if (i >= s) {
                o.push_back(pending.front());
                pending.pop_front();
            }
        };
        const std::int64_t w = warmup(shape, s);
        for (std::int64_t k = 0; k < w; ++k) F(k);
        for (std::int64_t i = 0; i < total - w; ++i) {
            F(w + i);
            B(i);
        }
        for (std::int64_t i = total - w; i < total; ++i) B(i);
        o.insert(o.end(), pending.begin(), pending.end());
    }
    return out;
}
}  // namespace

ScheduleDef make_interleaved_zero_bubble() {
    return {.id = Schedule::InterleavedZeroBubble,
            .name = "interleaved-zb",
            .summary = "interleaved zero bubble: vp chunks per stage (looped), ZB-H1's deferred weight gradients; 1F1B's memory, "
                       "bubble about (p-1)(F+B-W)/vp",
            .source = "Qi et al., ICLR 2024 (ZB-H1 / ZB1P) on Narayanan et al. 2021's interleaving; PyTorch's "
                      "ScheduleInterleavedZeroBubble (torch/distributed/pipelining/schedules.py at 00722e64)",
            .torchtitan = "InterleavedZeroBubble",
            .chunks = 0,
            .split_backward = true,
            .groups_of_pp = true,
            .order = order,
            // The warm-up chunks plus the one in the first steady forward, each 1/vp of the
            // stage's layers: the first stage holds (vp - 1) pp + pp chunks, p microbatches of a
            // stage, as 1F1B.
            .in_flight =
                [](const PipelineShape& shape, std::int64_t stage) {
                    return std::min(d(warmup(shape, stage) + 1), d(shape.microbatches * shape.vp)) / d(shape.vp);
                },
            .pipeline = [](const PipelineShape& shape, std::span<const StageTimes> stages) {
                return executed_pipeline(schedule_def(Schedule::InterleavedZeroBubble), shape, stages);
            }};
}

}  // namespace sextant
