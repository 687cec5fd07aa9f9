#include "fit/profile_fit.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "validate/published_runs.hpp"

namespace sextant {

namespace {
double& factor_ref(ProfileFactors& f, const std::string& name) {
    if (name == "compute") return f.compute;
    if (name == "communication") return f.communication;
    if (name == "moe") return f.moe;
    if (name == "moe_host_ms") return f.moe_host_ms;
    if (name == "moe_overlap_host") return f.moe_overlap_host;
    return f.overlap;
}
}  // namespace

ProfileFit fit_profile(const std::vector<FitJob>& jobs, const std::vector<std::string>& factors) {
    if (jobs.empty()) throw InputError("runs", "", "no measured job to fit");
    const std::vector<std::string> known = {"compute", "communication", "overlap", "moe", "moe_host_ms", "moe_overlap_host"};
    for (const auto& f : factors)
        if (std::find(known.begin(), known.end(), f) == known.end())
            throw InputError("--factors", "\"" + f + "\"", "unknown factor; " + suggestion_text(f, known));
    // The MoE host factors time the CPU's issue of kernels, not the GPU: they may be fitted on jobs
    // of several GPU types whose hosts match (DGX H100 and DGX B200 both carry two 56-core Xeon
    // Platinum, 8480C and 8570); each job keeps its own GPU's other factors.
    const bool host_only = std::all_of(factors.begin(), factors.end(), [](const std::string& f) { return f == "moe_host_ms" || f == "moe_overlap_host"; });
    for (const auto& j : jobs) {
        if (!host_only && j.scenario.cluster.gpu.name != jobs.front().scenario.cluster.gpu.name)
            throw InputError("runs", j.id, "mixes GPU types (" + j.scenario.cluster.gpu.name + " and " +
                                              jobs.front().scenario.cluster.gpu.name + "): fit one GPU type at a time (--gpu)");
        if (j.scenario.training.framework != jobs.front().scenario.training.framework)
            throw InputError("runs", j.id, "mixes framework generations: fit one at a time (--framework)");
    }
    std::vector<StepContext> contexts;
    contexts.reserve(jobs.size());
    for (const auto& j : jobs) contexts.emplace_back(j.scenario);
    const ProfileFactors base = contexts.front().profile().factors();

    FitProblem p;
    p.factor_names = factors;
    for (const auto& name : factors) {
        ProfileFactors copy = base;
        // A MoE layer's host milliseconds start from 10 where none is set (a floor below every
        // layer's GPU time has no gradient: 10 ms binds the layers of 4096-token microbatches on
        // B200) and range up to 100; the multipliers stay within 0.3-1.5 (overlap from 0), the
        // host time's multiple under the all-to-all overlap within 0.3-5.
        const bool host = name == "moe_host_ms";
        p.initial.push_back(host ? std::max(factor_ref(copy, name), 10.0) : factor_ref(copy, name));
        p.lower.push_back(name == "overlap" || host ? 0.0 : 0.3);
        p.upper.push_back(host ? 100.0 : name == "moe_overlap_host" ? 5.0 : 1.5);
    }
    p.observations = jobs.size();
    for (const auto& j : jobs) p.measured.push_back(j.measured_step_time_s);
    p.predict = [&](const std::vector<double>& x, std::size_t i) {
        ProfileFactors f = contexts[i].profile().factors();
        for (std::size_t k = 0; k < factors.size(); ++k) factor_ref(f, factors[k]) = x[k];
        return simulate(contexts[i].with_factors(f), jobs[i].layout).result.step_time_s;
    };
    ProfileFit out;
    out.factor_names = factors;
    out.result = fit_least_squares(p);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        out.jobs.push_back({jobs[i].id, jobs[i].measured_step_time_s, p.predict(p.initial, i), p.predict(out.result.factors, i)});
    return out;
}

std::vector<FitJob> jobs_from_published_runs(const std::string& file) {
    const ValidationReport report = validate_runs(file);
    throw_first_error(report);
    const json doc = load_json_file(file, "");
    std::vector<FitJob> jobs;
    for (std::size_t i = 0; i < report.runs.size(); ++i) {
        FitJob j;
        j.id = report.runs[i].id;
        // The same scenario validate simulates: the run's runtime generation included.
        j.scenario = run_scenario(doc["runs"][i], "/runs/" + std::to_string(i), std::filesystem::path(file).parent_path());
        j.layout = report.runs[i].chosen;
        j.measured_step_time_s = report.runs[i].measured_step_time_s;
        jobs.push_back(std::move(j));
    }
    return jobs;
}

}  // namespace sextant
