// How far to trust a prediction (validate/accuracy_context.hpp): the published runs like a
// scenario, held against `sextant validate`'s own summary of the same files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <filesystem>
#include <set>
#include <string>
#include <nlohmann/json.hpp>

#include "spec/presets.hpp"
#include "spec/scenario.hpp"
#include "validate/accuracy_context.hpp"
#include "validate/published_runs.hpp"
#include "validate/summary.hpp"

using namespace sextant;
namespace fs = std::filesystem;

namespace {
const fs::path kValidation = data_dir() / "tests" / "validation";
const fs::path kFits = data_dir() / "calibration" / "fit";

std::vector<std::string> json_files(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".json") out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

// `validate`'s summary of every shipped validation file, by "GPU / dense|moe", less the fit sets'
// runs: runs, summed absolute error, summed signed error and the largest absolute error.
struct Tally {
    std::size_t runs = 0;
    double abs_sum = 0, signed_sum = 0, worst = 0;
};
std::map<std::string, Tally> validate_tallies() {
    const auto excluded = run_ids(json_files(kFits));
    std::map<std::string, Tally> out;
    for (const auto& file : json_files(kValidation)) {
        const ValidationReport r = validate_runs(file);
        for (const auto& g : summarize(r, file, {GroupKey::Gpu, GroupKey::Moe}, excluded)) {
            Tally& t = out[g.group];
            t.runs += g.runs;
            t.abs_sum += g.mape_pct * static_cast<double>(g.runs);
            t.signed_sum += g.mean_error_pct * static_cast<double>(g.runs);
            t.worst = std::max(t.worst, g.max_abs_error_pct);
        }
    }
    return out;
}

Scenario scenario_on(const std::string& model, const std::string& gpu, std::int64_t gpus, const std::string& precision,
                     const std::string& framework) {
    // GB200 and GB300 come as 4-GPU trays of a 72-GPU NVLink domain, the others as 8-GPU nodes.
    const bool nvl72 = gpu.starts_with("GB");
    nlohmann::json cluster = {{"gpu", gpu}, {"gpus", gpus}, {"gpus_per_node", nvl72 ? 4 : 8}, {"nic_gbps_per_gpu", 400}};
    if (nvl72) cluster["nvlink_domain_gpus"] = 72;
    const nlohmann::json doc = {{"model", model},
                                {"cluster", cluster},
                                {"training", {{"seq_len", 8192}, {"global_batch", 1024}, {"precision", precision}, {"framework", framework}}}};
    return parse_scenario(doc, data_dir());
}
}  // namespace

TEST_CASE("the runs like a scenario are validate's runs of its GPU type and kind, less the fit sets, with validate's errors") {
    const auto tallies = validate_tallies();
    const auto fitted = run_ids(json_files(kFits));
    REQUIRE(!fitted.empty());
    for (const auto& [model, gpu, moe] : {std::tuple{"llama3-70b", "H100-SXM5-80GB", false}, std::tuple{"qwen3-30b-a3b", "GB200", true}}) {
        CAPTURE(gpu);
        const Scenario s = scenario_on(model, gpu, 64, "bf16", "nemo-2025");
        const AccuracyContext c = accuracy_context(s, 10.0, kValidation, kFits);
        const std::string group = std::string(gpu) + (moe ? " / moe" : " / dense");
        REQUIRE(tallies.count(group) == 1);
        const Tally& t = tallies.at(group);
        CHECK(!c.other_gpus);
        CHECK(c.moe == moe);
        CHECK(c.runs.size() == t.runs);
        CHECK(c.mape_pct == doctest::Approx(t.abs_sum / static_cast<double>(t.runs)).epsilon(1e-9));
        CHECK(c.mean_error_pct == doctest::Approx(t.signed_sum / static_cast<double>(t.runs)).epsilon(1e-9));
        CHECK(std::fabs(c.worst_error_pct) == doctest::Approx(t.worst).epsilon(1e-9));
        std::int64_t largest = 0;
        for (const auto& r : c.runs) {
            CHECK(fitted.count(r.id) == 0);  // a fit's run says nothing of the model's error
            largest = std::max(largest, r.gpus);
        }
        CHECK(c.largest_gpus == largest);
    }
}

TEST_CASE("the runs like a scenario come most alike first: its runtime generation, then its precision, then the nearest GPU count") {
    // Llama 3 70B in FP8 on 64 GB200s under NeMo 2026: GB200's dense runs span nemo-2025 (NeMo
    // 25.04 to Megatron-Bridge 25.11) and nemo-2026 (26.02), each in FP8, MXFP8 and more, at 8 to
    // 256 GPUs, so each of the three keys orders some of them.
    const Scenario s = scenario_on("llama3-70b", "GB200", 64, "fp8", "nemo-2026");
    const AccuracyContext c = accuracy_context(s, 10.0, kValidation, kFits);
    const auto key = [&](const SimilarRun& r) {
        return std::make_tuple(r.runtime != "nemo-2026", r.precision != "fp8", std::fabs(std::log(static_cast<double>(r.gpus) / 64.0)));
    };
    const auto has = [&](auto&& pred) { return std::any_of(c.runs.begin(), c.runs.end(), pred); };
    REQUIRE(has([](const SimilarRun& r) { return r.runtime == "nemo-2026" && r.precision != "fp8"; }));
    REQUIRE(has([](const SimilarRun& r) { return r.runtime != "nemo-2026" && r.precision == "fp8" && r.gpus == 64; }));
    for (std::size_t i = 1; i < c.runs.size(); ++i) {
        CAPTURE(c.runs[i].id);
        CHECK(!(key(c.runs[i]) < key(c.runs[i - 1])));
    }
    CHECK(c.runs.front().runtime == "nemo-2026");
    CHECK(c.runs.front().precision == "fp8");
    CHECK(c.runs.front().gpus == 64);
}

TEST_CASE("a GPU type no published run of the scenario's kind ran on is compared with that kind on every GPU, and says so") {
    // No published run in tests/validation/ ran on H800s.
    const Scenario s = scenario_on("llama3-8b", "H800-SXM5-80GB", 8, "bf16", "megatron-core-2024");
    const AccuracyContext c = accuracy_context(s, 10.0, kValidation, kFits);
    CHECK(c.other_gpus);
    std::size_t dense = 0;
    for (const auto& [group, t] : validate_tallies()) {
        CHECK(group.find("H800") == std::string::npos);
        if (group.ends_with(" / dense")) dense += t.runs;
    }
    CHECK(c.runs.size() == dense);
}

TEST_CASE("the step-time range: the prediction as the like runs' middle 80% of errors would have measured it") {
    CHECK(quantile({3, 1, 2}, 0.5) == 2);
    CHECK(quantile({1, 2, 3, 4, 5}, 0.1) == doctest::Approx(1.4));  // type 7: 1 + 0.4 x (2 - 1)
    CHECK(quantile({1, 2, 3, 4, 5}, 0.9) == doctest::Approx(4.6));
    CHECK(quantile({7}, 0.9) == 7);
    // H100 dense: 42 runs. A run that erred by e measured prediction / (1 + e), so the errors at
    // the 10th and 90th percentiles bound the range, and 80% of the runs' errors lie between them.
    const double predicted = 8.0;
    const AccuracyContext c = accuracy_context(scenario_on("llama3-70b", "H100-SXM5-80GB", 1024, "bf16", "megatron-core-2024"), predicted,
                                               kValidation, kFits);
    REQUIRE(c.runs.size() >= kRangeRuns);
    REQUIRE(c.has_range);
    CHECK(c.error_p10_pct < c.error_p90_pct);
    CHECK(c.step_time_low_s == doctest::Approx(predicted / (1 + c.error_p90_pct / 100)));
    CHECK(c.step_time_high_s == doctest::Approx(predicted / (1 + c.error_p10_pct / 100)));
    std::size_t inside = 0;
    for (const auto& r : c.runs) inside += r.error_pct >= c.error_p10_pct && r.error_pct <= c.error_p90_pct;
    const double n = static_cast<double>(c.runs.size());
    CHECK(static_cast<double>(inside) >= 0.8 * n - 2);
    CHECK(static_cast<double>(inside) <= 0.8 * n + 2);
    // Fewer than kRangeRuns runs give no range: B300's MoE runs are four.
    const AccuracyContext few = accuracy_context(scenario_on("qwen3-30b-a3b", "B300-SXM-270GB", 64, "mxfp8", "nemo-2026"), predicted,
                                                 kValidation, kFits);
    REQUIRE(few.runs.size() < kRangeRuns);
    CHECK(!few.has_range);
}
