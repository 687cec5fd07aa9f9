#include "report/html_report.hpp"

#include <cctype>
#include <fmt/format.h>

#include "reliability/duration_text.hpp"
#include "report/accuracy_view.hpp"
#include "report/charts.hpp"
#include "report/plot.hpp"
#include "core/table.hpp"

namespace sextant {

namespace {
using plot::escape;

constexpr const char* kStyle = R"(
:root { color: #111; background: #fff; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0 auto; max-width: 1180px; padding: 18px 24px 40px; }
h1 { font-size: 24px; margin: 6px 0 4px; }
h2 { font-size: 19px; margin: 34px 0 8px; border-bottom: 2px solid #222; padding-bottom: 3px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
ul.facts { margin: 4px 0 0; padding-left: 18px; color: #333; }
p.note, p.generator { color: #444; font-size: 13px; }
figure { margin: 10px 0; }
figure svg { max-width: 100%; height: auto; display: block; }
.side { display: flex; gap: 22px; align-items: flex-start; flex-wrap: wrap; }
.side figure { flex: 1 1 620px; }
.side aside { flex: 1 1 300px; font-size: 14px; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; font-variant-numeric: tabular-nums; }
th, td { border-bottom: 1px solid #ccc; padding: 2px 10px 2px 0; text-align: right; }
th:first-child, td:first-child, td.text { text-align: left; }
th { border-bottom: 1.5px solid #333; }
details summary { cursor: pointer; color: #333; font-size: 14px; }
.zoom { font-size: 13px; margin: 4px 0; }
.zoom input { margin-left: 10px; }
.timeline-scroll { overflow-x: auto; border: 1px solid #ddd; }
.timeline-scroll svg { width: 100%; max-width: none; height: auto; }
#zoom4:checked ~ .timeline-scroll svg { width: 400%; }
#zoom16:checked ~ .timeline-scroll svg { width: 1600%; }
svg .tick, svg .legend, svg .lane-label { fill: #222; }
svg .axis-label { fill: #111; font-size: 13px; }
@media print {
  body { max-width: none; padding: 0; font-size: 12px; }
  section + section { break-before: page; }
  .zoom, details summary { display: none; }
  .timeline-scroll { overflow: visible; border: none; }
  .timeline-scroll svg { width: 100% !important; }
}
)";

std::string gib(double bytes) { return fmt::format("{:.2f}", bytes / (1024.0 * 1024.0 * 1024.0)); }

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows, const std::string& key) {
    std::string out = fmt::format("<table data-key=\"{}\"><thead><tr>", key);
    for (const auto& h : header) out += "<th>" + escape(h) + "</th>";
    out += "</tr></thead><tbody>\n";
    for (const auto& r : rows) {
        out += "<tr>";
        // Numbers align right, words left.
        for (const auto& c : r) out += (c.empty() || std::isdigit(static_cast<unsigned char>(c[0])) || c[0] == '[' || c[0] == '-' || c[0] == '+' ? "<td>" : "<td class=\"text\">") + escape(c) + "</td>";
        out += "</tr>\n";
    }
    return out + "</tbody></table>\n";
}

std::string figure(const std::string& svg) { return "<figure>\n" + svg + "</figure>\n"; }

std::string memory_section(const MemoryView& v) {
    std::vector<std::vector<std::string>> rows;
    for (const StageMemory& s : v.memory.stages)
        rows.push_back({std::to_string(s.stage), std::to_string(s.layers), gib(s.weights.value()), gib(s.gradients.value()),
                        gib(s.optimizer.value()), gib(s.activations.value()), gib(s.other().value()), gib(s.total().value())});
    const double headroom = v.memory.headroom().value();
    // What is offloaded to the host, against its DRAM where the cluster gives it.
    std::string host;
    if (v.memory.host_peak.value() > 0)
        host = v.memory.host_capacity.value() > 0
                   ? fmt::format(" The host holds {} per GPU of its {}: {}.", format_bytes(v.memory.host_peak.value()),
                                 format_bytes(v.memory.host_capacity.value()), v.memory.fits_host() ? "fits" : "does not fit")
                   : fmt::format(" The host holds {} per GPU (its DRAM not given).", format_bytes(v.memory.host_peak.value()));
    return fmt::format(
        "<section id=\"memory\"><h2>Memory per GPU</h2>\n{}<p class=\"note\">Peak {} on stage {} of {} HBM: {} by {}.{} The dashed line keeps "
        "{:g}% of HBM free (<code>/memory/safety_margin</code>); other = communication and temporary buffers, the CUDA context and "
        "fragmentation.</p>\n<details><summary>Memory per stage (GiB)</summary>\n{}</details></section>\n",
        figure(memory_chart(v, "memory-chart")), format_bytes(v.memory.peak.value()), v.memory.peak_stage,
        format_bytes(v.memory.capacity.value()), v.memory.fits_hbm() ? "fits" : "does not fit",
        format_bytes(headroom >= 0 ? headroom : -headroom), host, 100 * v.safety_margin,
        table({"stage", "layers", "weights", "gradients", "optimizer", "activations", "other", "total"}, rows, "memory-table"));
}

std::string step_section(const StepView& v) {
    const StepResult& r = v.result;
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, seconds] : r.breakdown.items())
        if (seconds > 0) rows.push_back({name, format_seconds(seconds), fmt::format("{:.1f}%", 100 * seconds / r.step_time_s)});
    std::string out = fmt::format(
        "<section id=\"step\"><h2>Where the step goes</h2>\n<p>{}: step time <strong data-key=\"step-time\">{}</strong>, {:.0f} tokens/s, "
        "MFU {:.1f}%, HFU {:.1f}%. The breakdown is that of the critical stage (stage {}), which paces the pipeline.</p>\n",
        escape(v.layout), format_seconds(r.step_time_s), r.tokens_per_s, 100 * r.mfu, 100 * r.hfu, r.critical_stage);
    out += "<div class=\"side\">" + figure(breakdown_chart(v, "breakdown-chart")) + "<aside>" +
           table({"cause", "time", "share"}, rows, "breakdown-table") + "</aside></div>\n";
    out += "<h3>Pipeline timeline</h3>\n<div class=\"timeline\"><span class=\"zoom\">zoom:</span>"
           "<input type=\"radio\" name=\"zoom\" id=\"zoom1\" checked><label for=\"zoom1\">1x</label>"
           "<input type=\"radio\" name=\"zoom\" id=\"zoom4\"><label for=\"zoom4\">4x</label>"
           "<input type=\"radio\" name=\"zoom\" id=\"zoom16\"><label for=\"zoom16\">16x</label>\n"
           "<div class=\"timeline-scroll\">\n" +
           timeline_chart(v, "timeline-chart") +
           "</div></div>\n<p class=\"note\">One representative GPU per pipeline stage, from the discrete-event simulation: forward, "
           "backward, recompute and exposed communication on the compute stream, pipeline sends (p2p) and gradient reductions (dp) on "
           "their own streams; grey is idle time. Hover a slice for its microbatch and times; zoom with the buttons or the browser.</p>"
           "</section>\n";
    return out;
}

std::string planner_section(const PlannerView& v) {
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < v.simulated.size(); ++i) {
        const auto& p = v.simulated[i];
        rows.push_back({std::to_string(i + 1), p.label, format_seconds(p.step_time_s), fmt::format("{:.1f}%", 100 * p.mfu),
                        fmt::format("{:.0f}", p.tokens_per_s), format_bytes(p.peak_memory_bytes)});
    }
    std::string why;
    for (const auto& line : v.explanation) why += "<li>" + escape(line) + "</li>";
    std::string out = fmt::format(
        "<section id=\"planner\"><h2>Layouts the planner considered</h2>\n<p>{} candidate layouts screened with the closed form; {} fit in "
        "memory; the best {} were simulated and ranked by {}.</p>\n<div class=\"side\">{}<aside><h3 data-key=\"winner-heading\">Why {} "
        "wins</h3><ul data-key=\"explanation\">{}</ul></aside></div>\n{}",
        v.candidates_screened, v.screened.count, v.simulated.size(), v.objective == "tokens_per_s" ? "tokens per second" : "MFU",
        figure(candidates_chart(v, "candidates-chart")), v.simulated.empty() ? std::string("nothing") : escape(v.simulated.front().label),
        why.empty() ? std::string("<li>no runner-up to compare with</li>") : why,
        table({"#", "layout", "step", "MFU", "tokens/s", "peak memory"}, rows, "plans-table"));
    if (!v.sweep.empty()) {
        std::vector<std::vector<std::string>> sweep_rows;
        for (const auto& s : v.sweep)
            sweep_rows.push_back({std::to_string(s.gpus), std::to_string(s.global_batch), s.best ? s.best->label : "no layout fits",
                                  s.best ? format_seconds(s.best->step_time_s) : "-",
                                  s.train_days > 0 ? fmt::format("{:.1f}", s.train_days) : "-",
                                  s.gpu_hours > 0 ? fmt::format("{:.0f}", s.gpu_hours) : "-"});
        out += "<h3>How many GPUs?</h3>\n" + figure(sweep_chart(v, "sweep-chart")) +
               table({"gpus", "batch", "best layout", "step", "train days", "GPU-hours"}, sweep_rows, "sweep-table");
    }
    return out + "</section>\n";
}

std::string accuracy_section(const AccuracyContext& c) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : c.runs)
        rows.push_back({r.id, r.runtime, r.precision, std::to_string(r.gpus), cell_text(Value(r.error_pct, Style::SignedPercent))});
    std::string notes;
    for (const auto& n : accuracy_notes(c, c.runs.size())) notes += "<li>" + escape(n) + "</li>";
    return fmt::format("<section id=\"accuracy\"><h2>How far to trust this</h2>\n<p>The model's error on the published runs like this "
                       "scenario (<code>sextant simulate --accuracy</code>): each predicted afresh, none a fit used; + is predicted slower "
                       "than measured.</p>\n<ul data-key=\"accuracy-notes\">{}</ul>\n{}</section>\n",
                       notes, rows.empty() ? std::string() : table({accuracy_heading(c), "runtime", "precision", "GPUs", "error"}, rows, "accuracy-table"));
}

std::string goodput_section(const GoodputCurveView& v, const std::string& title) {
    const auto& st = v.study;
    std::vector<std::vector<std::string>> rows;
    for (const auto& p : st.curve)
        rows.push_back({reliability::duration_label(p.interval_s), fmt::format("{:.2f}%", 100 * p.summary.goodput.mean),
                        fmt::format("[{:.2f}, {:.2f}]%", 100 * p.summary.goodput.ci_low, 100 * p.summary.goodput.ci_high)});
    return fmt::format(
        "<section id=\"goodput\"><h2>Goodput against the checkpoint interval</h2>\n{}<p class=\"note\">Simulated optimum {} (goodput "
        "{:.2f}%); Young's sqrt(2 delta M) gives {}, Daly's (2006) {}, with delta = the blocking stall per save ({}) and M = the job's "
        "mean time between failures ({}).</p>\n<details><summary>The curve</summary>\n{}</details></section>\n",
        figure(goodput_chart(st, "goodput-chart", title)), reliability::duration_label(st.optimal_interval_s), 100 * st.at_optimum.goodput.mean,
        reliability::duration_label(st.young_interval_s), reliability::duration_label(st.daly_interval_s),
        reliability::duration_label(st.stall_s), reliability::duration_label(st.mtbf_s),
        table({"interval", "goodput", "95% CI"}, rows, "goodput-table"));
}

std::string goodput_sweep_section(const GoodputSweepView& v) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [label, e] : v.points)
        rows.push_back({label, fmt::format("{:.2f}%", 100 * e.mean), fmt::format("[{:.2f}, {:.2f}]%", 100 * e.ci_low, 100 * e.ci_high)});
    return fmt::format("<section id=\"goodput-sweep\"><h2>Goodput against {}</h2>\n{}{}</section>\n", escape(v.value_name),
                       figure(goodput_sweep_chart(v, "goodput-sweep-chart", "Goodput (and its 95% confidence interval) for each " + v.value_name)),
                       table({v.value_name, "goodput", "95% CI"}, rows, "goodput-sweep-table"));
}

std::string collective_section(const PredictedSweep& c, std::size_t index) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : c.rows)
        rows.push_back({fmt::format("{:.0f}", r.bytes), fmt::format("{:.2f}", r.best.time.value() * 1e6), fmt::format("{:.2f}", r.best.algbw_gbps),
                        fmt::format("{:.2f}", r.best.busbw_gbps), std::string(r.best.algorithm)});
    return fmt::format("<h3>{} over {} ranks spanning {}</h3>\n{}<p class=\"note\">Calibration: {}.{}</p>\n<details><summary>The sweep "
                       "(as <code>sextant collective</code> prints it)</summary>\n{}</details>\n",
                       op_name(c.op), c.ranks, escape(c.span), figure(busbw_chart(c, fmt::format("busbw-chart-{}", index))), escape(c.calibration),
                       c.measured.empty() ? " The profile has no measured points for this collective." : "",
                       table({"size (B)", "time (us)", "algbw (GB/s)", "busbw (GB/s)", "algorithm"}, rows, fmt::format("busbw-table-{}", index)));
}
}  // namespace

std::string html_report(const ReportModel& m) {
    std::string facts;
    for (const auto& f : m.facts) facts += "<li>" + escape(f) + "</li>";
    std::string out = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<header><h1>{}</h1><ul class=\"facts\">{}</ul></header>\n",
        escape(m.title), kStyle, escape(m.title), facts);
    if (m.memory) out += memory_section(*m.memory);
    if (m.step) out += step_section(*m.step);
    if (m.planner) out += planner_section(*m.planner);
    if (m.accuracy) out += accuracy_section(*m.accuracy);
    if (m.goodput) out += goodput_section(*m.goodput, m.title + ": goodput against checkpoint interval");
    if (m.goodput_sweep) out += goodput_sweep_section(*m.goodput_sweep);
    if (!m.collectives.empty()) {
        out += "<section id=\"collectives\"><h2>Collectives: bus bandwidth against message size</h2>\n";
        for (std::size_t i = 0; i < m.collectives.size(); ++i) out += collective_section(m.collectives[i], i);
        out += "</section>\n";
    }
    out += fmt::format("<footer><p class=\"generator\">Predicted by {}: a model, not a measurement.</p></footer>\n</body>\n</html>\n",
                       escape(m.generator.empty() ? std::string("sextant") : m.generator));
    return out;
}

}  // namespace sextant
