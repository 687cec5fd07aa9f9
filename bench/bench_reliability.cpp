// 10,000 Monte Carlo trials of a 54-day run on 16,384 GPUs (the Llama 3 405B scenario and its
// failure preset), checkpointing at Daly's interval. Target: at most 2 s on the 2-core build
// machine. Also prints the sanity reference: the Llama 3 paper saw 466 interruptions (419
// unexpected, 47 planned) in 54 days. Then `whatif checkpoint` on the scenario's whole token
// budget with 10,000 trials per interval (14 intervals), on 1 and 2 threads (issue 18's target:
// <= 2 s on two cores). Each study line gives the process's CPU seconds too: on a shared machine
// the wall-clock says as much about the neighbours as about the study.
//
// `bench_reliability THREADS [TRIALS]` runs only the study, on THREADS threads (and TRIALS trials
// per interval, 10,000 by default): one process per thread count, for paired timings and for
// `valgrind --tool=callgrind` (the load-free measure).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cpu_time.hpp"
#include "reliability/interval_formulas.hpp"
#include "reliability/interval_study.hpp"
#include "reliability/run_setup.hpp"
#include "reliability/run_simulator.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::reliability;

namespace {
using bench::cpu_seconds;

// `whatif checkpoint` on the scenario's whole token budget, 10,000 trials per interval; returns
// its wall-clock seconds. `one_thread`: the one-thread wall time to compare with, 0 if none.
double checkpoint_study(const RunModel& model, std::int64_t trials, unsigned threads, double one_thread) {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const IntervalStudy study = sweep_intervals(model, 300, 4 * 3600, 13, trials, 1, threads);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = cpu_seconds() - cpu0;
    fmt::print("whatif checkpoint, {} trials per interval, {} intervals, {} thread{}: {:.2f} s wall, {:.2f} s CPU{} (optimum {:.0f} s, goodput {:.3f}){}\n",
               trials, study.curve.size() + 1, threads, threads == 1 ? "" : "s", wall, cpu,
               one_thread > 0 ? fmt::format(", {:.2f}x one thread", one_thread / wall) : std::string(),
               study.optimal_interval_s, study.at_optimum.goodput.mean,
               threads == 2 ? (wall <= 2.0 ? "; target <= 2 s: met" : "; target <= 2 s: MISSED") : "");
    return wall;
}
}  // namespace

int main(int argc, char** argv) {
    const Scenario scenario = load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json");
    std::int64_t trials = 10000;
    if (argc > 1) {
        const int threads = std::atoi(argv[1]);
        if (argc > 2) trials = std::atoll(argv[2]);
        if (threads < 1 || trials < 1) {
            std::fprintf(stderr, "usage: bench_reliability [THREADS [TRIALS]]\n");
            return 2;
        }
        bench::print_load("load average before the studies");
        checkpoint_study(make_run_setup(scenario).model, trials, static_cast<unsigned>(threads), 0);
        return 0;
    }
    RunSetup setup = make_run_setup(scenario);
    RunModel model = setup.model;
    model.work_s = 54 * 86400.0;
    model.checkpoint.interval_s = daly_interval(model.checkpoint.stall_s, setup.job_mtbf_s());

    const auto start = std::chrono::steady_clock::now();
    const RunSummary s = simulate_runs(model, trials, 1);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    double interruptions = 0;
    for (const auto& c : s.causes) interruptions += c.events;
    const double wall_days = s.wall_s.mean / 86400.0;
    fmt::print("bench_reliability: {} trials of {:.0f} days of training on {} GPUs, checkpoint every {:.1f} s (Daly)\n",
               trials, model.work_s / 86400.0, scenario.cluster.gpus, model.checkpoint.interval_s);
    fmt::print("  time: {:.3f} s ({:.1f} us per trial); target <= 2 s: {}\n", seconds, seconds / static_cast<double>(trials) * 1e6,
               seconds <= 2.0 ? "met" : "MISSED");
    fmt::print("  goodput {:.2f}% [{:.2f}, {:.2f}], wall {:.2f} days\n", 100 * s.goodput.mean, 100 * s.goodput.ci_low,
               100 * s.goodput.ci_high, wall_days);
    fmt::print("  interruptions per 54 wall-clock days: {:.0f} (Llama 3 paper: 466 = 419 unexpected + 47 planned)\n",
               interruptions / wall_days * 54.0);
    const RunSetup whole = make_run_setup(scenario);
    bench::print_load("load average before the studies");
    const double one_thread = checkpoint_study(whole.model, trials, 1, 0);
    checkpoint_study(whole.model, trials, 2, one_thread);
    return 0;
}
