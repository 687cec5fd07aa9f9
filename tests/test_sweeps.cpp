// Planner quality on measured sweeps (src/validate/sweeps.hpp): Kendall's tau-b against its
// closed forms, and a sweep of published runs read, deduplicated and rated end to end.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "spec/presets.hpp"
#include "validate/sweeps.hpp"

using namespace sextant;

TEST_CASE("Kendall's tau-b: identical, reversed, one swap, and ties") {
    CHECK(kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}) == doctest::Approx(1.0));
    CHECK(kendall_tau_b({1, 2, 3, 4}, {4, 3, 2, 1}) == doctest::Approx(-1.0));
    // One discordant pair of three: (2 - 1) / 3.
    CHECK(kendall_tau_b({1, 2, 3}, {1, 3, 2}) == doctest::Approx(1.0 / 3.0));
    // x = 1,1,2 and y = 1,2,3: pairs (1,2) tied in x only, (1,3) and (2,3) concordant:
    // tau-b = 2 / sqrt((2 + 0) x (2 + 1)).
    CHECK(kendall_tau_b({1, 1, 2}, {1, 2, 3}) == doctest::Approx(2.0 / std::sqrt(6.0)));
    CHECK(kendall_tau_b({5, 5}, {1, 2}) == 0.0);
}

TEST_CASE("a measured sweep: expressible layouts rated, repeats and inexpressible runs skipped with the reason") {
    const json all = load_json_file(std::filesystem::path(SEXTANT_VALIDATION_DIR) / "published-runs-2024-2026.json", "");
    json doc = {{"schema", all["schema"]}, {"runs", json::array()}};
    for (const auto& run : all["runs"]) {
        const std::string id = run["id"];
        if (id.find("qwen330ba3b_dgxh100_fp8_16gpu") == std::string::npos) continue;
        // 25.11 and 26.02 set the EP all-to-all overlap in their recipes; without it 25.09 and
        // 25.11 are one layout at one batch, the case this test is about.
        json same = run;
        same["layout"].erase("ep_a2a_overlap");
        doc["runs"].push_back(same);
    }
    REQUIRE(doc["runs"].size() == 3);  // Megatron-Bridge 26.02, 25.11, 25.09 on 16 H100s
    for (int i = 0; i < 2; ++i) {
        json inexpressible = doc["runs"][i];
        inexpressible["id"] = "same_machine_in_mxfp8_" + std::to_string(i);
        inexpressible["precision"] = "mxfp8";
        doc["runs"].push_back(inexpressible);
    }
    const auto file = std::filesystem::temp_directory_path() / "sextant-test-sweep.json";
    std::ofstream(file) << doc.dump();
    const std::vector<Sweep> sweeps = measured_sweeps(file);
    std::filesystem::remove(file);
    REQUIRE(sweeps.size() == 2);  // fp8 (three runs) and mxfp8 (two runs): two sweeps
    const Sweep& s = sweeps.front();
    REQUIRE(s.rated());
    std::vector<double> measured, predicted;
    for (const auto& m : s.members) {
        CHECK(m.measured_tokens_per_s > 0);
        CHECK(m.predicted_tokens_per_s > 0);
        measured.push_back(m.measured_tokens_per_s);
        predicted.push_back(m.predicted_tokens_per_s);
    }
    CHECK(s.kendall_tau == doctest::Approx(kendall_tau_b(measured, predicted)));
    CHECK(s.planner_at_least_all);
    // 25.09 runs 25.11's layout and batch: one point of the sweep, not two.
    CHECK(s.members.size() == 2);
    REQUIRE(s.skipped.size() == 1);
    CHECK(s.skipped.front().find("another container") != std::string::npos);
    CHECK_FALSE(sweeps.back().rated());
    CHECK(sweeps.back().skipped.front().find("mxfp8") != std::string::npos);
}
