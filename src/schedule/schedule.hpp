#pragma once
// Pipeline schedules, in one place: each schedule's name, where its model chunks sit, the order
// of its tasks on every stage, the activations it holds in flight, its closed-form pipeline time
// and its sources. Pure arithmetic on the pipeline's shape (no scenario): spec parses and checks
// names through it, memory reads its activations in flight and parameter copies, sim runs its
// order and its closed form, the planner searches and exports it. A new schedule is one file
// (a make_* function returning its ScheduleDef), its line in schedule.cpp, its name in the
// runtime profiles that ship it, and its tests.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sextant {

// In registry order; a new schedule goes last (runtime profiles keep their sets as bits of it).
enum class Schedule : std::uint8_t { GPipe, OneFOneB, Interleaved, ZeroBubbleH1, ZeroBubbleV, DualPipe, InterleavedZeroBubble, DualPipeV };

// What a stage runs for a microbatch on one chunk: its forward; its backward (the input gradient,
// plus the weight gradient unless the schedule splits that off); or the weight gradient alone (W).
enum class Pass : std::uint8_t { Forward, Backward, Weight };

// 16 bytes: a step's orders hold one per compute task (8.4 million for 65,536 microbatches at
// pp 16, vp 4; issue 18), so microbatches are 32-bit and chunks 16-bit (the constructor refuses
// more).
struct ScheduledTask {
    std::int32_t microbatch = 0;
    // DualPipe, DualPipeV: a forward run together with the backward of (paired_microbatch, paired_chunk),
    // each one's expert all-to-all under the other's compute; -1 when not paired.
    std::int32_t paired_microbatch = -1;
    std::int16_t chunk = 0;
    std::int16_t paired_chunk = -1;
    Pass pass = Pass::Forward;

    ScheduledTask() = default;
    ScheduledTask(Pass p, std::int64_t mb, std::int64_t c, std::int64_t paired_mb = -1, std::int64_t paired_c = -1)
        : microbatch(static_cast<std::int32_t>(mb)),
          paired_microbatch(static_cast<std::int32_t>(paired_mb)),
          chunk(static_cast<std::int16_t>(c)),
          paired_chunk(static_cast<std::int16_t>(paired_c)),
          pass(p) {
        if (microbatch != mb || paired_microbatch != paired_mb || chunk != c || paired_chunk != paired_c) too_large();
    }

private:
    [[noreturn]] static void too_large();
};
static_assert(sizeof(ScheduledTask) == 16, "a step's orders hold one per compute task: keep it 16 bytes");

// Where a stage's chunks sit on a microbatch's way through the model.
//   Looped: chunk c of stage s is virtual stage c pp + s (GPipe, 1F1B, interleaved, ZB-H1).
//   V: two chunks, down then up: stage s holds virtual stages s and 2 pp - 1 - s, so the first
//      stage holds the embedding and the loss (ZB-V, DualPipeV).
//   Dual: two chunks, each a whole model stage: stage s holds model stage s (for the microbatches
//      fed at stage 0) and model stage pp - 1 - s (for those fed at stage pp - 1); the first half
//      of the microbatches runs down, the second half up (DualPipe).
enum class Placement : std::uint8_t { Looped, V, Dual };

struct PipelineShape {
    std::int64_t pp = 1, vp = 1, microbatches = 1;
    // Forward chunks the first stage runs before its first backward (interleaved 1F1B); 0 = the
    // schedule's own.
    std::int64_t warmup = 0;
};

// One stage's per-microbatch seconds (averaged over the microbatches, its chunks summed).
struct StageTimes {
    double forward = 0;
    double backward = 0;  // input and weight gradient
    double weight = 0;    // of backward: the weight-gradient GEMMs
    double overlap = 0;   // what running a forward beside a backward saves (pairs_forward_backward), per microbatch
    double total() const { return forward + backward; }
};

struct ScheduleDef {
    Schedule id;
    const char* name;     // the scenario's word
    const char* summary;  // one line, for schema and README
    const char* source;   // where its order, memory and bubble come from
    // PyTorch's pipelining class as torchtitan's --parallelism.pipeline_parallel_schedule names
    // it (torch.distributed.pipelining get_schedule_class); null where PyTorch has none.
    const char* torchtitan = nullptr;
    Placement placement = Placement::Looped;
    std::int64_t chunks = 1;        // model chunks per stage; 0: vp, which must exceed 1
    bool split_backward = false;    // weight gradients run as W passes of their own
    bool pairs_forward_backward = false;  // a forward and another microbatch's backward run as one task, each one's expert all-to-all under the other's compute
    bool groups_of_pp = false;      // microbatches in groups of pp (Megatron's interleaving)
    bool even_pp = false;           // pp even (DualPipe's halves)
    std::int64_t min_microbatches_per_stage = 0;  // microbatches >= this x pp (ZB-V's and DualPipe's warm-up)
    double parameter_copies = 1.0;  // each stage's parameters held this many times per stage
    // Every stage's task order, given each stage's per-microbatch times (list-scheduled orders
    // use them; the fixed orders ignore them).
    std::vector<std::vector<ScheduledTask>> (*order)(const PipelineShape&, std::span<const StageTimes>);
    // Activations a stage holds at its peak, in units of "one microbatch through all the
    // layers of one model stage".
    double (*in_flight)(const PipelineShape&, std::int64_t stage);
    // Closed form: seconds from the first forward to the last backward (or W), stages given.
    double (*pipeline)(const PipelineShape&, std::span<const StageTimes>);
};

// The names, for the scenario's field table (a constant there); a test holds it to the registry.
inline constexpr const char* kScheduleChoices = "gpipe|1f1b|interleaved|zb-h1|zb-v|dualpipe|interleaved-zb|dualpipe-v";

std::span<const ScheduleDef> schedules();
// A set of schedules as bits (what a framework ships).
constexpr std::uint32_t schedule_bit(Schedule s) { return 1u << static_cast<unsigned>(s); }
inline constexpr Schedule kLastSchedule = Schedule::DualPipeV;
inline constexpr std::uint32_t kEverySchedule = schedule_bit(kLastSchedule) * 2 - 1;
const ScheduleDef& schedule_def(Schedule s);
std::optional<Schedule> schedule_from_name(const std::string& name);
std::string schedule_name(Schedule s);
std::string schedule_choices();  // "gpipe|1f1b|..."
// Whether the schedule runs with vp virtual stages per stage (interleaved: vp >= 2; V-shaped:
// vp = 2; the others vp = 1).
bool schedule_takes_vp(const ScheduleDef& def, std::int64_t vp);
// The schedule's chunks per stage for a layout with vp virtual stages.
std::int64_t schedule_chunks(const ScheduleDef& def, std::int64_t vp);
// The stage's forward chunks before its first backward under interleaved 1F1B: Megatron's
// 2(pp - stage - 1) + (vp - 1) pp, or a tuned depth for the first stage (the stage's share of
// it, never under the (vp - 1) pp + pp - stage - 1 its first backward needs).
std::int64_t interleaved_warmup(const PipelineShape& shape, std::int64_t stage);

// A schedule's order executed with free transfers: each task starts when its stage is free and
// its inputs are there. The closed form of the orders no formula describes exactly (ZB-V,
// interleaved zero bubble, DualPipeV), and the per-stage spans the zero-bubble papers count:
// with their optimizer post-validation each stage starts its next step as soon as it ends its
// own, so a stage's bubble is its idle time between its first and its last task (sail-sg/
// zero-bubble-pipeline-parallelism README.md at 3a91d0c8, "Optimizer Post Validation").
struct OrderRun {
    double end = 0;                   // seconds from the first forward to the last task anywhere
    std::vector<double> first, last;  // per stage: its first task's start, its last task's end
    std::vector<double> busy;         // per stage: seconds of work
};
OrderRun run_order(const ScheduleDef& def, const PipelineShape& shape, std::span<const StageTimes> times);

// A microbatch's path: the chunk its forward reaches after (stage, chunk), or its backward after
// it (forward = false). False at the path's end (the loss going forward, the embedding back).
bool next_hop(const ScheduleDef& def, const PipelineShape& shape, std::int64_t microbatch, std::int64_t stage, std::int64_t chunk,
              bool forward, std::int64_t& to_stage, std::int64_t& to_chunk);
// The microbatches whose path runs through a chunk, and the model stage whose layers it holds.
std::int64_t chunk_visits(const ScheduleDef& def, const PipelineShape& shape, std::int64_t chunk);
std::int64_t chunk_model_stage(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk);
// Whether the chunk starts a path (the embedding) or ends one (the output layer and loss).
bool chunk_has_embedding(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk, std::int64_t chunks);
bool chunk_has_output(const ScheduleDef& def, std::int64_t pp, std::int64_t stage, std::int64_t chunk, std::int64_t chunks);

}  // namespace sextant
