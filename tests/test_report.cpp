// Reports without a browser: nccl-tests' conventions and a parser written the way scripts read
// nccl-tests logs, the plot library's axes and labels, the goodput SVG, and `sextant report` on
// every preset scenario (its numbers are those of simulate, memory and plan --json).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli_run.hpp"
#include "report/nccl_tests.hpp"
#include "report/plot.hpp"

using nlohmann::json;
using namespace sextant;
using sextant::test::run_sextant;
using sextant::test::source_path;

namespace {
// How scripts read an nccl-tests log (the usual awk/Python idiom): comment lines start with '#',
// the "# Avg bus bandwidth" line carries the average, every other line with 13 or more fields
// whose first is a number is a row: size count type redop root, then time algbw busbw #wrong
// out of place, the same in place.
struct NcclRow {
    long long size = 0, count = 0;
    std::string type, redop;
    int root = 0;
    double time_us = 0, algbw = 0, busbw = 0;
    std::string wrong;
    double in_time_us = 0, in_algbw = 0, in_busbw = 0;
    std::vector<std::string> extra;
};
struct NcclLog {
    std::vector<std::string> columns;  // the header line that starts with "# size" (without '#')
    std::vector<NcclRow> rows;
    double avg_busbw = -1;
};

NcclLog parse_nccl_tests_log(const std::string& text) {
    NcclLog log;
    std::istringstream in(text);
    const std::regex avg(R"(^#\s*Avg bus bandwidth\s*:\s*([0-9.eE+-]+))");
    for (std::string line; std::getline(in, line);) {
        std::smatch m;
        if (std::regex_search(line, m, avg)) log.avg_busbw = std::stod(m[1]);
        std::istringstream words(line);
        std::vector<std::string> f{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
        if (f.empty()) continue;
        if (f[0] == "#") {
            if (f.size() > 2 && f[1] == "size" && f[2] == "count") log.columns.assign(f.begin() + 1, f.end());
            continue;
        }
        if (f[0][0] == '#' || f.size() < 13 || !std::isdigit(static_cast<unsigned char>(f[0][0]))) continue;
        NcclRow r{std::stoll(f[0]), std::stoll(f[1]), f[2], f[3], std::stoi(f[4]), std::stod(f[5]), std::stod(f[6]), std::stod(f[7]), f[8],
                  std::stod(f[9]), std::stod(f[10]), std::stod(f[11]), {f.begin() + 13, f.end()}};
        log.rows.push_back(r);
    }
    return log;
}
}  // namespace

TEST_CASE("sextant collective prints nccl-tests' table, which a parser for nccl-tests logs reads") {
    for (const std::string args : {"--op all_reduce --ranks 8 --min 1K --max 1G", "--op all_gather --ranks 16 --span rail --min 8 --max 64M",
                             "--op reduce_scatter --ranks 64 --min 1M --max 1G", "--op broadcast --ranks 8 --min 1K --max 1M"}) {
        CAPTURE(args);
        const auto text = run_sextant("collective " + args, false);
        const auto js = run_sextant("collective " + args + " --json", false);
        REQUIRE(text.code == 0);
        REQUIRE(js.code == 0);
        const json doc = json::parse(js.out);
        const NcclLog log = parse_nccl_tests_log(text.out);
        // nccl-tests' columns, in its order, and the algorithm after them.
        CHECK(log.columns == std::vector<std::string>{"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                                                      "algbw", "busbw", "#wrong", "algorithm"});
        REQUIRE(log.rows.size() == doc["rows"].size());
        const std::string op = doc["op"];
        const long long ranks = doc["ranks"];
        double sum = 0;
        for (std::size_t i = 0; i < log.rows.size(); ++i) {
            const NcclRow& r = log.rows[i];
            const json& j = doc["rows"][i];
            CHECK(r.size == j["bytes"].get<long long>());
            // nccl-tests' element counts of float buffers: per rank for all-gather and
            // reduce-scatter, the whole buffer otherwise.
            CHECK(r.size == r.count * 4 * (op == "all_gather" || op == "reduce_scatter" ? ranks : 1));
            CHECK(r.type == "float");
            CHECK(r.redop == (op == "all_reduce" || op == "reduce_scatter" ? "sum" : "none"));
            CHECK(r.root == (op == "broadcast" ? 0 : -1));
            // Two decimals, or fewer where the number is wide (nccl-tests' cells).
            auto printed = [](double cell, double value) { return std::fabs(cell - value) <= 0.005 + 5e-4 * std::fabs(value); };
            CHECK(printed(r.time_us, j["time_us"].get<double>()));
            CHECK(printed(r.busbw, j["busbw_gbps"].get<double>()));
            CHECK(printed(r.algbw, j["algbw_gbps"].get<double>()));
            CHECK(r.wrong == "N/A");
            CHECK(r.in_time_us == r.time_us);
            CHECK(r.in_busbw == r.busbw);
            REQUIRE(r.extra.size() == 1);
            CHECK(r.extra[0] == j["algorithm"].get<std::string>());
            sum += j["busbw_gbps"].get<double>();
        }
        CHECK(log.avg_busbw == doctest::Approx(sum / static_cast<double>(log.rows.size())).epsilon(1e-5));
        // Every line that is not a row is a comment.
        std::istringstream in(text.out);
        for (std::string line; std::getline(in, line);) CHECK((line.empty() || line[0] == '#' || std::isdigit(static_cast<unsigned char>(line.back())) || std::isalpha(static_cast<unsigned char>(line.back()))));
    }
}

TEST_CASE("nccl-tests' sizes and counts for float buffers (src/<op>.cu GetCollByteCount)") {
    // all_reduce: the buffer; count = bytes / 4.
    CHECK(nccl_tests_size(CollectiveOp::AllReduce, 1024, 8).bytes == 1024);
    CHECK(nccl_tests_size(CollectiveOp::AllReduce, 1024, 8).count == 256);
    // all_gather / reduce_scatter / all_to_all: each rank's share rounded down to 16 bytes.
    CHECK(nccl_tests_size(CollectiveOp::AllGather, 1024, 8).count == 32);
    CHECK(nccl_tests_size(CollectiveOp::AllGather, 1000, 8).bytes == 8 * 28 * 4);  // 250 / 8 = 31 -> 28
    CHECK(nccl_tests_size(CollectiveOp::AllGather, 64, 8).bytes == 0);             // 2 elements per rank -> 0
    CHECK(nccl_tests_size(CollectiveOp::ReduceScatter, 1 << 20, 16).bytes == 1 << 20);
    CHECK(nccl_tests_size(CollectiveOp::AllToAll, 1 << 20, 16).count == (1 << 20) / 4 / 16);
    CHECK(nccl_tests_size(CollectiveOp::Broadcast, 6, 8).bytes == 4);
}

TEST_CASE("nccl-tests' number cells: two decimals, then fewer, then an exponent, to fit the width") {
    CHECK(nccl_tests_cell(14.0, 7) == "  14.00");
    CHECK(nccl_tests_cell(1234.567, 7) == "1234.57");
    CHECK(nccl_tests_cell(12345.67, 7) == "12345.7");
    CHECK(nccl_tests_cell(1234567.0, 7) == "1234567");
    CHECK(nccl_tests_cell(12345678.0, 7) == "1.2e+07");
    CHECK(nccl_tests_cell(225.19, 6) == "225.19");
    CHECK(nccl_tests_cell(1234.5, 6) == "1234.5");
    CHECK(nccl_tests_cell(1234567.0, 6) == " 1e+06");
}

TEST_CASE("plot axes: nice linear ticks, log ticks from a ladder, and marker labels that never overlap") {
    const plot::Axis a = plot::linear_axis("x", 0.13, 9.7, [](double v) { return std::to_string(v); });
    CHECK(a.lo == 0);
    CHECK(a.hi == 10);
    CHECK(a.ticks == std::vector<double>{0, 2, 4, 6, 8, 10});
    const plot::Axis p = plot::linear_axis("goodput", 0.9051, 0.9087, nullptr, 5);
    CHECK(p.ticks.size() >= 3);
    CHECK(p.ticks.size() <= 5);
    CHECK(p.lo <= 0.9051);
    CHECK(p.hi >= 0.9087);
    const plot::Axis l = plot::log_axis("interval", 300, 14400, plot::duration_ladder(), nullptr, 8);
    CHECK(l.ticks.front() == 300);
    CHECK(l.ticks.size() <= 8);
    CHECK(l.fraction(300) == doctest::Approx(0));
    CHECK(l.fraction(14400) == doctest::Approx(1));
    CHECK(l.fraction(std::sqrt(300.0 * 14400)) == doctest::Approx(0.5));
    // Markers a pixel apart take a row each; markers far apart share the first.
    const plot::Frame f({80, 100, 600, 300}, l, p);
    CHECK(plot::marker_rows(f, {{1000, "Young 16m 40s", 0}, {1010, "Daly 16m 50s", 1}, {1005, "simulated 16m 45s", 2}}) == 3);
    CHECK(plot::marker_rows(f, {{400, "Young", 0}, {10000, "Daly", 1}}) == 1);
}

TEST_CASE("whatif checkpoint --svg: readable axes, distinct labelled optima, the band drawn") {
    const std::string svg_file = "/tmp/sextant_test_report_" + std::to_string(::getpid()) + ".svg";
    const auto o = run_sextant("whatif checkpoint " + source_path("scenarios/llama3-405b-h100.json") + " --trials 50 --svg " + svg_file + " --json", false);
    REQUIRE(o.code == 0);
    std::ifstream in(svg_file);
    const std::string svg{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::remove(svg_file.c_str());
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
    // Ticks on both axes (durations on x, percentages on y), not only the ends.
    int x_ticks = 0, y_ticks = 0;
    const std::regex tick(R"re(<text x="[^"]+" y="[^"]+" text-anchor="(middle|end)" class="tick">([^<]+)</text>)re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
        ((*it)[1] == "middle" ? x_ticks : y_ticks)++;
    CHECK(x_ticks >= 5);
    CHECK(y_ticks >= 4);
    CHECK(svg.find("goodput (%)") != std::string::npos);
    // Three markers, each its own dash pattern and label.
    const json doc = json::parse(o.out);
    std::vector<std::string> dashes;
    const std::regex marker(R"re(class="marker-line")re"), dash(R"re(stroke-dasharray="([^"]+)" class="marker-line")re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), dash); it != std::sregex_iterator(); ++it) dashes.push_back((*it)[1]);
    REQUIRE(dashes.size() == 3);
    CHECK(dashes[0] != dashes[1]);
    CHECK(dashes[1] != dashes[2]);
    CHECK(dashes[0] != dashes[2]);
    CHECK(std::regex_search(svg, std::regex(R"(data-key="marker-label"[^>]*>Young )")));
    CHECK(std::regex_search(svg, std::regex(R"(data-key="marker-label"[^>]*>Daly )")));
    CHECK(std::regex_search(svg, std::regex(R"(data-key="marker-label"[^>]*>simulated optimum )")));
    CHECK(svg.find("data-key=\"ci-band\"") != std::string::npos);
    CHECK(svg.find("95% confidence band (half-width up to") != std::string::npos);
}

TEST_CASE("sextant report works on every preset scenario, with the numbers of simulate and memory") {
    for (const char* name : {"llama3-8b-h100", "llama3-70b-h100", "llama3-405b-h100", "gpt3-175b-a100", "mixtral-8x7b-h100", "deepseek-v3-h100"}) {
        CAPTURE(name);
        const std::string scenario = source_path(std::string("scenarios/") + name + ".json");
        const std::string file = "/tmp/sextant_test_report_" + std::to_string(::getpid()) + ".html";
        const auto o = run_sextant("report " + scenario + " -o " + file + " --trials 30 --json", false);
        REQUIRE(o.code == 0);
        const json doc = json::parse(o.out);
        std::ifstream in(file);
        const std::string html{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::remove(file.c_str());
        CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
        for (const char* id : {"memory-chart", "breakdown-chart", "timeline-chart", "candidates-chart", "busbw-chart-0"})
            CHECK(html.find(std::string("id=\"") + id + "\"") != std::string::npos);
        // Mixtral's token budget is not published: no goodput study, said so.
        const bool budget = std::string(name) != "mixtral-8x7b-h100";
        CHECK(doc.contains("goodput") == budget);
        CHECK((html.find("id=\"goodput-chart\"") != std::string::npos) == budget);
        const json sim = json::parse(run_sextant("simulate " + scenario + " --json", false).out);
        CHECK(doc["step"]["step_time_s"] == sim["step_time_s"]);
        const json memory = json::parse(run_sextant("memory " + scenario + " --json", false).out);
        CHECK(doc["memory"]["peak_bytes"] == memory["peak_bytes"]);
        CHECK(doc["memory"]["stages"] == memory["stages"]);
        const json plan = json::parse(run_sextant("plan " + scenario + " --json", false).out);
        CHECK(doc["planner"]["plans"][0]["step_time_s"] == plan["plans"][0]["step_time_s"]);
        // How far to trust it: simulate --accuracy's runs, one table row each.
        const json accuracy = json::parse(run_sextant("simulate " + scenario + " --accuracy --json", false).out)["accuracy"];
        CHECK(doc["accuracy"] == accuracy);
        const auto table = html.find("data-key=\"accuracy-table\"");
        REQUIRE(table != std::string::npos);
        std::size_t rows = 0;
        for (auto at = html.find("<tr>", table); at != std::string::npos && at < html.find("</table>", table); at = html.find("<tr>", at + 1)) ++rows;
        CHECK(rows == 1 + accuracy["nearest"].size());  // the header and a row per run
    }
    // Bad input is an input error naming the flag.
    const auto bad = run_sextant("report " + source_path("scenarios/llama3-8b-h100.json") + " -o /no/such/dir/r.html");
    CHECK(bad.code == 2);
    CHECK(bad.out.find("--output") != std::string::npos);
    CHECK(run_sextant("report " + source_path("scenarios/llama3-8b-h100.json")).code == 2);  // -o is required
}
