#include "sim/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/work_limits.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
TimeNs ns(double seconds) {
    // Beyond the engine's range llround's result is undefined; the caller names the input.
    if (seconds * 1e9 > static_cast<double>(kMaxTimeNs)) throw TimeOutOfRange("a task lasts past the engine's 2^56 ns");
    return static_cast<TimeNs>(std::llround(seconds * 1e9));
}
double sec(TimeNs t) { return static_cast<double>(t) * 1e-9; }

enum Category : std::uint16_t { kForward, kBackward, kSend, kReduce, kBarrier, kOptimizer, kGather, kGatherWait, kWeight, kPair };

struct Streams {
    StreamId compute, send, dp;
};

// What the step's communications move, for the tasks' descriptions.
struct CommDetails {
    CommDetail send;
    std::vector<std::vector<std::pair<CommDetail, CommDetail>>> reduce;  // [stage][chunk]: dense, expert
    std::vector<std::pair<CommDetail, CommDetail>> gather;               // [stage]
};

CommDetails comm_details(const StepContext& ctx, const Layout& layout, const StepPlan& plan) {
    const Layout l = shards_like_zero1(layout, ctx.traits()) ? effective_sharding(layout, ctx.traits()) : layout;
    const CostContext costs = ctx.costs();
    const LayoutGroups& g = ctx.groups(l);
    CommDetails out{pp_transfer_detail(costs, l, g), {}, {}};
    for (const StagePlan& sp : plan.stages) {
        auto& stage = out.reduce.emplace_back();
        for (const ChunkPlan& c : sp.chunks)
            stage.emplace_back(dp_reduce_detail(costs, l, g.dp_dense, c.dense_params), dp_reduce_detail(costs, l, g.dp_expert, c.expert_params));
        out.gather.emplace_back(dp_gather_detail(costs, l, g.dp_dense, sp.gather_bytes_dense),
                                dp_gather_detail(costs, l, g.dp_expert, sp.gather_bytes_expert));
    }
    return out;
}

class Builder {
public:
    Builder(const StepPlan& plan, const Layout& l, const CommDetails& comm, bool labels, Simulation& sim)
        : plan_(plan),
          l_(l),
          comm_(comm),
          sim_(sim),
          def_(l.schedule_def()),
          shape_(plan.shape),
          chunks_(schedule_chunks(def_, l.vp)),
          m_(plan.microbatches),
          labels_(labels) {}

    void build() {
        Engine& e = sim_.engine;
        for (std::int64_t s = 0; s < l_.pp; ++s)
            streams_.push_back({e.add_stream("compute", static_cast<std::uint32_t>(s)), e.add_stream("p2p", static_cast<std::uint32_t>(s)),
                                e.add_stream("dp", static_cast<std::uint32_t>(s))});
        const std::vector<StageTimes> times = stage_times(plan_, l_);
        auto orders = def_.order(shape_, times);
        // At most one send per forward and backward, and per stage a gather wait, two
        // reductions per chunk, an optimizer and a gather; the barrier.
        std::size_t bound = static_cast<std::size_t>(l_.pp * (2 * chunks_ + 3) + 1);
        for (const auto& order : orders)
            for (const ScheduledTask& t : order) bound += t.paired_microbatch >= 0 ? 3 : 2;
        e.reserve(bound);
        tasks_.assign(static_cast<std::size_t>(l_.pp * 2 * m_ * chunks_), 0);
        last_compute_.assign(static_cast<std::size_t>(l_.pp), 0);
        last_backward_.assign(static_cast<std::size_t>(l_.pp * chunks_), 0);
        // Compute tasks first (every stage's order), then the transfers and reductions they feed.
        for (std::int64_t s = 0; s < l_.pp; ++s) {
            add_gather_wait(s);
            for (const ScheduledTask& t : orders[static_cast<std::size_t>(s)]) add_compute(s, t);
        }
        for (std::int64_t s = 0; s < l_.pp; ++s) {
            auto& order = orders[static_cast<std::size_t>(s)];
            for (const ScheduledTask& t : order) {
                if (t.pass == Pass::Weight) continue;
                link(s, t.pass == Pass::Forward, t.microbatch, t.chunk);
                if (t.paired_microbatch >= 0) link(s, false, t.paired_microbatch, t.paired_chunk);
            }
            // Its sends are in: the stage's order is not needed again (the orders and the
            // engine's tasks are never both whole in memory).
            std::vector<ScheduledTask>().swap(order);
        }
        add_step_end();
    }

private:

    // The previous step's overlapped parameter gather, as far as the first forward waits for it.
    void add_gather_wait(std::int64_t s) {
        const double wait = plan_.stages[static_cast<std::size_t>(s)].param_gather_wait;
        if (wait > 0)
            sim_.engine.add_task(streams_[static_cast<std::size_t>(s)].compute, ns(wait), kGatherWait,
                                 label({.name = "wait for param gather", .kind = TaskKind::GatherWait, .stage = s}));
    }

    const ChunkPlan& chunk_plan(std::int64_t s, std::int64_t chunk) const {
        return plan_.stages[static_cast<std::size_t>(s)].chunks[static_cast<std::size_t>(chunk)];
    }

    // A backward's parts: the whole, or (split off its W) all but the weight-gradient GEMMs.
    CostParts backward_parts(const ChunkPlan& c) const {
        CostParts parts = c.backward_parts;
        if (def_.split_backward) parts[static_cast<std::size_t>(Cost::Compute)] -= c.weight_grad;
        return parts;
    }

    // What a compute task shows in traces and timelines.
    TaskInfo compute_info(std::int64_t s, const ScheduledTask& t) const {
        const ChunkPlan& c = chunk_plan(s, t.chunk);
        const auto [first_layer, last_layer] = chunk_layers(s, t.chunk);
        TaskInfo info;
        info.stage = s;
        info.microbatch = t.microbatch;
        info.chunk = t.chunk;
        info.first_layer = first_layer;
        info.last_layer = last_layer;
        switch (t.pass) {
            case Pass::Forward:
                info.name = fmt::format("F mb{} chunk{}", t.microbatch, t.chunk);
                info.kind = TaskKind::Forward;
                info.parts = c.forward_parts;
                break;
            case Pass::Backward:
                info.name = fmt::format("B mb{} chunk{}", t.microbatch, t.chunk);
                info.kind = TaskKind::Backward;
                info.parts = backward_parts(c);
                break;
            case Pass::Weight:
                info.name = fmt::format("W mb{} chunk{}", t.microbatch, t.chunk);
                info.kind = TaskKind::Weight;
                info.parts[static_cast<std::size_t>(Cost::Compute)] = c.weight_grad;
                break;
        }
        if (t.paired_microbatch >= 0) {
            const ChunkPlan& other = chunk_plan(s, t.paired_chunk);
            const CostParts b = backward_parts(other);
            const double hidden = pair_overlap(c, other);
            for (std::size_t i = 0; i < b.size(); ++i) info.parts[i] += b[i];
            info.parts[static_cast<std::size_t>(Cost::EP)] = std::max(0.0, info.parts[static_cast<std::size_t>(Cost::EP)] - hidden);
            info.name += fmt::format(" + B mb{} chunk{}", t.paired_microbatch, t.paired_chunk);
            info.kind = TaskKind::ForwardBackward;
        }
        return info;
    }

    void add_compute(std::int64_t s, const ScheduledTask& t) {
        const ChunkPlan& c = chunk_plan(s, t.chunk);
        double seconds = 0;
        std::uint16_t category = kForward;
        switch (t.pass) {
            case Pass::Forward: seconds = c.forward; break;
            case Pass::Backward:
                seconds = def_.split_backward ? c.backward - c.weight_grad : c.backward;
                category = kBackward;
                break;
            case Pass::Weight:
                seconds = c.weight_grad;
                category = kWeight;
                break;
        }
        if (t.paired_microbatch >= 0) {
            // DualPipe: this forward and another microbatch's backward share the stage, each
            // one's expert all-to-all under the other's compute.
            const ChunkPlan& other = chunk_plan(s, t.paired_chunk);
            seconds += other.backward - (def_.split_backward ? other.weight_grad : 0.0) - pair_overlap(c, other);
            category = kPair;
        }
        const TaskId id =
            sim_.engine.add_task(streams_[static_cast<std::size_t>(s)].compute, ns(seconds), category, label([&] { return compute_info(s, t); }));
        if (t.pass != Pass::Weight) tasks_[key(s, t.pass == Pass::Forward, t.microbatch, t.chunk)] = id;
        if (t.paired_microbatch >= 0) {
            tasks_[key(s, false, t.paired_microbatch, t.paired_chunk)] = id;
            last_backward_[chunk_key(s, t.paired_chunk)] = id;
        }
        last_compute_[static_cast<std::size_t>(s)] = id;
        if (t.pass != Pass::Forward) last_backward_[chunk_key(s, t.chunk)] = id;
    }

    // The seconds of one pipeline send from stage s to the consumer's stage.
    double send_seconds(std::int64_t s, bool forward, std::int64_t to_stage) const {
        const StagePlan& sp = plan_.stages[static_cast<std::size_t>(s)];
        if (def_.placement == Placement::Looped)
            return forward ? (s + 1 < l_.pp ? sp.send_forward : plan_.stages.front().send_backward)
                           : (s > 0 ? sp.send_backward : plan_.stages.back().send_forward);
        if (to_stage == s) return 0.0;  // the V's turn: the same GPU
        return to_stage > s ? sp.send_forward : sp.send_backward;
    }

    void link(std::int64_t s, bool forward, std::int64_t microbatch, std::int64_t chunk) {
        Engine& e = sim_.engine;
        const TaskId self = tasks_[key(s, forward, microbatch, chunk)];
        std::int64_t to_stage = 0, to_chunk = 0;
        // The backward where the forward path ends (the loss) follows its own forward.
        if (!forward && !next_hop(def_, shape_, microbatch, s, chunk, true, to_stage, to_chunk))
            e.add_dependency(tasks_[key(s, true, microbatch, chunk)], self);
        if (!next_hop(def_, shape_, microbatch, s, chunk, forward, to_stage, to_chunk)) return;
        const TaskId consumer = tasks_[key(to_stage, forward, microbatch, to_chunk)];
        const double seconds = send_seconds(s, forward, to_stage);
        if (seconds <= 0) {
            // Blocking point-to-point: the send is inside this task, which feeds the next directly.
            if (labels_) {
                sim_.info[e.label(self)].consumer = consumer;
                sim_.info[e.label(self)].peer_stage = to_stage;
            }
        }
        const TaskId send = e.add_task(streams_[static_cast<std::size_t>(s)].send, ns(seconds), kSend,
                                       label([&] {
                                           return TaskInfo{.name = fmt::format("send {} mb{}", forward ? "act" : "grad", microbatch),
                                              .kind = TaskKind::Send,
                                              .stage = s,
                                              .microbatch = microbatch,
                                              .chunk = chunk,
                                              .comm = comm_.send,
                                              .peer_stage = to_stage,
                                              .consumer = consumer};
                                       }));
        e.add_dependency(self, send);
        e.add_dependency(send, consumer);
    }

    void add_step_end() {
        Engine& e = sim_.engine;
        const StreamId global = e.add_stream("step", static_cast<std::uint32_t>(l_.pp));
        const TaskId barrier = e.add_task(global, 0, kBarrier, label({.name = "gradients reduced", .kind = TaskKind::Barrier, .stage = l_.pp}));
        for (std::int64_t s = 0; s < l_.pp; ++s) {
            const StagePlan& sp = plan_.stages[static_cast<std::size_t>(s)];
            e.add_dependency(last_compute_[static_cast<std::size_t>(s)], barrier);
            for (std::int64_t c = chunks_ - 1; c >= 0; --c) {
                const ChunkPlan& chunk = sp.chunks[static_cast<std::size_t>(c)];
                const TaskId last = last_backward_[chunk_key(s, c)];
                const auto& [dense, expert] = comm_.reduce[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)];
                // A reduction task moves `share` of the chunk's gradients.
                auto reduce_info = [&](std::string name, double share) {
                    TaskInfo info{.name = std::move(name), .kind = TaskKind::Reduce, .stage = s, .chunk = c, .comm = dense, .expert_comm = expert};
                    info.comm.bytes *= share;
                    info.expert_comm.bytes *= share;
                    return info;
                };
                TaskId reduce = 0;
                if (plan_.dp_overlap) {
                    // Buckets are reduced as the last microbatch's backward produces them: all
                    // but the last start one layer into it, the last follows its end.
                    const double share = bucket_share(chunk.layers);
                    const TaskId body = e.add_task(streams_[static_cast<std::size_t>(s)].dp, ns(chunk.dp_reduce * (1.0 - share)), kReduce,
                                                   label(reduce_info(fmt::format("dp reduce chunk{}", c), 1.0 - share)));
                    e.add_dependency(last, body, -ns(chunk.backward * (1.0 - share)));
                    reduce = e.add_task(streams_[static_cast<std::size_t>(s)].dp, ns(chunk.dp_reduce * share), kReduce,
                                        label(reduce_info(fmt::format("dp reduce chunk{} last bucket", c), share)));
                    e.add_dependency(last, reduce);
                } else {
                    reduce = e.add_task(streams_[static_cast<std::size_t>(s)].dp, ns(chunk.dp_reduce), kReduce,
                                        label(reduce_info(fmt::format("dp reduce chunk{}", c), 1.0)));
                    e.add_dependency(last_compute_[static_cast<std::size_t>(s)], reduce);
                }
                e.add_dependency(reduce, barrier);
            }
        }
        for (std::int64_t s = 0; s < l_.pp; ++s) {
            const StagePlan& sp = plan_.stages[static_cast<std::size_t>(s)];
            const TaskId opt = e.add_task(streams_[static_cast<std::size_t>(s)].compute, ns(sp.optimizer), kOptimizer,
                                          label({.name = "optimizer", .kind = TaskKind::Optimizer, .stage = s}));
            e.add_dependency(barrier, opt);
            if (!plan_.gather_overlap) {
                const auto& [dense, expert] = comm_.gather[static_cast<std::size_t>(s)];
                const TaskId gather = e.add_task(streams_[static_cast<std::size_t>(s)].dp, ns(sp.param_gather), kGather,
                                                 label({.name = "param gather", .kind = TaskKind::Gather, .stage = s, .comm = dense, .expert_comm = expert}));
                e.add_dependency(opt, gather);
            }
        }
    }

    // Task descriptions only where something shows them (traces, timelines): a step of millions
    // of tasks neither keeps nor builds them (issue 18). `describe` returns the TaskInfo.
    template <class Describe>
    std::uint32_t label(Describe&& describe) {
        if (!labels_) return 0;
        sim_.info.push_back(describe());
        return static_cast<std::uint32_t>(sim_.info.size() - 1);
    }
    std::uint32_t label(TaskInfo info) {
        return label([&] { return std::move(info); });
    }

    // The model layers of a stage's chunk, inclusive: the stage's range split in order, as the
    // stage plan assigns them.
    std::pair<std::int64_t, std::int64_t> chunk_layers(std::int64_t s, std::int64_t chunk) const {
        std::int64_t first = 0;
        if (def_.placement == Placement::Dual) {  // a whole model stage
            const std::int64_t model_stage = chunk_model_stage(def_, l_.pp, s, chunk);
            for (std::int64_t k = 0; k < model_stage; ++k) first += l_.stage_layers[static_cast<std::size_t>(k)];
            return {first, first + l_.stage_layers[static_cast<std::size_t>(model_stage)] - 1};
        }
        for (std::int64_t k = 0; k < s; ++k) first += l_.stage_layers[static_cast<std::size_t>(k)];
        const auto& chunks = plan_.stages[static_cast<std::size_t>(s)].chunks;
        for (std::int64_t c = 0; c < chunk; ++c) first += chunks[static_cast<std::size_t>(c)].layers;
        return {first, first + chunks[static_cast<std::size_t>(chunk)].layers - 1};
    }

    const StepPlan& plan_;
    const Layout& l_;
    const CommDetails& comm_;
    Simulation& sim_;
    const ScheduleDef& def_;
    PipelineShape shape_;
    std::int64_t chunks_;
    std::vector<Streams> streams_;
    std::int64_t m_;
    bool labels_;
    // Dense indices (issue 18: a std::map keyed by stage, direction, microbatch and chunk made
    // 65,536 microbatches take 25 s and 3.5 GB).
    std::vector<TaskId> tasks_;
    std::vector<TaskId> last_compute_;   // [stage]
    std::vector<TaskId> last_backward_;  // [stage x chunk]

    std::size_t key(std::int64_t s, bool forward, std::int64_t microbatch, std::int64_t chunk) const {
        return static_cast<std::size_t>(((s * 2 + (forward ? 1 : 0)) * m_ + microbatch) * chunks_ + chunk);
    }
    std::size_t chunk_key(std::int64_t s, std::int64_t chunk) const { return static_cast<std::size_t>(s * chunks_ + chunk); }
};

// Splits the simulated step on the busiest stage, the one that paces the pipeline (as the closed
// form does): its idle time until the last stage finishes is the bubble. The stage that finishes
// last (the first, under 1F1B) would count the busiest stage's extra work as its own bubble.
void account(const StepPlan& plan, const Layout& l, const Engine& e, TimeNs makespan, StepResult& r) {
    std::vector<double> busy(static_cast<std::size_t>(l.pp), 0.0), gather_wait(static_cast<std::size_t>(l.pp), 0.0);
    // Summed in task order, as the tasks were added.
    for (TaskId t = 0; t < e.task_count(); ++t) {
        const std::uint16_t category = e.category(t);
        const bool compute = category == kForward || category == kBackward || category == kWeight || category == kPair;
        if (!compute && category != kGatherWait) continue;
        const std::uint32_t stage = e.streams()[e.stream(t)].group;
        (compute ? busy : gather_wait)[stage] += sec(e.duration(t));
    }
    TimeNs pipeline_end = 0;
    for (const Category c : {kForward, kBackward, kWeight, kPair}) pipeline_end = std::max(pipeline_end, e.latest_end(c));
    const TimeNs barrier = std::max<TimeNs>(0, e.latest_end(kBarrier));
    const auto critical = static_cast<std::size_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
    r.critical_stage = static_cast<std::int64_t>(critical);
    Breakdown& b = r.breakdown;
    const double m = d(plan.microbatches);
    add_task_parts(b, plan.stages[critical], l, plan.microbatches);
    if (l.schedule_def().pairs_forward_backward) {
        // What the paired forwards and backwards hid of each other's expert all-to-all.
        const double hidden = std::max(0.0, m * stage_times(plan, l)[critical].total() - busy[critical]);
        b.ep = std::max(0.0, b.ep - hidden);
    }
    const double idle = sec(pipeline_end) - busy[critical] - gather_wait[critical];
    const double transfers = l.pp > 1 ? d(l.pp - 1) * (plan.stages.front().send_forward + plan.stages.back().send_backward) : 0.0;
    const double waiting_on_transfers = std::min(idle, transfers);
    b.pp += waiting_on_transfers;
    b.bubble = idle - waiting_on_transfers;
    b.dp += gather_wait[critical] + sec(barrier - pipeline_end);
    for (const auto& sp : plan.stages) b.optimizer = std::max(b.optimizer, sp.optimizer);
    b.dp += std::max(0.0, sec(makespan - barrier) - b.optimizer);  // exposed ZeRO parameter gather
    b.other += plan.step_overhead;
}
}  // namespace

std::vector<TaskPart> task_parts(const TaskInfo& info, TimeNs start, TimeNs duration) {
    // Every part, so that the children tile the task.
    constexpr Cost kOrder[] = {Cost::Recompute, Cost::Compute, Cost::Host, Cost::Overhead, Cost::TP, Cost::CP, Cost::EP, Cost::PP, Cost::ZeRO, Cost::Offload};
    static_assert(std::size(kOrder) == static_cast<std::size_t>(Cost::Count));
    double total = 0;
    for (double v : info.parts) total += v;
    std::vector<TaskPart> out;
    if (total <= 0) return out;
    double cumulative = 0;
    TimeNs from = start;
    for (Cost c : kOrder) {
        cumulative += info.parts[static_cast<std::size_t>(c)];
        const TimeNs to = start + static_cast<TimeNs>(std::llround(static_cast<double>(duration) * std::min(1.0, cumulative / total)));
        if (to > from) out.push_back({c, from, to});
        from = std::max(from, to);
    }
    return out;
}

double estimated_tasks(const Layout& l, std::int64_t microbatches) {
    return d(l.pp) * d(l.vp) * (6.0 * d(microbatches) + 4.0) + 1.0;
}

Simulation simulate(const StepContext& ctx, const Layout& l, TaskLabels labels) {
    const Scenario& s = ctx.scenario();
    const std::int64_t microbatches = l.microbatches(s.training.global_batch);
    check_work(Work::SimTasks, estimated_tasks(l, microbatches), s.global_batch_path,
               fmt::format("{} ({} microbatches x pp {} x vp {})", s.training.global_batch, microbatches, l.pp, l.vp));
    Simulation sim;
    const StepPlan plan = plan_step(ctx, l);
    const CommDetails comm = comm_details(ctx, l, plan);
    // Per-task start times only for what shows tasks; the breakdown needs totals.
    sim.engine.keep_records(labels == TaskLabels::Describe);
    TimeNs makespan = 0;
    try {
        Builder(plan, l, comm, labels == TaskLabels::Describe, sim).build();
        makespan = sim.engine.run();
    } catch (const TimeOutOfRange&) {
        throw InputError(s.global_batch_path, std::to_string(s.training.global_batch),
                         fmt::format("makes one step ({} microbatches on pp {} x vp {}) last past the simulator's 2^56 ns "
                                     "(2.3 years): fewer sequences per step or more GPUs",
                                     microbatches, l.pp, l.vp));
    }
    StepResult& r = sim.result;
    r.memory = estimate_memory(ctx.scenario(), l, ctx.traits());
    account(plan, l, sim.engine, makespan, r);
    finish_result(ctx, l, r);
    return sim;
}

}  // namespace sextant
