// `calibrate fit` recovers the factors that generated synthetic step times through the simulator.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fit/profile_fit.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
FitJob job(const char* model, std::int64_t gpus, std::int64_t tp, std::int64_t pp, std::int64_t batch) {
    json doc = {{"model", model},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}}},
                {"seq_len", 4096},
                {"global_batch", batch},
                {"framework", "megatron-core-2024"},
                {"layout", {{"tp", tp}, {"pp", pp}, {"microbatch", 1}, {"sequence_parallel", tp > 1}, {"recompute", "selective"}}}};
    FitJob j;
    j.id = std::string(model) + "/" + std::to_string(gpus);
    j.scenario = parse_scenario(doc, data_dir());
    j.layout = resolve_layout(j.scenario, j.scenario.layout);
    return j;
}
}  // namespace

TEST_CASE("the profile fit recovers compute and overlap factors from synthetic step times") {
    std::vector<FitJob> jobs = {job("llama3-8b", 16, 2, 1, 32), job("llama3-8b", 32, 8, 1, 16),
                                job("llama3-70b", 64, 8, 2, 32), job("mcore-gpt-7.1b", 32, 4, 2, 32),
                                job("llama3-8b", 8, 1, 1, 16)};
    ProfileFactors truth;
    truth.compute = 0.8;
    truth.overlap = 0.5;
    for (auto& j : jobs) {
        const StepContext ctx(j.scenario);
        j.measured_step_time_s = simulate(ctx.with_factors(truth), j.layout).result.step_time_s;
    }
    const ProfileFit fit = fit_profile(jobs, {"compute", "overlap"});
    CHECK(fit.result.factors[0] == doctest::Approx(0.8).epsilon(0.01));
    CHECK(fit.result.factors[1] == doctest::Approx(0.5).epsilon(0.05));
    CHECK(fit.result.rms_error_after_pct < 0.5);
    CHECK(fit.result.rms_error_before_pct > 5.0);
    CHECK_THROWS(fit_profile({jobs[0], jobs[1]}, {"compute", "overlap"}));  // needs factors + 1 jobs
}
