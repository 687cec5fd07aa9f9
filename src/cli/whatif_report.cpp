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

namespace {
// The goodput's confidence interval in text: "[97.10, 97.52]%".
Value ci_cell(const reliability::Estimate& e) { return Value::structured(nullptr, ci_text(e)); }

// A run summary's keys, stated once for the sweep's rows and the optimum's object; text shows
// the columns with a header.
const std::vector<Column> kSummaryColumns = {
    {"goodput", "goodput"},          {"", "95% CI"},          {"goodput_ci", ""},          {"ci_low", ""},
    {"ci_high", ""},                 {"wall_s", "wall days"}, {"wall_s_ci", ""},           {"", "interruptions"},
    {"lost_work_s", "lost work h"},  {"", "downtime h"},      {"stall_s", ""},             {"detection_s", ""},
    {"spare_wait_s", ""},            {"restart_s", ""},       {"maintenance_s", ""},       {"lost_checkpoints", ""},
    {"causes", ""},
};

std::vector<Value> summary_cells(const RunSummary& s) {
    double events = 0, downtime = 0;
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : s.causes) {
        events += c.events;
        downtime += c.downtime_s;
        causes.push_back({{"cause", c.cause}, {"events", c.events}, {"lost_work_s", c.lost_work_s}, {"downtime_s", c.downtime_s}});
    }
    return {Value(s.goodput.mean, Style::Fraction, 2),
            ci_cell(s.goodput),
            Value::structured({s.goodput.ci_low, s.goodput.ci_high}, ""),
            s.goodput.ci_low,
            s.goodput.ci_high,
            Value(s.wall_s.mean, Style::Days, 2),
            Value::structured({s.wall_s.ci_low, s.wall_s.ci_high}, ""),
            Value(events, Style::Plain, 1),
            Value(s.lost_work_s(), Style::Hours, 1),
            Value(downtime, Style::Hours, 1),
            s.stall_s,
            s.detection_s,
            s.spare_wait_s,
            s.restart_s,
            s.maintenance_s,
            s.lost_checkpoints,
            Value::structured(causes, "")};
}

nlohmann::json summary_json(const RunSummary& s) { return row_json(Table{.columns = kSummaryColumns}, summary_cells(s)); }

// Where the time of one run goes, per cause (text shows those with events), and in total.
void add_breakdown(Output& out, const RunSummary& s, const std::string& title) {
    Table& t = out.table("", {{"", "cause"}, {"", "events"}, {"", "lost work h"}, {"", "downtime h"}});
    t.title = title;
    for (const auto& c : s.causes)
        if (c.events > 0)
            t.rows.push_back({c.cause, Value(c.events, Style::Plain, 1), Value(c.lost_work_s, Style::Hours, 1),
                              Value(c.downtime_s, Style::Hours, 1)});
    std::string total =
        fmt::format("wall {:.2f} days [{:.2f}, {:.2f}]: training {:.2f}, lost work {:.2f}, checkpoint stalls {:.2f}, "
                    "detection {:.2f}, spare wait {:.2f}, restart {:.2f}, maintenance {:.2f} days",
                    s.wall_s.mean / kDay, s.wall_s.ci_low / kDay, s.wall_s.ci_high / kDay, s.work_s / kDay, s.lost_work_s() / kDay,
                    s.stall_s / kDay, s.detection_s / kDay, s.spare_wait_s / kDay, s.restart_s / kDay, s.maintenance_s / kDay);
    if (s.lost_checkpoints > 0) total += fmt::format("; {:.1f} async checkpoints lost in flight", s.lost_checkpoints);
    out.note(total, true);
}

// Text: the setup paragraph; JSON: its object.
void add_setup(Output& out, const StudyHeader& h) {
    std::string text = setup_text(h.scenario, h.setup, h.trials, h.seed);
    text.pop_back();  // the block's own line end
    out.note(text);
    out.add_facts({{"/scenario", "", h.scenario}, {"/setup", "", Value::structured(setup_json(h.setup, h.trials, h.seed), "")}});
}

Table curve_table(const reliability::IntervalStudy& st) {
    Table t{.pointer = "/curve",
            .columns = {{"interval_s", "interval"}, {"goodput", "goodput"}, {"", "95% CI"}, {"ci_low", ""}, {"ci_high", ""},
                        {"wall_s", "wall days"}}};
    for (const auto& p : st.curve)
        t.rows.push_back({Value::structured(p.interval_s, duration_label(p.interval_s)), Value(p.summary.goodput.mean, Style::Fraction, 2),
                          ci_cell(p.summary.goodput), p.summary.goodput.ci_low, p.summary.goodput.ci_high,
                          Value(p.summary.wall_s.mean, Style::Days, 2)});
    return t;
}

Table sweep_table(const std::string& value_name, const std::vector<SweepRow>& rows) {
    Table t{.pointer = "/points", .columns = {{value_name, ""}, {"label", value_name}}};
    t.columns.insert(t.columns.end(), kSummaryColumns.begin(), kSummaryColumns.end());
    for (const auto& r : rows) {
        std::vector<Value> cells = {r.value, r.label};
        for (Value& v : summary_cells(r.summary)) cells.push_back(std::move(v));
        t.rows.push_back(std::move(cells));
    }
    return t;
}
}  // namespace

Output interval_study_output(const StudyHeader& h, const reliability::IntervalStudy& st) {
    Output out;
    add_setup(out, h);
    out.blocks.emplace_back(curve_table(st));
    out.add_facts({{"/optimal_interval_s", "", st.optimal_interval_s}, {"/young_interval_s", "", st.young_interval_s},
                   {"/daly_interval_s", "", st.daly_interval_s},       {"/goodput_at_optimum", "", st.at_optimum.goodput.mean},
                   {"/stall_s", "", st.stall_s},                       {"/job_mtbf_s", "", st.mtbf_s},
                   {"/at_optimum", "", Value::structured(summary_json(st.at_optimum), "")}});
    out.note(fmt::format("simulated optimum: {} -> goodput {} {}\n", duration_label(st.optimal_interval_s),
                         percent(st.at_optimum.goodput.mean), ci_text(st.at_optimum.goodput)) +
             fmt::format("Young sqrt(2 delta M): {}   Daly (2006): {}   (delta = stall {}, M = job MTBF {})",
                         duration_label(st.young_interval_s), duration_label(st.daly_interval_s), duration_label(st.stall_s),
                         duration_label(st.mtbf_s)));
    std::vector<TextPlotPoint> points;
    for (const auto& p : st.curve)
        points.push_back({p.interval_s, p.summary.goodput.mean, p.summary.goodput.ci_low, p.summary.goodput.ci_high});
    std::string plot = text_plot(points,
                                 {{st.young_interval_s, 'Y', "Young"}, {st.daly_interval_s, 'D', "Daly"},
                                  {st.optimal_interval_s, 'O', "simulated optimum"}},
                                 {"goodput against checkpoint interval", "checkpoint interval", "goodput", plot::duration_ladder(),
                                  short_duration, [](double v) { return fmt::format("{:.1f}%", 100 * v); }});
    if (!plot.empty() && plot.back() == '\n') plot.pop_back();
    out.note(plot);
    add_breakdown(out, st.at_optimum, "where the time goes at the simulated optimum:");
    return out;
}

std::string interval_study_csv(const reliability::IntervalStudy& st) { return render_csv(curve_table(st)); }

std::string interval_study_svg(const reliability::IntervalStudy& st, const std::string& title) { return goodput_chart(st, "goodput", title); }

Output sweep_output(const StudyHeader& h, const std::string& study, const std::string& value_name, const std::vector<SweepRow>& rows,
                    const std::string& note) {
    Output out;
    add_setup(out, h);
    out.add_facts({{"/study", "", study}});
    out.blocks.emplace_back(sweep_table(value_name, rows));
    if (!note.empty()) out.note(note, true);
    return out;
}

std::string sweep_csv(const std::string& value_name, const std::vector<SweepRow>& rows) {
    return render_csv(sweep_table(value_name, rows), {value_name, "goodput", "ci_low", "ci_high", "wall_s"});
}

}  // namespace sextant::cli
