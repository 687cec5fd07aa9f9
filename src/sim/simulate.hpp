#pragma once
// The public facade of step prediction. Build a StepContext once per scenario, then:
//   estimate(context, layout)  closed form, a few microseconds, for screening layouts;
//   simulate(context, layout)  discrete-event simulation of the pipeline schedule.
// Both return a StepResult; on a uniform, overlap-free layout they agree.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.hpp"
#include "memory/memory_model.hpp"
#include "sim/stage_plan.hpp"

namespace sextant {

// Seconds of one step by cause, summing to the step time (on the critical stage).
struct Breakdown {
    double compute = 0;     // GEMMs, attention and memory-bound kernels
    double recompute = 0;   // activation recomputation
    double tp = 0, cp = 0, ep = 0, pp = 0, dp = 0;  // exposed communication
    double bubble = 0;      // pipeline fill and drain, waiting on other stages
    double optimizer = 0;
    double offload = 0;     // activation moves to and from host memory that compute does not hide
    double host = 0;        // waiting for the host to issue dropless MoE layers' kernels (runtime moe_host_ms_per_layer)
    double other = 0;       // per-microbatch and per-step overheads
    double total() const { return compute + recompute + tp + cp + ep + pp + dp + bubble + optimizer + offload + host + other; }
    std::vector<std::pair<std::string, double>> items() const;
};

struct StepResult {
    double step_time_s = 0;
    double tokens_per_s = 0;
    double mfu = 0;
    double hfu = 0;
    Breakdown breakdown;
    MemoryReport memory;
    std::int64_t critical_stage = 0;
};

// The critical stage's compute and exposed communication over all microbatches (each chunk as
// many times as the schedule runs microbatches through it), into `b`.
void add_task_parts(Breakdown& b, const StagePlan& stage, const Layout& layout, std::int64_t microbatches);
// Step time from the breakdown, then throughput, MFU and HFU.
void finish_result(const StepContext& context, const Layout& layout, StepResult& r);

StepResult estimate(const StepContext& context, const Layout& layout);
// `memory` is the layout's estimate_memory, which the result keeps.
StepResult estimate(const StepContext& context, const Layout& layout, MemoryReport memory);

// What a simulated task is, for traces and timelines: TaskRecord::label indexes these.
// Weight: a zero-bubble schedule's weight-gradient pass; ForwardBackward: DualPipe's forward and
// backward of two microbatches run together.
enum class TaskKind : std::uint8_t { Forward, Backward, Send, Reduce, Barrier, Optimizer, Gather, GatherWait, Weight, ForwardBackward };

struct TaskInfo {
    std::string name;  // "F mb3 chunk1"
    TaskKind kind = TaskKind::Forward;
    std::int64_t stage = 0;
    std::int64_t microbatch = -1, chunk = -1;        // -1 where the task is not a microbatch's
    std::int64_t first_layer = -1, last_layer = -1;  // the chunk's model layers, inclusive
    CostParts parts{};  // forward and backward: where the task's time goes (sums to its duration)
    // Communication: what it moves and how, and for a send the task that waits for it.
    CommDetail comm{};
    CommDetail expert_comm{};  // a reduction's expert gradients, over the expert-parallel DP group
    std::int64_t peer_stage = -1;
    std::int64_t consumer = -1;  // TaskId of the compute task that receives this task's output
};

// A forward or backward task's parts laid out in integer nanoseconds over [start, start +
// duration): recompute first (it precedes the backward it serves), then compute with its
// overheads, then the exposed communication (tp, cp, ep, pp, ZeRO). The pieces tile the task
// exactly; parts that round to nothing are left out.
struct TaskPart {
    Cost cost;
    TimeNs start, end;
};
std::vector<TaskPart> task_parts(const TaskInfo& info, TimeNs start, TimeNs duration);

// The tasks simulate() creates for a layout, from above: per stage, chunk and microbatch a
// forward, a backward, their two sends and up to two parameter gathers, plus per stage and chunk
// the reductions; simulate() refuses a layout beyond the SimTasks work limit.
double estimated_tasks(const Layout& layout, std::int64_t microbatches);

struct Simulation {
    StepResult result;
    Engine engine;  // the executed tasks, for traces
    std::vector<TaskInfo> info;  // with TaskLabels::Describe; else empty and every label is 0
};
// Descriptions cost more than the simulation itself (a formatted name and the communication
// details of every task): they are built only for what shows tasks (traces, timelines).
enum class TaskLabels { None, Describe };
Simulation simulate(const StepContext& context, const Layout& layout, TaskLabels labels = TaskLabels::None);

}  // namespace sextant
