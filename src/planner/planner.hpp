#pragma once
// `sextant plan`: screen every candidate layout with the closed form, simulate the best few,
// rank them by the simulated objective. Deterministic for any thread or process count: the
// order is total (objective, then the candidate's knobs).
#include <cstdint>
#include <optional>
#include <functional>
#include <memory>
#include <vector>

#include "planner/evaluator.hpp"
#include "planner/search_space.hpp"
#include "spec/scenario.hpp"

namespace sextant {

enum class Objective { Mfu, TokensPerSecond };

struct PlanOptions {
    std::size_t top = 10;            // plans reported
    std::size_t simulate_top = 50;   // screened candidates re-ranked by the simulator
    unsigned threads = 1;
    Objective objective = Objective::Mfu;
    SearchOptions search;
    bool framework_features = true;  // search only what the scenario's framework implements
    // Share of HBM a plan must leave free to be offered; unset: the scenario's
    // /memory/safety_margin (`plan --memory-margin`; 0 offers all that fits).
    std::optional<double> memory_margin;
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

// One candidate's closed-form score, small enough to keep for every candidate (report charts).
struct ScreenedScore {
    std::uint32_t variant = 0;
    double step_time_s = 0, mfu = 0, tokens_per_s = 0, peak_memory_bytes = 0;
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

    // The closed-form objective (or score) of every candidate that fits, in candidate order.
    std::vector<double> fitting_objectives() const;
    std::vector<ScreenedScore> fitting_scores() const;
    // Calls visit(thread, variant, index, score) for every candidate that fits, `index` its place
    // in candidate order, with the shapes split over `threads` threads: one thread's calls come in
    // candidate order, the threads' in none, so what `visit` gathers must not depend on it.
    // Nothing is kept per candidate (a report's cloud over tens of millions of layouts).
    using FittingVisitor = std::function<void(unsigned thread, std::size_t variant, std::size_t index, const PlanScore& score)>;
    void visit_fitting(unsigned threads, const FittingVisitor& visit) const;
    // The number candidates are ranked by (MFU or tokens/s).
    double objective(const PlanScore& score) const;
    // Fits with the memory margin left free: what the planner offers.
    bool offered(const PlanScore& score) const;
    // The share of HBM an offered plan leaves free: the option, else the scenario's safety margin.
    double memory_margin() const;

    std::size_t candidate_count() const;
    const std::vector<Variant>& variants() const { return variants_; }
    const PlanOptions& options() const { return options_; }

private:
    // A sweep simulates this many of each variant's best besides the overall best.
    static constexpr std::size_t kPerVariantSimulated = 4;
    std::size_t per_variant_kept() const;

    LayoutSpec fixed_;
    PlanOptions options_;
    double scenario_margin_ = 0;
    std::vector<Variant> variants_;
    std::vector<std::vector<CandidateShape>> shapes_;  // per variant, expanded when screened
    std::size_t candidate_count_ = 0;
};

// Total order used everywhere: higher objective first, then the candidate's knobs.
bool better(const ScreenedCandidate& a, const ScreenedCandidate& b);

}  // namespace sextant
