// Every pipeline schedule (src/schedule/) against the discrete-event engine and against the bubble
// fractions and memory its paper publishes: each schedule's own order executed with the papers'
// unit pass times, then the whole step simulator against the closed-form estimate.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/error.hpp"
#include "engine/engine.hpp"
#include "schedule/schedule.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

struct Run {
    double pipeline = 0;        // first forward to last pass, in the times' units
    std::vector<double> peak;   // per stage, activations held at most, in microbatches of one model stage
    std::vector<double> idle;   // per stage, idle time between its first task's start and its last task's end
};

// Executes a schedule's order on the engine with the same times on every stage and free
// transfers: what the closed form describes.
Run execute(Schedule schedule, const PipelineShape& shape, const StageTimes& t) {
    const ScheduleDef& def = schedule_def(schedule);
    const std::vector<StageTimes> times(static_cast<std::size_t>(shape.pp), t);
    const auto orders = def.order(shape, times);
    const std::int64_t chunks = schedule_chunks(def, shape.vp);
    std::int64_t visits = 0;
    for (std::int64_t c = 0; c < chunks; ++c) visits += chunk_visits(def, shape, c);
    const double per = d(shape.microbatches) / d(visits), unit = 1e6;  // a unit of time is 1 ms
    const double f = t.forward * per, w = def.split_backward ? t.weight * per : 0.0, b = t.backward * per - w, o = t.overlap * per;
    Engine e;
    std::map<std::tuple<std::int64_t, bool, std::int64_t, std::int64_t>, TaskId> ids;
    Run run;
    for (std::int64_t s = 0; s < shape.pp; ++s) {
        const StreamId stream = e.add_stream("compute", static_cast<std::uint32_t>(s));
        double held = 0, peak = 0;
        for (const ScheduledTask& k : orders[static_cast<std::size_t>(s)]) {
            double seconds = k.pass == Pass::Forward ? f : k.pass == Pass::Backward ? b : w;
            if (k.paired_microbatch >= 0) seconds += b - o;
            const TaskId id = e.add_task(stream, static_cast<TimeNs>(seconds * unit));
            if (k.pass != Pass::Weight) ids[{s, k.pass == Pass::Forward, k.microbatch, k.chunk}] = id;
            if (k.paired_microbatch >= 0) ids[{s, false, k.paired_microbatch, k.paired_chunk}] = id;
            if (k.pass == Pass::Forward) peak = std::max(peak, held += 1);
            if (k.pass == Pass::Backward || k.paired_microbatch >= 0) held -= 1;
        }
        // A chunk is a model stage under DualPipe, 1/chunks of one otherwise.
        run.peak.push_back(def.placement == Placement::Dual ? peak : peak / d(chunks));
    }
    for (const auto& [key, id] : ids) {
        const auto& [s, forward, mb, chunk] = key;
        std::int64_t to_stage = 0, to_chunk = 0;
        if (!forward && !next_hop(def, shape, mb, s, chunk, true, to_stage, to_chunk)) e.add_dependency(ids.at({s, true, mb, chunk}), id);
        if (next_hop(def, shape, mb, s, chunk, forward, to_stage, to_chunk)) e.add_dependency(id, ids.at({to_stage, forward, mb, to_chunk}));
    }
    run.pipeline = static_cast<double>(e.run()) / unit;
    std::vector<TimeNs> first(static_cast<std::size_t>(shape.pp), -1), last(first.size(), 0), busy(first.size(), 0);
    for (const TaskRecord& task : e.tasks()) {
        const std::size_t s = e.streams()[task.stream].group;
        if (first[s] < 0 || task.start < first[s]) first[s] = task.start;
        last[s] = std::max(last[s], task.end);
        busy[s] += task.duration;
    }
    for (std::size_t s = 0; s < first.size(); ++s) run.idle.push_back(static_cast<double>(last[s] - first[s] - busy[s]) / unit);
    return run;
}

// The papers' unit passes: forward F = 1, input gradient B = 1, weight gradient W = 1 per stage.
constexpr StageTimes kUnit{.forward = 1, .backward = 2, .weight = 1};
}  // namespace

TEST_CASE("the schedule registry: one entry per schedule, its names those the scenario field accepts") {
    std::string names;
    for (const ScheduleDef& def : schedules()) {
        CAPTURE(def.name);
        CHECK(schedule_from_name(def.name) == def.id);
        CHECK(&schedule_def(def.id) == &def);
        names += (names.empty() ? "" : "|") + std::string(def.name);
    }
    CHECK(names == kScheduleChoices);
    CHECK(schedules().back().id == kLastSchedule);
    CHECK(schedule_bit(kLastSchedule) * 2 - 1 == kEverySchedule);
}

TEST_CASE("a scheduled task refuses a microbatch or chunk its 32- and 16-bit fields cannot hold") {
    const ScheduledTask t(Pass::Forward, (std::int64_t{1} << 31) - 1, (1 << 15) - 1, 7, 3);
    CHECK(t.microbatch == (std::int64_t{1} << 31) - 1);
    CHECK(t.chunk == (1 << 15) - 1);
    CHECK(t.paired_microbatch == 7);
    CHECK(t.paired_chunk == 3);
    CHECK(ScheduledTask(Pass::Backward, 5, 1).paired_microbatch == -1);
    CHECK_THROWS_AS(ScheduledTask(Pass::Forward, std::int64_t{1} << 31, 0), InternalError);
    CHECK_THROWS_AS(ScheduledTask(Pass::Forward, 0, 1 << 15), InternalError);
    CHECK_THROWS_AS(ScheduledTask(Pass::Forward, 0, 0, std::int64_t{1} << 40, 0), InternalError);
}

TEST_CASE("export names: each of PyTorch's pipelining schedules that torchtitan runs is one Sextant schedule's") {
    // get_schedule_class's names (pytorch/pytorch torch/distributed/pipelining/schedules.py at
    // 00722e64), less LoopedBFS and the two base classes, which no Sextant schedule models.
    const std::map<std::string, Schedule> pytorch = {{"GPipe", Schedule::GPipe},
                                                     {"1F1B", Schedule::OneFOneB},
                                                     {"Interleaved1F1B", Schedule::Interleaved},
                                                     {"InterleavedZeroBubble", Schedule::InterleavedZeroBubble},
                                                     {"ZBVZeroBubble", Schedule::ZeroBubbleV},
                                                     {"DualPipeV", Schedule::DualPipeV}};
    std::size_t named = 0;
    for (const ScheduleDef& def : schedules()) {
        CAPTURE(def.name);
        if (!def.torchtitan) continue;
        ++named;
        REQUIRE(pytorch.count(def.torchtitan) == 1);
        CHECK(pytorch.at(def.torchtitan) == def.id);
    }
    CHECK(named == pytorch.size());
    // Megatron's own ZB-H1 and DeepSeek's two-direction DualPipe are not PyTorch's.
    CHECK(schedule_def(Schedule::ZeroBubbleH1).torchtitan == nullptr);
    CHECK(schedule_def(Schedule::DualPipe).torchtitan == nullptr);
}

TEST_CASE("1F1B and GPipe: bubble (p - 1)(F + B), interleaving divides it by v (Narayanan et al. 2021)") {
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {8, 32}}) {
        CAPTURE(p);
        const StageTimes t{.forward = 1, .backward = 2};
        for (Schedule s : {Schedule::GPipe, Schedule::OneFOneB}) {
            const Run r = execute(s, {p, 1, m}, t);
            CHECK(r.pipeline - d(m) * 3 == doctest::Approx(d(p - 1) * 3));
            CHECK(schedule_def(s).pipeline({p, 1, m}, std::vector<StageTimes>(static_cast<std::size_t>(p), t)) == doctest::Approx(r.pipeline));
        }
        for (std::int64_t v : {2, 4}) {
            CAPTURE(v);
            const Run r = execute(Schedule::Interleaved, {p, v, m}, t);
            CHECK(r.pipeline - d(m) * 3 == doctest::Approx(d(p - 1) * 3 / d(v)).epsilon(0.01));
            CHECK(schedule_def(Schedule::Interleaved).pipeline({p, v, m}, std::vector<StageTimes>(static_cast<std::size_t>(p), t)) ==
                  doctest::Approx(r.pipeline).epsilon(0.01));
        }
        // Memory: GPipe all m, 1F1B pp - stage, interleaved Megatron's warm-up.
        CHECK(execute(Schedule::GPipe, {p, 1, m}, t).peak[0] == d(m));
        const Run one = execute(Schedule::OneFOneB, {p, 1, m}, t);
        for (std::int64_t s = 0; s < p; ++s) CHECK(one.peak[static_cast<std::size_t>(s)] == d(p - s));
    }
}

TEST_CASE("ZB-H1: a third of 1F1B's bubble at F = B = W, with 1F1B's memory (Qi et al. 2024, Table 1)") {
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {8, 24}}) {
        CAPTURE(p);
        const PipelineShape shape{p, 1, m};
        const Run zb = execute(Schedule::ZeroBubbleH1, shape, kUnit);
        const Run one = execute(Schedule::OneFOneB, shape, kUnit);
        const double ideal = d(m) * 3;
        // (p - 1)(T_F + T_B - T_W) against 1F1B's (p - 1)(T_F + T_B + T_W).
        CHECK(zb.pipeline - ideal == doctest::Approx(d(p - 1) * 1));
        CHECK(one.pipeline - ideal == doctest::Approx(d(p - 1) * 3));
        CHECK(schedule_def(Schedule::ZeroBubbleH1).pipeline(shape, std::vector<StageTimes>(static_cast<std::size_t>(p), kUnit)) ==
              doctest::Approx(zb.pipeline));
        for (std::int64_t s = 0; s < p; ++s) {
            CHECK(zb.peak[static_cast<std::size_t>(s)] == one.peak[static_cast<std::size_t>(s)]);
            CHECK(zb.peak[static_cast<std::size_t>(s)] == schedule_def(Schedule::ZeroBubbleH1).in_flight(shape, s));
        }
    }
}

TEST_CASE("ZB-V: no idle within a stage at F = B = W, 1F1B's first-stage peak (Qi et al. 2024, section 6), a synchronised step pays the fill") {
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {8, 32}}) {
        CAPTURE(p);
        const PipelineShape shape{p, 2, m};
        const ScheduleDef& def = schedule_def(Schedule::ZeroBubbleV);
        const Run r = execute(Schedule::ZeroBubbleV, shape, kUnit);
        // The paper's bubble is a stage's idle time between its first and last task (sail-sg's
        // README table: 0 for ZB-V at F = B = W; its optimizer post-validation lets each stage
        // start the next step as it ends this one): none on any stage.
        for (std::int64_t s = 0; s < p; ++s) CHECK(r.idle[static_cast<std::size_t>(s)] == doctest::Approx(0.0));
        // One synchronised step: the last stage starts after p - 1 chunk forwards (F/2 each) and
        // then works m (F + B + W) = 3m, the least any order can take; this one takes that.
        CHECK(r.pipeline - d(m) * 3 == doctest::Approx(d(p - 1) / 2));
        const std::vector<StageTimes> unit(static_cast<std::size_t>(p), kUnit);
        CHECK(def.pipeline(shape, unit) == doctest::Approx(r.pipeline));
        CHECK(run_order(def, shape, unit).end == doctest::Approx(r.pipeline));
        // Unequal passes (PyTorch: zero bubble "only if" F = B = W): the closed form is still the
        // order's execution, and never under the fill plus the last stage's work.
        const StageTimes uneven{.forward = 1, .backward = 2.3, .weight = 0.9};
        const std::vector<StageTimes> times(static_cast<std::size_t>(p), uneven);
        const Run u = execute(Schedule::ZeroBubbleV, shape, uneven);
        CHECK(def.pipeline(shape, times) == doctest::Approx(u.pipeline));
        CHECK(u.pipeline >= d(m) * uneven.total() + d(p - 1) * uneven.forward / 2 - 1e-9);
        for (std::int64_t s = 0; s < p; ++s) CHECK(r.peak[static_cast<std::size_t>(s)] <= def.in_flight(shape, s));
        CHECK(r.peak[0] == d(p));
    }
}

TEST_CASE("interleaved zero bubble: ZB-H1's deferred W over vp chunks, 1F1B's first-stage memory (PyTorch's ScheduleInterleavedZeroBubble)") {
    const ScheduleDef& def = schedule_def(Schedule::InterleavedZeroBubble);
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {8, 32}}) {
        for (std::int64_t v : {2, 4}) {
            CAPTURE(p);
            CAPTURE(v);
            const PipelineShape shape{p, v, m};
            const std::vector<StageTimes> unit(static_cast<std::size_t>(p), kUnit);
            const Run r = execute(Schedule::InterleavedZeroBubble, shape, kUnit);
            // ZB-H1's bubble (p - 1)(F + B - W) (Qi et al. Table 1) with chunks 1/vp of a stage.
            CHECK(r.pipeline - d(m) * 3 == doctest::Approx(d(p - 1) / d(v)));
            CHECK(def.pipeline(shape, unit) == doctest::Approx(r.pipeline));
            // Against interleaved 1F1B's (p - 1)(F + B + W)/vp: a third.
            const Run one = execute(Schedule::Interleaved, shape, kUnit);
            CHECK(one.pipeline - d(m) * 3 == doctest::Approx(3 * (r.pipeline - d(m) * 3)).epsilon(0.01));
            for (std::int64_t s = 0; s < p; ++s) CHECK(r.peak[static_cast<std::size_t>(s)] == doctest::Approx(def.in_flight(shape, s)));
            CHECK(r.peak[0] == doctest::Approx(d(p)));  // 1F1B's p, where Megatron's interleaving holds more
            CHECK(one.peak[0] > r.peak[0]);
        }
    }
}

TEST_CASE("DualPipe: bubble (PP/2 - 1)(F&B + B - 3W), activations PP + 1, parameters 2x (DeepSeek-V3 report, Table 2)") {
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {8, 32}}) {
        CAPTURE(p);
        const PipelineShape shape{p, 1, m};
        const Run r = execute(Schedule::DualPipe, shape, kUnit);
        // F&B = F + B = 3 when nothing overlaps. With B the input gradient (1) the table's
        // (p/2 - 1)(F&B + B - 3W) is what the order runs to; with B the full backward (2), as the
        // report defines B, the table's is (p/2 - 1) W longer than this execution of its order.
        CHECK(r.pipeline - d(m) * 3 == doctest::Approx((d(p) / 2 - 1) * (3 + 1 - 3)));
        CHECK(r.pipeline - d(m) * 3 < (d(p) / 2 - 1) * (3 + 2 - 3));
        CHECK(schedule_def(Schedule::DualPipe).pipeline(shape, std::vector<StageTimes>(static_cast<std::size_t>(p), kUnit)) ==
              doctest::Approx(r.pipeline));
        double most = 0;
        for (double v : r.peak) most = std::max(most, v);
        CHECK(most == d(p + 1));
        CHECK(schedule_def(Schedule::DualPipe).parameter_copies == 2.0);
    }
}

TEST_CASE("DualPipeV: DualPipe cut in half, bubble (PP/2 - 1)(F&B + B - 3W) over PP = 2 pp chunks, PP + 1 chunks held (deepseek-ai/DualPipe README)") {
    const ScheduleDef& def = schedule_def(Schedule::DualPipeV);
    for (const auto& [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 16}, {4, 10}, {8, 32}}) {
        CAPTURE(p);
        CAPTURE(m);
        const PipelineShape shape{p, 2, m};
        const std::vector<StageTimes> unit(static_cast<std::size_t>(p), kUnit);
        const Run r = execute(Schedule::DualPipeV, shape, kUnit);
        // Per chunk (half a stage): F = W = 1/2, B = 1/2 the input gradient (1 with W), F&B = F + B
        // + W = 3/2 with nothing hidden. As DualPipe's (below), the order runs to the table's form
        // with B the input gradient, (p - 1) W shorter than with B the full backward.
        const double f = 0.5, b = 0.5, w = 0.5, fb = f + b + w;
        CHECK(r.pipeline - d(m) * 3 == doctest::Approx((d(p) - 1) * (fb + b - 3 * w)));
        CHECK(r.pipeline - d(m) * 3 < (d(p) - 1) * (fb + (b + w) - 3 * w));
        CHECK(def.pipeline(shape, unit) == doctest::Approx(r.pipeline));
        double most = 0;
        for (double v : r.peak) most = std::max(most, v);
        CHECK(most * 2 == doctest::Approx(d(2 * p + 1)));  // chunks of half a stage
        for (std::int64_t s = 0; s < p; ++s) CHECK(r.peak[static_cast<std::size_t>(s)] <= def.in_flight(shape, s));
        CHECK(def.parameter_copies == 1.0);  // the README's 2x is per chunk of 1/PP: one stage's share
        // What a pair hides (the expert all-to-all) comes off the step.
        const StageTimes hidden{.forward = 1, .backward = 2, .weight = 1, .overlap = 0.4};
        CHECK(def.pipeline(shape, std::vector<StageTimes>(static_cast<std::size_t>(p), hidden)) < r.pipeline);
        CHECK(def.pipeline(shape, std::vector<StageTimes>(static_cast<std::size_t>(p), hidden)) ==
              doctest::Approx(execute(Schedule::DualPipeV, shape, hidden).pipeline));
    }
}
