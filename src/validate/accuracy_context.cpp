#include "validate/accuracy_context.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/error.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"
#include "validate/published_runs.hpp"

namespace sextant {

namespace fs = std::filesystem;

namespace {
// The published-runs/1 files of a folder, in name order (a folder's other files are not runs).
std::vector<std::pair<fs::path, json>> run_files(const fs::path& dir) {
    std::vector<fs::path> paths;
    std::error_code ec;
    if (fs::is_directory(dir, ec))
        for (const auto& entry : fs::directory_iterator(dir, ec))
            if (entry.is_regular_file() && entry.path().extension() == ".json") paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    std::vector<std::pair<fs::path, json>> out;
    for (const auto& p : paths) {
        json doc = load_json_file(p, "");
        if (doc.is_object() && doc.value("schema", "") == "published-runs/1" && doc.contains("runs") && doc["runs"].is_array())
            out.emplace_back(p, std::move(doc));
    }
    return out;
}

// A run's id, or its JSON pointer where it has none (as validate names it).
std::string run_id(const json& run, const std::string& path) {
    return run.contains("id") && run["id"].is_string() ? run["id"].get<std::string>() : path;
}

// The ids of the fit sets' runs, from their files already read.
std::set<std::string> fitted_ids(const std::vector<std::pair<fs::path, json>>& fit_files) {
    std::set<std::string> ids;
    for (const auto& [file, doc] : fit_files)
        for (std::size_t i = 0; i < doc["runs"].size(); ++i)
            if (doc["runs"][i].is_object()) ids.insert(run_id(doc["runs"][i], "/runs/" + std::to_string(i)));
    return ids;
}

// A run that may be like the scenario: where it is, and what it ran on.
struct Candidate {
    const json* run;
    std::string path;
    fs::path base;
    std::string gpu;
    bool moe;
    SimilarRun facts;
};

std::vector<Candidate> candidates(const std::vector<std::pair<fs::path, json>>& files, const std::set<std::string>& fitted) {
    std::map<std::string, std::string> runtime_names;
    const auto runtime_name = [&](const std::string& framework) {
        auto it = runtime_names.find(framework);
        if (it == runtime_names.end()) it = runtime_names.emplace(framework, load_runtime_profile(framework, "/framework").name).first;
        return it->second;
    };
    std::vector<Candidate> out;
    for (const auto& [file, doc] : files)
        for (std::size_t i = 0; i < doc["runs"].size(); ++i) {
            const json& run = doc["runs"][i];
            const std::string path = "/runs/" + std::to_string(i);
            if (!run.is_object()) continue;
            const std::string id = run_id(run, path);
            if (fitted.count(id)) continue;
            // A run Sextant cannot read is not known to be like anything; `validate` names it.
            try {
                const Scenario s = run_scenario(run, path, file.parent_path());
                out.push_back({&run, path, file.parent_path(), s.cluster.gpu.name, s.model.is_moe(),
                               {id, runtime_name(s.training.framework), std::string(s.training.precision.name), s.cluster.gpus, 0}});
            } catch (const InputError&) {
            }
        }
    return out;
}

// The runs on the context's GPU type and of its kind; of its kind on every GPU where none is.
std::vector<const Candidate*> like_runs(const std::vector<Candidate>& all, AccuracyContext& c) {
    std::vector<const Candidate*> like;
    for (const auto& k : all)
        if (k.gpu == c.gpu && k.moe == c.moe) like.push_back(&k);
    if (like.empty()) {
        c.other_gpus = true;
        for (const auto& k : all)
            if (k.moe == c.moe) like.push_back(&k);
    }
    return like;
}

// Each run predicted afresh into c.runs; a run the model refuses counted in c.refused.
void predict_runs(const std::vector<const Candidate*>& like, AccuracyContext& c) {
    for (const Candidate* k : like) {
        try {
            SimilarRun r = k->facts;
            r.error_pct = validate_run(*k->run, k->path, k->base).error_pct;
            c.runs.push_back(std::move(r));
        } catch (const InputError&) {
            ++c.refused;
        }
    }
}

// What the runs say together: their MAPE, mean and worst error, largest GPU count, and with
// kRangeRuns or more the range of the measured step their errors give the prediction (a run that
// erred by e measured prediction / (1 + e)).
void summarise(AccuracyContext& c) {
    if (c.runs.empty()) return;
    std::vector<double> errors;
    for (const auto& r : c.runs) {
        errors.push_back(r.error_pct);
        c.mape_pct += std::fabs(r.error_pct);
        c.mean_error_pct += r.error_pct;
        c.largest_gpus = std::max(c.largest_gpus, r.gpus);
    }
    c.mape_pct /= static_cast<double>(c.runs.size());
    c.mean_error_pct /= static_cast<double>(c.runs.size());
    const auto worst = std::max_element(c.runs.begin(), c.runs.end(),
                                        [](const SimilarRun& a, const SimilarRun& b) { return std::fabs(a.error_pct) < std::fabs(b.error_pct); });
    c.worst_run = worst->id;
    c.worst_error_pct = worst->error_pct;
    if (c.runs.size() < kRangeRuns) return;
    c.has_range = true;
    c.error_p10_pct = quantile(errors, 0.1);
    c.error_p90_pct = quantile(errors, 0.9);
    c.step_time_low_s = c.predicted_step_time_s / (1 + c.error_p90_pct / 100);
    c.step_time_high_s = c.predicted_step_time_s / (1 + c.error_p10_pct / 100);
}

// Most alike first: the same software, then the same number format, then the nearest scale.
void order_by_likeness(AccuracyContext& c) {
    const auto likeness = [&](const SimilarRun& r) {
        return std::make_tuple(r.runtime != c.runtime, r.precision != c.precision,
                               std::fabs(std::log(static_cast<double>(r.gpus) / static_cast<double>(c.scenario_gpus))), r.id);
    };
    std::sort(c.runs.begin(), c.runs.end(), [&](const SimilarRun& a, const SimilarRun& b) { return likeness(a) < likeness(b); });
}
}  // namespace

double quantile(std::vector<double> values, double p) {
    std::sort(values.begin(), values.end());
    const double h = p * static_cast<double>(values.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(h));
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (h - static_cast<double>(below)) * (values[above] - values[below]);
}

AccuracyContext accuracy_context(const Scenario& scenario, double predicted_step_time_s, const fs::path& validation_dir,
                                 const fs::path& fit_dir) {
    const auto files = run_files(validation_dir);
    const std::vector<Candidate> all = candidates(files, fitted_ids(run_files(fit_dir)));

    AccuracyContext c;
    c.gpu = scenario.cluster.gpu.name;
    c.moe = scenario.model.is_moe();
    c.scenario_gpus = scenario.cluster.gpus;
    c.runtime = load_runtime_profile(scenario.training.framework, "/framework").name;
    c.precision = std::string(scenario.training.precision.name);
    c.own_calibration = !scenario.calibration.is_null();
    c.predicted_step_time_s = predicted_step_time_s;
    predict_runs(like_runs(all, c), c);
    summarise(c);
    order_by_likeness(c);
    return c;
}

AccuracyContext accuracy_context(const Scenario& scenario, double predicted_step_time_s) {
    return accuracy_context(scenario, predicted_step_time_s, data_dir() / "tests" / "validation", data_dir() / "calibration" / "fit");
}

}  // namespace sextant
