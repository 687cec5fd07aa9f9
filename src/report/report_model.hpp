#pragma once
// What a report shows, as data: the commands fill it (`simulate --html`, `plan --html`, `whatif
// --html`, `collective --html`, and `report`, which fills every section), and the renderers read
// it: HTML (report/html_report.hpp), JSON (report_json below). A section left empty is not shown.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collective/network_model.hpp"
#include "memory/memory_model.hpp"
#include "report/output.hpp"
#include "profile/measurements.hpp"
#include "reliability/interval_study.hpp"
#include "sim/simulate.hpp"
#include "validate/accuracy_context.hpp"

namespace sextant {

// Memory per pipeline stage against HBM and the scenario's safety margin.
struct MemoryView {
    MemoryReport memory;
    double safety_margin = 0;  // fraction of HBM to keep free (/memory/safety_margin)
};

// What one slice of the pipeline timeline shows.
enum class SliceKind : std::uint8_t { Forward, Backward, Recompute, Communication, Optimizer, Wait, Count };
const char* slice_kind_name(SliceKind kind);

struct TimelineSlice {
    TimeNs start = 0, end = 0;
    SliceKind kind = SliceKind::Forward;
    std::int32_t microbatch = -1;  // -1: not a microbatch's task
    std::int32_t chunk = -1;
};

// One lane of the timeline: a stream of one pipeline stage (compute, point-to-point, data
// parallel), its slices in time order.
struct TimelineLane {
    std::int64_t stage = 0;
    std::string stream;
    std::vector<TimelineSlice> slices;
};

// One simulated step: its result, the critical stage's breakdown, and every stage's timeline.
struct StepView {
    std::string layout;  // "tp8 pp16 dp128 vp4 mb1 ..."
    StepResult result;
    TimeNs makespan = 0;
    std::vector<TimelineLane> lanes;
};
// The timeline of a simulation: forward and backward tasks split into their recompute, compute
// and exposed-communication parts, sends and reductions as communication.
StepView step_view(const Simulation& simulation, std::string layout_label);

// The planner's search: every screened candidate that fits, the simulated best, the winner's
// explanation, and a GPU-count sweep when there is one.
struct CandidatePoint {
    double peak_memory_bytes = 0;
    double step_time_s = 0;  // closed-form screen
    double mfu = 0;
    double tokens_per_s = 0;
};
struct PlannedLayout {
    std::string label;
    std::int64_t gpus = 0, global_batch = 0;
    double step_time_s = 0, mfu = 0, tokens_per_s = 0, peak_memory_bytes = 0, capacity_bytes = 0;
};
struct SweepPoint {
    std::int64_t gpus = 0, global_batch = 0;
    std::optional<PlannedLayout> best;  // none fits when empty
    double train_days = 0, gpu_hours = 0;  // 0 without a token budget
};
// The closed-form scores of every candidate that fits, as the chart draws them: each point where
// there are few, else their counts on a fine grid over their extents, so that the report's
// memory does not grow with the search (DeepSeek-V3 on 256 GB200s: 42.7 million candidates).
struct ScreenedCloud {
    static constexpr std::size_t kMaxPoints = 3000;  // beyond this many, the grid
    // A fine cell is at most a sixth of a pixel of the chart (640 x 343 pixels, whose axes span
    // at least the cloud's extents): drawn at its centre, a fine cell's candidates fall into the
    // chart's 5-pixel cell they fall in themselves, but for the few within 0.08 pixels of a border.
    static constexpr std::size_t kColumns = 4096, kRows = 2048;
    struct Cell {
        std::uint32_t column = 0, row = 0;  // row 0 holds the lowest objective
        std::uint64_t count = 0;
    };
    std::size_t count = 0;                       // candidates that fit
    double memory_lo = 0, memory_hi = 0;         // their peak memory, bytes
    double objective_lo = 0, objective_hi = 0;   // their MFU or tokens/s (PlannerView::objective)
    std::vector<CandidatePoint> points;          // every one, in candidate order, when count <= kMaxPoints
    std::vector<Cell> cells;                     // else the fine cells they fall in, with their counts
};
struct PlannerView {
    std::string objective;  // "mfu" or "tokens_per_s"
    std::size_t candidates_screened = 0;
    ScreenedCloud screened;
    std::vector<PlannedLayout> simulated;  // ranked, best first
    std::vector<std::string> explanation;
    std::vector<SweepPoint> sweep;
};

// Goodput against the checkpoint interval (whatif checkpoint), or against another swept setting
// (whatif spares, async, storage, failure-rate).
struct GoodputCurveView {
    reliability::IntervalStudy study;
};
struct GoodputSweepView {
    std::string value_name;  // "hot_spares"
    std::vector<std::pair<std::string, reliability::Estimate>> points;  // label, goodput
};

// An nccl-tests-style sweep of one collective, as the model predicts it: the algorithm NCCL's tuner would pick at every
// size, every algorithm's own curve, and the calibration profile's measured points.
struct PredictedSweep {
    CollectiveOp op = CollectiveOp::AllReduce;
    std::string cluster, gpu, span;
    std::int64_t ranks = 0, concurrent_groups = 1;
    std::string calibration;  // the profile's provenance
    struct Row {
        double bytes = 0;        // nccl-tests' size
        std::int64_t count = 0;  // nccl-tests' element count
        CollectiveResult best;
        std::vector<CollectiveResult> algorithms;
    };
    std::vector<Row> rows;
    // The calibration profile's measured sizes of this op, span and rank count.
    struct Measured {
        double bytes = 0;
        double busbw_gbps = 0;
    };
    std::vector<Measured> measured;
};

struct ReportModel {
    std::string title{};
    std::string generator{};           // "sextant 0.1.0 (git ...)", in the page's footer
    std::vector<std::string> facts{};  // one line each: model, cluster, training, layout
    std::optional<MemoryView> memory{};
    std::optional<StepView> step{};
    std::optional<PlannerView> planner{};
    std::optional<AccuracyContext> accuracy{};  // the published runs like the scenario
    std::optional<GoodputCurveView> goodput{};
    std::optional<GoodputSweepView> goodput_sweep{};
    std::vector<PredictedSweep> collectives{};
};

// The numbers of every section (what the charts draw, without the screened cloud and the
// timeline's slices).
nlohmann::json report_json(const ReportModel& model);
// Pieces the commands' own JSON shares: one stage of `memory --json`, a `collective --json` sweep.
nlohmann::json stage_memory_json(const StageMemory& stage);
// Every stage's memory as a table (JSON "/stages"; text merges runs of equal stages, "1-14").
Table stage_memory_table(const MemoryReport& memory);
nlohmann::json collective_json(const PredictedSweep& sweep);

}  // namespace sextant
