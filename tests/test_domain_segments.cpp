// A job's share of each NVLink domain: jobs larger than one NVL72 rack take equal whole-tray
// segments (SLURM's --segment, as Megatron-Bridge's launcher asks for it), and `validate` keeps
// the framework's rank order unless a run names another.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "cli_run.hpp"
#include "collective/group_shape.hpp"
#include "collective_fixtures.hpp"
#include "core/error.hpp"
#include "spec/presets.hpp"
#include "topology/cluster_graph.hpp"
#include "validate/published_runs.hpp"

using namespace sextant;
using namespace sextant::testing;

namespace {
// The largest divisor of `nodes` that is at most 18 (a rack's compute trays), in GPUs: the rule
// of Megatron-Bridge's scripts/performance/utils/executors.py, written out independently.
std::int64_t megatron_bridge_segment_gpus(std::int64_t gpus) {
    const std::int64_t nodes = gpus / 4;
    if (nodes <= 18) return 72;  // the job has a rack to itself
    for (std::int64_t s = 18; s > 0; --s)
        if (nodes % s == 0) return 4 * s;
    return 4;
}

std::string error_path(const json& cluster) {
    try {
        parse_cluster(cluster, "/cluster", load_gpu);
    } catch (const InputError& e) {
        return e.path();
    }
    return "";
}
// A run of the 2024-2026 file by id.
json published_run(const std::string& id) {
    const json all = load_json_file(data_dir() / "tests" / "validation" / "published-runs-2024-2026.json", "");
    for (const json& r : all["runs"])
        if (r["id"] == id) return r;
    return json();
}

// `validate` of one run, saved on its own in `dir`.
RunValidation validate_alone(const json& run, const std::filesystem::path& dir) {
    const auto file = dir / "run.json";
    std::ofstream(file) << json{{"schema", "published-runs/1"}, {"runs", json::array({run})}}.dump();
    const ValidationReport report = validate_runs(file);
    REQUIRE(report.failed == 0);
    return report.runs.front();
}
}  // namespace

TEST_CASE("a job larger than one NVL72 rack runs in equal whole-tray segments, a smaller one in one rack") {
    for (std::int64_t gpus : {8, 64, 72, 100, 128, 144, 256, 512, 576, 1024}) {
        CAPTURE(gpus);
        const ClusterSpec c = cluster("gb200-nvl72", gpus);
        CHECK(c.job_domain_gpus() == megatron_bridge_segment_gpus(gpus));
    }
    // 128 GB200s: two racks of 64, not 72 + 56.
    const ClusterGraph graph(cluster("gb200-nvl72", 128));
    CHECK(graph.domain_of(63) == 0);
    CHECK(graph.domain_of(64) == 1);
    CHECK(graph.domain_of(127) == 1);
    std::vector<std::uint32_t> route;
    graph.route(0, 63, route);
    CHECK(route.empty());  // NVLink inside the rack: no fabric link
    graph.route(63, 64, route);
    CHECK(!route.empty());
    // The second half of the job (an EP 64 group at TP 1) is one NVLink domain, where 72-GPU
    // packing would have put 8 of its ranks in the first rack.
    const GroupShape second = analyse_group(graph, group(range(64)), 0.9, true);
    CHECK(second.domains == 1);
    const GroupShape upper = analyse_group(graph, group([] {
                                               std::vector<std::int64_t> v;
                                               for (std::int64_t g = 64; g < 128; ++g) v.push_back(g);
                                               return v;
                                           }()),
                                           0.9, true);
    CHECK(upper.domains == 1);
    // Where the NVLink domain is the node there is nothing to segment.
    CHECK(cluster("dgx-h100-superpod", 256).job_domain_gpus() == 8);
}

TEST_CASE("a cluster may name its segment, which must fit in a domain and tile the job") {
    json c = load_preset("topologies", "gb200-nvl72", "/cluster");
    c["gpus"] = 128;
    c["segment_nodes"] = 8;
    const ClusterSpec eight = parse_cluster(c, "/cluster", load_gpu);
    CHECK(eight.job_domain_gpus() == 32);
    CHECK(ClusterGraph(eight).domain_of(32) == 1);
    c["segment_nodes"] = 19;  // 76 GPUs: more than a 72-GPU domain holds
    CHECK(error_path(c) == "/cluster/segment_nodes");
    c["segment_nodes"] = 12;  // 32 trays are not a whole number of 12-tray segments
    CHECK(error_path(c) == "/cluster/gpus");
    c["gpus"] = 48;  // within one rack a segment has nothing to tile
    CHECK(error_path(c).empty());
}

TEST_CASE("validate keeps the framework's rank order unless the run names one") {
    json run = published_run("mbridge_2602_llama31405b_dgxgb300_mxfp8_256gpu");
    REQUIRE(run.is_object());
    REQUIRE(!run["layout"].contains("rank_order"));
    const auto dir = std::filesystem::temp_directory_path() / ("sextant-rank-order-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto validate = [&](const json& r) { return validate_alone(r, dir); };
    const RunValidation open = validate(run);
    CHECK(open.chosen.rank_order == Layout{}.rank_order);  // Megatron's tp-cp-ep-dp-pp
    for (const std::string& knob : open.chosen_knobs) CHECK(!knob.starts_with("rank_order="));
    run["layout"]["rank_order"] = "tp-cp-ep-pp-dp";
    const RunValidation named = validate(run);
    CHECK(named.chosen.rank_order != Layout{}.rank_order);
    CHECK(named.predicted_step_time_s != open.predicted_step_time_s);  // the order reaches the price
    std::filesystem::remove_all(dir);
}

TEST_CASE("check says how a job spreads over NVLink domains, and a segment that breaks a rule exits 2 naming it") {
    const auto dir = std::filesystem::temp_directory_path() / ("sextant-segment-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    json scenario = {{"model", "llama3-70b"},
                     {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 128}}},
                     {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "bf16"}}},
                     {"layout", {{"tp", 1}, {"pp", 4}, {"dp", 32}, {"cp", 1}, {"microbatch", 1}}}};
    const auto file = (dir / "s.json").string();
    std::ofstream(file) << scenario.dump();
    const test::Output text = test::run_sextant("check " + file);
    CHECK(text.code == 0);
    CHECK(text.out.find("2 NVLink domains holding 64 each (segments of 16 nodes)") != std::string::npos);
    const test::Output doc = test::run_sextant("check " + file + " --json", false);
    REQUIRE(doc.code == 0);
    CHECK(json::parse(doc.out)["gpus_per_nvlink_domain"] == 64);
    scenario["cluster"]["segment_nodes"] = 20;
    std::ofstream(file) << scenario.dump();
    const test::Output bad = test::run_sextant("check " + file);
    CHECK(bad.code == 2);
    CHECK(bad.out.find("/cluster/segment_nodes") != std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("validate plans a run that leaves pp open over every pp, each split the framework's way, and reports the degrees it chose") {
    json run = published_run("mbridge_2511_llama31405b_dgxh100_fp8_1024gpu");
    REQUIRE(run.is_object());
    const auto dir = std::filesystem::temp_directory_path() / ("sextant-open-pp-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto validate = [&](const json& r) { return validate_alone(r, dir); };
    // Llama 3.1 405B at TP 8 with ZeRO-1: 16-bit weights and gradients alone are 405e9 x 4 B / 8
    // = 203 GB a GPU at PP 1, beyond the H100's 80 GB, so the choice must pipeline. Its 126
    // layers divide by no power of two above 2, so PP 4, 8 or 16 splits unevenly.
    run["layout"]["pp"] = nullptr;
    run["layout"]["dp"] = nullptr;
    run["layout"]["vp"] = nullptr;
    const RunValidation open = validate(run);
    CHECK(open.chosen.pp > 1);
    CHECK(open.chosen.tp * open.chosen.cp * open.chosen.pp * open.chosen.dp == 1024);
    CHECK(open.chosen.stage_layers == default_stage_split(126, open.chosen.pp));
    const auto named = [&](const std::string& knob) {
        return std::find(open.chosen_knobs.begin(), open.chosen_knobs.end(), knob) != open.chosen_knobs.end();
    };
    CHECK(named("pp=" + std::to_string(open.chosen.pp)));
    CHECK(named("dp=" + std::to_string(open.chosen.dp)));
    for (const std::string& knob : open.chosen_knobs) CHECK(!knob.starts_with("tp="));  // published
    // The open run prices its choice as the run that publishes it.
    run["layout"]["pp"] = open.chosen.pp;
    run["layout"]["dp"] = open.chosen.dp;
    run["layout"]["vp"] = open.chosen.vp;
    const RunValidation fixed = validate(run);
    CHECK(fixed.chosen.stage_layers == open.chosen.stage_layers);
    CHECK(fixed.predicted_step_time_s == doctest::Approx(open.predicted_step_time_s).epsilon(1e-12));
    std::filesystem::remove_all(dir);
}
