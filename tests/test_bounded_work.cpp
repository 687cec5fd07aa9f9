// Never crash, never hang, never run out of memory (issue 20): each input found by fuzzing or by
// trying absurd sizes is refused up front with exit code 2, a message naming the field or flag,
// and, for work beyond this machine class, the limit and the flag that raises it. Timings of
// these refusals are in bench/bounded_work.sh; here only the answers are held.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_run.hpp"
#include "core/error.hpp"
#include "core/flag_values.hpp"
#include "core/work_limits.hpp"
#include "spec/presets.hpp"

using namespace sextant;
using sextant::test::run_sextant;
using sextant::test::source_path;

namespace {

namespace fs = std::filesystem;

// A scratch folder per test binary run.
fs::path scratch() {
    static const fs::path dir = [] {
        fs::path d = fs::temp_directory_path() / ("sextant-bounded-" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

std::string write_file(const std::string& name, const std::string& text) {
    const fs::path p = scratch() / name;
    std::ofstream(p) << text;
    return p.string();
}

// The llama3-8b scenario with `patch` merged over it (RFC 7386), written to a file.
std::string scenario_with(const std::string& name, const nlohmann::json& patch) {
    nlohmann::json doc = load_json_file(source_path("scenarios/llama3-8b-h100.json"), "");
    doc.merge_patch(patch);
    return write_file(name, doc.dump());
}

// An input error (exit 2) whose message holds every one of `words`.
void refused(const std::string& args, std::initializer_list<const char*> words) {
    const auto r = run_sextant(args);
    INFO(args);
    INFO(r.out);
    CHECK(r.code == 2);
    for (const char* w : words) CHECK(r.out.find(w) != std::string::npos);
}

// Refused for work: the limit is named with the flag that raises it.
void refused_for_work(const std::string& args, const char* where) { refused(args, {where, "runs at most", "--work-limit"}); }

}  // namespace

TEST_CASE("JSON no double can hold, and nesting past the stated depth, are input errors") {
    refused("check " + write_file("overflow.json", "[1e400]"), {"beyond the range of a double", "1e400"});
    const std::string in_field = write_file("overflow-in-field.json", R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100-superpod", "gpus": 1e999}})");
    refused("check " + in_field, {"beyond the range of a double"});
    refused("check " + write_file("deep.json", std::string(100000, '[') + std::string(100000, ']')), {"more than 64 levels deep"});
    static_assert(kMaxJsonDepth == 64, "the README states the depth");
    // Inside a field whose error message prints the value: refused before it is parsed.
    std::string deep_recompute = R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100-superpod", "gpus": 8}, "layout": {"recompute": )";
    deep_recompute += std::string(5000, '[') + std::string(5000, ']') + "}}";
    refused("check " + write_file("deep-recompute.json", deep_recompute), {"levels deep"});
    // Brackets inside strings are text, not nesting.
    const json ok = parse_json_text(R"({"a": ")" + std::string(1000, '[') + R"("})", "", "x");
    CHECK(ok["a"].get<std::string>().size() == 1000);
    CHECK_THROWS_AS(parse_json_text(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']'), "", "x"), InputError);
    CHECK_NOTHROW(parse_json_text(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "", "x"));
}

TEST_CASE("files that are not regular, or beyond the input limit, are refused before they are read") {
    refused("check " + scenario_with("dev-zero.json", {{"model", "/dev/zero"}}), {"/model", "/dev/zero", "not a regular file"});
    refused("check " + scenario_with("a-dir.json", {{"model", scratch().string() + "/"}}), {"/model"});
    refused("check /dev/zero", {"not a regular file"});
    CHECK(work_limit(Work::InputBytes) >= 32.0 * 1024 * 1024);  // the largest shipped input is 2 MB
}

TEST_CASE("sweeps and sizes cannot overflow") {
    // Doubling stops at HI: 1..2^63-1 is the 63 powers of two, not an overflow.
    const auto powers = parse_count_sweep("1..9223372036854775807", "--gpus");
    REQUIRE(powers.size() == 63);
    CHECK(powers.back() == std::int64_t{1} << 62);
    CHECK(parse_count_sweep("4611686018427387905..9223372036854775807", "--global-batch").size() == 1);
    CHECK(parse_count_sweep("8..64", "--gpus") == std::vector<std::int64_t>{8, 16, 32, 64});
    CHECK(parse_count_sweep("8..63", "--gpus") == std::vector<std::int64_t>{8, 16, 32});
    for (const char* bad : {"inf", "nan", "-inf", "1e308G", "1e-400", "0", "-1", "8X", ""}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_byte_size(bad, "--max"), InputError);
    }
    CHECK(parse_byte_size("8G", "--max") == 8.0 * 1024 * 1024 * 1024);

    const std::string scenario = source_path("scenarios/llama3-8b-h100.json");
    refused_for_work("plan " + scenario + " --gpus 1..9223372036854775807", "--gpus");
    refused("plan " + scenario + " --global-batch 4611686018427387905..9223372036854775807", {"--global-batch", "4611686018427387905"});
    refused("plan " + scenario + " --global-batch 4611686018427387905..9223372036854775807 --gpus 8..16777216", {"--gpus"});
    refused_for_work("plan " + scenario + " --global-batch 4611686018427387904", "--global-batch");
    refused("check " + scenario_with("stage-overflow.json",
                                     nlohmann::json::parse(R"({"layout": {"tp": 2, "pp": 2, "dp": 16,
                                        "stage_layers": [9223372036854775807, 9223372036854775807]}})")),
            {"/layout/stage_layers/0", "exceeds the model's layers"});
}

TEST_CASE("non-finite and absurd flag values are input errors") {
    refused("collective --max inf", {"--max", "finite"});
    refused("collective --min nan", {"--min", "finite"});
    refused("collective --max 1e400", {"--max"});
    refused_for_work("collective --gpus 16777216 --ranks 16777216 --span cluster", "--cluster/gpus");
    refused_for_work("collective --ranks 16777216", "--ranks");
    refused("plan " + source_path("scenarios/llama3-8b-h100.json") + " --memory-margin nan", {"--memory-margin"});
    const std::string scenario = source_path("scenarios/llama3-8b-h100.json");
    refused("whatif checkpoint " + scenario + " --days inf", {"--days"});
    refused("whatif checkpoint " + scenario + " --days nan", {"--days"});
    refused("whatif checkpoint " + scenario + " --train-tokens 1e400", {"--train-tokens"});
    refused("simulate " + scenario + " --work-limit 0.5", {"--work-limit"});
    refused("simulate " + scenario + " --work-limit nan", {"--work-limit"});
}

TEST_CASE("work beyond the machine class is refused with its limit and the flag that raises it") {
    // 2^24 GPUs: the cluster graph and routes alone are gigabytes.
    const std::string huge = scenario_with("huge.json", nlohmann::json::parse(R"({"cluster": {"gpus": 16777216},
        "layout": {"tp": 8, "pp": 1, "dp": 2097152, "cp": 1}, "training": {"global_batch": 2097152}})"));
    refused_for_work("simulate " + huge, "/cluster/gpus");
    refused_for_work("plan " + huge, "/cluster/gpus");
    refused_for_work("plan " + source_path("scenarios/llama3-8b-h100.json") + " --gpus 8..16777216 --global-batch 1..1073741824",
                     "--gpus");
    // 65,536 microbatches simulate (0.4 million tasks), but their trace would be gigabytes.
    const std::string many = scenario_with("many-microbatches.json", nlohmann::json::parse(R"({"cluster": {"gpus": 8},
        "layout": {"tp": 8, "pp": 1, "dp": 1, "cp": 1, "microbatch": 1}, "training": {"global_batch": 65536}})"));
    const std::string trace = (scratch() / "many.trace.json").string();
    refused_for_work("simulate " + many + " --trace " + trace, "--trace");
    CHECK_FALSE(fs::exists(trace));
    // Monte Carlo trials x intervals x events per run.
    const std::string scenario = source_path("scenarios/llama3-405b-h100.json");
    refused_for_work("whatif checkpoint " + scenario + " --trials 100000000", "--trials");
    refused_for_work("whatif checkpoint " + scenario + " --days 3650", "--trials");
    refused_for_work("whatif failure-rate " + scenario + " --trials 100000000", "--trials");
    // The flag raises every limit: the same trace request then passes the trace check (and is
    // stopped by nothing else before simulating; not run here).
    CHECK(work_limit(Work::TraceBytes) * 10 > 6.0 * 65536 * 4096);
}

TEST_CASE("check and every command refuse an invalid part of a scenario, and plan refuses what check would") {
    const auto check_and_simulate = [](const std::string& file, std::initializer_list<const char*> words) {
        refused("check " + file, words);
        refused("simulate " + file, words);
        refused("memory " + file, words);
    };
    check_and_simulate(scenario_with("misspelled-reliability.json", nlohmann::json::parse(R"({"reliability": {"trails": 10}})")),
                       {"/reliability/trails"});
    check_and_simulate(scenario_with("bad-straggler.json", nlohmann::json::parse(R"({"stragglers": [{"gpu": 0, "slowdown": 1000}]})")),
                       {"/stragglers/0/slowdown"});
    check_and_simulate(scenario_with("far-straggler.json", nlohmann::json::parse(R"({"stragglers": [{"node": 8, "slowdown": 1.1}]})")),
                       {"/stragglers/0/node"});
    check_and_simulate(scenario_with("bad-link.json", nlohmann::json::parse(R"({"degraded_links": [{"gpu": 0, "bandwidth_factor": 2}]})")),
                       {"/degraded_links/0/bandwidth_factor"});
    check_and_simulate(scenario_with("unknown-calibration.json", {{"calibration", "H100-SXM5-81GB"}}), {"/calibration"});
    // 12 GPUs are not whole 8-GPU nodes: check refuses the file, plan the sweep value.
    refused("check " + scenario_with("twelve.json", nlohmann::json::parse(R"({"cluster": {"gpus": 12}, "layout": {"dp": null, "tp": 2}})")),
            {"/cluster/gpus", "multiple of gpus_per_node"});
    refused("plan " + source_path("scenarios/llama3-8b-h100.json") + " --gpus 12", {"--gpus", "multiple of gpus_per_node"});
    refused("plan " + source_path("scenarios/llama3-8b-h100.json") + " --gpus 8,12", {"--gpus", "12"});
}

TEST_CASE("whatif and simulate warn when the layout does not fit, and refuse it with --require-fit") {
    // Llama 3 405B on one 8-GPU node, tp 8, no pipeline: far beyond 80 GB per GPU.
    const std::string big = write_file("no-fit.json", R"({"model": "llama3-405b", "cluster": {"preset": "dgx-h100-superpod", "gpus": 8},
        "training": {"seq_len": 8192, "global_batch": 16, "train_tokens": 1e9},
        "layout": {"tp": 8, "pp": 1, "dp": 1, "cp": 1, "microbatch": 1}, "reliability": {"trials": 10}})");
    for (const std::string command : {"simulate", "whatif async"}) {
        const auto warned = run_sextant(command + " " + big);
        INFO(warned.out);
        CHECK(warned.code == 0);
        CHECK(warned.out.find("warning: the layout does not fit in GPU memory") != std::string::npos);
        refused(command + " " + big + " --require-fit", {"--require-fit", "does not fit"});
    }
    // A layout that fits says nothing.
    const auto fits = run_sextant("simulate " + source_path("scenarios/llama3-8b-h100.json"));
    CHECK(fits.code == 0);
    CHECK(fits.out.find("warning") == std::string::npos);
}

TEST_CASE("writes that fail are input errors, and kept files are not replaced without --force") {
    const std::string scenario = source_path("scenarios/llama3-8b-h100.json");
    // stdout on a full device (stderr goes there too: only the exit code can be seen).
    CHECK(run_sextant("simulate " + scenario + " --json > /dev/full").code == 2);
    CHECK(run_sextant("simulate " + scenario + " > /dev/full").code == 2);
    refused("simulate " + scenario + " --trace /dev/full", {"--trace", "/dev/full"});
    refused("simulate " + scenario + " --html " + scratch().string(), {"--html", "is a directory"});
    // calibrate fit --out on an existing profile.
    const std::string existing = write_file("existing-profile.json", "{}\n");
    refused("calibrate fit --runs " + source_path("tests/validation/published-runs.json") + " --gpu H100-SXM5-80GB --out " + existing,
            {"--out", "exists; pass --force"});
    std::ifstream in(existing);
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(kept == "{}\n");
}

TEST_CASE("Ctrl-C stops long work cleanly: exit 130, no file written") {
    // A study of several seconds (20,000 trials of 14 runs of the 405B scenario), interrupted after a
    // second; the answer does not depend on when within those seconds the signal lands.
    const std::string csv = (scratch() / "interrupted.csv").string();
    const std::string command = std::string(SEXTANT_BINARY) + " whatif checkpoint " + source_path("scenarios/llama3-405b-h100.json") +
                                " --trials 20000 --csv " + csv;
    const std::string r = sextant::test::run_shell("sh -c '" + command + " & pid=$!; sleep 1; kill -INT $pid; wait $pid; echo exit=$?' 2>&1").out;
    INFO(r);
    CHECK(r.find("exit=130") != std::string::npos);
    CHECK(r.find("interrupted") != std::string::npos);
    CHECK_FALSE(fs::exists(csv));
}

TEST_CASE("a work limit names the amount, the limit and the flag, and --work-limit scales every limit") {
    const double gpus = work_limit(Work::ClusterGpus);
    CHECK(gpus == 1048576);
    CHECK_NOTHROW(check_work(Work::ClusterGpus, gpus, "/cluster/gpus", "1048576"));
    try {
        check_work(Work::ClusterGpus, gpus + 1, "/cluster/gpus", "1048577");
        FAIL("not refused");
    } catch (const InputError& e) {
        CHECK(e.path() == "/cluster/gpus");
        CHECK(e.rule().find("asks for 1048577 GPUs") != std::string::npos);
        CHECK(e.rule().find("at most 1048576") != std::string::npos);
        CHECK(e.rule().find("--work-limit") != std::string::npos);
    }
    // Non-finite amounts are never within a limit.
    CHECK_THROWS_AS(check_work(Work::SimTasks, std::numeric_limits<double>::infinity(), "x", "x"), InputError);
    CHECK_THROWS_AS(check_work(Work::SimTasks, std::numeric_limits<double>::quiet_NaN(), "x", "x"), InputError);
    set_work_limit_factor(4);
    CHECK(work_limit(Work::ClusterGpus) == 4 * gpus);
    CHECK_NOTHROW(check_work(Work::ClusterGpus, 2 * gpus, "/cluster/gpus", ""));
    set_work_limit_factor(1);
    // On the command line: the same scenario refused, then accepted with the flag.
    const std::string big = scenario_with("two-million.json", nlohmann::json::parse(R"({"cluster": {"gpus": 2097152},
        "layout": {"tp": 8, "pp": 1, "dp": 262144, "cp": 1}, "training": {"global_batch": 262144}})"));
    refused_for_work("check " + big, "/cluster/gpus");
    CHECK(run_sextant("check " + big + " --work-limit 2").code == 0);
}

TEST_CASE("numbers a double holds but no run can are refused where they are written, not overflowed") {
    // 1e308 s of stall never ended (a hang), 1e308 h of repair and of maintenance gap were internal
    // errors (exit 1), 1e308 GiB of CUDA context made the peak infinite.
    for (const auto& [patch, where] : {std::pair{R"({"reliability": {"checkpoint": {"stall_s": 1e308}}})", "/reliability/checkpoint/stall_s"},
                                       std::pair{R"({"reliability": {"checkpoint": {"write_s": 1e308}}})", "/reliability/checkpoint/write_s"},
                                       std::pair{R"({"reliability": {"restart": {"replacement_h": 1e308}}})", "/reliability/restart/replacement_h"},
                                       std::pair{R"({"reliability": {"maintenance": {"interval_h": 1e308}}})", "/reliability/maintenance/interval_h"},
                                       std::pair{R"({"memory": {"context_gib": 1e308}})", "/memory/context_gib"}}) {
        const std::string file = scenario_with("huge-number.json", nlohmann::json::parse(patch));
        refused("check " + file, {where});
        refused("whatif async " + file + " --trials 10", {where});
    }
}
