#pragma once
// The layouts the planner considers: every combination of the knobs the scenario leaves open,
// built valid by construction (each enumerated layout passes validate_layout).
#include <cstdint>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "spec/runtime_profile.hpp"
#include "spec/scenario.hpp"

namespace sextant {

struct SearchOptions {
    std::int64_t max_microbatch = 16;
    std::int64_t max_vp = 32;
    std::int64_t min_tokens_per_cp_rank = 512;  // below this, CP only adds latency
    std::int64_t max_stage_trim = 3;            // first/last stages may hold up to this many fewer layers
    // true: each pp splits its layers the framework's default way (default_stage_split), the one
    // split a published run that names none ran; max_stage_trim is then not searched.
    bool default_split_only = false;
    bool search_rank_order = true;
    // false: each vp runs the framework's default schedule (1F1B, or interleaved with vp > 1), as
    // a published run that names none did; true: every schedule the framework ships.
    bool search_schedule = true;
    FrameworkFeatures framework;  // what the framework offers; the Planner takes the scenario's
};

// A layout in at most 32 bytes: the planner holds hundreds of thousands of these.
struct Candidate {
    std::int16_t tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, vp = 1, microbatch = 1, offload_layers = 0;
    std::int16_t shard_group = 0;  // HSDP's data-parallel ranks per shard group; 0 = all of dp
    // Layers the first and last stages hold below the middle ones (they also hold the embedding
    // and the output layer with the loss); 0/0 with pp | layers is the even split.
    std::int8_t first_trim = 0, last_trim = 0;
    std::int8_t zero_stage = 0;
    bool optimizer_offload = false;
    bool sequence_parallel = false;
    bool ep_a2a_overlap = false;
    Recompute recompute = Recompute::None;
    std::uint8_t recompute_modules = 0;  // with selective recompute; 0 = the era's default
    std::uint8_t rank_order = 0;  // index into candidate_rank_orders()
    Schedule schedule = Schedule::OneFOneB;
    bool async_tp = false;
    std::uint8_t offload_modules = 0;  // OffloadModule bits (fine-grained activation offload)
    std::uint8_t offload_share = 0;    // index into kOffloadFractions (of the module offload's groups)
};
static_assert(sizeof(Candidate) <= 32, "the planner holds many: keep a candidate within 32 bytes");

// The module-offload fractions the planner tries where the framework ships them
// (features.activation_offload_fraction): all the groups, or the leading half (Megatron-LM's
// fine_grained_activation_offloading.md example, --activation-offload-fraction 0.5).
inline constexpr double kOffloadFractions[] = {1.0, 0.5};

// The rank orders worth trying: Megatron's default (DP outside TP/CP/EP, PP outermost) and PP
// inside DP (pipeline neighbours on nearby nodes, DP groups spread across the fabric).
const std::vector<std::array<ParallelDim, 5>>& candidate_rank_orders();

// A family of candidates: the parallel degrees and stage split (tp, cp, pp, trims, ep, expert
// TP), with the number of settings of the other knobs it has. A search holds these rather than
// its candidates: DeepSeek-V3 on 256 GB200s had 42.7 million candidates (1.4 GB at 32 bytes,
// and several times that over a --gpus sweep) in 3,578 shapes; each shape is expanded when it is
// screened.
struct CandidateShape {
    Candidate shape;         // the degrees and trims; the other knobs at their defaults
    std::size_t count = 0;   // candidates expand_shape gives (at least one)
};

// Every shape with at least one candidate for `scenario`, in candidate order; why_none as for
// enumerate_candidates.
std::vector<CandidateShape> enumerate_shapes(const Scenario& scenario, const LayoutSpec& fixed, const SearchOptions& options,
                                             std::optional<InputError>* why_none = nullptr);

// The candidates of one shape, in candidate order, into `out` (cleared; its capacity kept).
void expand_shape(const Scenario& scenario, const LayoutSpec& fixed, const SearchOptions& options, const Candidate& shape,
                  std::vector<Candidate>& out);

// Every candidate for `scenario` (its cluster size and batch), honouring what `fixed` sets. When
// there is none and `why_none` is given, it receives the rule and knob that stopped the search
// furthest along (the scenario's error: no layout can satisfy it).
std::vector<Candidate> enumerate_candidates(const Scenario& scenario, const LayoutSpec& fixed,
                                            const SearchOptions& options,
                                            std::optional<InputError>* why_none = nullptr);

// Layers per stage when the first and last stages hold `first_trim` and `last_trim` fewer layers
// than the middle ones; empty when that does not split the layers exactly.
std::vector<std::int64_t> trimmed_stage_split(std::int64_t layers, std::int64_t pp, std::int64_t first_trim,
                                              std::int64_t last_trim);
// The same into `split` (its capacity reused).
void trimmed_stage_split(std::int64_t layers, std::int64_t pp, std::int64_t first_trim, std::int64_t last_trim,
                         std::vector<std::int64_t>& split);

// The full Layout of a candidate (dp from the GPU count, the stage split, the schedule).
Layout to_layout(const Scenario& scenario, const LayoutSpec& fixed, const Candidate& c);
// The same into `layout`, whose stage split keeps its capacity (the screen converts millions of
// candidates into one per thread: no allocation a candidate).
void to_layout(const Scenario& scenario, const LayoutSpec& fixed, const Candidate& c, Layout& layout);

}  // namespace sextant
