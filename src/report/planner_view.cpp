#include "report/planner_view.hpp"

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

PlannerView planner_view(const Planner& planner, const std::vector<Plan>& ranked, std::size_t top) {
    PlannerView v;
    v.objective = planner.options().objective == Objective::Mfu ? "mfu" : "tokens_per_s";
    v.candidates_screened = planner.candidate_count();
    for (const ScreenedScore& s : planner.fitting_scores()) v.screened.push_back({s.peak_memory_bytes, s.step_time_s, s.mfu, s.tokens_per_s});
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
