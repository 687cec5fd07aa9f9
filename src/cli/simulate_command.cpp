// `sextant simulate SCENARIO [--json] [--trace FILE] [--html FILE]`: one optimizer step, where it goes, the MFU.
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "core/work_limits.hpp"
#include "reliability/scenario_parts.hpp"
#include "report/accuracy_view.hpp"
#include "report/breakdown_json.hpp"
#include "report/html_report.hpp"
#include "report/output.hpp"
#include "report/planner_view.hpp"
#include "core/table.hpp"
#include "report/trace.hpp"
#include "sim/simulate.hpp"

namespace sextant::cli {

namespace {
struct SimulateArgs {
    std::string scenario;
    std::string trace;
    std::string calibration;
    std::string html;
    bool json = false;
    bool require_fit = false;
    bool accuracy = false;
};

// One step's answer, which text and JSON render.
Output simulate_output(const Scenario& s, const Layout& l, const std::string& runtime, const std::string& calibration,
                       const StepResult& r) {
    Output out;
    const std::int64_t microbatches = l.microbatches(s.training.global_batch);
    // The ZeRO stage is in the heading because a layout that names none runs its framework's.
    out.heading = fmt::format("{}: {} on {} x {}, tp {} pp {} dp {} cp {} ep {} vp {}, microbatch {}, {} microbatch{}, ZeRO {}, {}",
                              s.name.empty() ? "scenario" : s.name, s.model.name, s.cluster.gpus, s.cluster.gpu.name, l.tp, l.pp,
                              l.dp, l.cp, l.ep, l.vp, l.microbatch, microbatches, microbatches == 1 ? "" : "es", l.zero_stage, runtime);
    out.add_facts({
        {"/scenario", "", s.name},
        {"/step_time_s", "step time", Value(r.step_time_s, Style::Duration)},
        {"/tokens_per_s", "tokens/s", Value(r.tokens_per_s, Style::Plain, 0)},
        {"/mfu", "MFU", Value(r.mfu, Style::Fraction)},
        {"/hfu", "HFU", Value(r.hfu, Style::Fraction)},
        {"/peak_memory_bytes", "peak memory", Value(r.memory.peak.value(), Style::ByteSize),
         fmt::format("of {} ({})", format_bytes(r.memory.capacity.value()),
                     r.memory.fits_hbm() ? (r.memory.fits_host() ? "fits" : "fits; host memory does not: sextant memory")
                                                        : "DOES NOT FIT")},
        {"/capacity_bytes", "", r.memory.capacity.value()},
        {"/host_peak_bytes", "", r.memory.host_peak.value()},
        {"/fits", "", r.memory.fits()},
        {"/critical_stage", "", r.critical_stage},
        {"/framework", "", runtime},
        {"/zero_stage", "", l.zero_stage},
        {"/calibration", "", calibration},
        // Every item in JSON, zeros too (scripts index it); the text table shows those that take time.
        {"/breakdown", "", Value::structured(breakdown_json(r.breakdown.items()), "")},
    });
    Table& t = out.table("", {{"", "where the step goes"}, {"", "time"}, {"", "share"}});
    for (const auto& [name, value] : r.breakdown.items())
        if (value > 0) t.rows.push_back({name, Value(value, Style::Duration), Value(value / r.step_time_s, Style::Fraction)});
    // A hybrid model's attention term covers its attention layers only, and its Mamba layers add
    // their SSD scans; gated delta net layers add their delta rules (model_flops_per_step).
    const char* mixers = s.model.is_hybrid() ? " (L: the attention layers) + 3 x each Mamba layer's SSD scan"
                         : s.model.has_gdn() ? " (L: the attention layers) + 3 x each gated delta net layer's delta rule as Megatron-LM counts it"
                                             : "";
    out.note(fmt::format("critical pipeline stage: {}; MFU counts 6 x active parameters + 12 L h s FLOPs per token{}", r.critical_stage,
                         mixers));
    // A step that mostly waits for the host is a different problem from a slow GPU: say so, and
    // what the model says relieves it (cost/layer_costs.cpp moe_host_floor).
    if (r.breakdown.host > 0.1 * r.step_time_s)
        out.note(fmt::format("host-bound: {:.0f}% of the step waits for the host to issue dropless MoE layers' kernels (runtime "
                             "moe_host_ms_per_layer); the HybridEP dispatcher, padded token dropping or a larger microbatch "
                             "(fewer microbatches, each longer on the GPU) relieve it",
                             100.0 * r.breakdown.host / r.step_time_s));
    return out;
}

void run(const SimulateArgs& a) {
    Scenario s = load_checked_scenario(a.scenario);
    if (!a.calibration.empty()) {
        set_scenario_part(s, "calibration", calibration_part(a.calibration));
        check_scenario_parts(s);
    }
    const Layout l = resolve_layout(s, s.layout);
    if (!a.trace.empty()) {
        const double tasks = estimated_tasks(l, l.microbatches(s.training.global_batch));
        check_work(Work::TraceBytes, estimated_trace_bytes(tasks), "--trace", fmt::format("\"{}\" (about {:.3g} tasks)", a.trace, tasks));
    }
    const StepContext ctx(s);
    // Tasks are described (labels, start times) only for the trace and the page that draw them.
    const bool drawn = !a.trace.empty() || !a.html.empty();
    const Simulation sim = simulate(ctx, l, drawn ? TaskLabels::Describe : TaskLabels::None);
    const StepResult& r = sim.result;
    check_fit(r.memory, a.require_fit);
    if (!a.trace.empty()) write_output_file(a.trace, chrome_trace(sim, s.name), "--trace");
    const std::optional<AccuracyContext> accuracy = a.accuracy ? std::optional(accuracy_context(s, r.step_time_s)) : std::nullopt;
    if (!a.html.empty()) {
        ReportModel report{.title = "sextant simulate: " + s.name, .generator = version_text(), .facts = scenario_facts(s, &l)};
        add_step_sections(report, s, l, sim);
        report.accuracy = accuracy;
        write_output_file(a.html, html_report(report), "--html");
    }
    Output out = simulate_output(s, l, ctx.runtime().name, ctx.profile().source(), r);
    if (accuracy) add_accuracy(out, *accuracy);
    std::cout << (a.json ? render_json(out).dump(2) + "\n" : render_text(out));
    if (a.json) return;
    if (!a.trace.empty()) std::cout << "trace written to " << a.trace << " (open in ui.perfetto.dev)\n";
}
}  // namespace

void add_simulate_command(CLI::App& app) {
    static SimulateArgs args;
    auto* cmd = app.add_subcommand("simulate", "Simulate one optimizer step: time, breakdown, MFU");
    cmd->add_option("scenario", args.scenario, "scenario JSON file")->required();
    cmd->add_option("--trace", args.trace, "write a Chrome/Perfetto trace");
    cmd->add_option("--calibration", args.calibration, "calibration profile instead of the scenario's (calibration/ preset or file)");
    cmd->add_option("--html", args.html, "write an HTML report: memory per stage, the breakdown, the pipeline timeline");
    add_require_fit_flag(cmd, args.require_fit);
    cmd->add_flag("--accuracy", args.accuracy,
                  "also show how the model did on the published runs like this one (same GPU type, dense or MoE; none a fit used)");
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
