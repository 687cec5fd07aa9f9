#include "planner/explain.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/table.hpp"

namespace sextant {

namespace {
double cost(const PlanScore& s, const std::string& name) {
    for (const auto& [n, v] : s.breakdown)
        if (n == name) return v;
    return 0.0;
}

// The cost with the largest difference in the given direction (runner-up minus winner);
// differences below a millionth of the step are rounding, not a reason.
std::pair<std::string, double> largest_difference(const PlanScore& winner, const PlanScore& other, double sign) {
    std::pair<std::string, double> best{"", 1e-6 * winner.step_time_s};
    for (const auto& [name, value] : other.breakdown) {
        double d = sign * (value - cost(winner, name));
        if (d > best.second) best = {name, d};
    }
    return best;
}
}  // namespace

std::string layout_label(const Layout& l) {
    std::string s = fmt::format("tp{} pp{} dp{}", l.tp, l.pp, l.dp);
    if (l.cp > 1) s += fmt::format(" cp{}", l.cp);
    if (l.ep > 1) s += fmt::format(" ep{}", l.ep);
    if (l.etp > 1) s += fmt::format(" etp{}", l.etp);
    if (l.vp > 1) s += fmt::format(" vp{}", l.vp);
    if (l.schedule != (l.vp > 1 ? Schedule::Interleaved : Schedule::OneFOneB)) s += " " + schedule_name(l.schedule);
    s += fmt::format(" mb{} z{}", l.microbatch, l.zero_stage);
    if (l.dp_replicas() > 1) s += fmt::format(" hsdp{}", l.shard_dp());
    if (l.optimizer_offload) s += " offload";
    if (l.sequence_parallel) s += " sp";
    if (l.recompute != Recompute::None) s += l.recompute == Recompute::Full ? " full" : " sel";
    if (l.recompute == Recompute::Selective && l.recompute_modules != 0) s += "(" + recompute_modules_text(l.recompute_modules) + ")";
    if (l.activation_offload_layers > 0) s += fmt::format(" act-offload{}", l.activation_offload_layers);
    if (l.offload_modules != 0)
        s += " act-offload(" + offload_modules_text(l.offload_modules) +
             (l.offload_fraction < 1 ? fmt::format(" x{}", l.offload_fraction) : std::string()) + ")";
    if (l.ep_a2a_overlap) s += " a2a-overlap";
    if (l.async_tp) s += " async-tp";
    if (l.moe_dispatcher) s += " " + std::string(name_of(*l.moe_dispatcher));
    if (l.rank_order != Layout{}.rank_order) s += " " + rank_order_text(l.rank_order);
    const bool uneven = std::any_of(l.stage_layers.begin(), l.stage_layers.end(),
                                    [&](std::int64_t n) { return n != l.stage_layers.front(); });
    if (uneven) {
        // Runs of equal stages print once with their count: 7/8x14/7.
        s += " split ";
        for (std::size_t i = 0; i < l.stage_layers.size();) {
            std::size_t run = 1;
            while (i + run < l.stage_layers.size() && l.stage_layers[i + run] == l.stage_layers[i]) ++run;
            s += (i ? "/" : "") + std::to_string(l.stage_layers[i]) + (run > 1 ? "x" + std::to_string(run) : "");
            i += run;
        }
    }
    return s;
}

std::vector<std::string> explain_winner(const std::vector<Plan>& plans, std::size_t runners_up) {
    std::vector<std::string> lines;
    if (plans.empty()) return lines;
    const Plan& w = plans.front();
    std::size_t ties = 0, shown = 0;
    for (std::size_t i = 1; i < plans.size() && shown < runners_up; ++i) {
        const Plan& r = plans[i];
        const double faster = r.simulated.step_time_s / w.simulated.step_time_s - 1.0;
        // Layouts within 0.05% (another rank order of the same groups, say) are ties, not rivals.
        if (faster < 5e-4) {
            ++ties;
            continue;
        }
        ++shown;
        std::string line = fmt::format("beats #{} ({}) by {:.1f}%", i + 1, layout_label(r.layout), 100.0 * faster);
        auto saves = largest_difference(w.simulated, r.simulated, +1.0);
        auto pays = largest_difference(w.simulated, r.simulated, -1.0);
        if (!saves.first.empty()) line += fmt::format(": {} less {}", format_seconds(saves.second), saves.first);
        if (!pays.first.empty()) line += fmt::format(", {} more {}", format_seconds(pays.second), pays.first);
        const double headroom_w = w.simulated.capacity_bytes - w.simulated.peak_memory_bytes;
        const double headroom_r = r.simulated.capacity_bytes - r.simulated.peak_memory_bytes;
        line += fmt::format("; headroom {} vs {}", format_bytes(headroom_w), format_bytes(headroom_r));
        lines.push_back(line);
    }
    if (ties > 0)
        lines.insert(lines.begin(), fmt::format("ties (within 0.05%) with {} other layout{} among the simulated", ties, ties > 1 ? "s" : ""));
    return lines;
}

}  // namespace sextant
