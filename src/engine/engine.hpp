#pragma once
// A discrete-event engine over in-order streams. Time is integer nanoseconds and events are
// ordered by (time, insertion sequence), so a run is bit-reproducible. A task starts when it is
// at the head of its stream, the previous task of the stream has finished, and every dependency
// is satisfied; a queue that empties with tasks left is a deadlock, reported with what waits on
// what.
#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

using TimeNs = std::int64_t;
using TaskId = std::uint32_t;
using StreamId = std::uint32_t;

struct TaskRecord {
    StreamId stream = 0;
    TimeNs duration = 0;
    TimeNs start = -1;
    TimeNs end = -1;
    std::uint16_t category = 0;  // caller-defined, for breakdowns and traces
    std::uint32_t label = 0;     // caller-defined, for traces
    // The order tasks were started in: of two streams freed at the same instant, the one whose
    // task's end was scheduled first starts its next task first (traces list tasks so).
    std::uint32_t sequence = 0;
};

struct StreamInfo {
    std::string name;
    std::uint32_t group = 0;  // e.g. the pipeline stage: one trace process per group
};

class Engine {
public:
    StreamId add_stream(std::string name, std::uint32_t group);
    // Tasks run on their stream in the order they are added.
    TaskId add_task(StreamId stream, TimeNs duration, std::uint16_t category = 0, std::uint32_t label = 0);
    // `after` may start no earlier than `before` ends plus `delay` (which may be negative, down to
    // -duration of `before`, to express "once part of `before` is done").
    void add_dependency(TaskId before, TaskId after, TimeNs delay = 0);

    // Runs to completion; returns the makespan. Throws InternalError on a deadlock.
    TimeNs run();

    const std::vector<TaskRecord>& tasks() const { return tasks_; }
    const std::vector<StreamInfo>& streams() const { return streams_; }

private:
    // Dependencies in one arena, each task's as a linked list (first_edge_, Edge::next): no
    // allocation per task, so memory grows linearly with tasks at a few bytes each.
    static constexpr std::uint32_t kNoEdge = 0xffffffffu;
    struct Edge {
        TimeNs delay;
        TaskId to;
        std::uint32_t next;
    };
    std::string deadlock_report() const;

    std::vector<StreamInfo> streams_;
    std::vector<std::vector<TaskId>> stream_tasks_;
    std::vector<std::size_t> stream_head_;
    std::vector<TimeNs> stream_free_;
    std::vector<TaskRecord> tasks_;
    std::vector<Edge> edges_;
    std::vector<std::uint32_t> first_edge_, last_edge_;  // per task; kNoEdge when none
    std::vector<std::uint32_t> pending_;
    std::vector<TimeNs> ready_at_;
};

}  // namespace sextant
