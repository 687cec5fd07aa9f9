// The step simulator's speed and memory: one step of Llama 3 405B on 16,384 H100s (TP 8, PP 16,
// DP 128, interleaved vp 4, microbatch 1, 2,048 x 8,192 tokens; targets 200 ms, 500 MB), then the
// same layout with the global batch raised to 65,536 microbatches per step (issue 18's target:
// <= 2 s and <= 500 MB). `bench_simulate M [VP]` simulates M microbatches only: the peak RSS
// it prints is the process's, so run it alone for one case's memory.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sys/resource.h>

#include "cpu_time.hpp"
#include "core/work_limits.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
double peak_mb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

using bench::cpu_seconds;

void many_microbatches(Scenario s, std::int64_t microbatches, std::int64_t vp) {
    s.layout.vp = vp;
    Layout l = resolve_layout(s, s.layout);
    s.training.global_batch = microbatches * l.dp * l.microbatch;
    l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const double before = peak_mb(), cpu0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const Simulation sim = simulate(ctx, l);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), cpu = cpu_seconds() - cpu0;
    std::printf("%lld microbatches, pp %lld vp %lld: %zu tasks in %.2f s CPU, %.2f s wall (%.0f ns CPU per task), step %.1f s; peak RSS %.0f MB (%.0f MB before)\n",
                static_cast<long long>(microbatches), static_cast<long long>(l.pp), static_cast<long long>(l.vp), sim.engine.task_count(), cpu,
                seconds, cpu * 1e9 / static_cast<double>(sim.engine.task_count()), sim.result.step_time_s, peak_mb(), before);
}
}  // namespace

int main(int argc, char** argv) {
    // 65,536 microbatches at vp 4 are 16.6 million tasks, past the 4 million a command runs
    // without --work-limit (core/work_limits.cpp): the benchmark measures exactly that case.
    set_work_limit_factor(8.0);
    const Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json");
    if (argc > 1) {
        many_microbatches(s, std::atoll(argv[1]), argc > 2 ? std::atoll(argv[2]) : 4);
        return 0;
    }
    const Layout l = resolve_layout(s, s.layout);
    auto t0 = std::chrono::steady_clock::now();
    const StepContext ctx(s);
    const Simulation first = simulate(ctx, l);
    auto t1 = std::chrono::steady_clock::now();
    const int repeats = 20;
    double sink = 0;
    for (int i = 0; i < repeats; ++i) sink += simulate(ctx, l).result.step_time_s;
    auto t2 = std::chrono::steady_clock::now();
    std::printf("Llama 3 405B, 16,384 H100, tp8 pp16 dp128 vp%ld: step %.3f s, MFU %.1f%%, %zu tasks\n", static_cast<long>(l.vp),
                first.result.step_time_s, 100 * first.result.mfu, first.engine.task_count());
    std::printf("first simulation (scenario context, graph of %zu vertices, group routing): %.1f ms\n",
                ctx.network().graph().vertex_count(), std::chrono::duration<double>(t1 - t0).count() * 1e3);
    std::printf("each further simulation: %.2f ms (checksum %.3g)\n",
                std::chrono::duration<double>(t2 - t1).count() * 1e3 / repeats, sink);
    std::printf("peak resident memory: %.1f MB\n", peak_mb());
    std::fflush(stdout);
    many_microbatches(s, 65536, 1);
    many_microbatches(s, 65536, 4);
}
