#include "engine/engine.hpp"

#include <algorithm>
#include <queue>
#include <sstream>

#include "core/error.hpp"
#include "core/hash_mix.hpp"

namespace sextant {

void Engine::reserve(std::size_t tasks) {
    slots_.reserve(tasks);
    pending_.reserve(tasks);
}

StreamId Engine::add_stream(std::string name, std::uint32_t group) {
    streams_.push_back({std::move(name), group});
    stream_runs_.emplace_back();
    heads_.emplace_back();
    stream_free_.push_back(0);
    stream_kinds_.emplace_back();
    return static_cast<StreamId>(streams_.size() - 1);
}

std::uint32_t Engine::kind(StreamId stream, TimeNs duration, std::uint16_t category) {
    auto& mine = stream_kinds_[stream];
    for (const std::uint32_t k : mine)
        if (kinds_[k].duration == duration && kinds_[k].category == category) return k;
    HashMix h(stream);
    h.add(static_cast<std::uint64_t>(duration));
    h.add(category);
    auto& same_hash = kind_index_[h.value()];
    if (mine.size() >= kStreamKinds)
        for (const std::uint32_t k : same_hash)
            if (kinds_[k].stream == stream && kinds_[k].duration == duration && kinds_[k].category == category) return k;
    const auto k = static_cast<std::uint32_t>(kinds_.size());
    kinds_.push_back({duration, stream, category});
    if (mine.size() < kStreamKinds) mine.push_back(k);
    same_hash.push_back(k);
    return k;
}

TaskId Engine::add_task(StreamId stream, TimeNs duration, std::uint16_t category, std::uint32_t label) {
    const std::size_t n = task_count();
    // Task ids share Slot::out with arena indices (kArena marks those).
    if (n >= kArena) throw InternalError("the discrete-event engine holds at most 2^31 tasks");
    const auto id = static_cast<TaskId>(n);
    slots_.push_back({kind(stream, std::max<TimeNs>(duration, 0), category), kNone});
    pending_.push_back(0);
    if (label != 0 && labels_.empty()) labels_.assign(n, 0);
    if (!labels_.empty()) labels_.push_back(label);
    auto& runs = stream_runs_[stream];
    if (!runs.empty() && runs.back().first + runs.back().count == id) ++runs.back().count;
    else runs.push_back({id, 1});
    return id;
}

void Engine::add_pending(TaskId t) {
    std::uint8_t& p = pending_[t];
    if (p == kManyPending) ++many_pending_[t];
    else if (p == kManyPending - 1) {
        p = kManyPending;
        many_pending_[t] = kManyPending;
    } else ++p;
}

bool Engine::release(TaskId t, std::uint64_t& word) {
    const auto p = static_cast<std::uint8_t>(word >> kPendingShift);
    if (p != kManyPending) {
        word -= std::uint64_t{1} << kPendingShift;
        return p == 1;
    }
    const auto it = many_pending_.find(t);
    if (--it->second == kManyPending - 1) {
        word -= std::uint64_t{1} << kPendingShift;
        many_pending_.erase(it);
    }
    return false;
}

void Engine::add_dependency(TaskId before, TaskId after, TimeNs delay) {
    add_pending(after);
    // Appended at the list's tail: dependents are visited in the order they were added, which
    // fixes the order of events at equal times.
    std::uint32_t& out = slots_[before].out;
    if (out == kNone && delay == 0) {
        out = after;
        return;
    }
    auto push = [&](TimeNs d, TaskId to) {
        if (edges_.size() >= kArena) throw InternalError("the discrete-event engine holds at most 2^31 dependencies");
        edges_.push_back({d, to, kNone});
        return static_cast<std::uint32_t>(edges_.size() - 1);
    };
    if (out != kNone && (out & kArena) == 0) {  // the inline dependent becomes the list's first
        const std::uint32_t first = push(0, out);
        out = kArena | first;
        edge_tail_[before] = first;
    }
    const std::uint32_t id = push(delay, after);
    if (out == kNone) {
        out = kArena | id;
        edge_tail_[before] = id;
        return;
    }
    std::uint32_t& tail = edge_tail_[before];
    edges_[tail].next = id;
    tail = id;
}

TaskId Engine::head_task(StreamId s) const {
    const Head& h = heads_[s];
    const auto& runs = stream_runs_[s];
    return h.run < runs.size() ? runs[h.run].first + h.offset : kNone;
}

namespace {
// A task's end: equal times run in the order they were scheduled (the sequence is unique).
struct Event {
    TimeNs time;
    std::uint64_t sequence;
    TaskId task;
};
struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.sequence > b.sequence; }
};
}  // namespace

TimeNs Engine::run() {
    const std::size_t n = task_count();
    // Scratch of the run only: when each task's dependencies let it start, and, with records
    // kept, its start and start order.
    // Each task's word: its pending count (from pending_, freed) and its ready time.
    std::vector<std::uint64_t> words(n);
    for (std::size_t t = 0; t < n; ++t) words[t] = std::uint64_t{pending_[t]} << kPendingShift;
    std::vector<std::uint8_t>().swap(pending_);
    std::vector<TimeNs> start;
    std::vector<std::uint32_t> sequence_of;
    if (keep_records_) {
        start.assign(n, -1);
        sequence_of.assign(n, 0);
    }
    std::uint16_t categories = 0;
    for (const Kind& k : kinds_) categories = std::max<std::uint16_t>(categories, static_cast<std::uint16_t>(k.category + 1));
    latest_end_.assign(categories, -1);

    std::priority_queue<Event, std::vector<Event>, Later> events;
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
            Head& head = heads_[s];
            if (head.running) continue;
            const TaskId t = head_task(s);
            if (t == kNone || (words[t] >> kPendingShift) != 0) continue;
            const Slot slot = slots_[t];
            const Kind& k = kinds_[slot.kind];
            const TimeNs begin = std::max({now, static_cast<TimeNs>(words[t] & kReadyMask), stream_free_[s]}), end = begin + k.duration;
            head.running = true;
            if (keep_records_) {
                start[t] = begin;
                sequence_of[t] = started;
            }
            ++started;
            stream_free_[s] = end;
            latest_end_[k.category] = std::max(latest_end_[k.category], end);
            events.push({end, sequence++, t});
            auto visit = [&](TaskId to, TimeNs delay) {
                std::uint64_t& word = words[to];
                const TimeNs ready = end + delay;
                if (static_cast<std::uint64_t>(ready) > kReadyMask) throw TimeOutOfRange("the discrete-event engine's times end at 2^56 ns (2.3 years)");
                if (static_cast<std::uint64_t>(ready) > (word & kReadyMask)) word = (word & ~kReadyMask) | static_cast<std::uint64_t>(ready);
                if (release(to, word)) to_try.push_back(stream(to));
            };
            const std::uint32_t out = slot.out;
            if (out == kNone) continue;
            if ((out & kArena) == 0) visit(out, 0);
            else
                for (std::uint32_t i = out & ~kArena; i != kNone; i = edges_[i].next) visit(edges_[i].to, edges_[i].delay);
        }
    };
    for (StreamId s = 0; s < streams_.size(); ++s) start_ready(s, 0);
    TimeNs makespan = 0;
    while (!events.empty()) {
        const TimeNs now = events.top().time;
        const TaskId t = events.top().task;
        events.pop();
        ++finished;
        makespan = std::max(makespan, now);
        const StreamId s = stream(t);
        Head& head = heads_[s];
        head.running = false;
        if (++head.offset == stream_runs_[s][head.run].count) {
            ++head.run;
            head.offset = 0;
        }
        start_ready(s, now);
    }
    if (finished != n) throw InternalError("deadlock in the step simulation:\n" + deadlock_report(words));
    if (keep_records_) {
        records_.resize(n);
        for (TaskId t = 0; t < n; ++t) {
            const Kind& k = kinds_[slots_[t].kind];
            records_[t] = {k.stream, k.duration, start[t], start[t] + k.duration, k.category, labels_.empty() ? 0 : labels_[t], sequence_of[t]};
        }
    }
    return makespan;
}

TimeNs Engine::latest_end(std::uint16_t category) const { return category < latest_end_.size() ? latest_end_[category] : -1; }

const std::vector<TaskRecord>& Engine::tasks() const {
    if (!keep_records_) throw InternalError("the engine kept no task records (keep_records(false)): nothing to show per task");
    return records_;
}

std::string Engine::deadlock_report(const std::vector<std::uint64_t>& words) const {
    // A deadlock leaves no task running: the tasks before each stream's head are the finished ones.
    std::vector<bool> done(task_count(), false);
    for (StreamId s = 0; s < streams_.size(); ++s) {
        const auto& runs = stream_runs_[s];
        for (std::uint32_t r = 0; r < runs.size() && r <= heads_[s].run; ++r) {
            const std::uint32_t count = r < heads_[s].run ? runs[r].count : heads_[s].offset;
            for (std::uint32_t i = 0; i < count; ++i) done[runs[r].first + i] = true;
        }
    }
    auto feeds = [&](TaskId u, TaskId t) {
        const std::uint32_t out = slots_[u].out;
        if (out == kNone) return false;
        if ((out & kArena) == 0) return out == t;
        for (std::uint32_t i = out & ~kArena; i != kNone; i = edges_[i].next)
            if (edges_[i].to == t) return true;
        return false;
    };
    std::ostringstream out;
    for (StreamId s = 0; s < streams_.size(); ++s) {
        const TaskId t = head_task(s);
        if (t == kNone) continue;
        const auto count = static_cast<std::uint8_t>(words[t] >> kPendingShift);
        const std::uint32_t waiting = count == kManyPending ? many_pending_.at(t) : count;
        out << "  stream '" << streams_[s].name << "' (group " << streams_[s].group << ") waits at task " << t << " on " << waiting
            << " unfinished dependenc" << (waiting == 1 ? "y" : "ies");
        std::vector<std::string> waits;
        for (TaskId u = 0; u < task_count(); ++u)
            if (!done[u] && feeds(u, t)) waits.push_back("task " + std::to_string(u) + " on '" + streams_[stream(u)].name + "'");
        for (std::size_t i = 0; i < waits.size(); ++i) out << (i ? ", " : ": ") << waits[i];
        out << "\n";
    }
    return out.str();
}

}  // namespace sextant
