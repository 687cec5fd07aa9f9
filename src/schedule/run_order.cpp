// A schedule's order executed with free transfers (schedule.hpp, run_order).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/hash_mix.hpp"
#include "schedule/definitions.hpp"

namespace sextant {

OrderRun run_order(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times) {
    const auto orders = def.order(shape, times);
    const VisitTimes v = visit_times(def, shape, times);
    const std::int64_t pp = shape.pp, chunks = schedule_chunks(def, shape.vp), m = shape.microbatches;
    const auto P = static_cast<std::size_t>(pp);
    constexpr double kPending = -1.0;
    // When each (stage, chunk, microbatch)'s forward and backward end; kPending until they run.
    const auto key = [&](std::int64_t s, std::int64_t c, std::int64_t mb) {
        return static_cast<std::size_t>((s * chunks + c) * m + mb);
    };
    std::vector<double> f_end(P * static_cast<std::size_t>(chunks * m), kPending), b_end(f_end);
    OrderRun run{0.0, std::vector<double>(P, 0.0), std::vector<double>(P, 0.0), std::vector<double>(P, 0.0)};
    std::vector<std::size_t> next(P, 0);
    // A stage runs its tasks in order until one lacks an input; it then waits on that input's
    // (forward or backward, key) slot and runs again when the slot's task ends: each task is
    // looked at about once (O(tasks)).
    // The stages waiting on a slot, as a list: the first in `waiters`, each one's next in `then`.
    constexpr std::int64_t kNone = -1;
    std::vector<std::int64_t> waiters(2 * f_end.size(), kNone), then(P, kNone);
    std::vector<std::size_t> ready_stages(P);
    for (std::size_t s = 0; s < P; ++s) ready_stages[s] = P - 1 - s;
    const auto finish = [&](bool backward, std::size_t k, double end) {
        (backward ? b_end : f_end)[k] = end;
        std::int64_t& w = waiters[2 * k + (backward ? 1 : 0)];
        for (; w != kNone; w = then[static_cast<std::size_t>(w)]) ready_stages.push_back(static_cast<std::size_t>(w));
    };
    while (!ready_stages.empty()) {
        const std::size_t s = ready_stages.back();
        ready_stages.pop_back();
        const auto S = static_cast<std::int64_t>(s);
        for (; next[s] < orders[s].size(); ++next[s]) {
            const ScheduledTask& t = orders[s][next[s]];
            // The input this task waits for: (backward?, key), or none.
            bool wait_backward = false;
            std::size_t wait_key = 0;
            double ready = 0.0, seconds = 0.0;
            const auto need = [&](bool backward, std::int64_t ks, std::int64_t kc, std::int64_t mb) {
                const std::size_t k = key(ks, kc, mb);
                const double end = (backward ? b_end : f_end)[k];
                if (end < 0) {
                    wait_backward = backward;
                    wait_key = k;
                    return false;
                }
                ready = std::max(ready, end);
                return true;
            };
            const auto forward_input = [&](std::int64_t c, std::int64_t mb) {
                std::int64_t ps = 0, pc = 0;
                return !next_hop(def, shape, mb, S, c, false, ps, pc) || need(false, ps, pc, mb);
            };
            const auto backward_input = [&](std::int64_t c, std::int64_t mb) {
                std::int64_t ns = 0, nc = 0;
                return next_hop(def, shape, mb, S, c, true, ns, nc) ? need(true, ns, nc, mb) : need(false, S, c, mb);
            };
            bool has_inputs = true;
            if (t.pass == Pass::Forward) {
                has_inputs = forward_input(t.chunk, t.microbatch) &&
                             (t.paired_microbatch < 0 || backward_input(t.paired_chunk, t.paired_microbatch));
                seconds = v.forward[s] + (t.paired_microbatch >= 0 ? v.backward[s] - v.overlap[s] : 0.0);
            } else if (t.pass == Pass::Backward) {
                has_inputs = backward_input(t.chunk, t.microbatch);
                seconds = v.backward[s];
            } else {
                has_inputs = need(true, S, t.chunk, t.microbatch);
                seconds = v.weight[s];
            }
            if (!has_inputs) {
                std::int64_t& w = waiters[2 * wait_key + (wait_backward ? 1 : 0)];
                then[s] = w;
                w = S;
                break;
            }
            const double start = std::max(ready, run.last[s]);
            if (next[s] == 0) run.first[s] = start;
            run.last[s] = start + seconds;
            run.busy[s] += seconds;
            if (t.pass == Pass::Forward) finish(false, key(S, t.chunk, t.microbatch), run.last[s]);
            if (t.pass == Pass::Backward) finish(true, key(S, t.chunk, t.microbatch), run.last[s]);
            if (t.paired_microbatch >= 0) finish(true, key(S, t.paired_chunk, t.paired_microbatch), run.last[s]);
        }
    }
    for (std::size_t s = 0; s < P; ++s)
        if (next[s] < orders[s].size()) throw InternalError("the " + std::string(def.name) + " order deadlocks: stage " + std::to_string(s) + "'s next task never gets its inputs");
    run.end = *std::max_element(run.last.begin(), run.last.end());
    return run;
}

}  // namespace sextant

namespace sextant {

namespace {
// The planner screens thousands of layouts whose stages take exactly the same times (they differ
// in ZeRO stage, optimizer offload, shard group or microbatch count, none of which a stage's
// forward and backward see), so the executed rounds are remembered per thread: a direct-mapped
// cache, keyed by the schedule, the shape and the times' exact bits, holding exactly what the
// execution returned, so a hit changes no bit of any result (issue 18: the screen).
struct Rounds {
    double end = 0, rate = 0;
};

struct RoundsEntry {
    bool valid = false;
    const ScheduleDef* def = nullptr;
    PipelineShape shape;
    std::vector<StageTimes> times;
    Rounds rounds;
};

bool same_times(std::span<const StageTimes> a, const std::vector<StageTimes>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](const StageTimes& x, const StageTimes& y) {
               return x.forward == y.forward && x.backward == y.backward && x.weight == y.weight && x.overlap == y.overlap;
           });
}

std::size_t rounds_hash(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times) {
    HashMix h(reinterpret_cast<std::uintptr_t>(&def));
    for (const std::int64_t n : {shape.pp, shape.vp, shape.microbatches, shape.warmup}) h.add(static_cast<std::uint64_t>(n));
    for (const StageTimes& t : times)
        for (const double x : {t.forward, t.backward, t.weight, t.overlap}) h.add(std::bit_cast<std::uint64_t>(x));
    return h.value();
}

// The first `steady` microbatches executed, and the busiest stage's work per microbatch.
Rounds executed_rounds(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times) {
    constexpr std::size_t kEntries = 1024;
    thread_local std::vector<RoundsEntry> cache(kEntries);
    RoundsEntry& e = cache[rounds_hash(def, shape, times) % kEntries];
    if (e.valid && e.def == &def && e.shape.pp == shape.pp && e.shape.vp == shape.vp && e.shape.microbatches == shape.microbatches &&
        e.shape.warmup == shape.warmup && same_times(times, e.times))
        return e.rounds;
    const OrderRun run = run_order(def, shape, times);
    e.valid = true;
    e.def = &def;
    e.shape = shape;
    e.times.assign(times.begin(), times.end());
    e.rounds = {run.end, *std::max_element(run.busy.begin(), run.busy.end()) / static_cast<double>(shape.microbatches)};
    return e.rounds;
}
}  // namespace

double executed_pipeline(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times) {
    // Past a few rounds of pp microbatches these orders repeat one round after another, each
    // stage's round as long as its work: the step grows by the busiest stage's work per
    // microbatch. Executing 4 pp microbatches (a multiple of pp, and at least the 2 pp the V
    // orders need) and adding the rest at that rate keeps the closed form O(pp^2) for any count;
    // the tests hold it to the full execution and to the engine.
    const std::int64_t steady = 4 * shape.pp;
    if (shape.microbatches <= steady) return executed_rounds(def, shape, times).end;
    PipelineShape few = shape;
    few.microbatches = steady;
    const Rounds rounds = executed_rounds(def, few, times);
    return rounds.end + rounds.rate * static_cast<double>(shape.microbatches - steady);
}

}  // namespace sextant
