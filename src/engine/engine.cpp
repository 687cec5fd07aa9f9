#include "engine/engine.hpp"

#include <algorithm>
#include <queue>
#include <sstream>
#include <tuple>

#include "core/error.hpp"

namespace sextant {

StreamId Engine::add_stream(std::string name, std::uint32_t group) {
    streams_.push_back({std::move(name), group});
    stream_tasks_.emplace_back();
    stream_head_.push_back(0);
    stream_free_.push_back(0);
    return static_cast<StreamId>(streams_.size() - 1);
}

TaskId Engine::add_task(StreamId stream, TimeNs duration, std::uint16_t category, std::uint32_t label) {
    const auto id = static_cast<TaskId>(tasks_.size());
    tasks_.push_back({stream, std::max<TimeNs>(duration, 0), -1, -1, category, label});
    stream_tasks_[stream].push_back(id);
    first_edge_.push_back(kNoEdge);
    last_edge_.push_back(kNoEdge);
    pending_.push_back(0);
    ready_at_.push_back(0);
    return id;
}

void Engine::add_dependency(TaskId before, TaskId after, TimeNs delay) {
    // Appended at the list's tail: dependents are visited in the order they were added, which
    // fixes the order of events at equal times.
    const auto id = static_cast<std::uint32_t>(edges_.size());
    edges_.push_back({delay, after, kNoEdge});
    if (first_edge_[before] == kNoEdge) first_edge_[before] = id;
    else edges_[last_edge_[before]].next = id;
    last_edge_[before] = id;
    ++pending_[after];
}

namespace {
// (time, insertion sequence, task): equal times run in the order they were scheduled.
using Event = std::tuple<TimeNs, std::uint64_t, TaskId>;
}  // namespace

TimeNs Engine::run() {
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    std::uint64_t sequence = 0;
    std::uint32_t started = 0;
    std::size_t finished = 0;
    // A started task's end is known, so its dependents learn their ready time at its start:
    // that is what lets a negative delay overlap them with it.
    std::vector<StreamId> to_try;
    auto start_ready = [&](StreamId first, TimeNs now) {
        to_try.push_back(first);
        while (!to_try.empty()) {
            const StreamId s = to_try.back();
            to_try.pop_back();
            if (stream_head_[s] >= stream_tasks_[s].size()) continue;
            const TaskId t = stream_tasks_[s][stream_head_[s]];
            TaskRecord& task = tasks_[t];
            if (task.start >= 0 || pending_[t] > 0) continue;
            task.start = std::max({now, ready_at_[t], stream_free_[s]});
            task.end = task.start + task.duration;
            task.sequence = started++;
            stream_free_[s] = task.end;
            events.emplace(task.end, sequence++, t);
            for (std::uint32_t i = first_edge_[t]; i != kNoEdge; i = edges_[i].next) {
                const Edge& e = edges_[i];
                ready_at_[e.to] = std::max(ready_at_[e.to], task.end + e.delay);
                if (--pending_[e.to] == 0) to_try.push_back(tasks_[e.to].stream);
            }
        }
    };
    for (StreamId s = 0; s < streams_.size(); ++s) start_ready(s, 0);
    TimeNs makespan = 0;
    while (!events.empty()) {
        const auto [now, seq, t] = events.top();
        (void)seq;
        events.pop();
        ++finished;
        makespan = std::max(makespan, now);
        const StreamId s = tasks_[t].stream;
        ++stream_head_[s];
        start_ready(s, now);
    }
    if (finished != tasks_.size()) throw InternalError("deadlock in the step simulation:\n" + deadlock_report());
    return makespan;
}

std::string Engine::deadlock_report() const {
    std::ostringstream out;
    for (StreamId s = 0; s < streams_.size(); ++s) {
        if (stream_head_[s] >= stream_tasks_[s].size()) continue;
        const TaskId t = stream_tasks_[s][stream_head_[s]];
        out << "  stream '" << streams_[s].name << "' (group " << streams_[s].group << ") waits at task " << t << " on "
            << pending_[t] << " unfinished dependenc" << (pending_[t] == 1 ? "y" : "ies");
        std::vector<std::string> waits;
        for (TaskId u = 0; u < tasks_.size(); ++u)
            if (tasks_[u].end < 0)
                for (std::uint32_t i = first_edge_[u]; i != kNoEdge; i = edges_[i].next)
                    if (edges_[i].to == t) waits.push_back("task " + std::to_string(u) + " on '" + streams_[tasks_[u].stream].name + "'");
        for (std::size_t i = 0; i < waits.size(); ++i) out << (i ? ", " : ": ") << waits[i];
        out << "\n";
    }
    return out.str();
}

}  // namespace sextant
