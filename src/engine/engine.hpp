#pragma once
// A discrete-event engine over in-order streams. Time is integer nanoseconds and events are
// ordered by (time, insertion sequence), so a run is bit-reproducible. A task starts when it is
// at the head of its stream, the previous task of the stream has finished, and every dependency
// is satisfied; a queue that empties with tasks left is a deadlock, reported with what waits on
// what.
//
// Memory grows by about 9 bytes a task while building and 17 while running (issue 18: a step of
// 16.6 million tasks within 500 MB): a task is one index into a table of kinds (its stream,
// duration and category, which most tasks share) beside one word for its first dependent (the
// arena holds the rest and any delay), a stream's tasks are runs of consecutive ids, and a
// task's count of unfinished dependencies is one byte (a side table holds counts past 254),
// which the run packs with the task's ready time into one word: a dependent's update then
// touches one cache line, not two. Start times and start order are kept per task only when
// asked for (traces, tests); otherwise a run keeps each category's latest end and nothing per
// task.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace sextant {

using TimeNs = std::int64_t;

// The latest time the engine holds: a task's ready time shares a 64-bit word with its count of
// unfinished dependencies (the top byte), so times end at 2^56 ns, 2.3 years.
inline constexpr TimeNs kMaxTimeNs = (TimeNs{1} << 56) - 1;
// A task's duration or a time of the run past kMaxTimeNs: the input asked for a step longer than
// the engine holds (the caller names the input that did).
struct TimeOutOfRange : std::runtime_error {
    using std::runtime_error::runtime_error;
};
using TaskId = std::uint32_t;
using StreamId = std::uint32_t;

// One executed task, as traces and tests read it.
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
    // Whether run() keeps every task's start and start order for tasks() (the default); without
    // them a run reports its makespan and latest_end() only.
    void keep_records(bool keep) { keep_records_ = keep; }
    // Room for this many tasks, so that building never copies the per-task arrays (pages not
    // touched cost no memory: an upper bound is fine).
    void reserve(std::size_t tasks);

    StreamId add_stream(std::string name, std::uint32_t group);
    // Tasks run on their stream in the order they are added.
    TaskId add_task(StreamId stream, TimeNs duration, std::uint16_t category = 0, std::uint32_t label = 0);
    // `after` may start no earlier than `before` ends plus `delay` (which may be negative, down to
    // -duration of `before`, to express "once part of `before` is done").
    void add_dependency(TaskId before, TaskId after, TimeNs delay = 0);

    // Runs to completion; returns the makespan. Throws InternalError on a deadlock.
    TimeNs run();

    std::size_t task_count() const { return slots_.size(); }
    StreamId stream(TaskId t) const { return kinds_[slots_[t].kind].stream; }
    TimeNs duration(TaskId t) const { return kinds_[slots_[t].kind].duration; }
    std::uint16_t category(TaskId t) const { return kinds_[slots_[t].kind].category; }
    std::uint32_t label(TaskId t) const { return labels_.empty() ? 0 : labels_[t]; }
    // After run(): the latest end of a task of `category`, -1 if none ran.
    TimeNs latest_end(std::uint16_t category) const;
    // After run() with records kept: every task, by id. Throws InternalError otherwise.
    const std::vector<TaskRecord>& tasks() const;
    const std::vector<StreamInfo>& streams() const { return streams_; }

private:
    static constexpr std::uint32_t kNone = 0xffffffffu;
    static constexpr std::uint32_t kArena = 0x80000000u;  // Slot::out: an arena list's index, not a task
    static constexpr std::uint8_t kManyPending = 255;     // a pending count in many_pending_
    // The run's word per task: its unfinished dependencies in the top byte, its ready time below.
    static constexpr int kPendingShift = 56;
    static constexpr std::uint64_t kReadyMask = static_cast<std::uint64_t>(kMaxTimeNs);
    static_assert(kReadyMask == (std::uint64_t{1} << kPendingShift) - 1);

    struct Slot {
        std::uint32_t kind;
        // The task's dependents, in the order they were added: kNone, one task without delay,
        // or kArena | the index of its list in edges_.
        std::uint32_t out;
    };
    struct Kind {
        TimeNs duration;
        StreamId stream;
        std::uint16_t category;
    };
    struct Edge {
        TimeNs delay;
        TaskId to;
        std::uint32_t next;  // kNone at the list's end
    };
    // Consecutive task ids on one stream.
    struct Run {
        TaskId first;
        std::uint32_t count;
    };
    struct Head {
        std::uint32_t run = 0, offset = 0;
        bool running = false;  // its head task has started and not yet ended
    };

    std::uint32_t kind(StreamId stream, TimeNs duration, std::uint16_t category);
    void add_pending(TaskId t);
    // During run(): one dependency of t done (`word` is t's); true when none is left.
    bool release(TaskId t, std::uint64_t& word);
    TaskId head_task(StreamId s) const;  // kNone once the stream is done
    std::string deadlock_report(const std::vector<std::uint64_t>& words) const;

    bool keep_records_ = true;
    std::vector<StreamInfo> streams_;
    std::vector<std::vector<Run>> stream_runs_;
    std::vector<Head> heads_;
    std::vector<TimeNs> stream_free_;

    std::vector<Kind> kinds_;
    // A stream's first kinds, searched in order; every kind is also in kind_index_, which is
    // searched only for streams with more.
    static constexpr std::size_t kStreamKinds = 16;
    std::vector<std::vector<std::uint32_t>> stream_kinds_;
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> kind_index_;  // by a hash of the kind
    std::vector<Slot> slots_;            // per task
    std::vector<std::uint32_t> labels_;  // per task once any label is not 0; empty before
    std::vector<Edge> edges_;
    std::unordered_map<TaskId, std::uint32_t> edge_tail_;  // last edge of each arena list
    std::vector<std::uint8_t> pending_;  // while building; run() moves it into its words
    std::unordered_map<TaskId, std::uint32_t> many_pending_;

    std::vector<TimeNs> latest_end_;  // per category, from the last run
    std::vector<TaskRecord> records_;
};

}  // namespace sextant
