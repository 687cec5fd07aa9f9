#pragma once
// `sextant plan`: screen every candidate layout with the closed form, simulate the best few,
// rank them by the simulated objective. Deterministic for any thread or process count: the
// order is total (objective, then the candidate's knobs).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "planner/evaluator.hpp"
#include "planner/search_space.hpp"
#include "spec/scenario.hpp"

namespace sextant {

enum class Objective { Mfu, TokensPerSecond };

// The share of HBM a plan must leave free to be offered. What the memory model cannot see: the
// caching allocator's reserved-over-allocated gap at the step's peak, NCCL buffers of
// communicators built lazily, MoE routing beyond the planned imbalance, and the model's own
// error (measured peaks held within 3%: Korthikanti et al. Figs. 1 and 7; torchtitan's Llama 3.1
// 8B peaks of 82.4 and 67.0 GiB predicted 84.0 and 67.4). 10% is the budget PyTorch serving
// leaves by default (vLLM's gpu_memory_utilization = 0.9): 8 GiB of an 80 GB H100, where the
// planner's former top pick for Llama 3 70B left 3. `--memory-margin` sets it; 0 offers all
// that fits.
inline constexpr double kDefaultMemoryMargin = 0.10;

struct PlanOptions {
    std::size_t top = 10;            // plans reported
    std::size_t simulate_top = 50;   // screened candidates re-ranked by the simulator
    unsigned threads = 1;
    Objective objective = Objective::Mfu;
    SearchOptions search;
    bool framework_features = true;  // search only what the scenario's framework implements
    double memory_margin = kDefaultMemoryMargin;  // share of HBM a plan leaves free
    std::vector<std::int64_t> gpu_counts;      // empty: the scenario's
    std::vector<std::int64_t> global_batches;  // empty: the scenario's
};

// One point of the sweep over GPU count and global batch: a scenario and its cost models.
struct Variant {
    Scenario scenario;
    std::unique_ptr<Evaluator> evaluator;
};
using EvaluatorFactory = std::function<std::unique_ptr<Evaluator>(const Scenario&)>;

struct Plan {
    std::size_t variant = 0;
    Candidate candidate;
    Layout layout;
    PlanScore screened;
    PlanScore simulated;
};

// A screened candidate, small enough to gather across processes.
struct ScreenedCandidate {
    std::uint32_t variant = 0;
    Candidate candidate;
    double objective = 0;
};

// Which share of the candidates this process screens (MPI rank / size; 0 / 1 alone).
struct Shard {
    int index = 0;
    int count = 1;
};

class Planner {
public:
    Planner(const Scenario& scenario, PlanOptions options, const EvaluatorFactory& factory);

    // The best `simulate_top` candidates of this shard by the closed-form objective, best first,
    // and in a sweep also the best few of every variant.
    std::vector<ScreenedCandidate> screen(const Shard& shard) const;
    // Merges screened lists (from threads or processes), simulates the best, ranks them.
    std::vector<Plan> finish(std::vector<ScreenedCandidate> screened) const;
    // Ranked plans without those that differ from a better one only in a rank order that changes
    // nothing.
    std::vector<Plan> distinct(std::vector<Plan> plans) const;

    // The best of `ranked` for each variant (null where none fits), in variant order.
    std::vector<const Plan*> best_per_variant(const std::vector<Plan>& ranked) const;

    // The closed-form objective of every candidate that fits, in candidate order.
    std::vector<double> fitting_objectives() const;
    // The number candidates are ranked by (MFU or tokens/s).
    double objective(const PlanScore& score) const;
    // Fits with the memory margin left free: what the planner offers.
    bool offered(const PlanScore& score) const;

    std::size_t candidate_count() const;
    const std::vector<Variant>& variants() const { return variants_; }
    const PlanOptions& options() const { return options_; }

private:
    // A sweep simulates this many of each variant's best besides the overall best.
    static constexpr std::size_t kPerVariantSimulated = 4;
    std::size_t per_variant_kept() const;

    LayoutSpec fixed_;
    PlanOptions options_;
    std::vector<Variant> variants_;
    std::vector<std::vector<Candidate>> candidates_;  // per variant
};

// Total order used everywhere: higher objective first, then the candidate's knobs.
bool better(const ScreenedCandidate& a, const ScreenedCandidate& b);

}  // namespace sextant
