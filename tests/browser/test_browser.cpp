// The HTML pages in a real browser: Debian's chromium renders each page headless (CI installs
// it; where it is absent every test here prints "chromium not found" and CTest reports it skipped).
// A copy of each page gets tests/browser/measure.js, which writes what the browser drew into the
// DOM; the checks compare it with the JSON of the same commands: the page must load without a
// console message, request nothing, and draw the JSON's numbers (bar heights proportional to
// bytes and seconds, the winner's step time in its label, the optima where the study put them).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "../cli_run.hpp"
#include "reliability/duration_text.hpp"
#include "core/table.hpp"

using nlohmann::json;
using sextant::test::run_sextant;
using sextant::test::source_path;
namespace fs = std::filesystem;

namespace {
std::string read(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// chromium (Debian) or chromium-browser on PATH, or SEXTANT_CHROMIUM.
std::string chromium() {
    if (const char* e = std::getenv("SEXTANT_CHROMIUM"); e && *e) return e;
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');)
        for (const char* name : {"chromium", "chromium-browser"})
            if (fs::exists(fs::path(dir) / name)) return (fs::path(dir) / name).string();
    return "";
}

// True when the test can run; otherwise says why, in the words CTest's skip rule matches.
bool have_chromium() {
    if (!chromium().empty()) return true;
    std::cout << "chromium not found: browser test skipped (apt-get install chromium)\n";
    return false;
}

struct Scratch {
    fs::path dir;
    Scratch() {
        std::string t = (fs::temp_directory_path() / "sextant_browser_XXXXXX").string();
        dir = ::mkdtemp(t.data()) ? fs::path(t) : fs::temp_directory_path();
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string operator/(const std::string& name) const { return (dir / name).string(); }
};

struct Page {
    std::string html;                  // as sextant wrote it
    json measured;                     // what measure.js saw
    std::vector<std::string> console;  // every console message and uncaught error
    std::vector<json> items(const std::string& key) const {
        std::vector<json> out;
        for (const auto& i : measured["items"])
            if (i["data"].value("key", "") == key) out.push_back(i);
        return out;
    }
};

std::string unescape(std::string s) {
    for (auto [from, to] : {std::pair<const char*, const char*>{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&amp;", "&"}}) {
        for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) s.replace(at, std::string(from).size(), to);
    }
    return s;
}

// Renders `file` headless (with the flags that work as root in a sandbox) and measures it.
Page render(const std::string& file, const Scratch& scratch) {
    Page page;
    page.html = read(file);
    std::string copy = page.html;
    const auto body = copy.rfind("</body>");
    REQUIRE(body != std::string::npos);
    copy.insert(body, "<script>\n" + read(source_path("tests/browser/measure.js")) + "</script>\n");
    const std::string page_copy = scratch / "measured.html", dom = scratch / "dom.html", log = scratch / "chromium.log";
    std::ofstream(page_copy) << copy;
    const std::string profile = scratch / "profile";
    fs::create_directories(profile);
    const std::string cmd = "timeout 120 " + chromium() +
                            " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
                            " --disable-component-update --disable-sync --user-data-dir=" +
                            profile + " --window-size=1400,1000 --enable-logging=stderr --v=0 --dump-dom file://" + page_copy + " >" + dom +
                            " 2>" + log;
    REQUIRE(std::system(cmd.c_str()) == 0);
    const std::string out = read(dom);
    const std::string open = "<pre id=\"sextant-measured\">";
    const auto at = out.find(open);
    REQUIRE(at != std::string::npos);
    page.measured = json::parse(unescape(out.substr(at + open.size(), out.find("</pre>", at) - at - open.size())));
    std::stringstream lines(read(log));
    for (std::string line; std::getline(lines, line);)
        if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos) page.console.push_back(line);
    return page;
}

// One file, nothing fetched: no script, stylesheet, image or font from anywhere, no link out.
void check_self_contained(const Page& p) {
    CAPTURE(p.console);
    CHECK(p.console.empty());
    std::string html = p.html;
    html = std::regex_replace(html, std::regex("http://www\\.w3\\.org/2000/svg"), "");
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find(" src=") == std::string::npos);
    CHECK(html.find("@import") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(std::regex_search(html, std::regex("url\\([^#]")) == false);
    CHECK(std::regex_search(html, std::regex("href=\"[^#]")) == false);
}

json json_of(const std::string& args) {
    const auto o = run_sextant(args, false);
    REQUIRE(o.code == 0);
    return json::parse(o.out);
}

// Sizes drawn from values must keep one ratio: each size within 1% of value x the median ratio,
// or within 0.15 px (coordinates are written to 0.1 px).
void check_proportional(const std::vector<std::pair<double, double>>& size_value, const std::string& what) {
    CAPTURE(what);
    std::vector<double> ratios;
    for (const auto& [size, value] : size_value)
        if (value > 0 && size > 3) ratios.push_back(size / value);
    REQUIRE(ratios.size() >= 2);
    std::sort(ratios.begin(), ratios.end());
    const double median = ratios[ratios.size() / 2];
    for (const auto& [size, value] : size_value)
        if (value > 0) {
            CAPTURE(size);
            CAPTURE(value * median);
            CHECK(std::fabs(size - value * median) <= 0.01 * value * median + 0.15);
        }
}

const std::string k70 = source_path("scenarios/llama3-70b-h100.json");
}  // namespace

TEST_CASE("browser: the report page of a scenario draws the numbers of memory, simulate, plan and whatif --json") {
    if (!have_chromium()) return;
    Scratch tmp;
    const std::string file = tmp / "report.html";
    const json report = json_of("report " + k70 + " -o " + file + " --trials 200 --seed 3 --json");
    const Page p = render(file, tmp);
    check_self_contained(p);

    // Memory: every stacked part's height is proportional to its bytes in `memory --json`, and
    // the HBM line sits at the capacity on the same scale.
    const json memory = json_of("memory " + k70 + " --json");
    std::vector<std::pair<double, double>> drawn;
    double baseline = 0;
    for (const auto& bar : p.items("mem-bar")) {
        const json& stage = memory["stages"][std::stoi(bar["data"]["stage"].get<std::string>())];
        drawn.emplace_back(bar["h"].get<double>(), stage[bar["data"]["part"].get<std::string>() + "_bytes"].get<double>());
        baseline = std::max(baseline, bar["y"].get<double>() + bar["h"].get<double>());
    }
    CHECK(drawn.size() == 5 * memory["stages"].size());
    const auto hbm = p.items("hbm");
    REQUIRE(hbm.size() == 1);
    drawn.emplace_back(baseline - hbm[0]["y"].get<double>(), memory["capacity_bytes"].get<double>());
    check_proportional(drawn, "memory bars and the HBM line against memory --json bytes");

    // The step: the breakdown bars against simulate --json seconds, the step time as it prints.
    const json sim = json_of("simulate " + k70 + " --json");
    drawn.clear();
    for (const auto& bar : p.items("breakdown-bar"))
        drawn.emplace_back(bar["w"].get<double>(), sim["breakdown"][bar["data"]["cause"].get<std::string>() + "_s"].get<double>());
    check_proportional(drawn, "breakdown bars against simulate --json seconds");
    const auto step = p.items("step-time");
    REQUIRE(step.size() == 1);
    CHECK(step[0]["text"] == sextant::format_seconds(sim["step_time_s"].get<double>()));
    // Every forward and backward of every microbatch and chunk is on the timeline.
    const json check = json_of("check " + k70 + " --json");
    const json& l = check["layout"];
    std::map<std::string, int> kinds;
    for (const auto& s : p.items("slice")) ++kinds[s["data"]["kind"].get<std::string>()];
    const int batch = json::parse(read(k70))["training"]["global_batch"];
    const int per_stage = l["vp"].get<int>() * batch / (l["dp"].get<int>() * l["microbatch"].get<int>());
    CHECK(kinds["forward"] == l["pp"].get<int>() * per_stage);
    CHECK(kinds["backward"] == l["pp"].get<int>() * per_stage);

    // The planner: the winner's step time and MFU in its label, one mark per simulated plan.
    const json plan = json_of("plan " + k70 + " --json");
    const auto winner = p.items("winner-label");
    REQUIRE(winner.size() == 1);
    const json& best = plan["plans"][0];
    CHECK(winner[0]["text"].get<std::string>().find(sextant::format_seconds(best["step_time_s"].get<double>())) != std::string::npos);
    CHECK(winner[0]["text"].get<std::string>().find(fmt::format("MFU {:.1f}%", 100 * best["mfu"].get<double>())) != std::string::npos);
    CHECK(p.items("winner-point").size() == 1);
    CHECK(p.items("simulated-point").size() + 1 == plan["plans"].size());

    // Goodput: the three optima of whatif --json, labelled, their labels apart, their lines in
    // the order of their intervals.
    const json whatif = json_of("whatif checkpoint " + k70 + " --trials 200 --seed 3 --json");
    const auto labels = p.items("marker-label");
    REQUIRE(labels.size() == 3);
    std::map<std::string, json> by_name;
    for (const auto& m : labels) by_name[m["text"].get<std::string>().substr(0, 5)] = m;
    CHECK(by_name["Young"]["text"] == "Young " + sextant::reliability::duration_label(whatif["young_interval_s"].get<double>()));
    CHECK(by_name["Daly "]["text"] == "Daly " + sextant::reliability::duration_label(whatif["daly_interval_s"].get<double>()));
    CHECK(by_name["simul"]["text"].get<std::string>().find(sextant::reliability::duration_label(whatif["optimal_interval_s"].get<double>())) !=
          std::string::npos);
    for (std::size_t i = 0; i < labels.size(); ++i)
        for (std::size_t j = i + 1; j < labels.size(); ++j) {
            const json &a = labels[i], &b = labels[j];
            const bool apart = a["x"].get<double>() + a["w"].get<double>() <= b["x"].get<double>() ||
                               b["x"].get<double>() + b["w"].get<double>() <= a["x"].get<double>() ||
                               a["y"].get<double>() + a["h"].get<double>() <= b["y"].get<double>() + 0.5 ||
                               b["y"].get<double>() + b["h"].get<double>() <= a["y"].get<double>() + 0.5;
            CHECK(apart);
        }
    CHECK(p.items("goodput-point").size() == whatif["curve"].size());

    // How far to trust it: the nearest published run first, and the table within the page.
    const auto trust = p.items("accuracy-table");
    REQUIRE(trust.size() == 1);
    CHECK(trust[0]["text"].get<std::string>().find(report["accuracy"]["nearest"][0]["id"].get<std::string>()) != std::string::npos);
    CHECK(trust[0]["w"].get<double>() <= 1180);
    CHECK(p.items("accuracy-notes").size() == 1);

    // Collectives: one chart per sweep of report --json, one line per algorithm.
    int charts = 0;
    for (const auto& s : p.measured["svgs"]) charts += s["id"].get<std::string>().starts_with("busbw-chart-");
    CHECK(charts == static_cast<int>(report["collectives"].size()));
    CHECK(!p.items("busbw-line").empty());
}

TEST_CASE("browser: collective --html draws every algorithm and a profile's measured points") {
    if (!have_chromium()) return;
    Scratch tmp;
    // A profile with measured all-reduce points on one node (the H100 preset plus three points).
    std::ifstream preset(source_path("calibration/H100-SXM5-80GB.json"));
    json profile = json::parse(preset);
    json points = json::array();
    for (double bytes : {1048576.0, 67108864.0, 1073741824.0})
        points.push_back({{"bytes", bytes}, {"time_us", bytes / 3.0e5}, {"busbw_gbps", 1.75 * 3.0e5 / 1e3}});  // 300 GB/s algbw
    profile["collectives"] = json::array({{{"op", "all_reduce"}, {"span", "node"}, {"ranks", 8}, {"points", points}}});
    std::ofstream(tmp / "profile.json") << profile.dump();
    const std::string file = tmp / "collective.html";
    const json sweep = json_of("collective --ranks 8 --min 1K --max 1G --calibration " + (tmp / "profile.json") + " --html " + file + " --json");
    const Page p = render(file, tmp);
    check_self_contained(p);
    CHECK(p.items("measured-point").size() == 3);
    std::vector<std::string> algorithms;
    for (const auto& line : p.items("busbw-line")) algorithms.push_back(line["data"]["algorithm"]);
    CHECK(algorithms == std::vector<std::string>{"ring", "nvls"});
    // The curve of what the tuner picks spans the sweep: its height grows with busbw.
    const auto best = p.items("busbw-best");
    REQUIRE(best.size() == 1);
    double most = 0;
    for (const auto& r : sweep["rows"]) most = std::max(most, r["busbw_gbps"].get<double>());
    CHECK(most > 0);
}

TEST_CASE("browser: whatif --html and plan --html with a GPU sweep") {
    if (!have_chromium()) return;
    Scratch tmp;
    const std::string s8 = source_path("scenarios/llama3-8b-h100.json");
    const std::string spares = tmp / "spares.html";
    const json study = json_of("whatif spares " + s8 + " --trials 50 --values 0,2,8 --html " + spares + " --json");
    Page p = render(spares, tmp);
    check_self_contained(p);
    CHECK(p.items("sweep-point").size() == study["points"].size());

    const std::string sweep = tmp / "sweep.html";
    const json plan = json_of("plan " + s8 + " --gpus 32..128 --html " + sweep + " --json");
    p = render(sweep, tmp);
    check_self_contained(p);
    std::size_t fitting = 0;
    for (const auto& v : plan["variants"]) fitting += v["fits"].get<bool>();
    CHECK(p.items("sweep-days").size() == fitting);
    CHECK(p.items("sweep-gpu-hours").size() == fitting);
    // More GPUs, fewer days: the markers descend from left to right as the JSON's days do.
    const auto days = p.items("sweep-days");
    for (std::size_t i = 1; i < days.size(); ++i) CHECK(days[i]["y"].get<double>() > days[i - 1]["y"].get<double>());
}
