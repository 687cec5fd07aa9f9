// Validation once, into typed specs: `sextant check` refuses every invalid part of a scenario
// (reliability, stragglers, degraded links, calibration, the cluster) with exit 2 and the JSON
// path, and a command that changes the scenario after loading it (plan --gpus, simulate
// --calibration) is refused the same way.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli_run.hpp"
#include "core/error.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::test;

namespace {
nlohmann::json llama8b() {
    std::ifstream in(source_path("scenarios/llama3-8b-h100.json"));
    return nlohmann::json::parse(in);
}

// Writes `doc` to a file of its own and returns the path.
std::string scenario_file(const nlohmann::json& doc, const std::string& tag) {
    const std::string path = "/tmp/sextant_test_parts_" + std::to_string(::getpid()) + "_" + tag + ".json";
    std::ofstream(path) << doc.dump();
    return path;
}

// `check` on `doc`: exit 2, and the message names `path` and contains `rule`.
void check_refuses(const nlohmann::json& doc, const std::string& tag, const std::string& path, const std::string& rule) {
    const Output o = run_sextant("check " + scenario_file(doc, tag));
    INFO(o.out);
    CHECK(o.code == 2);
    CHECK(o.out.find(path) != std::string::npos);
    CHECK(o.out.find(rule) != std::string::npos);
}
}  // namespace

TEST_CASE("check refuses a misspelled key anywhere in /reliability") {
    auto doc = llama8b();
    doc["reliability"] = {{"chekpoint", {{"interval_s", 600}}}};
    check_refuses(doc, "rel_top", "/reliability/chekpoint", "did you mean 'checkpoint'");
    doc["reliability"] = {{"checkpoint", {{"intervl_s", 600}}}};
    check_refuses(doc, "rel_nested", "/reliability/checkpoint/intervl_s", "unknown key");
    doc["reliability"] = {{"failures", {{{"component", "gpu"}, {"rate", 1}}}}};
    check_refuses(doc, "rel_failure", "/reliability/failures/0/rate", "unknown key");
    doc["reliability"] = {{"maintenance", {{"distribution", "weibull"}}}};
    check_refuses(doc, "rel_maint", "/reliability/maintenance/distribution", "fixed|exponential");
    // The same scenario with the key spelled right is valid.
    doc["reliability"] = {{"checkpoint", {{"interval_s", 600}}}};
    CHECK(run_sextant("check " + scenario_file(doc, "rel_ok")).code == 0);
}

TEST_CASE("check refuses out-of-range stragglers and degraded links") {
    auto doc = llama8b();  // 64 GPUs, 8 nodes
    doc["stragglers"] = {{{"gpu", 64}, {"slowdown", 1.1}}};
    check_refuses(doc, "strag_gpu", "/stragglers/0/gpu", "must be below /cluster/gpus (64)");
    doc["stragglers"] = {{{"node", 8}, {"slowdown", 1.1}}};
    check_refuses(doc, "strag_node", "/stragglers/0/node", "must be below the node count (8)");
    doc["stragglers"] = {{{"gpu", 3}, {"slowdown", 0.5}}};
    check_refuses(doc, "strag_slow", "/stragglers/0/slowdown", "at least 1");
    doc["stragglers"] = {{{"gpu", 3}, {"slowdwn", 1.5}}};
    check_refuses(doc, "strag_key", "/stragglers/0/slowdwn", "did you mean 'slowdown'");
    doc.erase("stragglers");
    doc["degraded_links"] = {{{"node", 2}, {"bandwidth_factor", 1.5}}};
    check_refuses(doc, "link_factor", "/degraded_links/0/bandwidth_factor", "at most 1");
    doc["degraded_links"] = {{{"gpu", 1}, {"node", 2}, {"bandwidth_factor", 0.5}}};
    check_refuses(doc, "link_both", "/degraded_links/0", "exactly one of gpu or node");
}

TEST_CASE("check refuses an unknown calibration and an invalid inline profile") {
    auto doc = llama8b();
    doc["calibration"] = "H100-SXM5-80GBB";
    check_refuses(doc, "cal_name", "/calibration", "H100-SXM5-80GB");
    doc["calibration"] = "/nonexistent/profile.json";
    check_refuses(doc, "cal_file", "/calibration", "profile.json");
    doc["calibration"] = {{"schema", "sextant-calibration/1"}, {"gpu", "H100-SXM5-80GB"}, {"factor", {{"compute", 1.0}}}};
    check_refuses(doc, "cal_key", "/calibration/factor", "did you mean 'factors'");
}

TEST_CASE("check refuses 12 GPUs on 8-GPU nodes, and plan --gpus 12 is refused the same way") {
    auto doc = llama8b();
    doc["cluster"]["gpus"] = 12;
    doc.erase("layout");
    const std::string rule = "must be a multiple of gpus_per_node (8)";
    check_refuses(doc, "gpus12", "/cluster/gpus", rule);
    const Output plan = run_sextant("plan " + source_path("scenarios/llama3-8b-h100.json") + " --gpus 12");
    INFO(plan.out);
    CHECK(plan.code == 2);
    CHECK(plan.out.find("--gpus") != std::string::npos);
    CHECK(plan.out.find(rule) != std::string::npos);
    // A sweep that passes through such a count is refused too, before any search.
    const Output sweep = run_sextant("plan " + source_path("scenarios/llama3-8b-h100.json") + " --gpus 8,12,16");
    CHECK(sweep.code == 2);
    CHECK(sweep.out.find(rule) != std::string::npos);
}

TEST_CASE("a GPU count that leaves out a straggler's GPU is refused by plan, as check refuses the file") {
    auto doc = llama8b();
    doc["stragglers"] = {{{"gpu", 40}, {"slowdown", 1.2}}};
    doc["degraded_links"] = {{{"node", 6}, {"bandwidth_factor", 0.5}}};
    const std::string file = scenario_file(doc, "strag_plan");
    CHECK(run_sextant("check " + file).code == 0);
    const Output plan = run_sextant("plan " + file + " --gpus 32");
    INFO(plan.out);
    CHECK(plan.code == 2);
    CHECK(plan.out.find("--gpus") != std::string::npos);
    CHECK(plan.out.find("/stragglers") != std::string::npos);
    // The spec-level rule itself, for the degraded links (node 6 = GPUs 48..55).
    Scenario s = load_scenario(file);
    s.stragglers.clear();
    CHECK_THROWS_WITH_AS(with_gpus_and_batch(s, 48, 512, "--gpus"), doctest::Contains("/degraded_links"), InputError);
    CHECK(with_gpus_and_batch(s, 56, 256, "--gpus").cluster.gpus == 56);
    CHECK(with_gpus_and_batch(s, 56, 256, "--gpus").training.global_batch == 256);
}

TEST_CASE("simulate --calibration reads the profile before it runs") {
    const Output o = run_sextant("simulate " + source_path("scenarios/llama3-8b-h100.json") + " --calibration H100-SXM5-80GBB");
    INFO(o.out);
    CHECK(o.code == 2);
    CHECK(o.out.find("H100-SXM5-80GB") != std::string::npos);
}

TEST_CASE("a scenario's parts are typed once parsed: later stages read the specs") {
    auto doc = llama8b();
    doc["stragglers"] = {{{"node", 1}, {"slowdown", 1.25}}};
    doc["degraded_links"] = {{{"gpu", 5}, {"bandwidth_factor", 0.5}}};
    doc["reliability"] = {{"preset", "meta-rsc1"}, {"checkpoint", {{"interval_s", 900}}}};
    doc["calibration"] = "H100-SXM5-80GB";
    const Scenario s = parse_scenario(doc, data_dir());
    REQUIRE(s.stragglers.size() == 1);
    CHECK(s.stragglers[0].first_gpu == 8);  // node 1 of 8-GPU nodes: GPUs 8..15
    CHECK(s.stragglers[0].last_gpu == 15);
    CHECK(s.stragglers[0].slowdown == 1.25);
    REQUIRE(s.degraded_links.size() == 1);
    CHECK(s.degraded_links[0].gpu == 5);
    CHECK(s.reliability.preset == "meta-rsc1");
    CHECK(s.reliability.checkpoint.interval_s == 900);
    CHECK(s.calibration.value("gpu", "") == "H100-SXM5-80GB");  // the preset's document, read
}
