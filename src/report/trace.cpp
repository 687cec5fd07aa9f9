#include "report/trace.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
using nlohmann::json;

// Timestamps are microseconds with three decimals: the simulator's integer nanoseconds written as
// text, after an origin of 2^k microseconds chosen so that every timestamp of the step lies in
// [origin, 2 x origin), as PyTorch's traces carry large absolute times. In one binade, the
// difference of two timestamps is exact in doubles (Sterbenz), so a duration written as that
// difference adds back to the end's timestamp exactly, also after a reader subtracts a thread's
// first timestamp (speedscope does): back-to-back slices touch, and a child ending with its
// parent ends with it, in every reader's arithmetic, not only in Perfetto's nanoseconds.
class Clock {
public:
    explicit Clock(TimeNs makespan) {
        while (origin_us_ * 1000 <= makespan) origin_us_ *= 2;
    }
    std::int64_t origin_us() const { return origin_us_; }
    std::string at(TimeNs t) const { return fmt::format("{}.{:03d}", origin_us_ + t / 1000, t % 1000); }
    std::string between(TimeNs start, TimeNs end) const { return fmt::format("{}", as_double(end) - as_double(start)); }

private:
    // The double a reader parses from at(t).
    double as_double(TimeNs t) const { return static_cast<double>(origin_us_ * 1000 + t) / 1000.0; }
    std::int64_t origin_us_ = 1;
};

const char* category(TaskKind k) {
    switch (k) {
        case TaskKind::Forward: return "forward";
        case TaskKind::Backward: return "backward";
        case TaskKind::Send: return "pp_send";
        case TaskKind::Reduce: return "dp_reduce";
        case TaskKind::Gather: return "dp_gather";
        case TaskKind::Optimizer: return "optimizer";
        case TaskKind::GatherWait: return "wait";
        case TaskKind::Barrier: return "barrier";
        case TaskKind::Weight: return "weight_grad";
        case TaskKind::ForwardBackward: return "forward_backward";
    }
    return "task";
}

// A part of a forward or backward task as a child slice.
struct PartName {
    const char* name;
    const char* category;
    const char* parallelism;
};
PartName part_name(Cost c) {
    switch (c) {
        case Cost::Recompute: return {"recompute", "recompute", ""};
        case Cost::Compute: return {"compute", "compute", ""};
        case Cost::TP: return {"tp (exposed)", "communication", "tp"};
        case Cost::CP: return {"cp (exposed)", "communication", "cp"};
        case Cost::EP: return {"ep (exposed)", "communication", "ep"};
        case Cost::PP: return {"pp (exposed)", "communication", "pp"};
        case Cost::ZeRO: return {"zero-3 gather (exposed)", "communication", "dp"};
        case Cost::Host: return {"host (issuing MoE kernels)", "overhead", ""};
        case Cost::Offload: return {"activation offload (exposed)", "offload", ""};
        default: return {"overhead", "overhead", ""};
    }
}

void add_comm(json& args, const CommDetail& c, const char* prefix) {
    if (c.bytes <= 0) return;
    const std::string p = prefix;
    args[p + "op"] = op_name(c.op);
    args[p + "bytes"] = c.bytes;
    args[p + "algorithm"] = std::string(c.cost.algorithm);
    args[p + "group_size"] = c.group.ranks;
    args[p + "group_span"] = span_name(c.group.span);
}

json task_args(const TaskInfo& info) {
    json args = {{"stage", info.stage}};
    if (info.microbatch >= 0) args["microbatch"] = info.microbatch;
    if (info.chunk >= 0) args["chunk"] = info.chunk;
    if (info.first_layer >= 0) {
        args["layers"] = fmt::format("{}-{}", info.first_layer, info.last_layer);
        args["layer_count"] = info.last_layer - info.first_layer + 1;
    }
    add_comm(args, info.comm, "");
    add_comm(args, info.expert_comm, "expert_");
    if (info.peer_stage >= 0) args["peer_stage"] = info.peer_stage;
    return args;
}

struct Event {
    TimeNs ts;
    std::string text;
};

class Writer {
public:
    explicit Writer(const Clock& clock) : clock_(clock) {}
    void slice(const char* cat, const std::string& name, std::uint32_t pid, std::uint32_t tid, TimeNs start, TimeNs end, const json& args) {
        events_.push_back({start, fmt::format(R"({{"ph":"X","cat":"{}","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})", cat,
                                              json(name).dump(), pid, tid, clock_.at(start), clock_.between(start, end), args.dump())});
    }
    void flow(char phase, std::uint64_t id, const char* name, std::uint32_t pid, std::uint32_t tid, TimeNs ts) {
        events_.push_back({ts, fmt::format(R"({{"ph":"{}","cat":"pipeline","name":"{}","id":{},"pid":{},"tid":{},"ts":{}{}}})", phase, name,
                                           id, pid, tid, clock_.at(ts), phase == 'f' ? R"(,"bp":"e")" : "")});
    }
    void counter(std::uint32_t pid, TimeNs ts, double bytes) {
        events_.push_back({ts, fmt::format(R"({{"ph":"C","cat":"memory","name":"memory","pid":{},"ts":{},"args":{{"allocated_bytes":{:.0f}}}}})",
                                           pid, clock_.at(ts), bytes)});
    }
    void metadata(const char* what, std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint32_t sort_index) {
        meta_.push_back(fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":{}}}}})", what, pid, tid, json(name).dump()));
        const std::string sort = what == std::string("process_name") ? "process_sort_index" : "thread_sort_index";
        meta_.push_back(fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", sort, pid, tid, sort_index));
    }
    // Metadata first, then every event in time order (stable: a slice precedes its children and
    // the flow events bound to it).
    std::string document(const json& other) {
        std::stable_sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.ts < b.ts; });
        std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":" + other.dump() + ",\"traceEvents\":[\n";
        bool first = true;
        auto put = [&](const std::string& e) {
            out += (first ? "" : ",\n") + e;
            first = false;
        };
        for (const auto& m : meta_) put(m);
        for (const auto& e : events_) put(e.text);
        return out + "\n]}\n";
    }

private:
    const Clock& clock_;
    std::vector<std::string> meta_;
    std::vector<Event> events_;
};

// A forward or backward slice's children: its parts, tiling it exactly.
void add_parts(Writer& w, const TaskRecord& t, const TaskInfo& info, std::uint32_t pid) {
    for (const TaskPart& part : task_parts(info, t.start, t.duration)) {
        const PartName p = part_name(part.cost);
        json args = task_args(info);
        if (*p.parallelism) args["parallelism"] = p.parallelism;
        w.slice(p.category, p.name, pid, t.stream, part.start, part.end, args);
    }
}

// Bytes in use on each stage over the step: the static part, plus the activations of the
// microbatches (and chunks) whose forward has ended and whose backward has not. One chunk's
// activations are the memory model's activations over the most chunks the simulated schedule
// ever holds, so the counter's peak is the memory model's stage total.
void add_memory_counters(Writer& w, const Simulation& sim) {
    const auto& stages = sim.result.memory.stages;
    std::vector<std::vector<std::pair<TimeNs, int>>> changes(stages.size());
    for (const TaskRecord& t : sim.engine.tasks()) {
        const TaskInfo& info = sim.info[t.label];
        if (info.stage < 0 || static_cast<std::size_t>(info.stage) >= stages.size()) continue;
        if (info.kind == TaskKind::Forward) changes[static_cast<std::size_t>(info.stage)].emplace_back(t.end, +1);
        if (info.kind == TaskKind::Backward) changes[static_cast<std::size_t>(info.stage)].emplace_back(t.end, -1);
    }
    for (std::size_t s = 0; s < stages.size(); ++s) {
        auto& c = changes[s];
        std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        int held = 0, most = 0;
        for (const auto& [ts, delta] : c) most = std::max(most, held += delta);
        const double activations = stages[s].activations.value();
        const double fixed = stages[s].total().value() - activations, chunk = most > 0 ? activations / most : 0.0;
        const auto pid = static_cast<std::uint32_t>(s);
        w.counter(pid, 0, fixed);
        held = 0;
        for (const auto& [ts, delta] : c) w.counter(pid, ts, fixed + chunk * (held += delta));
    }
}
}  // namespace

double estimated_trace_bytes(double tasks) {
    // A forward or backward slice with its args, its parts and a flow is 1.5-2.5 KB of text in the
    // traces of scenarios/ (tests/test_trace.cpp holds this bound); 4 KB leaves room.
    constexpr double kBytesPerTask = 4096;
    return kBytesPerTask * tasks;
}

std::string chrome_trace(const Simulation& sim, const std::string& title) {
    const Engine& e = sim.engine;
    if (sim.info.empty() && !sim.engine.tasks().empty())
        throw InternalError("tasks shown from a simulation run without TaskLabels::Describe");
    TimeNs makespan = 0;
    for (const TaskRecord& t : e.tasks()) makespan = std::max(makespan, t.end);
    const Clock clock(makespan);
    Writer w(clock);
    std::vector<bool> used(e.streams().size(), false);
    std::uint64_t flows = 0;
    // In the engine's start order, so that tasks starting at the same instant appear as it ran them.
    std::vector<const TaskRecord*> started;
    for (const TaskRecord& t : e.tasks()) started.push_back(&t);
    std::sort(started.begin(), started.end(), [](const TaskRecord* a, const TaskRecord* b) { return a->sequence < b->sequence; });
    for (const TaskRecord* task : started) {
        const TaskRecord& t = *task;
        if (t.duration == 0) continue;
        const TaskInfo& info = sim.info[t.label];
        const std::uint32_t pid = e.streams()[t.stream].group;
        used[t.stream] = true;
        w.slice(category(info.kind), info.name, pid, t.stream, t.start, t.end, task_args(info));
        if (info.kind == TaskKind::Forward || info.kind == TaskKind::Backward || info.kind == TaskKind::Weight ||
            info.kind == TaskKind::ForwardBackward)
            add_parts(w, t, info, pid);
        if (info.consumer >= 0) {
            const TaskRecord& to = e.tasks()[static_cast<std::size_t>(info.consumer)];
            if (to.duration == 0) continue;
            const char* name = sim.info[to.label].kind == TaskKind::Forward ? "activations" : "gradients";
            w.flow('s', ++flows, name, pid, t.stream, t.start);
            w.flow('f', flows, name, e.streams()[to.stream].group, to.stream, to.start);
        }
    }
    std::vector<bool> named(e.streams().size() + 1, false);
    for (std::size_t s = 0; s < e.streams().size(); ++s) {
        if (!used[s]) continue;
        const StreamInfo& info = e.streams()[s];
        if (!named[info.group]) w.metadata("process_name", info.group, 0, "stage " + std::to_string(info.group), info.group);
        named[info.group] = true;
        w.metadata("thread_name", info.group, static_cast<std::uint32_t>(s), info.name, static_cast<std::uint32_t>(s));
    }
    add_memory_counters(w, sim);
    const StepResult& r = sim.result;
    return w.document({{"scenario", title},
                       {"time_origin_us", clock.origin_us()},
                       {"step_time_s", r.step_time_s},
                       {"critical_stage", r.critical_stage},
                       {"source", "sextant simulate: a discrete-event simulation, one representative rank per pipeline stage"}});
}

}  // namespace sextant
