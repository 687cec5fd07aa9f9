// `sextant calibrate fit`: fit a calibration profile's factors to step times measured on a live
// cluster, from published-runs/1 files or from Megatron-LM / torchtitan logs.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_file.hpp"
#include "fit/job_logs.hpp"
#include "fit/profile_fit.hpp"
#include "core/table.hpp"
#include "reliability/scenario_parts.hpp"
#include "spec/presets.hpp"

namespace sextant::cli {

namespace {
struct FitArgs {
    std::string runs;
    std::vector<std::string> jobs;  // SCENARIO:LOG[:megatron|torchtitan]
    std::string factors = "compute,communication,overlap";
    std::string gpu, framework, out;
    std::string calibration;  // the profile every job runs with, instead of each scenario's
    bool json = false;
    bool force = false;
};

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    std::string part;
    while (std::getline(in, part, sep))
        if (!part.empty()) parts.push_back(part);
    return parts;
}

FitJob job_from_log(const std::string& spec) {
    const auto parts = split(spec, ':');
    if (parts.size() < 2 || parts.size() > 3)
        throw InputError("--job", "\"" + spec + "\"", "must be SCENARIO:LOG or SCENARIO:LOG:megatron|torchtitan");
    const std::string format = parts.size() == 3 ? parts[2] : "megatron";
    if (format != "megatron" && format != "torchtitan")
        throw InputError("--job", "\"" + spec + "\"", "log format must be megatron or torchtitan");
    FitJob j;
    j.id = parts[1];
    j.scenario = load_checked_scenario(parts[0]);
    j.layout = resolve_layout(j.scenario, j.scenario.layout);
    const auto steps = parse_step_times(read_input_file(parts[1], "--job"), format == "megatron" ? LogFormat::Megatron : LogFormat::Torchtitan,
                                        j.scenario.training.tokens_per_step(), static_cast<double>(j.scenario.cluster.gpus));
    j.measured_step_time_s = steady_step_time(steps, parts[1]);
    return j;
}

// The profile the jobs ran with, as a document: the scenario's "calibration" part (an imported or
// measured profile) or else the GPU's published one, in its file's key order.
nlohmann::ordered_json base_profile(const FitJob& job) {
    const Scenario& s = job.scenario;
    if (!s.calibration.is_null()) return nlohmann::ordered_json::parse(s.calibration.dump());
    const std::string& gpu = s.cluster.gpu.name;
    load_preset("calibration", gpu, "--out");  // names the closest presets when there is none
    return nlohmann::ordered_json::parse(read_input_file(data_dir() / "calibration" / (gpu + ".json"), "--out"));
}

void write_profile(const FitArgs& a, const std::vector<FitJob>& jobs, const ProfileFit& fit) {
    const FitJob& any = jobs.front();
    for (const FitJob& j : jobs) {
        // MoE host factors may be fitted across GPU types (fit_profile); they then belong to the
        // runtime generation (moe_host_ms_per_layer, moe_overlap_host_factor), not to one GPU's profile.
        if (j.scenario.cluster.gpu.name != any.scenario.cluster.gpu.name)
            throw InputError("--out", a.out, "the jobs ran on different GPU types (" + any.id + ", " + j.id +
                                                 "): a profile is one GPU's; set host factors fitted across GPUs in the runtime generation");
        if (j.scenario.calibration != any.scenario.calibration)
            throw InputError("--out", a.out, "the jobs ran with different calibration profiles (" + any.id + ", " + j.id +
                                                 "): the fitted factors belong to one; fit them apart");
    }
    auto profile = base_profile(any);
    for (std::size_t k = 0; k < fit.factor_names.size(); ++k) profile["factors"][fit.factor_names[k]] = fit.result.factors[k];
    json ids = json::array();
    for (const auto& j : fit.jobs) ids.push_back(j.id);
    json inputs = a.jobs;
    if (!a.runs.empty()) inputs.insert(inputs.begin(), a.runs);
    // A factor this fit leaves alone keeps the record of the fit that set it (which may come
    // from the preset the profile starts from).
    auto& provenance = profile["provenance"];
    const json resolved = resolve_inherited(json::parse(profile.dump()), "calibration", "--out");
    if (resolved.contains("provenance") && resolved["provenance"].contains("fit")) {
        const json& earlier = resolved["provenance"]["fit"];
        bool kept = false;
        for (const auto& name : split(earlier.value("factors", ""), ','))
            kept = kept || std::find(fit.factor_names.begin(), fit.factor_names.end(), name) == fit.factor_names.end();
        if (kept) {
            auto fits = nlohmann::ordered_json::array();
            fits.push_back(nlohmann::ordered_json::parse(earlier.dump()));
            if (resolved["provenance"].contains("earlier_fits"))
                for (const json& f : resolved["provenance"]["earlier_fits"]) fits.push_back(nlohmann::ordered_json::parse(f.dump()));
            provenance["earlier_fits"] = fits;
        }
    }
    if (provenance.contains("summary") && provenance["summary"].is_string())
        provenance["summary"] = provenance["summary"].get<std::string>() + "; factors " + a.factors + " fitted by sextant calibrate fit to " +
                                std::to_string(fit.jobs.size()) + " jobs";
    provenance["fit"] = {{"framework", any.scenario.training.framework}, {"inputs", inputs}, {"factors", a.factors}, {"jobs", ids},
                         {"rms_error_before_pct", fit.result.rms_error_before_pct},
                         {"rms_error_after_pct", fit.result.rms_error_after_pct},
                         {"leave_one_out_pct", fit.result.leave_one_out_pct}};
    write_output_file(a.out, profile.dump(2) + "\n", "--out");
}

void run(const FitArgs& a) {
    if (!a.out.empty()) refuse_existing_unless_forced(a.out, "--out", a.force);
    std::vector<FitJob> jobs;
    if (!a.runs.empty())
        for (auto& j : jobs_from_published_runs(a.runs))
            if ((a.gpu.empty() || j.scenario.cluster.gpu.name == a.gpu) &&
                (a.framework.empty() || j.scenario.training.framework == a.framework))
                jobs.push_back(std::move(j));
    for (const auto& spec : a.jobs) jobs.push_back(job_from_log(spec));
    if (!a.calibration.empty())
        for (auto& j : jobs) {
            set_scenario_part(j.scenario, "calibration", calibration_part(a.calibration));
            check_scenario_parts(j.scenario);
        }
    if (jobs.empty()) throw InputError("--runs", a.runs, "no job matches (give --runs FILE or --job SCENARIO:LOG, and check --gpu/--framework)");
    const ProfileFit fit = fit_profile(jobs, split(a.factors, ','));
    if (!a.out.empty()) write_profile(a, jobs, fit);
    if (a.json) {
        json doc;
        for (std::size_t k = 0; k < fit.factor_names.size(); ++k) doc["factors"][fit.factor_names[k]] = fit.result.factors[k];
        doc["rms_error_before_pct"] = fit.result.rms_error_before_pct;
        doc["rms_error_after_pct"] = fit.result.rms_error_after_pct;
        doc["leave_one_out_pct"] = fit.result.leave_one_out_pct;
        doc["jobs"] = json::array();
        for (const auto& j : fit.jobs)
            doc["jobs"].push_back({{"id", j.id}, {"measured_step_time_s", j.measured}, {"before_s", j.before}, {"after_s", j.after}});
        std::cout << doc.dump(2) << "\n";
        return;
    }
    TextTable t({"job", "measured", "before", "after"});
    for (const auto& j : fit.jobs)
        t.add_row({j.id, format_seconds(j.measured), fmt::format("{} ({:+.1f}%)", format_seconds(j.before), 100 * (j.before / j.measured - 1)),
                   fmt::format("{} ({:+.1f}%)", format_seconds(j.after), 100 * (j.after / j.measured - 1))});
    std::cout << t.render() << "\n";
    for (std::size_t k = 0; k < fit.factor_names.size(); ++k)
        std::cout << fmt::format("{:<14} {:.3f}\n", fit.factor_names[k], fit.result.factors[k]);
    std::cout << fmt::format("\nRMS error {:.1f}% before, {:.1f}% after; leave-one-out {:.1f}% ({} jobs, {} factors)\n",
                             fit.result.rms_error_before_pct, fit.result.rms_error_after_pct, fit.result.leave_one_out_pct,
                             fit.jobs.size(), fit.factor_names.size());
    if (!a.out.empty()) std::cout << "fitted profile written to " << a.out << "\n";
}
}  // namespace

void add_calibrate_command(CLI::App& app) {
    static FitArgs args;
    auto* calibrate = app.add_subcommand("calibrate", "Build, inspect and fit calibration profiles");
    calibrate->require_subcommand(1);
    auto* fit = calibrate->add_subcommand("fit", "Fit compute, communication and overlap factors to measured step times");
    fit->add_option("--runs", args.runs, "a published-runs/1 file of measured jobs");
    fit->add_option("--job", args.jobs, "SCENARIO:LOG[:megatron|torchtitan], repeatable");
    fit->add_option("--factors", args.factors, "factors to fit, comma separated")->capture_default_str();
    fit->add_option("--gpu", args.gpu, "only jobs on this GPU type");
    fit->add_option("--framework", args.framework, "only jobs of this framework generation");
    fit->add_option("--calibration", args.calibration, "the profile the jobs ran on, instead of each scenario's (calibration/ preset or file)");
    fit->add_option("--out", args.out, "write the fitted profile here");
    fit->add_flag("--force", args.force, "replace --out when it exists");
    fit->add_flag("--json", args.json, "one JSON document");
    fit->callback([] { run(args); });
    add_calibrate_import_command(*calibrate);
    add_calibrate_show_command(*calibrate);
}

}  // namespace sextant::cli
