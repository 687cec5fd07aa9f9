#include "cli/whatif_report.hpp"

#include <fmt/format.h>

#include "reliability/duration_text.hpp"
#include "core/table.hpp"
#include "report/charts.hpp"
#include "report/text_plot.hpp"

namespace sextant::cli {

using reliability::duration_label;
using reliability::RunSummary;

namespace {
constexpr double kDay = 86400.0;
constexpr double kHour = 3600.0;

std::string percent(double v) { return fmt::format("{:.2f}%", 100.0 * v); }
std::string ci_text(const reliability::Estimate& e) {
    return fmt::format("[{:.2f}, {:.2f}]%", 100.0 * e.ci_low, 100.0 * e.ci_high);
}
}  // namespace

std::string setup_text(const std::string& name, const reliability::RunSetup& r, std::int64_t trials,
                       std::uint64_t seed) {
    const auto& m = r.model;
    std::string out = fmt::format("{}: {:.3g} tokens in {:.0f} steps of {:.3f} s = {:.1f} days of training\n",
                                  name, r.train_tokens, r.steps, r.step.seconds, m.work_s / kDay);
    out += fmt::format("  step time: {}\n", r.step.source);
    out += fmt::format("  checkpoint: {:.0f}e9 params x {:.0f} B = {}; write {} ({}-bound), load {} ({}-bound)\n",
                       r.size.params / 1e9, r.size.bytes_per_param, format_bytes(r.size.total_bytes),
                       duration_label(r.times.write_s), r.times.write_limit, duration_label(r.times.load_s),
                       r.times.load_limit);
    out += fmt::format("  save: {} every {}, stall {}{}\n", m.checkpoint.async ? "async" : "blocking",
                       duration_label(m.checkpoint.interval_s), duration_label(m.checkpoint.stall_s),
                       m.checkpoint.async ? fmt::format(", background write {}", duration_label(m.checkpoint.write_s)) : "");
    out += fmt::format("  failures: {} over {:.0f} nodes, job MTBF {}{}\n",
                       r.spec.preset.empty() ? std::string("inline /reliability/failures") : "preset " + r.spec.preset,
                       r.nodes, duration_label(r.job_mtbf_s()),
                       r.spec.rate_multiplier != 1.0 ? fmt::format(" (rates x {:g})", r.spec.rate_multiplier) : "");
    for (const auto& f : m.failures)
        out += fmt::format("    {:<22} every {:>8}  {}{}\n", f.cause, duration_label(f.mean_s),
                           reliability::gap_name(f.gap), f.needs_spare ? ", needs a spare" : "");
    const auto& c = m.recovery;
    out += fmt::format("  recovery: detect {}, reschedule {}, start {}, load {}; {} hot spares, repair {}\n",
                       duration_label(c.detection_s), duration_label(c.reschedule_s),
                       duration_label(c.process_start_s), duration_label(c.load_s), c.hot_spares,
                       duration_label(c.replacement_s));
    if (m.maintenance.mean_gap_s > 0)
        out += fmt::format("  maintenance: every {}, {} down\n", duration_label(m.maintenance.mean_gap_s),
                           duration_label(m.maintenance.duration_s));
    out += fmt::format("  Monte Carlo: {} trials, seed {}\n", trials, seed);
    return out;
}

nlohmann::json setup_json(const reliability::RunSetup& r, std::int64_t trials, std::uint64_t seed) {
    nlohmann::json failures = nlohmann::json::array();
    for (const auto& f : r.model.failures)
        failures.push_back({{"cause", f.cause}, {"mean_gap_s", f.mean_s}, {"distribution", reliability::gap_name(f.gap)},
                            {"needs_spare", f.needs_spare}});
    return {{"train_tokens", r.train_tokens},
            {"steps", r.steps},
            {"step_time_s", r.step.seconds},
            {"step_time_source", r.step.source},
            {"work_s", r.model.work_s},
            {"checkpoint_bytes", r.size.total_bytes},
            {"bytes_per_param", r.size.bytes_per_param},
            {"write_s", r.times.write_s},
            {"load_s", r.times.load_s},
            {"stall_s", r.model.checkpoint.stall_s},
            {"async", r.model.checkpoint.async},
            {"interval_s", r.model.checkpoint.interval_s},
            {"failure_preset", r.spec.preset},
            {"job_mtbf_s", r.job_mtbf_s()},
            {"failures", failures},
            {"trials", trials},
            {"seed", seed}};
}

nlohmann::json summary_json(const RunSummary& s) {
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : s.causes)
        causes.push_back({{"cause", c.cause}, {"events", c.events}, {"lost_work_s", c.lost_work_s},
                          {"downtime_s", c.downtime_s}});
    return {{"goodput", s.goodput.mean},
            {"goodput_ci", {s.goodput.ci_low, s.goodput.ci_high}},
            {"wall_s", s.wall_s.mean},
            {"wall_s_ci", {s.wall_s.ci_low, s.wall_s.ci_high}},
            {"stall_s", s.stall_s},
            {"lost_work_s", s.lost_work_s()},
            {"detection_s", s.detection_s},
            {"spare_wait_s", s.spare_wait_s},
            {"restart_s", s.restart_s},
            {"maintenance_s", s.maintenance_s},
            {"lost_checkpoints", s.lost_checkpoints},
            {"causes", causes}};
}

std::string breakdown_text(const RunSummary& s) {
    TextTable t({"cause", "events", "lost work h", "downtime h"});
    for (const auto& c : s.causes)
        if (c.events > 0)
            t.add_row({c.cause, fmt::format("{:.1f}", c.events), fmt::format("{:.1f}", c.lost_work_s / kHour),
                       fmt::format("{:.1f}", c.downtime_s / kHour)});
    std::string out = t.render();
    out += fmt::format("wall {:.2f} days [{:.2f}, {:.2f}]: training {:.2f}, lost work {:.2f}, checkpoint stalls {:.2f}, "
                       "detection {:.2f}, spare wait {:.2f}, restart {:.2f}, maintenance {:.2f} days",
                       s.wall_s.mean / kDay, s.wall_s.ci_low / kDay, s.wall_s.ci_high / kDay, s.work_s / kDay,
                       s.lost_work_s() / kDay, s.stall_s / kDay, s.detection_s / kDay, s.spare_wait_s / kDay,
                       s.restart_s / kDay, s.maintenance_s / kDay);
    if (s.lost_checkpoints > 0) out += fmt::format("; {:.1f} async checkpoints lost in flight", s.lost_checkpoints);
    return out + "\n";
}

std::string interval_study_text(const reliability::IntervalStudy& st) {
    TextTable t({"interval", "goodput", "95% CI", "wall days"});
    for (const auto& p : st.curve)
        t.add_row({duration_label(p.interval_s), percent(p.summary.goodput.mean), ci_text(p.summary.goodput),
                   fmt::format("{:.2f}", p.summary.wall_s.mean / kDay)});
    std::string out = t.render();
    out += fmt::format("\nsimulated optimum: {} -> goodput {} {}\n", duration_label(st.optimal_interval_s),
                       percent(st.at_optimum.goodput.mean), ci_text(st.at_optimum.goodput));
    out += fmt::format("Young sqrt(2 delta M): {}   Daly (2006): {}   (delta = stall {}, M = job MTBF {})\n\n",
                       duration_label(st.young_interval_s), duration_label(st.daly_interval_s),
                       duration_label(st.stall_s), duration_label(st.mtbf_s));
    std::vector<TextPlotPoint> points;
    for (const auto& p : st.curve)
        points.push_back({p.interval_s, p.summary.goodput.mean, p.summary.goodput.ci_low, p.summary.goodput.ci_high});
    out += text_plot(points,
                     {{st.young_interval_s, 'Y', "Young"}, {st.daly_interval_s, 'D', "Daly"},
                      {st.optimal_interval_s, 'O', "simulated optimum"}},
                     {"goodput against checkpoint interval", "checkpoint interval", "goodput", plot::duration_ladder(), short_duration,
                      [](double v) { return fmt::format("{:.1f}%", 100 * v); }});
    out += "\nwhere the time goes at the simulated optimum:\n" + breakdown_text(st.at_optimum);
    return out;
}

nlohmann::json interval_study_json(const reliability::IntervalStudy& st) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : st.curve)
        curve.push_back({{"interval_s", p.interval_s}, {"goodput", p.summary.goodput.mean},
                         {"ci_low", p.summary.goodput.ci_low}, {"ci_high", p.summary.goodput.ci_high},
                         {"wall_s", p.summary.wall_s.mean}});
    return {{"optimal_interval_s", st.optimal_interval_s},
            {"young_interval_s", st.young_interval_s},
            {"daly_interval_s", st.daly_interval_s},
            {"goodput_at_optimum", st.at_optimum.goodput.mean},
            {"stall_s", st.stall_s},
            {"job_mtbf_s", st.mtbf_s},
            {"at_optimum", summary_json(st.at_optimum)},
            {"curve", curve}};
}

std::string interval_study_csv(const reliability::IntervalStudy& st) {
    std::string out = "interval_s,goodput,ci_low,ci_high,wall_s\n";
    for (const auto& p : st.curve)
        out += fmt::format("{:.3f},{:.6f},{:.6f},{:.6f},{:.1f}\n", p.interval_s, p.summary.goodput.mean,
                           p.summary.goodput.ci_low, p.summary.goodput.ci_high, p.summary.wall_s.mean);
    return out;
}

std::string interval_study_svg(const reliability::IntervalStudy& st, const std::string& title) { return goodput_chart(st, "goodput", title); }

std::string sweep_text(const std::string& value_name, const std::vector<SweepRow>& rows) {
    TextTable t({value_name, "goodput", "95% CI", "wall days", "interruptions", "lost work h", "downtime h"});
    for (const auto& r : rows) {
        double events = 0, downtime = 0;
        for (const auto& c : r.summary.causes) {
            events += c.events;
            downtime += c.downtime_s;
        }
        t.add_row({r.label, percent(r.summary.goodput.mean), ci_text(r.summary.goodput),
                   fmt::format("{:.2f}", r.summary.wall_s.mean / kDay), fmt::format("{:.1f}", events),
                   fmt::format("{:.1f}", r.summary.lost_work_s() / kHour), fmt::format("{:.1f}", downtime / kHour)});
    }
    return t.render();
}

nlohmann::json sweep_json(const std::string& value_name, const std::vector<SweepRow>& rows) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& r : rows) {
        nlohmann::json p = summary_json(r.summary);
        p["label"] = r.label;
        p[value_name] = r.value;
        points.push_back(p);
    }
    return points;
}

std::string sweep_csv(const std::string& value_name, const std::vector<SweepRow>& rows) {
    std::string out = value_name + ",goodput,ci_low,ci_high,wall_s\n";
    for (const auto& r : rows)
        out += fmt::format("{:g},{:.6f},{:.6f},{:.6f},{:.1f}\n", r.value, r.summary.goodput.mean,
                           r.summary.goodput.ci_low, r.summary.goodput.ci_high, r.summary.wall_s.mean);
    return out;
}

}  // namespace sextant::cli
