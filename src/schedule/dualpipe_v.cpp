// DualPipeV: DualPipe cut in half (Sea AI Lab's "cut-in-half"; deepseek-ai/DualPipe
// dualpipe/dualpipev.py and README.md at 3da1bbea): pp devices hold 2 pp chunks in a V, as ZB-V,
// every microbatch fed at the first device and going down then back up; DualPipe's eight steps
// with its forward of one chunk run beside the backward of the other, each one's expert
// all-to-all under the other's compute. The order as PyTorch's ScheduleDualPipeV runs it
// (pytorch/pytorch torch/distributed/pipelining/schedules.py at 00722e64).
#include <algorithm>
#include <deque>

#include "schedule/definitions.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

std::vector<std::vector<ScheduledTask>> order(const PipelineShape& shape, std::span<const StageTimes>) {
    const std::int64_t p = shape.pp, m = shape.microbatches;
    std::vector<std::vector<ScheduledTask>> out(static_cast<std::size_t>(p));
    for (std::int64_t r = 0; r < p; ++r) {
        auto& o = out[static_cast<std::size_t>(r)];
        std::int64_t forward[2] = {0, 0}, backward[2] = {0, 0};
        std::deque<ScheduledTask> pending;  // deferred weight gradients, oldest first
        const auto F = [&](std::int64_t c) { o.push_back({Pass::Forward, forward[c]++, c}); };
        // A backward: full (its W right after) or the input gradient alone (W deferred).
        const auto B = [&](std::int64_t c, bool full) {
            const std::int64_t mb = backward[c]++;
            o.push_back({Pass::Backward, mb, c});
            if (full) o.push_back({Pass::Weight, mb, c});
            else pending.push_back({Pass::Weight, mb, c});
        };
        // A forward of chunk f beside the full backward of the other chunk.
        const auto FB = [&](std::int64_t f) {
            const std::int64_t b = 1 - f, bm = backward[b]++;
            o.push_back({Pass::Forward, forward[f]++, f, bm, b});
            o.push_back({Pass::Weight, bm, b});
        };
        const auto W = [&] {
            if (pending.empty()) return;
            o.push_back(pending.front());
            pending.pop_front();
        };
        for (std::int64_t i = 0; i < 2 * (p - r - 1); ++i) F(0);  // 1: chunk 0 fills down
        for (std::int64_t i = 0; i < r + 1; ++i) {                 // 2: both chunks
            F(0);
            F(1);
        }
        for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 3: zero-bubble B, W, F of chunk 1
            B(1, false);
            W();
            F(1);
        }
        for (std::int64_t i = 0; i < m - 2 * p + r + 1; ++i) {  // 4: the steady pairs
            if (i == 0 && r == p - 1) {  // the last device runs its first pair apart (less bubble)
                F(0);
                B(1, true);
            } else {
                FB(0);
            }
            FB(1);
        }
        for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 5
            B(1, true);
            FB(1);
        }
        bool split = false;
        for (std::int64_t i = 0; i < r + 1; ++i) {  // 6: the second half of these defer W
            if (i == (r + 1) / 2 && r % 2 == 1) split = true;
            B(1, !split);
            if (i == (r + 1) / 2 && r % 2 == 0) split = true;
            B(0, !split);
        }
        for (std::int64_t i = 0; i < p - r - 1; ++i) {  // 7
            W();
            B(0, !split);
        }
        while (!pending.empty()) W();  // 8
    }
    return out;
}
}  // namespace

ScheduleDef make_dualpipe_v() {
    return {.id = Schedule::DualPipeV,
            .name = "dualpipe-v",
            .summary = "DualPipeV: DualPipe cut in half, two chunks per stage in a V (vp = 2), a forward beside the other chunk's "
                       "backward (EP all-to-all hidden); parameters 1x, activations pp + 1/2",
            .source = "deepseek-ai/DualPipe README.md and dualpipe/dualpipev.py (3da1bbea): bubble (PP/2-1)(F&B+B-3W), activations "
                      "PP+1 chunks on PP/2 devices; PyTorch's ScheduleDualPipeV (schedules.py at 00722e64)",
            .torchtitan = "DualPipeV",
            .placement = Placement::V,
            .chunks = 2,
            .split_backward = true,
            .pairs_forward_backward = true,
            .min_microbatches_per_stage = 2,
            .order = order,
            // The README's PP + 1 chunk activations with PP = 2 pp chunks, each half a stage.
            .in_flight = [](const PipelineShape& shape, std::int64_t) { return std::min(d(shape.microbatches), d(shape.pp) + 0.5); },
            .pipeline = [](const PipelineShape& shape, std::span<const StageTimes> stages) {
                return executed_pipeline(schedule_def(Schedule::DualPipeV), shape, stages);
            }};
}

}  // namespace sextant
