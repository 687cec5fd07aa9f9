// The output model (src/report/output.hpp): one fill, rendered as text, JSON and CSV; and the
// commands that use it say the same numbers in text as in JSON.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "cli_run.hpp"
#include "core/table.hpp"
#include "report/output.hpp"

using namespace sextant;
using nlohmann::json;

TEST_CASE("output model: facts land at their JSON pointers, and text shows only labelled ones, aligned") {
    sextant::Output out;
    out.heading = "run: a heading";
    out.add_facts({{"/step_time_s", "step time", Value(1.5, Style::Duration)},
                   {"/breakdown/compute_s", "", 1.25},
                   {"", "peak memory", Value(2.0 * (1ull << 30), Style::ByteSize), "(fits)"},
                   {"/mfu", "MFU", Value(0.4512, Style::Fraction)}});
    const json j = render_json(out);
    CHECK(j["step_time_s"] == 1.5);
    CHECK(j["breakdown"]["compute_s"] == 1.25);  // a pointer two deep nests
    CHECK(j["mfu"] == 0.4512);                   // JSON keeps the fraction, text shows the percentage
    CHECK(j.size() == 3);                        // the text-only fact is not in JSON
    CHECK(render_text(out) == "run: a heading\n\n"
                              "step time   " + format_seconds(1.5) + "\n"
                              "peak memory 2.00 GiB (fits)\n"
                              "MFU         45.1%\n");
}

TEST_CASE("output model: a table's rows are an array of objects in JSON, text merges runs of equal rows") {
    sextant::Output out;
    Table& t = out.table("/stages", {{"stage", "stage"}, {"layers", "layers"}, {"bytes", ""}});
    t.merge_runs_on = 0;
    t.rows = {{0, 4, 10}, {1, 4, 20}, {2, 4, 30}, {3, 5, 40}};
    const json j = render_json(out);
    REQUIRE(j["stages"].size() == 4);  // JSON keeps every row
    CHECK(j["stages"][3] == json({{"stage", 3}, {"layers", 5}, {"bytes", 40}}));
    const std::string text = render_text(out);
    // Stages 0-2 read the same in their text-visible cells (the bytes column is JSON only).
    CHECK(text.find("0-2") != std::string::npos);
    CHECK(text.find("bytes") == std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 4);  // header, rule, two rows
}

TEST_CASE("output model: absent values and text-only blocks") {
    sextant::Output out;
    Table& t = out.table("/runs", {{"id", "run"}, {"error", ""}, {"step", "step"}});
    t.rows = {{"a", {}, Value(1.0, Style::FixedDuration, 3)}, {"b", "broken", {}}};
    out.add_facts({{"/failed", "", 1}});  // JSON only: no blank line for it in text
    out.note("1 run failed", true);
    const json j = render_json(out);
    CHECK(j["runs"][0] == json({{"id", "a"}, {"step", 1.0}}));  // null cells leave their key out
    CHECK(j["runs"][1] == json({{"id", "b"}, {"error", "broken"}}));
    CHECK(render_text(out).find("b    -\n1 run failed\n") != std::string::npos);
}

TEST_CASE("output model: CSV quotes commas, quotes and newlines as RFC 4180 says, and leaves text-only columns out") {
    Table t{.pointer = "/x", .columns = {{"name", "name"}, {"", "shown only in text"}, {"value", "value"}}, .rows = {}};
    t.rows = {{"a,b", "x", 1}, {"say \"hi\"", "y", 2.5}, {{}, "z", true}};
    CHECK(render_csv(t) == "name,value\n\"a,b\",1\n\"say \"\"hi\"\"\",2.5\n,true\n");
}

namespace {
// "step time   6.711 s" -> "6.711 s"
std::string text_fact(const std::string& text, const std::string& label) {
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex("\n" + label + " +([^\n]+)\n")));
    return m[1];
}
}  // namespace

TEST_CASE("simulate and memory say the same numbers in text as in JSON, for every preset scenario") {
    for (const auto& entry : std::filesystem::directory_iterator(test::source_path("scenarios"))) {
        const std::string file = entry.path().string();
        CAPTURE(file);
        const auto text = test::run_sextant("simulate " + file, false);
        const auto doc = test::run_sextant("simulate --json " + file, false);
        REQUIRE(text.code == 0);
        REQUIRE(doc.code == 0);
        const json j = json::parse(doc.out);
        CHECK(text_fact(text.out, "step time") == format_seconds(j["step_time_s"].get<double>()));
        CHECK(text_fact(text.out, "MFU") == fmt::format("{:.1f}%", 100 * j["mfu"].get<double>()));
        CHECK(text_fact(text.out, "peak memory").starts_with(format_bytes(j["peak_memory_bytes"].get<double>())));
        double shown = 0;  // the breakdown's text rows are its JSON items that take time
        for (const auto& [key, value] : j["breakdown"].items())
            if (value.get<double>() > 0) shown += 1;
        const std::string table = text.out.substr(text.out.find("where the step goes"));
        CHECK(std::count(table.begin(), table.end(), '\n') == shown + 4);  // header, rule, rows, blank, note

        const auto mem_text = test::run_sextant("memory " + file, false);
        const json mem = json::parse(test::run_sextant("memory --json " + file, false).out);
        CHECK(mem_text.out.find("peak " + format_bytes(mem["peak_bytes"].get<double>()) + " on stage " +
                                std::to_string(mem["peak_stage"].get<int>())) != std::string::npos);
        const json& last = mem["stages"].back();
        CHECK(mem_text.out.find(format_bytes(last["total_bytes"].get<double>())) != std::string::npos);
    }
}

TEST_CASE("whatif's curve reads the same in JSON, CSV and text (one table, three renderings)") {
    const std::string scenario = test::source_path("scenarios/llama3-8b-h100.json");
    const std::string csv_file = (std::filesystem::temp_directory_path() / "sextant_test_output_curve.csv").string();
    std::filesystem::remove(csv_file);
    const std::string args = "whatif checkpoint " + scenario + " --trials 30 --points 4 --seed 7";
    const json doc = json::parse(test::run_sextant(args + " --json", false).out);
    const auto text = test::run_sextant(args + " --csv " + csv_file, false);
    REQUIRE(text.code == 0);
    std::ifstream in(csv_file);
    std::string line;
    std::getline(in, line);
    CHECK(line == "interval_s,goodput,ci_low,ci_high,wall_s");
    const json& curve = doc["curve"];
    REQUIRE(curve.size() == 4);
    for (const json& point : curve) {
        REQUIRE(std::getline(in, line));
        std::vector<double> cells;
        for (std::size_t start = 0; start <= line.size();) {
            const std::size_t comma = std::min(line.find(',', start), line.size());
            cells.push_back(std::stod(line.substr(start, comma - start)));
            start = comma + 1;
        }
        REQUIRE(cells.size() == 5);
        CHECK(cells[1] == point["goodput"].get<double>());  // shortest round trip: the same double
        CHECK(cells[4] == point["wall_s"].get<double>());
        // Text shows the goodput as a percentage with two decimals, its interval beside it.
        CHECK(text.out.find(fmt::format("{:.2f}%  [{:.2f}, {:.2f}]%", 100 * point["goodput"].get<double>(),
                                        100 * point["ci_low"].get<double>(), 100 * point["ci_high"].get<double>())) != std::string::npos);
    }
    std::filesystem::remove(csv_file);
}
