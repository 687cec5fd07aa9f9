// One step of Llama 3 405B on 16,384 H100s (TP 8, PP 16, DP 128, interleaved 1F1B, microbatch 1,
// 2,048 x 8,192 tokens): simulation time on one core and peak memory (targets: 200 ms, 500 MB).
#include <chrono>
#include <cstdio>
#include <sys/resource.h>

#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;

int main() {
    const Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-405b-h100.json");
    const Layout l = resolve_layout(s, s.layout);
    auto t0 = std::chrono::steady_clock::now();
    const StepContext ctx(s);
    const Simulation first = simulate(ctx, l);
    auto t1 = std::chrono::steady_clock::now();
    const int repeats = 20;
    double sink = 0;
    for (int i = 0; i < repeats; ++i) sink += simulate(ctx, l).result.step_time_s;
    auto t2 = std::chrono::steady_clock::now();
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::printf("Llama 3 405B, 16,384 H100, tp8 pp16 dp128 vp%ld: step %.3f s, MFU %.1f%%, %zu tasks\n", static_cast<long>(l.vp),
                first.result.step_time_s, 100 * first.result.mfu, first.engine.tasks().size());
    std::printf("first simulation (scenario context, graph of %zu vertices, group routing): %.1f ms\n",
                ctx.network().graph().vertex_count(), std::chrono::duration<double>(t1 - t0).count() * 1e3);
    std::printf("each further simulation: %.2f ms (checksum %.3g)\n",
                std::chrono::duration<double>(t2 - t1).count() * 1e3 / repeats, sink);
    std::printf("peak resident memory: %.1f MB\n", static_cast<double>(usage.ru_maxrss) / 1024.0);
}
