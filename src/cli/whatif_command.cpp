// `sextant whatif checkpoint|spares|async|storage|failure-rate SCENARIO`: run-level what-if
// studies on the failure/checkpoint/restart simulator of src/reliability/.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/version.hpp"
#include "cli/whatif_report.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "memory/memory_model.hpp"
#include "reliability/duration_text.hpp"
#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/scenario_parts.hpp"
#include "reliability/whatif_studies.hpp"
#include "report/html_report.hpp"
#include "spec/scenario.hpp"

namespace sextant::cli {

namespace {
using namespace reliability;

struct WhatifOptions {
    std::string scenario;
    std::int64_t trials = 0;   // not given: /reliability/trials (the flag takes only positive values)
    std::int64_t seed = -1;    // not given: /reliability/seed (the flag takes only non-negative values)
    bool as_json = false;
    std::string csv;
    std::string svg;
    std::string html;
    std::string interval;      // checkpoint: a range; other studies: one duration
    int points = 13;
    std::string values;        // the swept values of the small studies
    double train_tokens = 0;   // 0: the scenario's budget
    double days = 0;           // 0: the token budget; else this much failure-free training
    bool require_fit = false;
    unsigned threads = 0;      // 0: every core
};

struct Study {
    Scenario scenario;
    RunSetup setup;
    std::int64_t trials = 0;
    std::uint64_t seed = 0;
};

// The scenario's /reliability with the token budget the flags ask for.
ReliabilitySpec read_spec(const WhatifOptions& o, const Scenario& scenario) {
    ReliabilitySpec spec = scenario.reliability;
    if (o.days > kLongestRunDays)
        throw InputError("--days", fmt::format("{:g}", o.days), fmt::format("run-level studies go up to {:g} days", kLongestRunDays));
    if (o.train_tokens > 0 && o.days > 0)
        throw InputError("--days", fmt::format("{:g}", o.days), "give either --days or --train-tokens, not both");
    if (o.train_tokens > 0) spec.train_tokens = o.train_tokens;
    if (o.days > 0)
        spec.train_tokens = o.days * 86400.0 / step_time(scenario, spec).seconds * scenario.training.tokens_per_step();
    if (!spec.train_tokens && scenario.training.train_tokens <= 0)
        throw InputError("/training/train_tokens", "",
                         "is needed for a run-level study (the token budget of the run); or give "
                         "/reliability/train_tokens, --train-tokens N or --days D");
    return spec;
}

Study load_study(const WhatifOptions& o, bool interval_is_single) {
    Study s{load_checked_scenario(o.scenario), {}, 0, 0};
    s.setup = make_run_setup(s.scenario, read_spec(o, s.scenario));
    if (interval_is_single && !o.interval.empty()) {
        s.setup.spec.checkpoint.interval_s = parse_duration(o.interval, "--interval");
        s.setup.model.checkpoint.interval_s = s.setup.spec.checkpoint.interval_s;
    }
    s.trials = o.trials > 0 ? o.trials : s.setup.spec.trials;
    s.seed = o.seed >= 0 ? static_cast<std::uint64_t>(o.seed) : s.setup.spec.seed;
    check_fit(estimate_memory(s.scenario, resolve_layout(s.scenario, s.scenario.layout)), o.require_fit);
    return s;
}

// Trials, seed and threads of a study. On a terminal (and not --json) the trials' own progress
// line (core/progress.hpp) shows on stderr while they run.
TrialOptions trial_options(const WhatifOptions& o, const Study& s) {
    return {s.trials, s.seed, o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency())};
}

// The page of a study: its title, and what the numbers rest on as the header's facts.
ReportModel study_report(const Study& s, const std::string& study_name) {
    ReportModel report;
    report.title = fmt::format("sextant whatif {}: {}", study_name, s.scenario.name);
    const std::string setup = setup_text(s.scenario.name, s.setup, s.trials, s.seed);
    std::size_t start = 0;
    while (start < setup.size()) {
        const std::size_t end = setup.find('\n', start);
        report.facts.push_back(setup.substr(start, end - start));
        start = end == std::string::npos ? setup.size() : end + 1;
    }
    report.generator = version_text();
    return report;
}

void run_checkpoint(const WhatifOptions& o) {
    Study s = load_study(o, false);
    const DurationRange range = parse_duration_range(o.interval.empty() ? "5m..4h" : o.interval, "--interval");
    if (o.points < 3 || o.points > 200)
        throw InputError("--points", std::to_string(o.points), "must be between 3 and 200");
    const IntervalStudy study = checkpoint_study(s.setup, range.low_s, range.high_s, o.points, trial_options(o, s));
    if (!o.csv.empty()) write_output_file(o.csv, interval_study_csv(study), "--csv");
    if (!o.svg.empty()) write_output_file(o.svg, interval_study_svg(study, s.scenario.name + ": goodput against checkpoint interval"), "--svg");
    if (!o.html.empty()) {
        ReportModel report = study_report(s, "checkpoint");
        report.goodput = GoodputCurveView{study};
        write_output_file(o.html, html_report(report), "--html");
    }
    const Output out = interval_study_output({s.scenario.name, s.setup, s.trials, s.seed}, study);
    std::cout << (o.as_json ? render_json(out).dump(2) + "\n" : render_text(out));
}

void print_sweep(const WhatifOptions& o, const Study& s, const std::string& study_name,
                 const std::string& value_name, const std::vector<SweepRow>& rows, const std::string& note) {
    if (!o.csv.empty()) write_output_file(o.csv, sweep_csv(value_name, rows), "--csv");
    if (!o.html.empty()) {
        ReportModel report = study_report(s, study_name);
        GoodputSweepView view{value_name, {}};
        for (const auto& r : rows) view.points.emplace_back(r.label, r.summary.goodput);
        report.goodput_sweep = view;
        write_output_file(o.html, html_report(report), "--html");
    }
    const Output out = sweep_output({s.scenario.name, s.setup, s.trials, s.seed}, study_name, value_name, rows, note);
    std::cout << (o.as_json ? render_json(out).dump(2) + "\n" : render_text(out));
}

std::vector<double> values_or(const WhatifOptions& o, const char* fallback, double min) {
    return parse_number_list(o.values.empty() ? fallback : o.values, "--values", min);
}

void run_spares(const WhatifOptions& o) {
    const Study s = load_study(o, true);
    print_sweep(o, s, "spares", "hot_spares", spares_study(s.setup, values_or(o, "0,1,2,4,8,16,32", 0), trial_options(o, s)),
                "0 spares: every hardware failure waits for the node's repair (/reliability/restart/replacement_h)");
}

void run_failure_rate(const WhatifOptions& o) {
    const Study s = load_study(o, true);
    print_sweep(o, s, "failure-rate", "rate_multiplier",
                failure_rate_study(s.setup, values_or(o, "0.25,0.5,1,2,4", 0), trial_options(o, s)), "");
}

void run_storage(const WhatifOptions& o) {
    const Study s = load_study(o, true);
    print_sweep(o, s, "storage", "bandwidth_multiplier",
                storage_study(s.scenario, s.setup, values_or(o, "0.25,0.5,1,2,4", 1e-6), trial_options(o, s)),
                "the checkpoint interval stays fixed; run `whatif checkpoint` for each storage to re-optimize");
}

void run_async(const WhatifOptions& o) {
    const Study s = load_study(o, true);
    print_sweep(o, s, "async", "async", async_study(s.setup, trial_options(o, s)),
                "async: the save blocks only for the device-to-host snapshot; a failure before the background "
                "write ends loses that checkpoint");
}

void add_common(CLI::App* cmd, WhatifOptions& o) {
    cmd->add_option("scenario", o.scenario, "scenario JSON file")->required();
    cmd->add_option("--trials", o.trials, "Monte Carlo trials (default /reliability/trials, 1000)")
        ->check(at_least(1, "must be a positive integer"));
    cmd->add_option("--seed", o.seed, "seed (default /reliability/seed, 1)")
        ->check(at_least(0, "must be a non-negative integer"));
    cmd->add_flag("--json", o.as_json, "one JSON document");
    add_require_fit_flag(cmd, o.require_fit);
    cmd->add_option("--csv", o.csv, "also write the curve as CSV to FILE");
    cmd->add_option("--html", o.html, "also write the study as an HTML report to FILE");
    cmd->add_option("--train-tokens", o.train_tokens, "token budget (default /reliability/train_tokens, /training/train_tokens)")
        ->check(positive("must be a positive number of tokens"));
    cmd->add_option("--days", o.days, "instead of a token budget: this many days of failure-free training")
        ->check(positive("must be a positive number of days"));
    cmd->add_option("--threads", o.threads, "threads the trials are split across (default or 0: all cores; the answer does not depend on it)");
}
}  // namespace

void add_whatif_command(CLI::App& app) {
    auto* whatif = app.add_subcommand("whatif", "Run-level what-if studies: failures, checkpoints, restarts");
    whatif->require_subcommand(1);
    static WhatifOptions o;

    auto* checkpoint = whatif->add_subcommand("checkpoint", "Sweep the checkpoint interval: goodput, optimum, Young and Daly");
    add_common(checkpoint, o);
    checkpoint->add_option("--interval", o.interval, "interval range LOW..HIGH (default 5m..4h)");
    checkpoint->add_option("--points", o.points, "intervals in the sweep, log-spaced (default 13)");
    checkpoint->add_option("--svg", o.svg, "also draw goodput against interval as SVG to FILE");
    checkpoint->callback([] { run_checkpoint(o); });

    struct Small {
        const char* name;
        const char* help;
        const char* values_help;
        void (*run)(const WhatifOptions&);
    };
    for (const Small& s : {Small{"spares", "Goodput against the number of hot spare nodes", "spare counts (default 0,1,2,4,8,16,32)", run_spares},
                           Small{"async", "Blocking against asynchronous checkpoints", "", run_async},
                           Small{"storage", "Goodput against storage bandwidth multipliers", "multipliers (default 0.25,0.5,1,2,4)", run_storage},
                           Small{"failure-rate", "Goodput against failure-rate multipliers", "multipliers (default 0.25,0.5,1,2,4)", run_failure_rate}}) {
        auto* cmd = whatif->add_subcommand(s.name, s.help);
        add_common(cmd, o);
        cmd->add_option("--interval", o.interval, "checkpoint interval, e.g. 30m (default /reliability/checkpoint/interval_s)");
        if (*s.values_help) cmd->add_option("--values", o.values, s.values_help);
        auto run = s.run;
        cmd->callback([run] { run(o); });
    }
}

}  // namespace sextant::cli
