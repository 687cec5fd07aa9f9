// The step simulator against closed forms of the pipeline schedules, the closed-form estimate,
// stragglers, determinism, traces and deadlock detection.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/runtime_profile.hpp"
#include "engine/engine.hpp"
#include "memory/activations.hpp"
#include "memory/stage_params.hpp"
#include "report/trace.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "validate/published_runs.hpp"

using namespace sextant;

namespace {
// A uniform GPT-style pipeline whose communication is free: infinite-bandwidth NVLink and NICs
// are not expressible, so the cluster is a single 64-GPU NVLink domain and PP messages are tiny
// compared with the compute (checked against the closed forms with a tolerance).
Scenario pipeline_scenario(std::int64_t pp, std::int64_t microbatches, const char* schedule, std::int64_t vp = 1,
                           const char* framework = "megatron-core-2024") {
    json doc = {{"model", {{"name", "uniform"}, {"arch", "llama"}, {"layers", 32}, {"hidden", 4096}, {"ffn_hidden", 14336},
                           {"heads", 32}, {"kv_heads", 8}, {"vocab", 32000}}},
                {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", pp}, {"gpus_per_node", 1}, {"nvlink_domain_gpus", 1},
                             {"nic_gbps_per_gpu", 3200}}},
                {"seq_len", 4096},
                {"global_batch", microbatches},
                {"framework", framework},
                {"layout", {{"tp", 1}, {"pp", pp}, {"dp", 1}, {"vp", vp}, {"microbatch", 1}, {"schedule", schedule}}}};
    return parse_scenario(doc, data_dir());
}

struct Uniform {
    double t;  // forward + backward of one microbatch on the busiest stage
    double stage_sum;
};

Uniform stage_times(const StepContext& ctx, const Layout& l) {
    const StepPlan plan = plan_step(ctx, l);
    Uniform u{0, 0};
    for (const auto& s : plan.stages) {
        double t = 0;
        for (const auto& c : s.chunks) t += c.forward + c.backward;
        u.t = std::max(u.t, t);
        u.stage_sum += t;
    }
    return u;
}

double pipeline_time(const StepResult& r) { return r.step_time_s - r.breakdown.optimizer - r.breakdown.dp - r.breakdown.other; }
}  // namespace

TEST_CASE("GPipe and 1F1B: bubble fraction (p-1)/(m+p-1) without communication") {
    for (const char* schedule : {"gpipe", "1f1b"}) {
        for (auto [p, m] : {std::pair<std::int64_t, std::int64_t>{4, 8}, {8, 32}, {2, 2}}) {
            CAPTURE(schedule);
            CAPTURE(p);
            Scenario s = pipeline_scenario(p, m, schedule);
            s.model.layers = 8 * p;  // equal stages: the embedding and output layer are the only asymmetry
            const StepContext ctx(s);
            const Layout l = resolve_layout(s, s.layout);
            const StepResult r = simulate(ctx, l).result;
            const Uniform u = stage_times(ctx, l);
            // With stages of different cost (embedding, output layer) the closed form is
            // (m - 1) max t + sum t; the bubble fraction of the uniform case follows from it.
            const double expected = (static_cast<double>(m) - 1) * u.t + u.stage_sum;
            CHECK(pipeline_time(r) == doctest::Approx(expected).epsilon(0.02));
            const double uniform_bubble = static_cast<double>(p - 1) / static_cast<double>(m + p - 1);
            CHECK((pipeline_time(r) - static_cast<double>(m) * u.t) / pipeline_time(r) ==
                  doctest::Approx(uniform_bubble).epsilon(0.1));
        }
    }
}

TEST_CASE("an unbalanced pipeline is reported on its busiest stage: its work, and the fill and drain as the bubble") {
    // 32 layers as 5 / 17 / 5 / 5: stage 1 paces the pipeline. Under 1F1B stage 0 finishes last,
    // and reporting it would turn stage 1's extra work into stage 0's bubble.
    Scenario s = pipeline_scenario(4, 16, "1f1b");
    s.layout.stage_layers = std::vector<std::int64_t>{5, 17, 5, 5};
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const StepResult r = simulate(ctx, l).result;
    const Uniform u = stage_times(ctx, l);
    CHECK(r.critical_stage == 1);
    CHECK(r.breakdown.total() == doctest::Approx(r.step_time_s).epsilon(1e-9));
    // The busiest stage works m t_max. It waits only for stage 0's first forward and, at the end,
    // for stage 0's last backward: its warm-up forwards cover the faster stages behind it. (The
    // closed form's (m - 1) t_max + sum t, exact for equal stages, charges all of them.)
    CHECK(r.breakdown.compute + r.breakdown.tp == doctest::Approx(16 * u.t).epsilon(1e-6));
    const StepPlan plan = plan_step(ctx, l);
    double first_stage = 0;
    for (const auto& c : plan.stages[0].chunks) first_stage += c.forward + c.backward;
    CHECK(r.breakdown.bubble + r.breakdown.pp == doctest::Approx(first_stage).epsilon(0.05));
    CHECK(estimate(ctx, l).critical_stage == 1);
}

TEST_CASE("interleaved 1F1B: the bubble shrinks to (p-1)/(v m) of the ideal time") {
    const std::int64_t p = 4, m = 8, v = 2;
    Scenario s = pipeline_scenario(p, m, "interleaved", v);
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const StepResult r = simulate(ctx, l).result;
    const Uniform u = stage_times(ctx, l);
    const double ideal = static_cast<double>(m) * u.t;
    const double bubble = (pipeline_time(r) - ideal) / ideal;
    CHECK(bubble == doctest::Approx(static_cast<double>(p - 1) / static_cast<double>(v * m)).epsilon(0.15));
    const Scenario s1 = pipeline_scenario(p, m, "1f1b");
    const StepContext ctx1(s1);
    const StepResult r1 = simulate(ctx1, resolve_layout(s1, s1.layout)).result;
    CHECK(pipeline_time(r) < pipeline_time(r1));
}

// A runtime that ships each schedule (calibration/runtime/*.json features.schedules).
const char* framework_for(Schedule s) {
    if (s == Schedule::ZeroBubbleH1 || s == Schedule::ZeroBubbleV) return "megatron-zero-bubble-2024";
    if (s == Schedule::InterleavedZeroBubble || s == Schedule::DualPipeV) return "torchtitan-2025";
    return s == Schedule::DualPipe ? "megatron-core-2025-dualpipe" : "megatron-core-2024";
}

TEST_CASE("the closed-form estimate agrees with the simulator on every schedule") {
    for (const ScheduleDef& def : schedules()) {
        const std::string name = def.name;
        CAPTURE(name);
        // The zero-bubble and DualPipe closed forms are their papers' (F = B = W); with this
        // model's unequal passes the orders fill a little more of the bubble: within 4%.
        const double within = def.split_backward ? 0.04 : 0.01;
        const std::int64_t vp = def.chunks == 0 || def.placement == Placement::V ? 2 : 1;
        for (std::int64_t m : {16, 32}) {
            CAPTURE(m);
            const Scenario s = pipeline_scenario(4, m, def.name, vp, framework_for(def.id));
            const StepContext ctx(s);
            const Layout l = resolve_layout(s, s.layout);
            const StepResult simulated = simulate(ctx, l).result, estimated = estimate(ctx, l);
            CHECK(estimated.step_time_s == doctest::Approx(simulated.step_time_s).epsilon(within));
            // Transfers: the estimate charges the fill's and the drain's (pp - 1 each way). The
            // orders executed as written (ZB-V, interleaved zero bubble, DualPipeV: their closed
            // form is the order run with free transfers) also wait on a few in the steady state,
            // which the engine charges: up to 0.6% here (0.5% before Megatron-Core's attention ran
            // at the profile's cuDNN rates: shorter passes beside the same transfers).
            CHECK(estimated.step_time_s >= simulated.step_time_s * (def.split_backward ? 0.993 : 0.999));
            CHECK(estimated.breakdown.compute == doctest::Approx(simulated.breakdown.compute).epsilon(1e-6));
        }
    }
}

TEST_CASE("a step simulated without task records has the breakdown its records give, on every schedule") {
    // simulate() keeps per-task times only for traces (issue 18: 16.6 million tasks in 500 MB);
    // the breakdown comes from the engine's totals. The records of the same step must give it.
    for (const ScheduleDef& def : schedules()) {
        const std::string name = def.name;
        CAPTURE(name);
        const std::int64_t vp = def.chunks == 0 || def.placement == Placement::V ? 2 : 1;
        const Scenario s = pipeline_scenario(4, 16, def.name, vp, framework_for(def.id));
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const Simulation bare = simulate(ctx, l), full = simulate(ctx, l, TaskLabels::Describe);
        CHECK_THROWS_AS(bare.engine.tasks(), InternalError);
        REQUIRE(bare.engine.task_count() == full.engine.tasks().size());
        CHECK(bare.result.step_time_s == full.result.step_time_s);
        CHECK(bare.result.critical_stage == full.result.critical_stage);
        const auto items = bare.result.breakdown.items(), full_items = full.result.breakdown.items();
        REQUIRE(items.size() == full_items.size());
        for (std::size_t i = 0; i < items.size(); ++i) CHECK(items[i] == full_items[i]);
        // From the records: the busiest stage, and its idle time until the last compute task
        // ends, which the breakdown splits between transfers and the bubble.
        std::vector<TimeNs> busy(4, 0), wait(4, 0);
        TimeNs pipeline_end = 0;
        for (const TaskRecord& t : full.engine.tasks()) {
            const TaskKind kind = full.info[t.label].kind;
            const std::uint32_t stage = full.engine.streams()[t.stream].group;
            if (kind == TaskKind::GatherWait) wait[stage] += t.duration;
            if (kind != TaskKind::Forward && kind != TaskKind::Backward && kind != TaskKind::Weight && kind != TaskKind::ForwardBackward) continue;
            busy[stage] += t.duration;
            pipeline_end = std::max(pipeline_end, t.end);
        }
        const auto critical = static_cast<std::size_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
        CHECK(bare.result.critical_stage == static_cast<std::int64_t>(critical));
        Breakdown parts;
        add_task_parts(parts, plan_step(ctx, l).stages[critical], l, 16);
        const double idle = static_cast<double>(pipeline_end - busy[critical] - wait[critical]) * 1e-9;
        CHECK(bare.result.breakdown.pp + bare.result.breakdown.bubble == doctest::Approx(parts.pp + idle).epsilon(1e-9));
    }
}

TEST_CASE("zero-bubble schedules, DualPipe and DualPipeV beat 1F1B on the same pipeline") {
    const Scenario base = pipeline_scenario(4, 16, "1f1b");
    const StepContext base_ctx(base);
    const StepResult one = simulate(base_ctx, resolve_layout(base, base.layout)).result;
    for (Schedule id : {Schedule::ZeroBubbleH1, Schedule::ZeroBubbleV, Schedule::DualPipe, Schedule::InterleavedZeroBubble, Schedule::DualPipeV}) {
        const ScheduleDef& def = schedule_def(id);
        const std::string name = def.name;
        CAPTURE(name);
        const Scenario s = pipeline_scenario(4, 16, def.name, def.placement == Placement::V || def.chunks == 0 ? 2 : 1, framework_for(id));
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const StepResult r = simulate(ctx, l).result;
        CHECK(pipeline_time(r) < pipeline_time(one));
        CHECK(r.breakdown.bubble < one.breakdown.bubble);
    }
}

TEST_CASE("DualPipe: each stage holds its mirror stage's parameters too, and pairs hide expert all-to-all") {
    Scenario s = pipeline_scenario(4, 16, "dualpipe", 1, "megatron-core-2025-dualpipe");
    const Layout l = resolve_layout(s, s.layout);
    Layout looped = l;
    looped.schedule = Schedule::OneFOneB;
    for (std::int64_t stage = 0; stage < 4; ++stage)
        CHECK(stage_params(s.model, l, stage).total() ==
              doctest::Approx(stage_params(s.model, looped, stage).total() + stage_params(s.model, looped, 3 - stage).total()));
    // ZB-V: the first stage holds both the embedding and the output layer.
    Layout v = resolve_layout(s, s.layout);
    v.schedule = Schedule::ZeroBubbleV;
    v.vp = 2;
    CHECK(stage_holds_output(v, 0));
    CHECK(!stage_holds_output(v, 3));
    CHECK(stage_params(s.model, v, 0).total() > stage_params(s.model, looped, 0).total());
}

TEST_CASE("interleaved warm-up depth: a shallower warm-up holds fewer microbatches and still runs (Llama 3's tunable schedule)") {
    // pp 4, vp 2: Megatron's 2(pp-1) + (vp-1) pp = 10 warm-up chunks on the first stage hold
    // (10 + 1)/2 = 5.5 microbatches; the least, (vp-1) pp + pp - 1 = 7, holds 4, as 1F1B does.
    Scenario s = pipeline_scenario(4, 16, "interleaved", 2);
    Layout l = resolve_layout(s, s.layout);
    CHECK(microbatches_in_flight(l, 0, 16) == doctest::Approx(5.5));
    const StepContext ctx(s);
    const StepResult deep = simulate(ctx, l).result;
    s.layout.pp_warmup = 7;
    l = resolve_layout(s, s.layout);
    CHECK(microbatches_in_flight(l, 0, 16) == doctest::Approx(4.0));
    CHECK(microbatches_in_flight(l, 3, 16) == doctest::Approx(2.5));  // the last stage: (vp - 1) pp + 1 chunks
    const StepResult shallow = simulate(ctx, l).result;
    CHECK(shallow.memory.stages[0].activations.value() < deep.memory.stages[0].activations.value());
    CHECK(pipeline_time(shallow) >= pipeline_time(deep) * 0.999);
    CHECK(pipeline_time(shallow) < pipeline_time(deep) * 1.05);
    // A runtime that tunes it (least_pp_warmup) takes the least where the layout says nothing.
    s.layout.pp_warmup.reset();
    l = resolve_layout(s, s.layout);
    RuntimeTraits tuned;
    tuned.least_pp_warmup = true;
    CHECK(pipeline_shape(l, 16, tuned).warmup == 7);
    CHECK(microbatches_in_flight(l, 0, 16, tuned) == doctest::Approx(4.0));
    CHECK(microbatches_in_flight(l, 0, 16) == doctest::Approx(5.5));
}

TEST_CASE("a compute-only step takes its FLOPs over the achieved throughput") {
    // One GPU, one microbatch: the step is the sum of its kernels; the GEMM part equals the GEMM
    // FLOPs over the profile's throughput at those shapes (checked on the QKV projection).
    Scenario s = pipeline_scenario(1, 1, "1f1b");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const StepResult r = simulate(ctx, l).result;
    const StepPlan plan = plan_step(ctx, l);
    double tasks = 0;
    for (const auto& c : plan.stages[0].chunks) tasks += c.forward + c.backward;
    CHECK(r.step_time_s == doctest::Approx(tasks + plan.stages[0].optimizer + plan.step_overhead).epsilon(1e-6));
    const double T = 4096, h = 4096, qkv = (4096 + 2 * 1024);
    const double flops = 2 * T * h * qkv;
    const double qkv_time = flops / (ctx.profile().gemm_tflops(Precision::Bf16, 4096, 6144, 4096) * 1e12);
    const LayerCost lc = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
    CHECK(lc.forward.gemm > qkv_time);
    CHECK(lc.forward.gemm < 10 * qkv_time);
}

TEST_CASE("a 10% straggler in one stage slows the step as the critical path says") {
    Scenario s = pipeline_scenario(4, 16, "1f1b");
    const StepContext base_ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const double base = simulate(base_ctx, l).result.step_time_s;
    set_scenario_part(s, "stragglers", json::array({{{"gpu", 2}, {"slowdown", 1.1}}}));
    const StepContext slow_ctx(s);
    const Simulation slow = simulate(slow_ctx, l);
    // The slow stage becomes the bottleneck of every steady-state step: (m - 1) t_slow + sum t.
    const Uniform u = stage_times(slow_ctx, l);
    const double expected = (16 - 1) * u.t + u.stage_sum;
    CHECK(pipeline_time(slow.result) == doctest::Approx(expected).epsilon(0.02));
    // Stage 2 was not the slowest before (the last stage also runs the output layer), so the step
    // grows by less than 10%, but it grows.
    CHECK(slow.result.step_time_s > base);
    CHECK(slow.result.step_time_s < 1.10 * base);
}

TEST_CASE("the same scenario gives the same output twice, bit for bit") {
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-70b-h100.json");
    const Layout l = resolve_layout(s, s.layout);
    const StepContext a(s), b(s);
    const StepResult x = simulate(a, l).result, y = simulate(b, l).result;
    CHECK(x.step_time_s == y.step_time_s);
    CHECK(x.breakdown.bubble == y.breakdown.bubble);
    CHECK(chrome_trace(simulate(a, l, TaskLabels::Describe), "x") == chrome_trace(simulate(b, l, TaskLabels::Describe), "x"));
}

TEST_CASE("the engine orders equal-time events by insertion and reports a deadlock") {
    Engine e;
    const StreamId a = e.add_stream("a", 0), b = e.add_stream("b", 1);
    const TaskId x = e.add_task(a, 10), y = e.add_task(b, 5), z = e.add_task(a, 1);
    e.add_dependency(x, y);
    CHECK(e.run() == 15);
    CHECK(e.tasks()[y].start == 10);
    CHECK(e.tasks()[z].start == 10);
    // Two streams freed at the same instant: x1's end was scheduled before y1's (it started
    // first), so x2 starts before y2. Popping equal times last-in-first-out reverses them.
    Engine tie;
    const StreamId p0 = tie.add_stream("p", 0), q0 = tie.add_stream("q", 1);
    const TaskId x1 = tie.add_task(p0, 10), y1 = tie.add_task(q0, 10), x2 = tie.add_task(p0, 5), y2 = tie.add_task(q0, 5);
    CHECK(tie.run() == 15);
    CHECK(tie.tasks()[x1].sequence < tie.tasks()[y1].sequence);
    CHECK(tie.tasks()[x2].start == tie.tasks()[y2].start);
    CHECK(tie.tasks()[x2].sequence < tie.tasks()[y2].sequence);

    Engine cycle;
    const StreamId s0 = cycle.add_stream("first", 0), s1 = cycle.add_stream("second", 1);
    const TaskId p = cycle.add_task(s0, 1), q = cycle.add_task(s1, 1);
    cycle.add_dependency(p, q);
    cycle.add_dependency(q, p);
    CHECK_THROWS_WITH_AS(cycle.run(), doctest::Contains("waits at task"), InternalError);
}

TEST_CASE("a negative delay starts a dependent while its predecessor still runs") {
    Engine e;
    const StreamId a = e.add_stream("compute", 0), b = e.add_stream("comm", 0);
    const TaskId work = e.add_task(a, 100), comm = e.add_task(b, 30), tail = e.add_task(b, 10);
    e.add_dependency(work, comm, -75);  // once a quarter of `work` is done
    e.add_dependency(work, tail);
    CHECK(e.run() == 110);
    CHECK(e.tasks()[comm].start == 25);
    CHECK(e.tasks()[tail].start == 100);
}

TEST_CASE("the engine's totals without records: 1F1B's ends in closed form, a join on 300 tasks, a stream of many durations") {
    // 1F1B with F = 1 us, B = 2 us per stage and no transfers (Narayanan et al. 2021): the last
    // stage runs forward i from p F + i (F + B) - F, so the last forward ends at
    // p F + (m - 1)(F + B), and the step at (m + p - 1)(F + B).
    const std::int64_t p = 4, m = 300;
    const TimeNs F = 1000, B = 2000, step = (m + p - 1) * (F + B);
    const auto orders = schedule_def(Schedule::OneFOneB).order({p, 1, m}, {});
    for (const bool keep : {true, false}) {
        CAPTURE(keep);
        Engine e;
        e.keep_records(keep);
        std::map<std::tuple<std::int64_t, bool, std::int64_t>, TaskId> ids;
        for (std::int64_t s = 0; s < p; ++s) {
            const StreamId stream = e.add_stream("compute", static_cast<std::uint32_t>(s));
            for (const ScheduledTask& k : orders[static_cast<std::size_t>(s)]) {
                const bool forward = k.pass == Pass::Forward;
                ids[{s, forward, k.microbatch}] = e.add_task(stream, forward ? F : B, forward ? 0 : 1);
            }
        }
        for (const auto& [key, id] : ids) {
            const auto& [s, forward, mb] = key;
            if (forward) e.add_dependency(id, ids.at({s + 1 < p ? s + 1 : s, s + 1 < p, mb}));
            else if (s > 0) e.add_dependency(id, ids.at({s - 1, false, mb}));
        }
        // A join on every backward of stage 0: 300 dependencies, past the one-byte count.
        const TaskId join = e.add_task(e.add_stream("join", 0), 0, 2);
        for (std::int64_t mb = 0; mb < m; ++mb) e.add_dependency(ids.at({0, false, mb}), join);
        CHECK(e.run() == step);
        CHECK(e.latest_end(0) == p * F + (m - 1) * (F + B));
        CHECK(e.latest_end(1) == step);
        CHECK(e.latest_end(2) == step);
        CHECK(e.latest_end(3) == -1);
        if (keep) CHECK(e.tasks()[join].start == step);
        else CHECK_THROWS_AS(e.tasks(), InternalError);
    }
    // 40 durations on one stream, twice: past the kinds a stream searches first, each task keeps
    // its own. A task's first dependent (held inline) and a second one with a delay (both then
    // in the arena) each hold their task back.
    Engine e;
    const StreamId one = e.add_stream("one", 0), other = e.add_stream("other", 1);
    for (int round = 0; round < 2; ++round)
        for (TimeNs d = 1; d <= 40; ++d) e.add_task(one, d);
    for (TaskId t = 0; t < 80; ++t) CHECK(e.duration(t) == static_cast<TimeNs>(t % 40 + 1));
    const TaskId a = e.add_task(other, 10), b = e.add_task(other, 5);
    e.add_dependency(79, a);
    e.add_dependency(79, b, -30);  // ready 10 ns into task 79, but behind `a` on its stream
    CHECK(e.run() == 2 * 820 + 10 + 5);
    CHECK(e.tasks()[a].start == 2 * 820);
    CHECK(e.tasks()[b].start == 2 * 820 + 10);
}

TEST_CASE("overlapped gradient reduction: the simulator exposes what the closed form says") {
    // One stage, data parallel over slow NICs: the reduction of all but the last bucket runs
    // under the last microbatch's backward; the last bucket, and whatever outlasts the backward,
    // is exposed. The simulator and the estimate must both charge exposed_bucketed().
    for (const std::int64_t nic_gbps : {400, 25}) {
        CAPTURE(nic_gbps);
        json doc = {{"model", "llama3-8b"},
                    {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 16}, {"gpus_per_node", 8}, {"nic_gbps_per_gpu", nic_gbps}}},
                    {"seq_len", 4096},
                    {"global_batch", 32},
                    {"framework", "megatron-core-2024"},
                    {"layout", {{"tp", 8}, {"pp", 1}, {"dp", 2}, {"microbatch", 1}, {"zero_stage", 1}}}};
        const Scenario s = parse_scenario(doc, data_dir());
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const StepPlan plan = plan_step(ctx, l);
        const ChunkPlan& c = plan.stages[0].chunks[0];
        const double reduce = exposed_bucketed(c.dp_reduce, c.backward, c.layers);
        const double gather = plan.stages[0].param_gather_wait;
        CHECK(gather == doctest::Approx(exposed_bucketed(plan.stages[0].param_gather, c.forward, c.layers)));
        CHECK(reduce >= c.dp_reduce / static_cast<double>(c.layers));
        CHECK(reduce < c.dp_reduce);
        CHECK((c.dp_reduce > c.backward) == (nic_gbps == 25));  // both regimes are exercised
        const StepResult sim = simulate(ctx, l).result, est = estimate(ctx, l);
        CHECK(sim.breakdown.dp == doctest::Approx(reduce + gather).epsilon(1e-6));
        CHECK(est.breakdown.dp == doctest::Approx(reduce + gather).epsilon(1e-6));
        CHECK(sim.step_time_s == doctest::Approx(est.step_time_s).epsilon(1e-6));
    }
}

TEST_CASE("exposed_bucketed: one bucket when the compute hides the rest, the excess when it cannot") {
    CHECK(exposed_bucketed(1.0, 4.0, 10) == doctest::Approx(0.1));
    CHECK(exposed_bucketed(4.0, 1.0, 10) == doctest::Approx(0.4 + 3.0 * 0.9));
    CHECK(exposed_bucketed(2.0, 5.0, 1) == doctest::Approx(2.0));
}

TEST_CASE("published runs: MAPE within 10%, no run beyond 25%, one profile per GPU and framework") {
    // The targets; today's numbers (MAPE 2.9%, worst 8.6%) are held a little tighter, so
    // that a change which loses accuracy is seen.
    const ValidationReport r = validate_runs(std::filesystem::path(SEXTANT_VALIDATION_DIR) / "published-runs.json");
    CHECK(r.runs.size() == 27);
    CHECK(r.failed == 0);
    CHECK(r.mape_pct <= 4.0);
    CHECK(r.max_abs_error_pct <= 12.0);
}

TEST_CASE("held-out runs (Llama 3 405B, Table 4) fall within 15%, with PP placed inside the pods as Meta did") {
    // None of these runs fed a calibration. The cluster's 3,072-GPU pods are oversubscribed 7:1,
    // so the rank order that keeps pipeline stages inside a pod (Meta's [TP, CP, PP, DP]) wins.
    const ValidationReport r = validate_runs(data_dir() / "tests" / "validation" / "llama3-405b-h100.json");
    REQUIRE(r.runs.size() == 3);
    for (const auto& v : r.runs) {
        CAPTURE(v.id);
        CHECK(std::fabs(v.error_pct) <= 15.0);
        CHECK(v.chosen.rank_order[3] == ParallelDim::PP);
    }
}

TEST_CASE("held-out NVIDIA H100 runs (NeMo 24.07 FP8 table, Nemotron-4 340B) fall within 10%") {
    // No FP8 run fed a calibration: FP8 rests on the profile's cuBLASLt FP8 rates and the compute
    // factor fitted on bf16 Megatron-Core runs. The NeMo runs use the nemo-2024 runtime (bf16
    // gradients), without which Llama 3 8B and Nemotron-4 340B would not fit as NeMo runs them.
    // FP8's quantisation kernels (delayed scaling's cast-transpose traffic) moved these runs +1.5%
    // on average and the worst to +11.7%; attention backward at the FlashAttention-3 paper's
    // cuDNN rates (with the H100 level refitted on its own runs) brought the worst to +9.9%.
    // Megatron-Core's activation writes 16 bits, so the second MLP GEMM's input and the first's
    // output gradient are cast in the linear layers' own kernels (runtime activation_cast_fused):
    // GPT-3 175B on 512 GPUs +9.3% -> +10.1%, MAPE 4.0% -> 4.2%; NeMo's FP8 weights gathered in
    // FP8 under the distributed optimizer (runtime fp8_param_gather) then brought them to +9.6%
    // and 3.9%.
    const ValidationReport r = validate_runs(data_dir() / "tests" / "validation" / "nemo-h100.json");
    REQUIRE(r.runs.size() == 11);
    for (const auto& v : r.runs) {
        CAPTURE(v.id);
        CHECK(std::fabs(v.error_pct) <= 10.0);
        if (v.id.starts_with("nemo2407_fp8_llama3_8b")) CHECK(v.chosen.recompute == Recompute::None);
    }
    CHECK(r.mape_pct <= 7.0);
}

TEST_CASE("a runtime's compute efficiency divides every kernel's throughput and leaves communication alone") {
    Scenario s = pipeline_scenario(2, 8, "1f1b");
    s.training.framework = "megatron-lm-2021";
    s.layout.tp = 1;
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    REQUIRE(ctx.runtime().compute_efficiency == doctest::Approx(0.946));
    RuntimeProfile full = ctx.runtime();
    full.compute_efficiency = 1.0;
    const CostContext fitted = ctx.costs(), unfitted{ctx.scenario(), ctx.profile(), full, ctx.network()};
    const LayerCost a = layer_cost(fitted, l, ctx.groups(l), 0), b = layer_cost(unfitted, l, ctx.groups(l), 0);
    CHECK(a.forward.gemm * 0.946 == doctest::Approx(b.forward.gemm));
    CHECK(a.backward.attention * 0.946 == doctest::Approx(b.backward.attention));
    CHECK(a.backward.memory * 0.946 == doctest::Approx(b.backward.memory));
    CHECK(optimizer_time(fitted, l, 1e9) * 0.946 == doctest::Approx(optimizer_time(unfitted, l, 1e9)));
    CHECK(pp_transfer(fitted, l, ctx.groups(l)) == doctest::Approx(pp_transfer(unfitted, l, ctx.groups(l))));
}

TEST_CASE("Megatron-LM 2021 strong scaling on A100 (Narayanan et al. Table 2): the fit of the 2021 runtime, and throughput lost with scale as measured") {
    // These six runs are the fit set of megatron-lm-2021's compute_efficiency (calibration/fit/;
    // validated on Table 1 instead). The shipped value must be their fit: residuals of a few
    // percent. A uniform factor cannot make the prediction lose throughput with scale: GPT-3 175B
    // from 384 to 1,536 GPUs and 530B from 560 to 2,240 at a fixed batch measured 153 -> 141 and
    // 171 -> 159 TFLOP/s per GPU, as fewer microbatches per replica grow the pipeline bubble.
    const ValidationReport r = validate_runs(data_dir() / "calibration" / "fit" / "a100-megatron-lm-2021.json");
    REQUIRE(r.runs.size() == 6);
    CHECK(r.mape_pct <= 3.0);
    for (std::size_t first : {0u, 3u}) {
        const RunValidation &small = r.runs[first], &large = r.runs[first + 2];
        CAPTURE(small.id);
        // Per-GPU throughput is global batch / (step time x GPUs); the GPU count quadruples.
        CHECK(small.predicted_step_time_s / (4 * large.predicted_step_time_s) < 1.0);
    }
}

TEST_CASE("a published run's unknown framework runs on the nearest runtime profile") {
    CHECK(nearest_runtime_profile("megatron-lm-2022") == "megatron-lm-2022");
    CHECK(nearest_runtime_profile("torchtitan-2023") == "torchtitan-2024");
    CHECK(nearest_runtime_profile("torchtitan-2026") == "torchtitan-2025");
    CHECK(nearest_runtime_profile("megatron-lm-2020") == "megatron-lm-2021");
    CHECK(nearest_runtime_profile("Megatron-Core-2023") == "megatron-core-2024");  // a tie goes to Megatron-Core
    CHECK(nearest_runtime_profile("meta-llama3-2024") == "megatron-core-2024");
    CHECK(nearest_runtime_profile("in-house") == "megatron-core-2024");
    CHECK(nearest_runtime_profile("NeMo-2022") == "nemo-2024");  // NeMo's own recipes first
    CHECK(nearest_runtime_profile("nemo-2027") == "nemo-2026");
    // A run's container refines its framework label: NeMo 25.09 ran 2025's software.
    CHECK(runtime_generation("nemo-2024", "framework_version=megatron-bridge/megatron-core (NeMo 25.09 container); GA 16") == "nemo-2025");
    CHECK(runtime_generation("nemo-2024", "framework_version=NeMo 24.07; x") == "nemo-2024");
    CHECK(runtime_generation("megatron-core-2024", "framework_version=megatron-core (dev/main 2025, Megatron-MoE-ModelZoo scripts); x") ==
          "megatron-core-2025");
    CHECK(runtime_generation("torchtitan-2024", "framework_version=torchtitan 820504e / torch 2.8 nightly; x") == "torchtitan-2024");
    CHECK(runtime_generation("torchtitan-eager-2024", "framework_version=torchtitan 2024-04 / torch nightly (FSDP2, no compile); x") ==
          "torchtitan-eager-2024");
    CHECK(runtime_generation("nemo-2024", "no version here") == "nemo-2024");
}

TEST_CASE("optimizer offload: the step moves gradients and weights over the host link and runs Adam on host DRAM") {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 16}}},
                {"seq_len", 4096},
                {"global_batch", 32},
                {"framework", "torchtitan-2024"},
                {"layout", {{"tp", 8}, {"pp", 1}, {"dp", 2}, {"microbatch", 1}, {"zero_stage", 2}, {"optimizer_offload", true}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    Layout on_gpu = l;
    on_gpu.optimizer_offload = false;
    // fp32 gradients down (4 B), Adam reads/writes fp32 master and moments and the gradient
    // (4 + 2 x 12 + 2 B), bf16 weights up (2 B); per local parameter. Clipping's norm reads the
    // fp32 gradients on the host too (4 B).
    const double local = stage_params(s.model, l, 0).total() / 2.0;
    const double expected = local * 4 / 51e9 + local * 30 / 61e9 + local * 2 / 51e9 + local * 4 / 61e9;
    CHECK(plan_step(ctx, l).stages[0].optimizer == doctest::Approx(expected).epsilon(1e-9));
    CHECK(plan_step(ctx, on_gpu).stages[0].optimizer < expected / 10);
    CHECK(estimate_memory(s, l).stages[0].optimizer.value() == 0.0);
    CHECK(estimate_memory(s, on_gpu).stages[0].optimizer.value() > 0.0);
}

TEST_CASE("one 22B layer on 8 A100s (TP 8) takes what Korthikanti et al. measured (Table 4), within 10%") {
    // reference-data.md 3c: forward and backward milliseconds of one transformer layer, microbatch 4,
    // s = 2048, for the baseline, sequence parallelism, full and selective recompute.
    struct Row {
        bool sp;
        const char* recompute;
        double forward_ms, backward_ms;
    };
    const Row rows[] = {{false, "none", 7.7, 11.9}, {true, "none", 7.2, 11.8}, {false, "full", 7.7, 19.5},
                        {false, "selective", 7.7, 13.2}, {true, "selective", 7.2, 13.1}};
    for (const Row& row : rows) {
        CAPTURE(row.sp);
        CAPTURE(row.recompute);
        json doc = {{"model", {{"name", "gpt-22b"}, {"arch", "gpt"}, {"layers", 48}, {"hidden", 6144}, {"ffn_hidden", 24576},
                               {"heads", 64}, {"kv_heads", 64}, {"vocab", 51200}}},
                    {"cluster", {{"preset", "dgx-a100-superpod"}, {"gpus", 8}}},
                    {"seq_len", 2048},
                    {"global_batch", 4},
                    {"framework", "megatron-lm-2022"},
                    {"layout", {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"microbatch", 4}, {"sequence_parallel", row.sp}, {"recompute", row.recompute}}}};
        const Scenario s = parse_scenario(doc, data_dir());
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const LayerCost c = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
        // Megatron-LM 2022 overlaps no TP communication: a layer's time is its kernels plus it.
        const double forward_ms = 1e3 * (c.forward.compute() + c.forward.tp);
        const double backward_ms = 1e3 * (c.backward.compute() + c.backward.tp);
        CHECK(forward_ms == doctest::Approx(row.forward_ms).epsilon(0.10));
        CHECK(backward_ms == doctest::Approx(row.backward_ms).epsilon(0.10));
    }
}

TEST_CASE("sequence parallelism gathers the sharded inputs of two projections again for their weight gradients") {
    // Megatron keeps only each rank's sequence shard of the QKV and first MLP projections' input;
    // the backward all-gathers it once more. Without SP the backward's two all-reduces mirror the
    // forward's.
    Scenario s = pipeline_scenario(1, 1, "1f1b");
    s.cluster.gpus = 8;
    s.cluster.gpus_per_node = 8;
    s.cluster.nvlink_domain_gpus = 8;
    s.layout.tp = 8;
    for (bool sp : {true, false}) {
        CAPTURE(sp);
        s.layout.sequence_parallel = sp;
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const LayerCost c = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
        const double activation = 4096.0 * 4096.0 * 2;  // tokens x hidden x 2 B
        const double gather = ctx.network().cost(CollectiveOp::AllGather, Bytes(activation), ctx.groups(l).tp).time.value();
        REQUIRE(gather > 0);
        CHECK(c.backward.tp == doctest::Approx(c.forward.tp + (sp ? 2 * gather : 0.0)));
    }
}

TEST_CASE("blocking pipeline sends (Megatron-LM 2021-2022) lengthen every microbatch by its transfers") {
    Scenario s = pipeline_scenario(4, 16, "1f1b");
    const Layout l = resolve_layout(s, s.layout);
    s.training.framework = "megatron-lm-2022";
    const StepContext blocking(s);
    const StepPlan plan = plan_step(blocking, l);
    const double transfer = pp_transfer(blocking.costs(), l, blocking.groups(l));
    REQUIRE(transfer > 0);
    // A middle stage sends activations forward and gradients backward for every microbatch.
    const ChunkPlan& middle = plan.stages[1].chunks[0];
    CHECK(middle.forward_parts[static_cast<std::size_t>(Cost::PP)] == doctest::Approx(transfer));
    CHECK(middle.backward_parts[static_cast<std::size_t>(Cost::PP)] == doctest::Approx(transfer));
    const StepResult sim = simulate(blocking, l).result;
    CHECK(sim.step_time_s == doctest::Approx(estimate(blocking, l).step_time_s).epsilon(0.01));
    CHECK(sim.breakdown.pp >= 16 * transfer);
}

TEST_CASE("held-out Megatron-DeepSpeed runs (MT-NLG 530B, BLOOM 176B): predicted fast, within 30%") {
    // A known gap (README, Accuracy): on the same Selene hardware and model, MT-NLG's 126 TFLOP/s
    // per GPU is 23% below Megatron-LM's 163 for 530B (Narayanan et al. Table 1), more than the
    // runtime profile's documented differences explain. This guards the size of the gap.
    const ValidationReport r = validate_runs(data_dir() / "tests" / "validation" / "megatron-deepspeed-a100.json");
    REQUIRE(r.runs.size() == 4);
    for (const auto& v : r.runs) {
        CAPTURE(v.id);
        CHECK(v.error_pct < 0);
        CHECK(v.error_pct > -30.0);
    }
}

TEST_CASE("validate: a run the tool cannot read carries its error, and the other runs still count") {
    json doc = load_json_file(data_dir() / "tests" / "validation" / "llama3-405b-h100.json", "");
    doc["runs"][1]["cluster"]["gpu"] = "H100-PCIe-80GB";
    const auto file = std::filesystem::temp_directory_path() / "sextant_validate_one_bad_run.json";
    std::ofstream(file) << doc.dump();
    const ValidationReport r = validate_runs(file);
    std::filesystem::remove(file);
    REQUIRE(r.runs.size() == 3);
    CHECK(r.failed == 1);
    REQUIRE(r.runs[1].error.has_value());
    CHECK(r.runs[1].error->path() == "/runs/1/cluster/gpu");
    CHECK_FALSE(r.runs[0].error.has_value());
    CHECK(r.mape_pct == doctest::Approx((std::fabs(r.runs[0].error_pct) + std::fabs(r.runs[2].error_pct)) / 2));
    CHECK_THROWS_AS(throw_first_error(r), InputError);
}

TEST_CASE("validate: a wrong type in a run is that run's input error, not an internal one") {
    json doc = load_json_file(data_dir() / "calibration" / "fit" / "a100-megatron-lm-2021.json", "");
    doc["runs"][0]["tolerance"] = 15;
    doc["runs"][1]["id"] = 7;
    const auto file = std::filesystem::temp_directory_path() / "sextant_validate_wrong_types.json";
    std::ofstream(file) << doc.dump();
    const ValidationReport r = validate_runs(file);
    std::filesystem::remove(file);
    CHECK(r.failed == 2);
    REQUIRE(r.runs[0].error.has_value());
    CHECK(r.runs[0].error->path() == "/runs/0/tolerance");
    REQUIRE(r.runs[1].error.has_value());
    CHECK(r.runs[1].error->path() == "/runs/1/id");
    doc["schema"] = 1;
    std::ofstream(file) << doc.dump();
    CHECK_THROWS_WITH_AS(validate_runs(file), doctest::Contains("must be \"published-runs/1\""), InputError);
    std::filesystem::remove(file);
}

TEST_CASE("the loss moves 38 B per logit forward and 14 B backward, as Megatron's unfused vocab-parallel cross entropy") {
    Scenario s = pipeline_scenario(1, 1, "1f1b");  // 4,096 tokens, vocab 32,000, TP 1
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const double logits = 4096.0 * 32000.0, bandwidth = ctx.profile().memory_tbps() * 1e12;
    const PhaseCost f = output_cost(ctx.costs(), l, false), b = output_cost(ctx.costs(), l, true);
    // Forward also writes the final norm's output (4 B per hidden element), scaled by the fusion.
    const double norm = 4.0 * 4096 * 4096 * ctx.runtime().memory_traffic_factor;
    CHECK(f.memory == doctest::Approx((38 * logits + norm) / bandwidth));
    CHECK(b.memory == doctest::Approx(14 * logits / bandwidth));
}

TEST_CASE("FP8 training runs its transformer GEMMs in FP8 and the output projection in bf16") {
    Scenario bf16 = pipeline_scenario(1, 1, "1f1b");
    Scenario fp8 = bf16;
    fp8.training.precision = precision_recipe("fp8", "");
    const StepContext bf16_ctx(bf16), fp8_ctx(fp8);
    const Layout l = resolve_layout(bf16, bf16.layout);
    for (bool backward : {false, true}) {
        CAPTURE(backward);
        CHECK(output_cost(fp8_ctx.costs(), l, backward).gemm == doctest::Approx(output_cost(bf16_ctx.costs(), l, backward).gemm));
    }
    CHECK(layer_cost(fp8_ctx.costs(), l, fp8_ctx.groups(l), 0).forward.gemm <
          0.7 * layer_cost(bf16_ctx.costs(), l, bf16_ctx.groups(l), 0).forward.gemm);
}

TEST_CASE("Muon: Newton-Schulz FLOPs of whole matrices (tp x the optimizer shard) on top of a one-moment optimizer step") {
    Scenario s = pipeline_scenario(2, 8, "1f1b");
    const StepContext adam_ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    CHECK(newton_schulz_time(adam_ctx.costs(), l, 1e9) == 0.0);
    s.training.optimizer.kind = OptimizerKind::Muon;
    const StepContext ctx(s);
    // Five iterations on whole m x 3.5m matrices, m = hidden, for tp x the shard's parameters:
    // 5 (4 m + 2 m / 3.5) FLOPs per parameter, at the profile's bf16 GEMM rate for that shape.
    const double m = static_cast<double>(s.model.hidden);
    const auto i = [](double v) { return static_cast<std::int64_t>(v); };
    const double rate = ctx.profile().gemm_tflops(Precision::Bf16, i(m), i(m), i(3.5 * m)) * ctx.runtime().compute_efficiency * 1e12;
    CHECK(newton_schulz_time(ctx.costs(), l, 1e9) == doctest::Approx(1e9 * static_cast<double>(l.tp) * 5 * (4 * m + 2 * m / 3.5) / rate));
    // One fp32 moment instead of two: the memory-bound step reads and writes 4 bytes less per
    // parameter, 8 bytes of traffic.
    const double adam = optimizer_time(adam_ctx.costs(), l, 1e9), muon = optimizer_time(ctx.costs(), l, 1e9);
    CHECK((adam - muon) * ctx.profile().memory_tbps() * ctx.runtime().compute_efficiency * 1e12 == doctest::Approx(8e9));
}

TEST_CASE("flash attention's backward runs 2.5x its forward's FLOPs (Dao 2023, FlashAttention-2, section 4.1)") {
    // Five GEMMs against the forward's two, the scores recomputed: at the profile's forward and
    // backward kernel throughputs, the backward takes 2.5 x (forward rate / backward rate) the time.
    const Scenario s = pipeline_scenario(1, 1, "1f1b");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const LayerCost lc = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
    const double forward_rate = ctx.profile().attention_tflops(Precision::Bf16, 4096, 128, true, false);
    const double backward_rate = ctx.profile().attention_tflops(Precision::Bf16, 4096, 128, true, true);
    CHECK(lc.backward.attention / lc.forward.attention == doctest::Approx(2.5 * forward_rate / backward_rate).epsilon(1e-9));
}

TEST_CASE("a step longer than the engine's 2^56 ns is an input error naming the global batch, not an internal one") {
    // Llama-3 405B on one 8-GPU node, 2^30 sequences of 128k tokens: 6 x 4e11 parameters x 1.4e14
    // tokens is 3e26 FLOPs, 4e10 s at 8 GPUs' 8 PFLOP/s, far past 2^56 ns (7.2e7 s).
    json doc = {{"model", "llama3-405b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 8}}},
                {"training", {{"seq_len", 131072}, {"global_batch", std::int64_t{1} << 30}, {"precision", "bf16"}, {"framework", "megatron-core-2024"}}},
                {"layout", {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"microbatch", 16384}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const StepContext ctx(s);
    try {
        simulate(ctx, resolve_layout(s, s.layout));
        FAIL("simulated a step past the engine's range");
    } catch (const InputError& e) {
        CHECK(e.path() == "/training/global_batch");
    }
}
