#include "planner/planner.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/progress.hpp"
#include "core/work_limits.hpp"
#include "memory/memory_model.hpp"
#include "spec/runtime_profile.hpp"

namespace sextant {

namespace {
auto knobs(const ScreenedCandidate& s) {
    const Candidate& c = s.candidate;
    return std::make_tuple(s.variant, c.tp, c.pp, c.cp, c.ep, c.etp, c.vp, c.microbatch, c.first_trim, c.last_trim, c.zero_stage, c.shard_group,
                           c.optimizer_offload, c.sequence_parallel, static_cast<int>(c.recompute), c.recompute_modules,
                           c.offload_layers, c.offload_modules, c.offload_share, c.ep_a2a_overlap, c.async_tp, c.rank_order,
                           static_cast<int>(c.schedule));
}

// Keeps the `limit` best of a stream of candidates and, when several variants (GPU counts,
// batches) are searched, each variant's `per_variant` best too, so that a sweep can say what
// every GPU count achieves. Both are properties of the set, so shards merge to the same answer.
void keep_best(std::vector<ScreenedCandidate>& best, std::size_t limit, std::size_t per_variant) {
    std::sort(best.begin(), best.end(), better);
    std::vector<std::size_t> seen;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < best.size(); ++i) {
        const std::uint32_t v = best[i].variant;
        if (v >= seen.size()) seen.resize(v + 1, 0);
        if (i < limit || seen[v] < per_variant) {
            best[kept++] = best[i];
            ++seen[v];
        }
    }
    best.resize(kept);
}

// Runs work(t) for t in [0, threads), thread 0 on the caller's; a thread's exception (a layout
// refused for work) raises `stopped` for the others and is rethrown once every thread joined,
// and a Ctrl-C the work saw is then the caller's.
template <class Work>
void on_threads(unsigned threads, std::atomic<bool>& stopped, Work work) {
    std::vector<std::exception_ptr> errors(threads);
    const auto guarded = [&](unsigned t) {
        try {
            work(t);
        } catch (...) {
            errors[t] = std::current_exception();
            stopped = true;
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
    guarded(0);
    for (auto& th : pool) th.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    throw_if_interrupted();
}

std::vector<Variant> make_variants(const Scenario& base, const PlanOptions& o,
                                   const EvaluatorFactory& factory) {
    std::vector<std::int64_t> gpus = o.gpu_counts.empty() ? std::vector{base.cluster.gpus} : o.gpu_counts;
    std::vector<std::int64_t> batches =
        o.global_batches.empty() ? std::vector{base.training.global_batch} : o.global_batches;
    check_work(Work::PlanVariants, static_cast<double>(gpus.size()) * static_cast<double>(batches.size()), "--gpus x --global-batch",
               std::to_string(gpus.size()) + " x " + std::to_string(batches.size()));
    std::vector<Variant> out;
    for (auto g : gpus) {
        for (auto b : batches) {
            Variant v;
            // Each count replaces a validated one: it must pass the rules /cluster/gpus passes.
            v.scenario = with_gpus_and_batch(base, g, b, o.gpu_counts.empty() ? "/cluster/gpus" : "--gpus");
            if (!o.global_batches.empty()) v.scenario.global_batch_path = "--global-batch";  // errors name the flag
            v.evaluator = factory(v.scenario);
            out.push_back(std::move(v));
        }
    }
    return out;
}
}  // namespace

bool better(const ScreenedCandidate& a, const ScreenedCandidate& b) {
    if (a.objective != b.objective) return a.objective > b.objective;
    return knobs(a) < knobs(b);
}

Planner::Planner(const Scenario& scenario, PlanOptions options, const EvaluatorFactory& factory)
    : fixed_(scenario.layout), options_(std::move(options)), scenario_margin_(scenario.memory.safety_margin) {
    if (options_.threads == 0) options_.threads = 1;
    if (options_.framework_features) options_.search.framework = load_runtime_profile(scenario.training.framework, "/framework").features;
    // The GPU count is what a sweep varies: a fixed dp would pin it.
    if (!options_.gpu_counts.empty()) fixed_.dp.reset();
    variants_ = make_variants(scenario, options_, factory);
    std::optional<InputError> why_none;
    for (const auto& v : variants_) {
        std::optional<InputError> why;
        shapes_.push_back(enumerate_shapes(v.scenario, fixed_, options_.search, &why));
        for (const CandidateShape& shape : shapes_.back()) candidate_count_ += shape.count;
        if (!why_none && why) why_none = why;
    }
    // No layout satisfies the scenario at any GPU count and batch: the rule and knob that stopped
    // the search furthest along is the scenario's error.
    if (candidate_count() == 0 && why_none) throw *why_none;
}

std::size_t Planner::candidate_count() const { return candidate_count_; }

double Planner::objective(const PlanScore& s) const {
    return options_.objective == Objective::Mfu ? s.mfu : s.tokens_per_s;
}

double Planner::memory_margin() const { return options_.memory_margin.value_or(scenario_margin_); }

bool Planner::offered(const PlanScore& s) const {
    return s.fits && s.peak_memory_bytes <= offered_memory_bytes(s.capacity_bytes, memory_margin());
}

std::vector<ScreenedCandidate> Planner::screen(const Shard& shard) const {
    // Flatten (variant, shape) so that threads and processes split one sequence; a shape is
    // expanded into its candidates by the thread that screens it.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> work;
    std::size_t global = 0, candidates = 0;
    for (std::size_t v = 0; v < shapes_.size(); ++v)
        for (std::size_t i = 0; i < shapes_[v].size(); ++i, ++global)
            if (global % static_cast<std::size_t>(shard.count) == static_cast<std::size_t>(shard.index)) {
                work.emplace_back(static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(i));
                candidates += shapes_[v][i].count;
            }

    const std::size_t limit = options_.simulate_top, per_variant = per_variant_kept();
    const unsigned threads = std::max(1u, std::min<unsigned>(options_.threads, static_cast<unsigned>(candidates / 64 + 1)));
    std::vector<std::vector<ScreenedCandidate>> partial(threads);
    Progress progress("screening layouts", static_cast<double>(candidates));
    // Each thread starts on its own share of the shapes and, once that is done, takes shapes
    // from the far end of the others' (work stealing): new group shapes (the costly first screen
    // of a layout family) cluster in candidate order, so fixed shares alone leave one thread idle,
    // while shapes taken in turn from one counter would have both threads route neighbouring
    // families at the same moment. What is kept is a property of the set (keep_best's total
    // order), so the answer does not depend on which thread screened what.
    struct Share {
        std::mutex mutex;
        std::size_t next = 0, end = 0;
    };
    std::vector<Share> shares(threads);
    for (unsigned t = 0; t < threads; ++t) {
        shares[t].next = work.size() * t / threads;
        shares[t].end = work.size() * (t + 1) / threads;
    }
    // Thread t's next shape: the front of its share, else the back of another's; false when every
    // share is done.
    const auto take = [&](unsigned t, std::size_t& unit) {
        for (unsigned k = 0; k < threads; ++k) {
            Share& share = shares[(t + k) % threads];
            const std::lock_guard lock(share.mutex);
            if (share.next >= share.end) continue;
            unit = k == 0 ? share.next++ : --share.end;
            return true;
        }
        return false;
    };
    std::atomic<bool> stopped{false};
    auto run = [&](unsigned t) {
        auto& best = partial[t];
        Layout layout;                    // each candidate's, in one allocation
        std::vector<Candidate> expanded;  // the shape's candidates (the largest shape's capacity)
        std::size_t unit = 0;
        while (!stopped && take(t, unit)) {
            const auto [v, i] = work[unit];
            const Variant& variant = variants_[v];
            expand_shape(variant.scenario, fixed_, options_.search, shapes_[v][i].shape, expanded);
            for (const Candidate& c : expanded) {
                if (!progress.tick()) {  // Ctrl-C: the threads stop, then the caller is told
                    stopped = true;
                    break;
                }
                to_layout(variant.scenario, fixed_, c, layout);
                const std::optional<PlanScore> score = variant.evaluator->screen_within(layout, memory_margin());
                if (!score || !offered(*score)) continue;
                best.push_back({v, c, objective(*score)});
                if (best.size() >= 4 * (limit + per_variant * variants_.size()) + 64) keep_best(best, limit, per_variant);
            }
        }
        keep_best(best, limit, per_variant);
    };
    on_threads(threads, stopped, run);

    std::vector<ScreenedCandidate> merged;
    for (auto& p : partial) merged.insert(merged.end(), p.begin(), p.end());
    keep_best(merged, limit, per_variant);
    return merged;
}

std::size_t Planner::per_variant_kept() const { return variants_.size() > 1 ? kPerVariantSimulated : 0; }

std::vector<const Plan*> Planner::best_per_variant(const std::vector<Plan>& ranked) const {
    std::vector<const Plan*> best(variants_.size(), nullptr);
    for (const Plan& p : ranked)
        if (!best[p.variant]) best[p.variant] = &p;
    return best;
}

void Planner::visit_fitting(unsigned threads, const FittingVisitor& visit) const {
    // Every (variant, shape) with the candidate index it starts at.
    struct Unit {
        std::uint32_t variant, shape;
        std::size_t first;
    };
    std::vector<Unit> units;
    std::size_t first = 0;
    for (std::size_t v = 0; v < shapes_.size(); ++v)
        for (std::size_t i = 0; i < shapes_[v].size(); ++i) {
            units.push_back({static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(i), first});
            first += shapes_[v][i].count;
        }
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(units.size())));
    Progress progress("scoring layouts", static_cast<double>(first));
    std::atomic<std::size_t> next{0};
    std::atomic<bool> stopped{false};
    on_threads(threads, stopped, [&](unsigned t) {
        Layout layout;
        std::vector<Candidate> expanded;
        for (std::size_t u = next.fetch_add(1); u < units.size() && !stopped; u = next.fetch_add(1)) {
            const Unit& unit = units[u];
            const Variant& variant = variants_[unit.variant];
            expand_shape(variant.scenario, fixed_, options_.search, shapes_[unit.variant][unit.shape].shape, expanded);
            for (std::size_t k = 0; k < expanded.size(); ++k) {
                if (!progress.tick()) {  // Ctrl-C
                    stopped = true;
                    break;
                }
                to_layout(variant.scenario, fixed_, expanded[k], layout);
                const std::optional<PlanScore> score = variant.evaluator->screen_within(layout, memory_margin());
                if (score && offered(*score)) visit(t, unit.variant, unit.first + k, *score);
            }
        }
    });
}

// One thread: the visits come in candidate order.
std::vector<double> Planner::fitting_objectives() const {
    std::vector<double> out;
    visit_fitting(1, [&](unsigned, std::size_t, std::size_t, const PlanScore& s) { out.push_back(objective(s)); });
    return out;
}

std::vector<ScreenedScore> Planner::fitting_scores() const {
    std::vector<ScreenedScore> out;
    visit_fitting(1, [&](unsigned, std::size_t v, std::size_t, const PlanScore& s) {
        out.push_back({static_cast<std::uint32_t>(v), s.step_time_s, s.mfu, s.tokens_per_s, s.peak_memory_bytes});
    });
    return out;
}

std::vector<Plan> Planner::finish(std::vector<ScreenedCandidate> screened) const {
    keep_best(screened, options_.simulate_top, per_variant_kept());
    // The simulations are independent: threads take them in turn and each lands in its own slot,
    // so the plans do not depend on the thread count. Run one after another they were the serial
    // part that kept two threads from halving a plan's time.
    std::vector<Plan> plans(screened.size());
    std::vector<std::exception_ptr> errors(screened.size());
    std::atomic<std::size_t> next{0};
    auto run = [&] {
        for (std::size_t i = next.fetch_add(1); i < screened.size(); i = next.fetch_add(1)) {
            const ScreenedCandidate& s = screened[i];
            const Variant& variant = variants_[s.variant];
            Plan& p = plans[i];
            p.variant = s.variant;
            p.candidate = s.candidate;
            p.layout = to_layout(variant.scenario, fixed_, s.candidate);
            try {
                p.screened = variant.evaluator->screen(p.layout);
                p.simulated = variant.evaluator->simulate(p.layout);
            } catch (...) {
                errors[i] = std::current_exception();  // rethrown below, the first plan's first
            }
        }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < std::min<std::size_t>(options_.threads, screened.size()); ++t) pool.emplace_back(run);
    run();
    for (auto& th : pool) th.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    std::stable_sort(plans.begin(), plans.end(), [&](const Plan& a, const Plan& b) {
        ScreenedCandidate x{static_cast<std::uint32_t>(a.variant), a.candidate, objective(a.simulated)};
        ScreenedCandidate y{static_cast<std::uint32_t>(b.variant), b.candidate, objective(b.simulated)};
        return better(x, y);
    });
    return plans;
}

std::vector<Plan> Planner::distinct(std::vector<Plan> plans) const {
    // Rank orders that change nothing (their groups land on the same links) are one plan: the
    // default order sorts first and stays.
    const auto same_but_order = [&](const Plan& a, const Plan& b) {
        ScreenedCandidate x{static_cast<std::uint32_t>(a.variant), a.candidate, 0};
        ScreenedCandidate y{static_cast<std::uint32_t>(b.variant), b.candidate, 0};
        x.candidate.rank_order = y.candidate.rank_order = 0;
        return knobs(x) == knobs(y) && objective(a.simulated) == objective(b.simulated);
    };
    plans.erase(std::unique(plans.begin(), plans.end(), same_but_order), plans.end());
    return plans;
}

}  // namespace sextant
