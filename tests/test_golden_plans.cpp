// Speed work must not change answers: the top plans of every preset scenario, searched over every
// knob the scenario's framework offers, against tests/data/golden-plans.json, which was written by
// the code before the speed work of issue 18 (routing by symmetry, lock-free caches, dense
// simulator indices). Regenerate only for a deliberate change of the cost models:
// SEXTANT_WRITE_GOLDEN=1 ./build/tests/sextant_tests -tc='*golden*'.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
const std::filesystem::path kGolden = std::filesystem::path(SEXTANT_SOURCE_DIR) / "tests" / "data" / "golden-plans.json";

// The scenario's layout cleared (`plan --search-all`), the top five distinct plans.
nlohmann::json top_plans(const std::filesystem::path& file, unsigned threads) {
    Scenario s = load_scenario(file);
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.top = 5;
    o.threads = threads;
    Planner planner(s, o, make_step_evaluator);
    const std::vector<Plan> plans = planner.distinct(planner.finish(planner.screen({0, 1})));
    nlohmann::json out = {{"scenario", file.stem().string()}, {"candidates", planner.candidate_count()}, {"plans", nlohmann::json::array()}};
    for (std::size_t i = 0; i < std::min<std::size_t>(o.top, plans.size()); ++i) {
        const Plan& p = plans[i];
        out["plans"].push_back({{"layout", layout_label(p.layout)},
                                {"screened_step_time_s", p.screened.step_time_s},
                                {"step_time_s", p.simulated.step_time_s},
                                {"mfu", p.simulated.mfu},
                                {"peak_memory_bytes", p.simulated.peak_memory_bytes}});
    }
    return out;
}

std::vector<std::filesystem::path> preset_scenarios() {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(SEXTANT_SOURCE_DIR) / "scenarios"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

// Summation orders may move the last bits of a time; anything beyond 1e-9 relative is a change.
void check_close(const nlohmann::json& got, const nlohmann::json& want, const char* key) {
    const double a = got.at(key).get<double>(), b = want.at(key).get<double>();
    CHECK_MESSAGE(std::abs(a - b) <= 1e-9 * std::abs(b), key, ": ", a, " vs golden ", b);
}
}  // namespace

TEST_CASE("the top plans of every preset scenario match the golden file") {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& file : preset_scenarios()) all.push_back(top_plans(file, 2));
    if (std::getenv("SEXTANT_WRITE_GOLDEN")) {
        std::ofstream(kGolden) << all.dump(1) << '\n';
        MESSAGE("wrote ", kGolden.string());
        return;
    }
    std::ifstream in(kGolden);
    REQUIRE_MESSAGE(in.good(), "missing ", kGolden.string());
    const nlohmann::json golden = nlohmann::json::parse(in);
    REQUIRE(golden.size() == all.size());
    for (std::size_t s = 0; s < all.size(); ++s) {
        const auto &got = all[s], &want = golden[s];
        INFO("scenario ", want.at("scenario").get<std::string>());
        CHECK(got.at("scenario") == want.at("scenario"));
        CHECK(got.at("candidates") == want.at("candidates"));
        REQUIRE(got.at("plans").size() == want.at("plans").size());
        for (std::size_t i = 0; i < want.at("plans").size(); ++i) {
            const auto &g = got["plans"][i], &w = want["plans"][i];
            INFO("plan #", i + 1);
            CHECK(g.at("layout") == w.at("layout"));
            for (const char* key : {"screened_step_time_s", "step_time_s", "mfu", "peak_memory_bytes"}) check_close(g, w, key);
        }
    }
}

TEST_CASE("plans are byte-identical for one and two threads") {
    const auto file = std::filesystem::path(SEXTANT_SOURCE_DIR) / "scenarios" / "llama3-8b-h100.json";
    CHECK(top_plans(file, 1).dump() == top_plans(file, 2).dump());
}
