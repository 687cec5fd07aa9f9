#include "fit/profile_fit.hpp"

#include <algorithm>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "validate/published_runs.hpp"

namespace sextant {

namespace {
// Each factor `calibrate fit` can fit, with its bounds and start. A MoE layer's host milliseconds
// start from 10 where none is set (a floor below every layer's GPU time has no gradient: 10 ms
// binds the layers of 4096-token microbatches on B200) and range up to 100; the multipliers stay
// within 0.3-1.5 (overlap from 0), the host time's multiple under the all-to-all overlap within
// 0.3-5. The host factors time the CPU's issue of kernels, not the GPU (`host`).
struct FactorDef {
    std::string_view name;
    double ProfileFactors::*member;
    double lower, upper, least_start;
    bool host;
};
constexpr FactorDef kFactors[] = {
    {"compute", &ProfileFactors::compute, 0.3, 1.5, 0.0, false},
    {"communication", &ProfileFactors::communication, 0.3, 1.5, 0.0, false},
    {"overlap", &ProfileFactors::overlap, 0.0, 1.5, 0.0, false},
    {"moe", &ProfileFactors::moe, 0.3, 1.5, 0.0, false},
    {"moe_host_ms", &ProfileFactors::moe_host_ms, 0.0, 100.0, 10.0, true},
    {"moe_overlap_host", &ProfileFactors::moe_overlap_host, 0.3, 5.0, 0.0, true},
};

const FactorDef* factor_def(std::string_view name) {
    for (const FactorDef& f : kFactors)
        if (f.name == name) return &f;
    return nullptr;
}
}  // namespace

ProfileFit fit_profile(const std::vector<FitJob>& jobs, const std::vector<std::string>& factors) {
    if (jobs.empty()) throw InputError("runs", "", "no measured job to fit");
    std::vector<const FactorDef*> defs;
    for (const auto& f : factors) {
        defs.push_back(factor_def(f));
        if (!defs.back()) {
            std::vector<std::string> known;
            for (const FactorDef& d : kFactors) known.emplace_back(d.name);
            throw InputError("--factors", "\"" + f + "\"", "unknown factor; " + suggestion_text(f, known));
        }
    }
    // Host factors alone may be fitted on jobs of several GPU types whose hosts match (DGX H100
    // and DGX B200 both carry two 56-core Xeon Platinum, 8480C and 8570); each job keeps its own
    // GPU's other factors.
    const bool host_only = std::all_of(defs.begin(), defs.end(), [](const FactorDef* d) { return d->host; });
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
    for (const FactorDef* d : defs) {
        p.initial.push_back(std::max(base.*(d->member), d->least_start));
        p.lower.push_back(d->lower);
        p.upper.push_back(d->upper);
    }
    p.observations = jobs.size();
    for (const auto& j : jobs) p.measured.push_back(j.measured_step_time_s);
    p.predict = [&](const std::vector<double>& x, std::size_t i) {
        ProfileFactors f = contexts[i].profile().factors();
        for (std::size_t k = 0; k < defs.size(); ++k) f.*(defs[k]->member) = x[k];
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
