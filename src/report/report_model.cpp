#include "report/report_model.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "report/accuracy_view.hpp"
#include "report/breakdown_json.hpp"

namespace sextant {

namespace {
using nlohmann::json;

SliceKind kind_of_part(Cost c, bool forward) {
    switch (c) {
        case Cost::Recompute: return SliceKind::Recompute;
        case Cost::Compute:
        case Cost::Host:
        case Cost::Overhead: return forward ? SliceKind::Forward : SliceKind::Backward;
        default: return SliceKind::Communication;
    }
}

// Neighbouring slices of one kind (a task's compute and its overhead) become one.
void append(std::vector<TimelineSlice>& slices, const TimelineSlice& s) {
    if (!slices.empty() && slices.back().kind == s.kind && slices.back().end == s.start && slices.back().microbatch == s.microbatch &&
        slices.back().chunk == s.chunk) {
        slices.back().end = s.end;
        return;
    }
    slices.push_back(s);
}

json memory_json(const MemoryView& v) {
    json stages = json::array();
    for (const StageMemory& m : v.memory.stages) stages.push_back(stage_memory_json(m));
    return {{"stages", stages}, {"peak_bytes", v.memory.peak.value()}, {"peak_stage", v.memory.peak_stage},
            {"capacity_bytes", v.memory.capacity.value()}, {"host_peak_bytes", v.memory.host_peak.value()},
            {"host_capacity_bytes", v.memory.host_capacity.value()}, {"safety_margin", v.safety_margin}, {"fits", v.memory.fits()}};
}

json step_json(const StepView& v) {
    const StepResult& r = v.result;
    std::size_t slices = 0;
    for (const auto& lane : v.lanes) slices += lane.slices.size();
    return {{"layout", v.layout}, {"step_time_s", r.step_time_s}, {"mfu", r.mfu}, {"tokens_per_s", r.tokens_per_s},
            {"critical_stage", r.critical_stage}, {"breakdown", breakdown_json(r.breakdown.items())},
            {"makespan_s", static_cast<double>(v.makespan) * 1e-9}, {"timeline_lanes", v.lanes.size()}, {"timeline_slices", slices}};
}

json layout_json(const PlannedLayout& p) {
    return {{"layout", p.label}, {"gpus", p.gpus}, {"global_batch", p.global_batch}, {"step_time_s", p.step_time_s}, {"mfu", p.mfu},
            {"tokens_per_s", p.tokens_per_s}, {"peak_memory_bytes", p.peak_memory_bytes}, {"capacity_bytes", p.capacity_bytes}};
}

json planner_json(const PlannerView& v) {
    json plans = json::array(), sweep = json::array();
    for (const auto& p : v.simulated) plans.push_back(layout_json(p));
    for (const auto& s : v.sweep) {
        json row = {{"gpus", s.gpus}, {"global_batch", s.global_batch}, {"fits", s.best.has_value()}};
        if (s.best) row["best"] = layout_json(*s.best);
        if (s.train_days > 0) {
            row["train_days"] = s.train_days;
            row["gpu_hours"] = s.gpu_hours;
        }
        sweep.push_back(row);
    }
    return {{"objective", v.objective}, {"candidates_screened", v.candidates_screened}, {"candidates_fitting", v.screened.count},
            {"plans", plans}, {"explanation", v.explanation}, {"sweep", sweep}};
}

json estimate_json(const reliability::Estimate& e) { return {{"goodput", e.mean}, {"ci_low", e.ci_low}, {"ci_high", e.ci_high}}; }

json goodput_json(const GoodputCurveView& v) {
    const auto& st = v.study;
    json curve = json::array();
    for (const auto& p : st.curve) {
        json point = estimate_json(p.summary.goodput);
        point["interval_s"] = p.interval_s;
        curve.push_back(point);
    }
    return {{"optimal_interval_s", st.optimal_interval_s}, {"young_interval_s", st.young_interval_s}, {"daly_interval_s", st.daly_interval_s},
            {"goodput_at_optimum", st.at_optimum.goodput.mean}, {"curve", curve}};
}

json goodput_sweep_json(const GoodputSweepView& v) {
    json points = json::array();
    for (const auto& [label, e] : v.points) {
        json p = estimate_json(e);
        p["label"] = label;
        points.push_back(p);
    }
    return {{"value_name", v.value_name}, {"points", points}};
}
}  // namespace

const char* slice_kind_name(SliceKind kind) {
    switch (kind) {
        case SliceKind::Forward: return "forward";
        case SliceKind::Backward: return "backward";
        case SliceKind::Recompute: return "recompute";
        case SliceKind::Communication: return "communication";
        case SliceKind::Optimizer: return "optimizer";
        case SliceKind::Wait: return "wait";
        case SliceKind::Count: break;
    }
    return "";
}

StepView step_view(const Simulation& sim, std::string layout_label) {
    StepView v;
    if (sim.info.empty() && !sim.engine.tasks().empty())
        throw InternalError("tasks shown from a simulation run without TaskLabels::Describe");
    v.layout = std::move(layout_label);
    v.result = sim.result;
    const Engine& e = sim.engine;
    std::vector<TimelineLane> lanes(e.streams().size());
    for (std::size_t s = 0; s < lanes.size(); ++s) lanes[s] = {e.streams()[s].group, e.streams()[s].name, {}};
    for (const TaskRecord& t : e.tasks()) {
        v.makespan = std::max(v.makespan, t.end);
        if (t.duration == 0) continue;
        const TaskInfo& info = sim.info[t.label];
        auto& slices = lanes[t.stream].slices;
        const auto mb = static_cast<std::int32_t>(info.microbatch), chunk = static_cast<std::int32_t>(info.chunk);
        switch (info.kind) {
            case TaskKind::Forward:
            case TaskKind::Backward:
            case TaskKind::Weight:
            case TaskKind::ForwardBackward:
                for (const TaskPart& p : task_parts(info, t.start, t.duration))
                    append(slices, {p.start, p.end, kind_of_part(p.cost, info.kind == TaskKind::Forward), mb, chunk});
                break;
            case TaskKind::Optimizer: append(slices, {t.start, t.end, SliceKind::Optimizer, mb, chunk}); break;
            case TaskKind::GatherWait: append(slices, {t.start, t.end, SliceKind::Wait, mb, chunk}); break;
            default: append(slices, {t.start, t.end, SliceKind::Communication, mb, chunk});
        }
    }
    for (auto& lane : lanes) {
        std::stable_sort(lane.slices.begin(), lane.slices.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
        if (!lane.slices.empty()) v.lanes.push_back(std::move(lane));
    }
    return v;
}

namespace {
const std::vector<Column> kStageMemoryColumns = {
    {"stage", "stage"},
    {"layers", "layers"},
    {"weights_bytes", "weights"},
    {"gradients_bytes", "gradients"},
    {"optimizer_bytes", "optimizer"},
    {"activations_bytes", "activations"},
    {"buffers_bytes", ""},
    {"context_bytes", ""},
    {"fragmentation_bytes", ""},
    {"other_bytes", "other"},  // buffers + context + fragmentation
    {"total_bytes", "total"},
};

std::vector<Value> stage_memory_row(const StageMemory& m) {
    auto bytes = [](Bytes b) { return Value(b.value(), Style::ByteSize); };
    return {m.stage, m.layers, bytes(m.weights), bytes(m.gradients), bytes(m.optimizer), bytes(m.activations), bytes(m.buffers),
            bytes(m.context), bytes(m.fragmentation), bytes(m.other()), bytes(m.total())};
}
}  // namespace

Table stage_memory_table(const MemoryReport& memory) {
    Table t{.pointer = "/stages", .columns = kStageMemoryColumns, .rows = {}, .merge_runs_on = 0};
    for (const StageMemory& m : memory.stages) t.rows.push_back(stage_memory_row(m));
    return t;
}

json stage_memory_json(const StageMemory& m) {
    return row_json(Table{.pointer = "", .columns = kStageMemoryColumns, .rows = {}}, stage_memory_row(m));
}

json collective_json(const PredictedSweep& sweep) {
    json rows = json::array();
    for (const auto& r : sweep.rows)
        rows.push_back({{"bytes", r.bytes}, {"time_us", r.best.time.value() * 1e6}, {"algbw_gbps", r.best.algbw_gbps},
                        {"busbw_gbps", r.best.busbw_gbps}, {"algorithm", std::string(r.best.algorithm)}});
    return {{"op", op_name(sweep.op)}, {"cluster", sweep.cluster}, {"gpu", sweep.gpu}, {"ranks", sweep.ranks},
            {"span", sweep.span}, {"concurrent_groups", sweep.concurrent_groups}, {"rows", rows}};
}

json report_json(const ReportModel& m) {
    json doc = {{"title", m.title}, {"facts", m.facts}};
    if (m.memory) doc["memory"] = memory_json(*m.memory);
    if (m.step) doc["step"] = step_json(*m.step);
    if (m.planner) doc["planner"] = planner_json(*m.planner);
    if (m.accuracy) doc["accuracy"] = accuracy_json(*m.accuracy);
    if (m.goodput) doc["goodput"] = goodput_json(*m.goodput);
    if (m.goodput_sweep) doc["goodput_sweep"] = goodput_sweep_json(*m.goodput_sweep);
    if (!m.collectives.empty()) {
        doc["collectives"] = json::array();
        for (const auto& c : m.collectives) doc["collectives"].push_back(collective_json(c));
    }
    return doc;
}

}  // namespace sextant
