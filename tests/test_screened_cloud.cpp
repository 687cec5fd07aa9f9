// The report's cloud of screened layouts (report/planner_view.cpp): built in passes over the
// planner's shapes without keeping a score per candidate, it must draw the candidates the serial,
// ordered list (Planner::fitting_scores) names: the same points where there are few, and where
// there are many, each candidate counted in the fine cell its own scores fall in.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "report/planner_view.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
// The scenario's layout fully open (search_all), or with only tp, pp and dp open.
PlannerView view_of(const char* scenario, bool search_all, unsigned threads, std::vector<ScreenedScore>* serial) {
    Scenario s = load_scenario(data_dir() / "scenarios" / scenario);
    if (search_all) s.layout = LayoutSpec{};
    else s.layout.tp = s.layout.pp = s.layout.dp = std::nullopt;
    PlanOptions o;
    o.threads = threads;
    o.simulate_top = 3;
    const Planner planner(s, o, make_step_evaluator);
    if (serial) *serial = planner.fitting_scores();
    return planner_view(planner, planner.finish(planner.screen({0, 1})), 3);
}

// The fine cell of a value, written out again from ScreenedCloud's definition: the extents split
// into kColumns (kRows) equal parts, the highest value in the last.
std::size_t fine(double v, double lo, double hi, std::size_t n) {
    if (hi <= lo) return 0;
    const auto i = static_cast<std::size_t>((v - lo) / (hi - lo) * static_cast<double>(n));
    return i >= n ? n - 1 : i;
}
}  // namespace

TEST_CASE("a report's cloud of few layouts holds each fitting layout's scores, in candidate order") {
    std::vector<ScreenedScore> serial;
    // Llama 3 8B with tp, pp and dp open: several shapes, under 3,000 layouts that fit.
    const PlannerView v = view_of("llama3-8b-h100.json", false, 2, &serial);
    const ScreenedCloud& c = v.screened;
    REQUIRE(serial.size() > 50);
    REQUIRE(serial.size() <= ScreenedCloud::kMaxPoints);
    CHECK(c.count == serial.size());
    CHECK(c.cells.empty());
    REQUIRE(c.points.size() == serial.size());
    for (std::size_t i = 0; i < serial.size(); ++i) {
        CHECK(c.points[i].peak_memory_bytes == serial[i].peak_memory_bytes);
        CHECK(c.points[i].step_time_s == serial[i].step_time_s);
        CHECK(c.points[i].mfu == serial[i].mfu);
        CHECK(c.points[i].tokens_per_s == serial[i].tokens_per_s);
    }
}

TEST_CASE("a report's cloud of many layouts counts each in its own fine cell, whatever the thread count") {
    std::vector<ScreenedScore> serial;
    const PlannerView one = view_of("llama3-70b-h100.json", true, 1, &serial);
    const PlannerView two = view_of("llama3-70b-h100.json", true, 2, nullptr);
    REQUIRE(serial.size() > ScreenedCloud::kMaxPoints);
    for (const PlannerView* v : {&one, &two}) {
        const ScreenedCloud& c = v->screened;
        CHECK(c.count == serial.size());
        CHECK(c.points.empty());
        const auto [mem_lo, mem_hi] = std::minmax_element(serial.begin(), serial.end(), [](const auto& a, const auto& b) {
            return a.peak_memory_bytes < b.peak_memory_bytes;
        });
        const auto [mfu_lo, mfu_hi] = std::minmax_element(serial.begin(), serial.end(), [](const auto& a, const auto& b) { return a.mfu < b.mfu; });
        CHECK(c.memory_lo == mem_lo->peak_memory_bytes);
        CHECK(c.memory_hi == mem_hi->peak_memory_bytes);
        CHECK(c.objective_lo == mfu_lo->mfu);  // the preset plans for MFU
        CHECK(c.objective_hi == mfu_hi->mfu);
        std::map<std::pair<std::size_t, std::size_t>, std::uint64_t> want, got;
        for (const ScreenedScore& s : serial)
            ++want[{fine(s.peak_memory_bytes, c.memory_lo, c.memory_hi, ScreenedCloud::kColumns),
                    fine(s.mfu, c.objective_lo, c.objective_hi, ScreenedCloud::kRows)}];
        std::uint64_t total = 0;
        for (const ScreenedCloud::Cell& cell : c.cells) {
            got[{cell.column, cell.row}] += cell.count;
            total += cell.count;
        }
        CHECK(total == serial.size());
        CHECK(got == want);
    }
}
