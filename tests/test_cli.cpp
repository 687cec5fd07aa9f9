// The command line as a whole: --version, unknown commands, and --json on every command and flag
// combination (stdout is then one JSON document and nothing else).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli_run.hpp"
#include "core/table.hpp"
#include "validate/accuracy_context.hpp"

using sextant::test::run_sextant;
using sextant::test::source_path;

TEST_CASE("--version names the release and the git revision it was built from") {
    const auto o = run_sextant("--version");
    CHECK(o.code == 0);
    // In a checkout: "sextant 0.1.0 (git 0123456789ab)" (with -dirty for local changes);
    // elsewhere the revision is said to be unknown.
    CHECK(std::regex_search(o.out, std::regex(R"(^sextant \d+\.\d+\.\d+ \((git [0-9a-f]{7,}(-dirty)?|git revision unknown: .+)\)\n$)")));
}

TEST_CASE("an unknown command names the valid ones and exits 2") {
    auto o = run_sextant("simulat " + source_path("scenarios/llama3-8b-h100.json"));
    CHECK(o.code == 2);
    CHECK(o.out.find("\"simulat\": unknown command") != std::string::npos);
    CHECK(o.out.find("memory, collective, simulate, validate, plan, calibrate, whatif") != std::string::npos);
    CHECK(o.out.find("did you mean 'simulate'?") != std::string::npos);
    o = run_sextant("frobnicate");
    CHECK(o.code == 2);
    CHECK(o.out.find("the commands of sextant are schema, presets, check") != std::string::npos);
    o = run_sextant("whatif chekpoint " + source_path("scenarios/llama3-8b-h100.json"));
    CHECK(o.code == 2);
    CHECK(o.out.find("sextant whatif = \"chekpoint\": unknown command; the commands of sextant whatif are checkpoint, spares") !=
          std::string::npos);
    o = run_sextant("calibrate fitt");
    CHECK(o.code == 2);
    CHECK(o.out.find("did you mean 'fit'?") != std::string::npos);
    // An option's value is not a command word.
    o = run_sextant("collective --op all_gather --ranks 8 --min 1M --max 2M --json", false);
    CHECK(o.code == 0);
}

TEST_CASE("calibrate fit: MoE host factors fit across GPU types, but a profile written with --out is one GPU's") {
    const std::string runs = source_path("calibration/fit/dgx-nemo-2025-moe-host.json");  // DGX B200 and DGX H100 runs
    auto o = run_sextant("calibrate fit --runs " + runs + " --factors moe_host_ms,moe_overlap_host --json", false);
    CHECK(o.code == 0);
    CHECK(nlohmann::json::accept(o.out));
    const std::string tmp = "/tmp/sextant_test_cli_hostfit_" + std::to_string(::getpid()) + ".json";
    o = run_sextant("calibrate fit --runs " + runs + " --factors moe_host_ms,moe_overlap_host --out " + tmp);
    CHECK(o.code == 2);
    CHECK(o.out.find("--out") != std::string::npos);
    CHECK(o.out.find("different GPU types") != std::string::npos);
    std::remove(tmp.c_str());
    // A GPU's own factors are not fitted across GPU types.
    o = run_sextant("calibrate fit --runs " + runs + " --factors compute,moe_host_ms");
    CHECK(o.code == 2);
    CHECK(o.out.find("mixes GPU types") != std::string::npos);
}

TEST_CASE("--json gives one JSON document on stdout for every command and flag combination") {
    const std::string s8 = source_path("scenarios/llama3-8b-h100.json"), s405 = source_path("scenarios/llama3-405b-h100.json");
    const std::string tmp = "/tmp/sextant_test_cli_" + std::to_string(::getpid());
    // One published run keeps validate --planner short.
    auto first_run_only = [&](const std::string& from, const std::string& to) {
        std::ifstream in(source_path(from));
        nlohmann::json doc = nlohmann::json::parse(in);
        doc["runs"] = nlohmann::json::array({doc["runs"][0]});
        std::ofstream(to) << doc.dump();
    };
    first_run_only("tests/validation/published-runs.json", tmp + ".runs.json");
    const std::vector<std::string> commands = {
        "schema --json",
        "presets --json",
        "check " + s8 + " --json",
        "memory " + s405 + " --json",
        "collective --ranks 16 --span rail --min 1K --max 1M --json",
        "collective --op all_to_all --ranks 64 --concurrent-groups 2 --min 1M --max 4M --json",
        "simulate " + s405 + " --json",
        "simulate " + s8 + " --accuracy --json",
        "simulate " + s405 + " --trace " + tmp + ".trace.json --json",
        "validate " + source_path("tests/validation/llama3-405b-h100.json") + " --json",
        "validate --planner " + tmp + ".runs.json --json",
        "plan " + s8 + " --json",
        "plan " + s8 + " --accuracy --gpus 8..16 --json",
        "plan " + s8 + " --search-all --top 3 --gpus 32..64 --json",
        "plan " + s8 + " --objective tokens_per_s --any-framework --json",
        "calibrate fit --runs " + source_path("calibration/fit/h100-megatron-core-2024.json") + " --factors compute --out " + tmp +
            ".profile.json --json",
        "whatif checkpoint " + s8 + " --trials 10 --points 3 --csv " + tmp + ".csv --svg " + tmp + ".svg --json",
        "whatif spares " + s8 + " --trials 10 --values 0,1 --csv " + tmp + ".csv --json",
        "whatif async " + s8 + " --trials 10 --json",
        "whatif storage " + s8 + " --trials 10 --values 1,2 --json",
        "whatif failure-rate " + s8 + " --trials 10 --values 1,2 --days 10 --json",
        "simulate " + s8 + " --html " + tmp + ".html --trace " + tmp + ".trace.json --json",
        "plan " + s8 + " --gpus 32..64 --html " + tmp + ".html --json",
        "whatif checkpoint " + s8 + " --trials 10 --points 3 --html " + tmp + ".html --json",
        "whatif storage " + s8 + " --trials 10 --values 1,2 --html " + tmp + ".html --json",
        "collective --ranks 8 --min 1K --max 1M --html " + tmp + ".html --json",
        "report " + s8 + " -o " + tmp + ".html --trials 10 --json",
        "report " + s8 + " -o " + tmp + ".html --trials 10 --search-all --top 3 --json",
    };
    for (const auto& c : commands) {
        CAPTURE(c);
        const auto o = run_sextant(c, false);
        CHECK(o.code == 0);
        CHECK(nlohmann::json::accept(o.out));
    }
    for (const char* ext : {".trace.json", ".profile.json", ".csv", ".svg", ".runs.json", ".html"}) std::remove((tmp + ext).c_str());
}

TEST_CASE("check prints the ZeRO stage, and whose default it is where the layout names none, and simulate the stage it ran") {
    const std::string tmp = "/tmp/sextant_test_cli_zero_" + std::to_string(::getpid());
    nlohmann::json doc = {{"model", "llama3-8b"},
                          {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                          {"training", {{"seq_len", 4096}, {"global_batch", 8}, {"framework", "nemo-2025"}}},
                          {"layout", {{"tp", 1}, {"dp", 8}}}};
    auto check = [&](const nlohmann::json& scenario, const std::string& flags) {
        std::ofstream(tmp + ".json") << scenario.dump();
        return run_sextant("check " + tmp + ".json" + flags);
    };
    auto o = check(doc, "");
    CHECK(o.code == 0);
    CHECK(o.out.find("microbatch 1, ZeRO stage 1 (nemo-2025's default)") != std::string::npos);
    o = check(doc, " --json");
    CHECK(nlohmann::json::parse(o.out)["layout"]["zero_stage"] == 1);
    // simulate says the stage it ran in its heading and its JSON.
    o = run_sextant("simulate " + tmp + ".json");
    CHECK(o.out.find("microbatch 1, 1 microbatch, ZeRO 1, nemo-2025") != std::string::npos);
    o = run_sextant("simulate " + tmp + ".json --json");
    CHECK(nlohmann::json::parse(o.out)["zero_stage"] == 1);
    doc["training"].erase("framework");  // the default generation's, which shards nothing
    CHECK(check(doc, "").out.find("ZeRO stage 0 (megatron-core-2024's default)") != std::string::npos);
    doc["layout"]["zero_stage"] = 3;  // named: no attribution
    o = check(doc, "");
    CHECK(o.out.find("ZeRO stage 3\n") != std::string::npos);
    CHECK(o.out.find("default)") == std::string::npos);
    std::remove((tmp + ".json").c_str());
}

TEST_CASE("plan's dominant column is the largest cost besides compute with its share of the step") {
    // A name alone read as the bottleneck where it was milliseconds of a second's step; the share
    // is the JSON breakdown's item over the step time, to the printed tenth of a percent.
    const std::string s8 = source_path("scenarios/llama3-8b-h100.json");
    const auto text = run_sextant("plan " + s8 + " --top 1", false);
    const auto json = run_sextant("plan " + s8 + " --top 1 --json", false);
    REQUIRE(text.code == 0);
    REQUIRE(json.code == 0);
    const auto plan = nlohmann::json::parse(json.out)["plans"][0];
    std::string name;
    double most = 0;
    for (const auto& [n, v] : plan["breakdown"].items())
        if (n != "compute" && v.get<double>() > most) {
            most = v.get<double>();
            name = n;
        }
    REQUIRE(!name.empty());
    char expected[64];
    std::snprintf(expected, sizeof expected, "%s %.1f%%", name.c_str(), 100.0 * most / plan["step_time_s"].get<double>());
    CAPTURE(text.out);
    CHECK(text.out.find(std::string("  ") + expected + "\n") != std::string::npos);
}

TEST_CASE("simulate and plan --accuracy show the published runs like the scenario, and where it reaches beyond them") {
    // Qwen3-30B-A3B on 4,096 B300s: the published B300 MoE runs go to 256 GPUs.
    const std::string tmp = "/tmp/sextant_test_cli_accuracy_" + std::to_string(::getpid()) + ".json";
    std::ofstream(tmp) << nlohmann::json{
        {"model", "qwen3-30b-a3b"},
        {"cluster", {{"gpu", "B300-SXM-270GB"}, {"gpus", 4096}, {"gpus_per_node", 8}, {"nic_gbps_per_gpu", 800}}},
        {"training", {{"seq_len", 4096}, {"global_batch", 4096}, {"precision", "mxfp8"}, {"framework", "nemo-2026"}}},
        {"layout", {{"tp", 1}, {"pp", 1}, {"cp", 1}, {"ep", 8}}}}.dump();
    const auto json = nlohmann::json::parse(run_sextant("simulate " + tmp + " --accuracy --json", false).out);
    const auto& a = json["accuracy"];
    CHECK(a["gpu"] == "B300-SXM-270GB");
    CHECK(a["moe"] == true);
    REQUIRE(a["runs"].get<std::size_t>() > 0);
    CHECK(a["nearest"].size() == a["runs"].get<std::size_t>());
    for (const auto& r : a["nearest"]) CHECK(r["gpus"].get<std::int64_t>() <= a["largest_gpus"].get<std::int64_t>());
    const auto text = run_sextant("simulate " + tmp + " --accuracy", false);
    CAPTURE(text.out);
    CHECK(text.code == 0);
    CHECK(text.out.find("published B300-SXM-270GB MoE runs, nearest first") != std::string::npos);
    CHECK(text.out.find(a["nearest"][0]["id"].get<std::string>()) != std::string::npos);
    char expected[160];
    std::snprintf(expected, sizeof expected, "%zu run%s like this one, none a fit used: MAPE %.1f%%, mean error %+.1f%%", a["runs"].get<std::size_t>(),
                  a["runs"].get<std::size_t>() == 1 ? "" : "s", a["mape_pct"].get<double>(), a["mean_error_pct"].get<double>());
    CHECK(text.out.find(expected) != std::string::npos);
    std::snprintf(expected, sizeof expected, "4096 GPUs is more than any of them ran (%lld the most)",
                  static_cast<long long>(a["largest_gpus"].get<std::int64_t>()));
    CHECK(text.out.find(expected) != std::string::npos);
    // Some of B300's MoE runs ran MXFP8 under nemo-2026; none ran NVFP4, and it says so.
    CHECK(text.out.find("none of them ran") == std::string::npos);
    auto doc = nlohmann::json::parse(std::ifstream(tmp));
    doc["training"]["precision"] = "nvfp4";
    std::ofstream(tmp) << doc.dump();
    const auto nvfp4 = run_sextant("simulate " + tmp + " --accuracy", false).out;
    CHECK(nvfp4.find("none of them ran nvfp4") != std::string::npos);
    CHECK(nvfp4.find("none of them ran nemo-2026") == std::string::npos);
    doc["training"]["precision"] = "mxfp8";
    std::ofstream(tmp) << doc.dump();
    // Without the flag, simulate does no validation.
    CHECK(!nlohmann::json::parse(run_sextant("simulate " + tmp + " --json", false).out).contains("accuracy"));
    // A range needs kRangeRuns runs (B300's MoE runs are four): the note where the JSON has one.
    CHECK(a.contains("step_time_low_s") == (a["runs"].get<std::size_t>() >= sextant::kRangeRuns));
    CHECK((text.out.find("if this prediction errs as theirs did") != std::string::npos) == a.contains("step_time_low_s"));
    // Llama 3 8B on H100s: 42 dense runs, whose middle 80% of errors turn the prediction into a range.
    const auto h100 = nlohmann::json::parse(run_sextant("simulate " + source_path("scenarios/llama3-8b-h100.json") + " --accuracy --json", false).out);
    const auto& ha = h100["accuracy"];
    const double step = h100["step_time_s"].get<double>();
    CHECK(ha["step_time_low_s"].get<double>() == doctest::Approx(step / (1 + ha["error_p90_pct"].get<double>() / 100)));
    CHECK(ha["step_time_high_s"].get<double>() == doctest::Approx(step / (1 + ha["error_p10_pct"].get<double>() / 100)));
    const std::string range = sextant::format_seconds(ha["step_time_low_s"].get<double>()) + " to " +
                              sextant::format_seconds(ha["step_time_high_s"].get<double>()) + " (predicted " + sextant::format_seconds(step) + ")";
    CHECK(run_sextant("simulate " + source_path("scenarios/llama3-8b-h100.json") + " --accuracy", false).out.find(range) != std::string::npos);
    // plan shows the same for its winner: over a sweep of GPU counts, the winner's count.
    const auto plan = nlohmann::json::parse(run_sextant("plan " + tmp + " --accuracy --gpus 2048..4096 --top 1 --json", false).out);
    CHECK(plan["accuracy"]["runs"] == a["runs"]);
    CHECK(plan["accuracy"]["mape_pct"] == a["mape_pct"]);
    const auto plan_text = run_sextant("plan " + tmp + " --accuracy --gpus 2048..4096 --top 1", false);
    CHECK(plan_text.out.find("published B300-SXM-270GB MoE runs, nearest first") != std::string::npos);
    std::snprintf(expected, sizeof expected, "%lld GPUs is more than any of them ran",
                  static_cast<long long>(plan["plans"][0]["gpus"].get<std::int64_t>()));
    CHECK(plan_text.out.find(expected) != std::string::npos);
    std::remove(tmp.c_str());
}

TEST_CASE("simulate says when a step is host-bound, and not otherwise") {
    // Qwen3-30B-A3B on 64 GB200s without expert parallelism, NCCL's dispatcher, microbatch 1:
    // each dropless MoE layer's host time is above its GPU work. At microbatch 8 the GPU work
    // covers it; under HybridEP there is no host floor at all.
    const std::string tmp = "/tmp/sextant_test_cli_host_" + std::to_string(::getpid()) + ".json";
    nlohmann::json doc = {
        {"model", "qwen3-30b-a3b"},
        {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
        {"training", {{"seq_len", 4096}, {"global_batch", 512}, {"precision", "mxfp8"}, {"framework", "nemo-2026"}}},
        {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 1}, {"microbatch", 1}, {"zero_stage", 3}}}};
    auto simulate = [&](const nlohmann::json& d, const std::string& flags) {
        std::ofstream(tmp) << d.dump();
        return run_sextant("simulate " + tmp + flags, false);
    };
    const auto json = nlohmann::json::parse(simulate(doc, " --json").out);
    const double share = json["breakdown"]["host_s"].get<double>() / json["step_time_s"].get<double>();
    REQUIRE(share > 0.1);
    char expected[64];
    std::snprintf(expected, sizeof expected, "host-bound: %.0f%% of the step", 100.0 * share);
    CHECK(simulate(doc, "").out.find(expected) != std::string::npos);
    doc["layout"]["microbatch"] = 8;
    CHECK(simulate(doc, "").out.find("host-bound") == std::string::npos);
    doc["layout"]["microbatch"] = 1;
    doc["layout"]["moe_dispatcher"] = "hybridep";
    const auto hybrid = simulate(doc, " --json");
    CHECK(nlohmann::json::parse(hybrid.out)["breakdown"]["host_s"].get<double>() == 0.0);
    std::remove(tmp.c_str());
}
