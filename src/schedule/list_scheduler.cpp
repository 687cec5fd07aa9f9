#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "schedule/definitions.hpp"

namespace sextant {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();

struct Candidate {
    bool valid = false;
    std::int64_t chunk = 0, microbatch = 0, index = 0;
    double ready = kNever;
};

// The position of (stage, chunk) on a microbatch's way (larger is nearer the loss).
std::int64_t position(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk) {
    switch (def.placement) {
        case Placement::Looped: return chunk * pp + stage;
        case Placement::V: return chunk == 0 ? stage : 2 * pp - 1 - stage;
        case Placement::Dual: return chunk == 0 ? stage : pp - 1 - stage;
    }
    return 0;
}
}  // namespace

VisitTimes visit_times(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times) {
    const std::int64_t chunks = schedule_chunks(def, shape.vp);
    const auto P = static_cast<std::size_t>(shape.pp);
    std::int64_t visits = 0;
    for (std::int64_t c = 0; c < chunks; ++c) visits += chunk_visits(def, shape, c);
    const double per_visit = visits > 0 ? static_cast<double>(shape.microbatches) / static_cast<double>(visits) : 1.0;
    VisitTimes v{std::vector<double>(P, 1.0), std::vector<double>(P, 1.0), std::vector<double>(P, def.split_backward ? 1.0 : 0.0),
                 std::vector<double>(P, 0.0)};
    for (std::size_t s = 0; s < P && s < times.size(); ++s) {
        if (times[s].forward + times[s].backward <= 0) continue;
        v.forward[s] = times[s].forward * per_visit;
        v.weight[s] = def.split_backward ? times[s].weight * per_visit : 0.0;
        v.backward[s] = times[s].backward * per_visit - v.weight[s];
        v.overlap[s] = times[s].overlap * per_visit;
    }
    return v;
}

std::vector<std::vector<ScheduledTask>> list_schedule(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times,
                                                      const ListRules& rules) {
    const std::int64_t pp = shape.pp, chunks = schedule_chunks(def, shape.vp), m = shape.microbatches;
    const auto P = static_cast<std::size_t>(pp), C = static_cast<std::size_t>(chunks);
    const VisitTimes v = visit_times(def, shape, times);
    const auto& f = v.forward;
    const auto& b = v.backward;
    const auto& w = v.weight;
    const auto& o = v.overlap;
    // The microbatches of each chunk, in order, and when their forward and backward end.
    std::vector<std::vector<std::int64_t>> members(C);
    for (std::int64_t mb = 0; mb < m; ++mb)
        for (std::int64_t c = 0; c < chunks; ++c)
            if (def.placement != Placement::Dual || (c == 0) == (mb < chunk_visits(def, shape, 0))) members[static_cast<std::size_t>(c)].push_back(mb);
    const auto key = [&](std::int64_t s, std::int64_t c, std::int64_t mb) { return (static_cast<std::size_t>(s) * C + static_cast<std::size_t>(c)) * static_cast<std::size_t>(m) + static_cast<std::size_t>(mb); };
    std::vector<double> f_end(P * C * static_cast<std::size_t>(m), kNever), b_end(f_end);
    std::vector<std::vector<std::size_t>> next_f(P, std::vector<std::size_t>(C, 0)), next_b(next_f);
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> weights(P);  // deferred W: (microbatch, chunk)
    std::vector<std::size_t> weights_done(P, 0);
    std::vector<double> free_at(P, 0.0), held(P, 0.0), reserved(P, 0.0);
    std::vector<std::vector<ScheduledTask>> out(P);
    std::size_t remaining = 0;
    for (std::size_t c = 0; c < C; ++c) remaining += P * members[c].size() * (def.split_backward ? 3 : 2);

    // The cap holds back forwards that bring a microbatch onto the stage; one already there (the
    // V's way back up) goes on, or its backward could never free what the stage holds. DualPipe
    // caps what the two ends inject.
    auto capped = [&](std::int64_t s, std::int64_t c) {
        if (def.placement == Placement::Dual) return (s == 0 && c == 0) || (s == pp - 1 && c == 1);
        return c == 0;
    };
    auto forward_candidate = [&](std::int64_t s, std::int64_t c) {
        Candidate k;
        const auto& list = members[static_cast<std::size_t>(c)];
        const std::size_t i = next_f[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)];
        if (i >= list.size()) return k;
        k = {true, c, list[i], static_cast<std::int64_t>(i), 0.0};
        std::int64_t ps = 0, pc = 0;
        if (next_hop(def, shape, k.microbatch, s, c, false, ps, pc)) k.ready = f_end[key(ps, pc, k.microbatch)];
        return k;
    };
    auto backward_candidate = [&](std::int64_t s, std::int64_t c) {
        Candidate k;
        const auto& list = members[static_cast<std::size_t>(c)];
        const std::size_t i = next_b[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)];
        if (i >= list.size() || i >= next_f[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)]) return k;
        k = {true, c, list[i], static_cast<std::int64_t>(i), 0.0};
        std::int64_t ns = 0, nc = 0;
        k.ready = next_hop(def, shape, k.microbatch, s, c, true, ns, nc) ? b_end[key(ns, nc, k.microbatch)] : f_end[key(s, c, k.microbatch)];
        return k;
    };
    // Earlier ready first, then nearer the loss, then the lower microbatch.
    auto better = [&](std::int64_t s, const Candidate& a, const Candidate& x) {
        if (!x.valid) return true;
        if (a.ready != x.ready) return a.ready < x.ready;
        const std::int64_t pa = position(def, pp, s, a.chunk), px = position(def, pp, s, x.chunk);
        if (pa != px) return pa > px;
        return a.microbatch < x.microbatch;
    };

    while (remaining > 0) {
        // The stage that can start something soonest decides next (ties: the lower stage).
        std::int64_t best_stage = -1;
        double best_time = kNever;
        Candidate best_f, best_b;
        bool best_w = false;
        for (std::int64_t s = 0; s < pp; ++s) {
            const auto S = static_cast<std::size_t>(s);
            Candidate cf, cb;
            for (std::int64_t c = 0; c < chunks; ++c) {
                const Candidate kb = backward_candidate(s, c);
                if (kb.valid && kb.ready < kNever && better(s, kb, cb)) cb = kb;
                // A microbatch brought onto a V's stage will hold both chunks there: room for both.
                const double room = def.placement == Placement::V ? 2.0 + reserved[S] : 1.0;
                if (capped(s, c) && held[S] + room > rules.cap[S] + 1e-9) continue;
                const Candidate kf = forward_candidate(s, c);
                if (kf.valid && kf.ready < kNever && better(s, kf, cf)) cf = kf;
            }
            const bool has_w = weights_done[S] < weights[S].size();
            double t = has_w ? free_at[S] : kNever;
            if (cb.valid) t = std::min(t, std::max(free_at[S], cb.ready));
            if (cf.valid) t = std::min(t, std::max(free_at[S], cf.ready));
            if (t < best_time) {
                best_time = t;
                best_stage = s;
                best_b = cb.valid && cb.ready <= t ? cb : Candidate{};
                best_f = cf.valid && cf.ready <= t ? cf : Candidate{};
                best_w = has_w;
            }
        }
        if (best_stage < 0) throw InternalError("list scheduling of " + std::string(def.name) + ": no stage can proceed");
        const std::int64_t s = best_stage;
        const auto S = static_cast<std::size_t>(s);
        auto run_forward = [&](const Candidate& k) {
            ++next_f[S][static_cast<std::size_t>(k.chunk)];
            held[S] += 1.0;
            if (def.placement == Placement::V) reserved[S] += k.chunk == 0 ? 1.0 : -1.0;
            --remaining;
        };
        auto run_backward = [&](const Candidate& k) {
            ++next_b[S][static_cast<std::size_t>(k.chunk)];
            held[S] -= 1.0;
            if (def.split_backward) weights[S].emplace_back(k.microbatch, k.chunk);
            --remaining;
        };
        if (best_b.valid && best_f.valid && rules.pair_forward_backward) {
            const double end = best_time + f[S] + b[S] - o[S];
            out[S].push_back({Pass::Forward, best_f.microbatch, best_f.chunk, best_b.microbatch, best_b.chunk});
            f_end[key(s, best_f.chunk, best_f.microbatch)] = end;
            b_end[key(s, best_b.chunk, best_b.microbatch)] = end;
            run_forward(best_f);
            run_backward(best_b);
            free_at[S] = end;
        } else if (best_b.valid) {
            out[S].push_back({Pass::Backward, best_b.microbatch, best_b.chunk});
            b_end[key(s, best_b.chunk, best_b.microbatch)] = best_time + b[S];
            run_backward(best_b);
            free_at[S] = best_time + b[S];
        } else if (best_f.valid) {
            out[S].push_back({Pass::Forward, best_f.microbatch, best_f.chunk});
            f_end[key(s, best_f.chunk, best_f.microbatch)] = best_time + f[S];
            run_forward(best_f);
            free_at[S] = best_time + f[S];
        } else if (best_w) {
            const auto [mb, c] = weights[S][weights_done[S]++];
            out[S].push_back({Pass::Weight, mb, c});
            free_at[S] = best_time + w[S];
            --remaining;
        }
    }
    return out;
}

}  // namespace sextant
