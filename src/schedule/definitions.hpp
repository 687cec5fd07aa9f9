#pragma once
// The schedules' own files each make one ScheduleDef; schedule.cpp lists them. Shared by those
// files only.
#include "schedule/schedule.hpp"

namespace sextant {

ScheduleDef make_gpipe();
ScheduleDef make_one_f_one_b();
ScheduleDef make_interleaved();
ScheduleDef make_zero_bubble_h1();
ScheduleDef make_zero_bubble_v();
ScheduleDef make_dualpipe();
ScheduleDef make_interleaved_zero_bubble();
ScheduleDef make_dualpipe_v();

// A stage's times per chunk visit: its per-microbatch time spread over the chunk visits of one
// microbatch (all chunks when every microbatch passes all of them, one under DualPipe); the
// backward less the weight gradient where that runs as a W pass of its own. Stages given no
// time run unit passes (orders that only need the shape).
struct VisitTimes {
    std::vector<double> forward, backward, weight, overlap;
};
VisitTimes visit_times(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times);

// The closed form of an order no formula describes: run_order's end, executed on a few rounds
// of microbatches and extended at the busiest stage's rate past them.
double executed_pipeline(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times);

// The closed form of the 1F1B family: (m - 1) max t + sum t, t = forward + backward per stage;
// with interleaving the fill and drain shrink by vp: m max t + (sum t - max t) / vp. Returns
// {max t, sum t} for the other schedules' forms too.
struct StageSum {
    double max = 0, sum = 0;
    std::size_t critical = 0;
};
StageSum stage_sum(std::span<const StageTimes> stages);

// List scheduling for the orders no fixed formula gives (zero-bubble, DualPipe): the stages run
// their chunks' tasks as soon as their inputs are there, with the stage's times, in priority
// backward (the critical path), then forward while the stage holds fewer than `cap` chunk
// activations, then a deferred weight gradient; DualPipe runs a ready forward and a ready
// backward together. Ties go to the earlier-ready task, then to the chunk nearer the loss, then
// to the lower microbatch. The result is a valid order for any durations (it was executed).
struct ListRules {
    std::vector<double> cap;  // per stage, in chunk activations (one microbatch through one chunk)
    bool pair_forward_backward = false;
};
std::vector<std::vector<ScheduledTask>> list_schedule(const ScheduleDef& def, const PipelineShape& shape,
                                                      std::span<const StageTimes> times, const ListRules& rules);

}  // namespace sextant
