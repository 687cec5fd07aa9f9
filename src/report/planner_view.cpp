#include "report/planner_view.hpp"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "model/params.hpp"
#include "planner/explain.hpp"
#include "core/table.hpp"

namespace sextant {

namespace {
PlannedLayout planned(const Planner& planner, const Plan& p) {
    const Scenario& s = planner.variants()[p.variant].scenario;
    return {layout_label(p.layout), s.cluster.gpus, s.training.global_batch, p.simulated.step_time_s, p.simulated.mfu,
            p.simulated.tokens_per_s, p.simulated.peak_memory_bytes, p.simulated.capacity_bytes};
}
}  // namespace

RunLength run_length(const Scenario& s, const Plan& p) {
    if (s.training.train_tokens <= 0) return {};
    const double days = s.training.train_tokens / p.simulated.tokens_per_s / 86400.0;
    return {days, days * 24.0 * static_cast<double>(s.cluster.gpus)};
}

namespace {
// The cloud in two passes over the fitting candidates, each split over the planner's threads:
// their count and extents, with their points while there are few; then, where there are many,
// their counts on the fine grid over those extents. A thread's share lives in its own slot.
ScreenedCloud screened_cloud(const Planner& planner) {
    struct Share {
        std::size_t count = 0;
        double memory_lo = 1e300, memory_hi = -1e300, objective_lo = 1e300, objective_hi = -1e300;
        std::vector<std::pair<std::size_t, CandidatePoint>> points;  // (candidate index, point), at most kMaxPoints + 1
    };
    const unsigned threads = std::max(1u, planner.options().threads);
    std::vector<Share> shares(threads);
    planner.visit_fitting(threads, [&](unsigned t, std::size_t, std::size_t index, const PlanScore& s) {
        Share& share = shares[t];
        const double y = planner.objective(s);
        ++share.count;
        share.memory_lo = std::min(share.memory_lo, s.peak_memory_bytes);
        share.memory_hi = std::max(share.memory_hi, s.peak_memory_bytes);
        share.objective_lo = std::min(share.objective_lo, y);
        share.objective_hi = std::max(share.objective_hi, y);
        if (share.points.size() <= ScreenedCloud::kMaxPoints)
            share.points.push_back({index, {s.peak_memory_bytes, s.step_time_s, s.mfu, s.tokens_per_s}});
    });
    ScreenedCloud c;
    std::vector<std::pair<std::size_t, CandidatePoint>> points;
    c.memory_lo = c.objective_lo = 1e300;
    c.memory_hi = c.objective_hi = -1e300;
    for (Share& share : shares) {
        c.count += share.count;
        c.memory_lo = std::min(c.memory_lo, share.memory_lo);
        c.memory_hi = std::max(c.memory_hi, share.memory_hi);
        c.objective_lo = std::min(c.objective_lo, share.objective_lo);
        c.objective_hi = std::max(c.objective_hi, share.objective_hi);
        points.insert(points.end(), share.points.begin(), share.points.end());
    }
    if (c.count == 0) return ScreenedCloud{};
    if (c.count <= ScreenedCloud::kMaxPoints) {
        std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& [index, point] : points) c.points.push_back(point);
        return c;
    }
    // Where a value falls on the grid: the extents split evenly, the highest value in the last.
    const auto bin = [](double v, double lo, double hi, std::size_t n) {
        if (hi <= lo) return std::size_t{0};
        return std::min(n - 1, static_cast<std::size_t>((v - lo) / (hi - lo) * static_cast<double>(n)));
    };
    // One grid for every thread (32 MB of counters for the pass); kept: the cells that hold any.
    std::vector<std::atomic<std::uint32_t>> grid(ScreenedCloud::kColumns * ScreenedCloud::kRows);
    planner.visit_fitting(threads, [&](unsigned, std::size_t, std::size_t, const PlanScore& s) {
        grid[bin(planner.objective(s), c.objective_lo, c.objective_hi, ScreenedCloud::kRows) * ScreenedCloud::kColumns +
             bin(s.peak_memory_bytes, c.memory_lo, c.memory_hi, ScreenedCloud::kColumns)]
            .fetch_add(1, std::memory_order_relaxed);
    });
    for (std::size_t i = 0; i < grid.size(); ++i)
        if (const std::uint32_t n = grid[i].load(std::memory_order_relaxed); n > 0)
            c.cells.push_back({static_cast<std::uint32_t>(i % ScreenedCloud::kColumns), static_cast<std::uint32_t>(i / ScreenedCloud::kColumns), n});
    return c;
}
}  // namespace

PlannerView planner_view(const Planner& planner, const std::vector<Plan>& ranked, std::size_t top) {
    PlannerView v;
    v.objective = planner.options().objective == Objective::Mfu ? "mfu" : "tokens_per_s";
    v.candidates_screened = planner.candidate_count();
    v.screened = screened_cloud(planner);
    for (std::size_t i = 0; i < std::min(top, ranked.size()); ++i) v.simulated.push_back(planned(planner, ranked[i]));
    v.explanation = explain_winner(ranked);
    if (planner.variants().size() > 1) {
        const auto best = planner.best_per_variant(ranked);
        for (std::size_t k = 0; k < best.size(); ++k) {
            const Scenario& s = planner.variants()[k].scenario;
            SweepPoint point{s.cluster.gpus, s.training.global_batch, std::nullopt, 0, 0};
            if (best[k]) {
                point.best = planned(planner, *best[k]);
                const RunLength run = run_length(s, *best[k]);
                point.train_days = run.days;
                point.gpu_hours = run.gpu_hours;
            }
            v.sweep.push_back(point);
        }
    }
    return v;
}

std::vector<std::string> scenario_facts(const Scenario& s, const Layout* l) {
    const ParamCounts p = count_params(s.model);
    std::vector<std::string> facts = {
        fmt::format("model: {} ({} parameters{})", s.model.name, format_count(p.total()),
                    s.model.is_moe() ? ", " + format_count(p.active(s.model)) + " active" : ""),
        fmt::format("cluster: {} x {} ({})", s.cluster.gpus, s.cluster.gpu.name, s.cluster.name),
        fmt::format("training: sequence {}, global batch {}, {}, {}", s.training.seq_len, s.training.global_batch,
                    s.training.precision.name, s.training.framework)};
    if (l)
        facts.push_back(fmt::format("layout: tp {} pp {} dp {} cp {} ep {} vp {}, microbatch {}, ZeRO {}{}{}", l->tp, l->pp, l->dp, l->cp, l->ep,
                                    l->vp, l->microbatch, l->zero_stage, l->sequence_parallel ? ", sequence parallel" : "",
                                    l->recompute == Recompute::None ? "" : ", " + recompute_name(l->recompute) + " recompute"));
    return facts;
}

void add_step_sections(ReportModel& report, const Scenario& s, const Layout& l, const Simulation& sim) {
    report.memory = MemoryView{sim.result.memory, s.memory.safety_margin};
    report.step = step_view(sim, layout_label(l));
}

}  // namespace sextant
