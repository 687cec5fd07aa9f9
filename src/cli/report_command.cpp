// `sextant report SCENARIO -o report.html`: one HTML page with everything Sextant can say about a
// scenario: memory per stage, where the step goes and the pipeline timeline, the layouts the
// planner considered, goodput against the checkpoint interval, and the bus bandwidth of the
// layout's collectives.
#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/version.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/scenario_parts.hpp"
#include "report/html_report.hpp"
#include "report/nccl_tests.hpp"
#include "report/planner_view.hpp"
#include "sim/simulate.hpp"

namespace sextant::cli {

namespace {
struct ReportArgs {
    std::string scenario;
    std::string output;
    std::size_t top = 10;
    unsigned threads = 0;
    bool search_all = false;
    bool any_framework = false;
    std::int64_t trials = 0;  // 0: /reliability/trials
    std::int64_t seed = -1;   // -1: /reliability/seed
    bool json = false;
};

// The planner over the knobs the scenario leaves open (every knob with --search-all); a note
// instead when no layout fits.
void add_planner(ReportModel& report, Scenario scenario, const ReportArgs& a) {
    if (a.search_all) scenario.layout = LayoutSpec{};
    PlanOptions o;
    o.top = a.top;
    o.simulate_top = std::max<std::size_t>(50, a.top);
    o.threads = a.threads ? a.threads : std::max(1u, std::thread::hardware_concurrency());
    o.framework_features = !a.any_framework;
    const Planner planner(scenario, o, make_step_evaluator);
    std::vector<ScreenedCandidate> screened = planner.screen({});
    if (screened.empty()) {
        report.facts.push_back("planner: no candidate layout fits in memory with the knobs the scenario fixes");
        return;
    }
    report.planner = planner_view(planner, planner.distinct(planner.finish(std::move(screened))), a.top);
}

// Goodput against the checkpoint interval from 5 minutes to 4 hours (whatif checkpoint's
// default), when the scenario has a token budget.
void add_goodput(ReportModel& report, const Scenario& scenario, const ReportArgs& a) {
    const reliability::ReliabilitySpec& spec = scenario.reliability;
    if (!spec.train_tokens && scenario.training.train_tokens <= 0) {
        report.facts.push_back("goodput: not studied, the scenario has no token budget (/training/train_tokens)");
        return;
    }
    const reliability::RunSetup setup = reliability::make_run_setup(scenario, spec);
    const std::int64_t trials = a.trials > 0 ? a.trials : spec.trials;
    const std::uint64_t seed = a.seed >= 0 ? static_cast<std::uint64_t>(a.seed) : spec.seed;
    report.goodput = GoodputCurveView{reliability::sweep_intervals(setup.model, 300, 4 * 3600, 13, trials, seed)};
}

// The collectives of the layout's groups, as nccl-tests would sweep them: tensor parallel,
// data parallel (the gradient reduction), expert parallel and pipeline sends.
void add_collectives(ReportModel& report, const StepContext& ctx, const Layout& l) {
    const LayoutGroups& g = ctx.groups(l);
    const std::pair<CollectiveOp, const GroupShape*> groups[] = {
        {l.sequence_parallel ? CollectiveOp::AllGather : CollectiveOp::AllReduce, &g.tp},
        {l.zero_stage >= 1 ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce, &g.dp_dense},
        {CollectiveOp::AllToAll, &g.ep},
        {CollectiveOp::SendRecv, &g.pp},
    };
    for (const auto& [op, shape] : groups) {
        if (shape->ranks <= 1) continue;
        PredictedSweep sweep = sweep_collective(ctx.network(), op, *shape, 1024.0, 4.0 * 1024 * 1024 * 1024);
        sweep.cluster = ctx.scenario().cluster.name;
        sweep.gpu = ctx.scenario().cluster.gpu.name;
        sweep.calibration = ctx.profile().source();
        sweep.measured = measured_points(ctx.profile(), op, shape->span, shape->ranks);
        report.collectives.push_back(std::move(sweep));
    }
}

void run(const ReportArgs& a) {
    const Scenario s = load_checked_scenario(a.scenario);
    const Layout l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const Simulation sim = simulate(ctx, l, TaskLabels::Describe);
    ReportModel report{.title = "sextant report: " + s.name, .generator = version_text(), .facts = scenario_facts(s, &l)};
    add_step_sections(report, s, l, sim);
    add_planner(report, s, a);
    report.accuracy = accuracy_context(s, sim.result.step_time_s);
    add_goodput(report, s, a);
    add_collectives(report, ctx, l);
    write_output_file(a.output, html_report(report), "--output");
    if (a.json) {
        std::cout << report_json(report).dump(2) << "\n";
        return;
    }
    std::cout << fmt::format("report written to {}: memory, step and timeline, {}{} published runs like it, {}{} collective sweep{}\n", a.output,
                             report.planner ? fmt::format("{} layouts screened, ", report.planner->candidates_screened) : "",
                             report.accuracy->runs.size(),
                             report.goodput ? "goodput against checkpoint interval, " : "", report.collectives.size(),
                             report.collectives.size() == 1 ? "" : "s");
    for (const auto& f : report.facts)
        if (f.starts_with("planner:") || f.starts_with("goodput:")) std::cout << "note: " << f << "\n";
}
}  // namespace

void add_report_command(CLI::App& app) {
    static ReportArgs args;
    auto* cmd = app.add_subcommand("report", "Write one HTML page of charts: memory, step, timeline, layouts, goodput, collectives");
    cmd->add_option("scenario", args.scenario, "scenario JSON file")->required();
    cmd->add_option("-o,--output", args.output, "the HTML file to write")->required();
    cmd->add_option("--top", args.top, "simulated layouts to show")->check(at_least(1, "must be a positive integer"));
    cmd->add_option("--threads", args.threads, "planner threads (default or 0: all cores)")
        ->check(at_least(0, "must be 0 (all cores) or a positive integer"));
    cmd->add_flag("--search-all", args.search_all, "plan every knob, not only those the scenario leaves open");
    cmd->add_flag("--any-framework", args.any_framework, "also plan knobs the scenario's framework does not implement");
    cmd->add_option("--trials", args.trials, "Monte Carlo trials of the goodput study (default /reliability/trials)")
        ->check(at_least(1, "must be a positive integer"));
    cmd->add_option("--seed", args.seed, "seed of the goodput study (default /reliability/seed)")
        ->check(at_least(0, "must be a non-negative integer"));
    cmd->add_flag("--json", args.json, "also print the report's numbers as one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
