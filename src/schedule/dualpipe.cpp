// DualPipe (DeepSeek-AI, DeepSeek-V3 technical report, arXiv:2412.19437, section 3.2.1 and
// Table 2): microbatches fed from both ends of the pipeline, each stage holding two model stages
// (its own and its mirror's: parameters twice), a forward of one direction run beside a backward
// of the other so that each one's expert all-to-all hides under the other's compute.
#include <algorithm>

#include "schedule/definitions.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

// DualPipe's eight steps on one stage (DeepSeek-V3 report, Figure 5; deepseek-ai/DualPipe's
// step order). Phase 0 is the direction fed from this stage's nearer end (the first half of the
// stages: the microbatches fed at stage 0, chunk 0), phase 1 the other. A "full" backward runs
// its weight gradient right after it; the last backwards split it off into a queue the drain
// empties (zero-bubble style).
std::vector<std::vector<ScheduledTask>> dualpipe_order(const PipelineShape& shape, std::span<const StageTimes>) {
    const std::int64_t p = shape.pp, half = shape.microbatches / 2, halves = p / 2;
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(p));
    for (std::int64_t s = 0; s < p; ++s) {
        auto& order = out[static_cast<std::size_t>(s)];
        const std::int64_t rank = std::min(s, p - 1 - s);
        const std::int64_t chunk_of[2] = {s < halves ? 0 : 1, s < halves ? 1 : 0};
        std::int64_t forward[2] = {0, 0}, backward[2] = {0, 0};
        std::vector<std::pair<std::int64_t, std::int64_t>> deferred;  // (microbatch, chunk)
        std::size_t next_deferred = 0;
        const auto mb = [&](std::int64_t phase, std::int64_t i) { return chunk_of[phase] == 0 ? i : half + i; };
        const auto F = [&](std::int64_t phase) { order.push_back({Pass::Forward, mb(phase, forward[phase]++), chunk_of[phase]}); };
        const auto B = [&](std::int64_t phase, bool split) {
            const std::int64_t m = mb(phase, backward[phase]++);
            order.push_back({Pass::Backward, m, chunk_of[phase]});
            if (split) deferred.emplace_back(m, chunk_of[phase]);
            else order.push_back({Pass::Weight, m, chunk_of[phase]});
        };
        // A forward of `f` beside the full backward of `b`.
        const auto FB = [&](std::int64_t f, std::int64_t b) {
            const std::int64_t fm = mb(f, forward[f]++), bm = mb(b, backward[b]++);
            order.push_back({Pass::Forward, fm, chunk_of[f], bm, chunk_of[b]});
            order.push_back({Pass::Weight, bm, chunk_of[b]});
        };
        const auto W = [&]() {
            if (next_deferred < deferred.size()) {
                const auto [m, c] = deferred[next_deferred++];
                order.push_back({Pass::Weight, m, c});
            }
        };
        for (std::int64_t i = 0; i < 2 * (halves - rank - 1); ++i) F(0);  // 1: fill from this end
        for (std::int64_t i = 0; i < rank + 1; ++i) {                     // 2: both directions
            F(0);
            F(1);
        }
        for (std::int64_t i = 0; i < halves - rank - 1; ++i) {  // 3: zero-bubble B, W, F of phase 1
            B(1, false);
            F(1);
        }
        for (std::int64_t i = 0; i < half - p + rank + 1; ++i) {  // 4: the steady pairs
            FB(0, 1);
            FB(1, 0);
        }
        for (std::int64_t i = 0; i < halves - rank - 1; ++i) {  // 5
            B(1, false);
            FB(1, 0);
        }
        bool split = false;
        for (std::int64_t i = 0; i < rank + 1; ++i) {  // 6: the second half of these defer W
            if (i == (rank + 1) / 2 && rank % 2 == 1) split = true;
            B(1, split);
            if (i == (rank + 1) / 2 && rank % 2 == 0) split = true;
            B(0, split);
        }
        for (std::int64_t i = 0; i < halves - rank - 1; ++i) {  // 7
            W();
            B(0, true);
        }
        while (next_deferred < deferred.size()) W();  // 8
    }
    return out;
}
}  // namespace

ScheduleDef make_dualpipe() {
    return {.id = Schedule::DualPipe,
            .name = "dualpipe",
            .summary = "DualPipe: both ends fed, forward and backward of two microbatches overlapped (EP all-to-all hidden); "
                       "bubble (pp/2-1)(F&B+B-3W), parameters 2x, activations pp+1",
            .source = "DeepSeek-V3 technical report (arXiv:2412.19437) section 3.2.1, Table 2; deepseek-ai/DualPipe",
            .placement = Placement::Dual,
            .chunks = 2,
            .split_backward = true,
            .pairs_forward_backward = true,
            .even_pp = true,
            .min_microbatches_per_stage = 2,
            .parameter_copies = 2.0,
            .order = dualpipe_order,
            .in_flight = [](const PipelineShape& shape, std::int64_t) { return std::min(d(shape.microbatches), d(shape.pp + 1)); },
            // The critical stage's microbatches with each forward beside a backward, plus Table
            // 2's bubble (p/2 - 1)(F&B + B - 3W), F&B = F + B - overlap, with B the input
            // gradient: that is what this order runs to; read with B the full backward, as the
            // report defines it, the table's is (p/2 - 1) W longer (tests/test_schedules.cpp).
            .pipeline = [](const PipelineShape& shape, std::span<const StageTimes> stages) {
                const StageSum s = stage_sum(stages);
                const StageTimes& t = stages[s.critical];
                const double fb = t.forward + t.backward - t.overlap;
                const double bubble = std::max(0.0, (d(shape.pp) / 2 - 1) * (fb + t.backward - t.weight - 3 * t.weight));
                return d(shape.microbatches) * (s.max - t.overlap) + bubble;
            }};
}

}  // namespace sextant
