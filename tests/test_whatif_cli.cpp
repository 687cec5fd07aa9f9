// `sextant whatif` end to end: the JSON contract, exit codes, and the closed forms it reports.
#include <doctest/doctest.h>

#include <initializer_list>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.hpp"
#include "reliability/interval_formulas.hpp"

namespace {
using sextant::test::Output;
Output run(const std::string& args) { return sextant::test::run_sextant(args); }

const std::string kScenario = std::string(SEXTANT_SOURCE_DIR) + "/scenarios/llama3-405b-h100.json";
}  // namespace

TEST_CASE("whatif checkpoint --json: the curve, the simulated optimum, Young and Daly") {
    const Output o = run("whatif checkpoint " + kScenario + " --trials 200 --points 7 --interval 2m..2h --json");
    REQUIRE(o.code == 0);
    const auto doc = nlohmann::json::parse(o.out);
    REQUIRE(doc["curve"].size() == 7);
    CHECK(doc["curve"][0]["interval_s"].get<double>() == doctest::Approx(120));
    CHECK(doc["curve"][6]["interval_s"].get<double>() == doctest::Approx(7200));
    for (const auto& p : doc["curve"]) {
        CHECK(p["ci_low"].get<double>() <= p["goodput"].get<double>());
        CHECK(p["goodput"].get<double>() <= p["ci_high"].get<double>());
        CHECK(p["goodput"].get<double>() < 1.0);
    }
    const double stall = doc["stall_s"], mtbf = doc["job_mtbf_s"];
    CHECK(doc["young_interval_s"].get<double>() == doctest::Approx(sextant::reliability::young_interval(stall, mtbf)));
    CHECK(doc["daly_interval_s"].get<double>() == doctest::Approx(sextant::reliability::daly_interval(stall, mtbf)));
    // No point of the curve beats the reported optimum.
    for (const auto& p : doc["curve"]) CHECK(p["goodput"].get<double>() <= doc["goodput_at_optimum"].get<double>());
    CHECK(doc["setup"]["step_time_source"].get<std::string>().find("sextant simulate") != std::string::npos);
}

TEST_CASE("whatif checkpoint is deterministic for a seed") {
    const std::string args = "whatif checkpoint " + kScenario + " --trials 50 --points 4 --seed 7 --json";
    CHECK(run(args).out == run(args).out);
}

TEST_CASE("whatif: bad flags and values exit 2 with the flag named") {
    Output o = run("whatif checkpoint " + kScenario + " --interval 5x..4h");
    CHECK(o.code == 2);
    CHECK(o.out.find("--interval") != std::string::npos);
    o = run("whatif checkpoint " + kScenario + " --interval 4h..5m");
    CHECK(o.code == 2);
    o = run("whatif checkpoint " + kScenario + " --no-such-flag");
    CHECK(o.code == 2);
    o = run("whatif spares " + kScenario + " --values 1,x");
    CHECK(o.code == 2);
    CHECK(o.out.find("--values") != std::string::npos);
    o = run("whatif checkpoint " + kScenario + " --points 1");
    CHECK(o.code == 2);
    o = run("whatif checkpoint " + kScenario + " --trials 0");
    CHECK(o.code == 2);
    CHECK(o.out.find("--trials") != std::string::npos);
    o = run("whatif async " + kScenario + " --seed -3");
    CHECK(o.code == 2);
    o = run("whatif storage " + kScenario + " --interval 0m");
    CHECK(o.code == 2);
    o = run("whatif checkpoint /no/such/file.json");
    CHECK(o.code == 2);
    o = run("whatif checkpoint " + kScenario + " --train-tokens 0");  // was taken as "not given"
    CHECK(o.code == 2);
    CHECK(o.out.find("--train-tokens: \"0\": must be a positive number of tokens") != std::string::npos);
    o = run("whatif checkpoint " + kScenario + " --days -2");
    CHECK(o.code == 2);
    CHECK(o.out.find("--days: \"-2\": must be a positive number of days") != std::string::npos);
    // Every failure of the run is drawn: an absurd budget is refused rather than run for hours.
    o = run("whatif checkpoint " + kScenario + " --days 4000");
    CHECK(o.code == 2);
    CHECK(o.out.find("--days = 4000: run-level studies go up to 3650 days") != std::string::npos);
    o = run("whatif checkpoint " + kScenario + " --train-tokens 1e18");
    CHECK(o.code == 2);
    CHECK(o.out.find("/reliability/train_tokens = 1e+18: is ") != std::string::npos);
}

TEST_CASE("whatif spares, async, storage, failure-rate answer in JSON") {
    for (const char* study : {"spares", "async", "storage", "failure-rate"}) {
        const Output o = run(std::string("whatif ") + study + " " + kScenario + " --trials 30 --json");
        CAPTURE(study);
        REQUIRE(o.code == 0);
        const auto doc = nlohmann::json::parse(o.out);
        CHECK(doc["study"] == study);
        CHECK(doc["points"].size() >= 2);
    }
    // More failures never help: goodput falls with the rate multiplier.
    const auto doc = nlohmann::json::parse(
        run("whatif failure-rate " + kScenario + " --trials 100 --values 0.5,1,2 --json").out);
    CHECK(doc["points"][0]["goodput"].get<double>() > doc["points"][1]["goodput"].get<double>());
    CHECK(doc["points"][1]["goodput"].get<double>() > doc["points"][2]["goodput"].get<double>());
}

TEST_CASE("whatif answers for every preset scenario") {
    // Mixtral's token budget is not published: the run length comes from --days.
    for (const char* name : {"llama3-8b-h100", "llama3-70b-h100", "gpt3-175b-a100", "deepseek-v3-h100"}) {
        CAPTURE(name);
        const Output o = run(std::string("whatif checkpoint ") + SEXTANT_SOURCE_DIR + "/scenarios/" + name +
                             ".json --trials 20 --points 4 --json");
        CHECK(o.code == 0);
    }
    const std::string mixtral = std::string(SEXTANT_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100.json";
    Output o = run("whatif checkpoint " + mixtral + " --trials 20 --points 4");
    CHECK(o.code == 2);
    CHECK(o.out.find("--days") != std::string::npos);
    o = run("whatif checkpoint " + mixtral + " --days 30 --trials 20 --points 4 --json");
    REQUIRE(o.code == 0);
    CHECK(nlohmann::json::parse(o.out)["setup"]["work_s"].get<double>() == doctest::Approx(30 * 86400.0));
}

TEST_CASE("whatif checkpoint writes the curve as CSV and the picture as SVG") {
    const std::string csv = "/tmp/sextant_test_whatif.csv", svg = "/tmp/sextant_test_whatif.svg";
    std::remove(csv.c_str());
    std::remove(svg.c_str());
    const Output o = run("whatif checkpoint " + kScenario + " --trials 20 --points 5 --csv " + csv + " --svg " + svg);
    REQUIRE(o.code == 0);
    // The text report carries the plot with its markers.
    CHECK(o.out.find("Y Young, D Daly, O simulated optimum") != std::string::npos);
    std::ifstream c(csv);
    std::string line;
    std::getline(c, line);
    CHECK(line == "interval_s,goodput,ci_low,ci_high,wall_s");
    int rows = 0;
    while (std::getline(c, line)) ++rows;
    CHECK(rows == 5);
    std::ifstream s(svg);
    const std::string text((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
    CHECK(text.rfind("<svg", 0) == 0);
    CHECK(text.find("Young") != std::string::npos);
    CHECK(text.find("Daly") != std::string::npos);
    CHECK(text.find("</svg>") != std::string::npos);
    std::remove(csv.c_str());
    std::remove(svg.c_str());
}
