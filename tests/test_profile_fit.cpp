// `calibrate fit` recovers the factors that generated synthetic step times through the simulator.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
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

namespace {
// Mixtral 8x7B on one 8-GPU node at EP 8, microbatch 1, on megatron-core-2025 (DeepEP: its MoE
// layers wait for the host), with or without the all-to-all overlap.
FitJob moe_job(const char* gpu, bool overlap) {
    json doc = {{"model", "mixtral-8x7b"},
                {"cluster", {{"gpu", gpu}, {"gpus", 8}, {"gpus_per_node", 8}}},
                {"seq_len", 4096},
                {"global_batch", 32},
                {"framework", "megatron-core-2025"},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"microbatch", 1}, {"ep_a2a_overlap", overlap}}}};
    FitJob j;
    j.id = std::string(gpu) + (overlap ? "/overlap" : "");
    j.scenario = parse_scenario(doc, data_dir());
    j.layout = resolve_layout(j.scenario, j.scenario.layout);
    return j;
}
}  // namespace

TEST_CASE("the MoE host factors fit across GPU types, each job keeping its own GPU's factors, the others do not") {
    // Step times made with 20 ms more host time per MoE layer and 1.3 times that under the
    // overlap, on H100 and B200 (whose presets carry different compute factors): the fit from
    // the neutral values finds both, which it could not if it put one GPU's factors on the other's jobs.
    std::vector<FitJob> jobs = {moe_job("H100-SXM5-80GB", false), moe_job("H100-SXM5-80GB", true), moe_job("B200", false), moe_job("B200", true)};
    REQUIRE(StepContext(jobs[0].scenario).profile().factors().compute != StepContext(jobs[2].scenario).profile().factors().compute);
    for (auto& j : jobs) {
        const StepContext ctx(j.scenario);
        ProfileFactors truth = ctx.profile().factors();
        truth.moe_host_ms = 20;
        truth.moe_overlap_host = 1.3;
        j.measured_step_time_s = simulate(ctx.with_factors(truth), j.layout).result.step_time_s;
    }
    const ProfileFit fit = fit_profile(jobs, {"moe_host_ms", "moe_overlap_host"});
    CHECK(fit.result.factors[0] == doctest::Approx(20).epsilon(0.01));
    CHECK(fit.result.factors[1] == doctest::Approx(1.3).epsilon(0.01));
    CHECK(fit.result.rms_error_after_pct < 0.5);
    // A GPU's compute is its own: fitting it across GPU types is refused, naming the run.
    try {
        fit_profile(jobs, {"compute", "moe_host_ms"});
        FAIL("mixed GPU types accepted for a compute fit");
    } catch (const InputError& e) {
        CHECK(std::string(e.what()).find("mixes GPU types") != std::string::npos);
    }
}
