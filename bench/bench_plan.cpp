// The planner's speed: every layout of Llama 3 405B on 16,384 H100s and of Llama 3 70B on 1,024
// (targets: >= 100,000 candidates and the top 50 simulated in 10 s; 70B in 2 s), one thread.
// The whole search space (`plan --any-framework`), then what Megatron-Core 2024 implements.
#include <chrono>
#include <cstdio>

#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
void run(const char* name, bool any_framework) {
    Scenario s = load_scenario(data_dir() / "scenarios" / (std::string(name) + ".json"));
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.threads = 1;
    o.simulate_top = 50;
    o.framework_features = !any_framework;
    auto t0 = std::chrono::steady_clock::now();
    Planner planner(s, o, make_step_evaluator);
    auto plans = planner.finish(planner.screen({0, 1}));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-18s %-14s %7zu candidates screened, %zu simulated, %.2f s, %.0f candidates/s\n", name, any_framework ? "any framework" : s.training.framework.c_str(), planner.candidate_count(),
                plans.size(), seconds, static_cast<double>(planner.candidate_count()) / seconds);
}
}  // namespace

int main() {
    for (bool any : {true, false}) {
        run("llama3-405b-h100", any);
        run("llama3-70b-h100", any);
    }
}
