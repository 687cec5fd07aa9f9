#include "report/charts.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

#include "core/units.hpp"
#include "reliability/duration_text.hpp"
#include "report/plot.hpp"
#include "core/table.hpp"

namespace sextant {

namespace {
using namespace plot;
constexpr double kWidth = 760;

// Tick text with as many decimals as the tick step needs.
TickText decimals_for(const Axis& a, double scale = 1.0) {
    const double step = a.ticks.size() > 1 ? (a.ticks[1] - a.ticks[0]) * scale : 1.0;
    const int d = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
    return [d, scale](double v) { return fmt::format("{:.{}f}", v * scale, d); };
}

// A linear axis whose tick texts fit its step; values are multiplied by `scale` for display.
Axis number_axis(std::string label, double lo, double hi, double scale = 1.0, int max_ticks = 7) {
    Axis a = linear_axis(std::move(label), lo, hi, nullptr, max_ticks);
    a.text = decimals_for(a, scale);
    return a;
}

// Categories 0..n-1 as an axis (bars, lanes): ticks at every `every`-th category.
Axis category_axis(std::string label, std::size_t n, TickText text) {
    Axis a{std::move(label), Scale::Linear, -0.5, static_cast<double>(n) - 0.5, {}, std::move(text)};
    const std::size_t every = std::max<std::size_t>(1, (n + 15) / 16);
    for (std::size_t i = 0; i < n; i += every) a.ticks.push_back(static_cast<double>(i));
    return a;
}

// Horizontal reference line across a frame with a label at its right end.
void reference_line(Svg& svg, const Frame& f, double y_value, const std::string& label, std::string_view style, std::string_view key,
                    bool label_below) {
    const double y = f.py(y_value), right = f.area().x + f.area().w;
    svg.add(line(f.area().x, y, right, y, fmt::format("{} data-key=\"{}\" data-value=\"{}\"", style, key, y_value)));
    svg.add(text(right + 6, y + (label_below ? 12 : -3), label, fmt::format("class=\"ref-label\" data-key=\"{}-label\"", key)));
}

double interpolate_log_x(const std::vector<std::pair<double, double>>& xy, double x) {
    if (x <= xy.front().first) return xy.front().second;
    for (std::size_t i = 1; i < xy.size(); ++i)
        if (x <= xy[i].first) {
            const double w = (std::log(x) - std::log(xy[i - 1].first)) / (std::log(xy[i].first) - std::log(xy[i - 1].first));
            return xy[i - 1].second + w * (xy[i].second - xy[i - 1].second);
        }
    return xy.back().second;
}

double pct(double fraction) { return 100.0 * fraction; }
}  // namespace

std::string short_duration(double s) {
    auto trim = [](double v, const char* unit) {
        const std::string t = fmt::format("{:.1f}", v);
        return (t.ends_with(".0") ? t.substr(0, t.size() - 2) : t) + unit;
    };
    if (s < 60) return trim(s, "s");
    if (s < 3600) return trim(s / 60, "m");
    if (s < 86400) return trim(s / 3600, "h");
    return trim(s / 86400, "d");
}

std::string short_bytes(double b) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        ++u;
    }
    return fmt::format("{:g} {}", b, units[u]);
}

std::string memory_chart(const MemoryView& v, const std::string& id) {
    const MemoryReport& m = v.memory;
    const double capacity = m.capacity.value(), margin_line = capacity * (1 - v.safety_margin);
    Svg svg(id, kWidth, 440, "Memory per GPU by pipeline stage against HBM");
    const Frame f({70, 88, kWidth - 70 - 190, 440 - 88 - 55},
                  category_axis("pipeline stage", m.stages.size(), [](double s) { return fmt::format("{:.0f}", s); }),
                  number_axis("memory per GPU (GiB)", 0, std::max(capacity, m.peak.value()) * 1.03 / kGiB));
    f.draw(svg, fmt::format("Memory per GPU by pipeline stage: peak {} on stage {} of {} HBM", format_bytes(m.peak.value()),
                            m.peak_stage, format_bytes(capacity)));
    const char* parts[] = {"weights", "gradients", "optimizer", "activations", "other"};
    std::vector<LegendEntry> legend_entries;
    for (std::size_t i = 0; i < 5; ++i) legend_entries.push_back({parts[i], i});
    legend(svg, 70, 50, kWidth - 140, legend_entries);
    const double slot = f.area().w / static_cast<double>(m.stages.size()), bar = std::max(slot * 0.7, 1.0);
    for (const StageMemory& s : m.stages) {
        const double values[] = {s.weights.value(), s.gradients.value(), s.optimizer.value(), s.activations.value(), s.other().value()};
        double base = 0;
        const double x = f.px(static_cast<double>(s.stage)) - bar / 2;
        for (std::size_t i = 0; i < 5; ++i) {
            const double y0 = f.py(base / kGiB), y1 = f.py((base + values[i]) / kGiB);
            svg.add(rect(x, y1, bar, y0 - y1,
                         fmt::format("fill=\"{}\" stroke=\"white\" stroke-width=\"0.4\" data-key=\"mem-bar\" data-stage=\"{}\" data-part=\"{}\"",
                                     svg.fill(i), s.stage, parts[i]),
                         fmt::format("stage {}: {} {}", s.stage, parts[i], format_bytes(values[i]))));
            base += values[i];
        }
    }
    reference_line(svg, f, capacity / kGiB, "HBM " + format_bytes(capacity), "stroke=\"#000000\" stroke-width=\"2\"", "hbm", false);
    reference_line(svg, f, margin_line / kGiB, fmt::format("safety margin {:g}%: {}", pct(v.safety_margin), format_bytes(margin_line)),
                   "stroke=\"#000000\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"", "margin", true);
    return svg.str();
}

std::string breakdown_chart(const StepView& v, const std::string& id) {
    std::vector<std::pair<std::string, double>> items;
    for (const auto& [name, value] : v.result.breakdown.items())
        if (value > 0) items.emplace_back(name, value);
    const double height = 100 + 28.0 * static_cast<double>(items.size()) + 40;
    Svg svg(id, kWidth, height, "Where the step goes on the critical stage");
    double most = 0;
    for (const auto& [n, s] : items) most = std::max(most, s);
    const bool ms = most < 1;
    Axis y = category_axis("", items.size(), [&](double i) { return items[items.size() - 1 - static_cast<std::size_t>(i)].first; });
    y.ticks.clear();
    for (std::size_t i = 0; i < items.size(); ++i) y.ticks.push_back(static_cast<double>(i));
    const Frame f({100, 60, kWidth - 100 - 150, height - 60 - 55},
                  number_axis(ms ? "milliseconds per step" : "seconds per step", 0, most * (ms ? 1000 : 1)), y);
    f.draw(svg, fmt::format("Where the step goes on the critical stage (stage {}): {} per step", v.result.critical_stage,
                            format_seconds(v.result.step_time_s)));
    const double scale = ms ? 1000 : 1;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto& [name, seconds] = items[i];
        const double yc = f.py(static_cast<double>(items.size() - 1 - i)), x0 = f.px(0), x1 = f.px(seconds * scale);
        svg.add(rect(x0, yc - 9, x1 - x0, 18,
                     fmt::format("fill=\"{}\" stroke=\"#333333\" stroke-width=\"0.5\" data-key=\"breakdown-bar\" data-cause=\"{}\"",
                                 svg.fill(name == "bubble" ? 3 : name == "compute" ? 0 : 2), name),
                     fmt::format("{}: {}", name, format_seconds(seconds))));
        svg.add(text(x1 + 6, yc + 4, fmt::format("{}  {:.1f}%", format_seconds(seconds), 100 * seconds / v.result.step_time_s),
                     fmt::format("class=\"value-label\" data-key=\"breakdown-label\" data-cause=\"{}\"", name)));
    }
    return svg.str();
}

std::string timeline_chart(const StepView& v, const std::string& id) {
    // Lanes: a tall one for each stage's compute stream, thin ones for its other streams.
    constexpr double kCompute = 16, kThin = 7, kGap = 7, kLeft = 92, kTop = 78, kW = 1100;
    std::vector<double> lane_y;
    double y = kTop;
    std::int64_t previous_stage = -1;
    for (const auto& lane : v.lanes) {
        if (lane.stage != previous_stage && previous_stage >= 0) y += kGap;
        previous_stage = lane.stage;
        lane_y.push_back(y);
        y += lane.stream == "compute" ? kCompute : kThin;
    }
    const double height = y + 55;
    Svg svg(id, kW, height, "Pipeline timeline of every stage over one step");
    const double makespan_s = static_cast<double>(v.makespan) * 1e-9;
    const bool ms = makespan_s < 2;
    Axis x = number_axis(ms ? "time in the step (ms)" : "time in the step (s)", 0, makespan_s * (ms ? 1000 : 1), 1.0, 12);
    const Frame f({kLeft, kTop, kW - kLeft - 20, y - kTop}, x, Axis{"", Scale::Linear, 0, 1, {}, nullptr});
    f.draw(svg, fmt::format("Pipeline timeline: {} per step, critical stage {}", format_seconds(v.result.step_time_s), v.result.critical_stage));
    const SliceKind kinds[] = {SliceKind::Forward, SliceKind::Backward, SliceKind::Recompute, SliceKind::Communication, SliceKind::Optimizer,
                               SliceKind::Wait};
    const std::size_t ink_of[] = {2, 0, 3, 1, 4, 5};
    std::vector<LegendEntry> entries;
    for (std::size_t k = 0; k < 6; ++k) entries.push_back({slice_kind_name(kinds[k]), ink_of[k]});
    legend(svg, kLeft, 48, kW - kLeft - 200, entries);
    svg.add(rect(kW - 190, 38, 22, 12, "fill=\"#e4e4e4\" stroke=\"#999999\" stroke-width=\"0.6\""));
    svg.add(text(kW - 163, 48, "idle (bubble)", "class=\"legend\""));
    const double scale = ms ? 1e-6 : 1e-9;
    // Very long schedules: back-to-back slices of one kind closer than a thousandth of a pixel at
    // 16x zoom are drawn as one.
    std::size_t total = 0;
    for (const auto& lane : v.lanes) total += lane.slices.size();
    const auto merge_gap = static_cast<TimeNs>(total > 40000 ? static_cast<double>(v.makespan) / (f.area().w * 16 * 1000) : 0);
    for (std::size_t i = 0; i < v.lanes.size(); ++i) {
        const auto& lane = v.lanes[i];
        const double h = lane.stream == "compute" ? kCompute : kThin;
        if (lane.stream == "compute") {
            svg.add(rect(f.area().x, lane_y[i], f.area().w, h, "fill=\"#e4e4e4\""));
            svg.add(text(kLeft - 8, lane_y[i] + 12, fmt::format("stage {}", lane.stage), "text-anchor=\"end\" class=\"lane-label\""));
        } else {
            svg.add(text(kLeft - 8, lane_y[i] + 6.5, lane.stream, "text-anchor=\"end\" font-size=\"8\" class=\"lane-label\""));
        }
        for (std::size_t k = 0; k < lane.slices.size(); ++k) {
            TimelineSlice s = lane.slices[k];
            while (k + 1 < lane.slices.size() && lane.slices[k + 1].kind == s.kind && lane.slices[k + 1].start - s.end <= merge_gap)
                s.end = lane.slices[++k].end;
            const double x0 = f.px(static_cast<double>(s.start) * scale), x1 = f.px(static_cast<double>(s.end) * scale);
            const std::size_t ink_index = ink_of[static_cast<std::size_t>(s.kind)];
            std::string tip = fmt::format("stage {} {}: {}", lane.stage, lane.stream, slice_kind_name(s.kind));
            if (s.microbatch >= 0) tip += fmt::format(", microbatch {}", s.microbatch);
            if (s.chunk >= 0) tip += fmt::format(", chunk {}", s.chunk);
            tip += fmt::format(", {} to {}", format_seconds(static_cast<double>(s.start) * 1e-9), format_seconds(static_cast<double>(s.end) * 1e-9));
            svg.add(rect(x0, lane_y[i], std::max(x1 - x0, 0.25), h,
                         fmt::format("fill=\"{}\" data-key=\"slice\" data-kind=\"{}\" data-stage=\"{}\"", svg.fill(ink_index),
                                     slice_kind_name(s.kind), lane.stage),
                         tip));
        }
    }
    return svg.str();
}

std::string candidates_chart(const PlannerView& v, const std::string& id) {
    const bool mfu = v.objective != "tokens_per_s";
    auto y_of = [&](double m, double tps) { return mfu ? pct(m) : tps / 1e6; };
    double xlo = 1e300, xhi = 0, ylo = 1e300, yhi = 0, capacity = 0;
    auto extend = [&](double x, double yv) {
        xlo = std::min(xlo, x), xhi = std::max(xhi, x), ylo = std::min(ylo, yv), yhi = std::max(yhi, yv);
    };
    const ScreenedCloud& cloud = v.screened;
    // The chart's y of an objective value (MFU or tokens/s, as PlannerView::objective says).
    auto y_of_objective = [&](double o) { return mfu ? pct(o) : o / 1e6; };
    if (cloud.count > 0) {
        extend(cloud.memory_lo / kGiB, y_of_objective(cloud.objective_lo));
        extend(cloud.memory_hi / kGiB, y_of_objective(cloud.objective_hi));
    }
    for (const auto& p : v.simulated) {
        extend(p.peak_memory_bytes / kGiB, y_of(p.mfu, p.tokens_per_s));
        capacity = std::max(capacity, p.capacity_bytes / kGiB);
    }
    xhi = std::max(xhi, capacity);
    const double pad_x = (xhi - xlo) * 0.04 + 0.5;
    Svg svg(id, kWidth, 470, "Layouts: MFU against peak memory");
    const Frame f({80, 72, kWidth - 80 - 40, 470 - 72 - 55},
                  number_axis("peak memory per GPU (GiB)", std::max(0.0, xlo - pad_x), xhi + pad_x, 1.0, 10),
                  number_axis(mfu ? "MFU (%)" : "tokens per second (millions)", mfu ? std::max(0.0, ylo - 2) : 0, yhi * 1.05));
    f.draw(svg, fmt::format("{} against peak memory: {} layouts that fit, the best {} simulated", mfu ? "MFU" : "Throughput",
                            cloud.count, v.simulated.size()));
    // The screened cloud (closed-form scores): dots, or a density grid when there are many (the
    // cloud's fine grid gathered into 5-pixel cells, each fine cell at its centre).
    if (cloud.cells.empty()) {
        for (const auto& c : cloud.points)
            svg.add(fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"2\" fill=\"#8c8c8c\" fill-opacity=\"0.45\" data-key=\"screened-point\"/>",
                                num(f.px(c.peak_memory_bytes / kGiB)), num(f.py(y_of(c.mfu, c.tokens_per_s)))));
    } else {
        constexpr double kCell = 5;
        std::map<std::pair<int, int>, std::int64_t> cells;
        const auto centre = [](std::size_t i, std::size_t n, double lo, double hi) {
            return lo + (static_cast<double>(i) + 0.5) / static_cast<double>(n) * (hi - lo);
        };
        for (const ScreenedCloud::Cell& cell : cloud.cells) {
            const double x = centre(cell.column, ScreenedCloud::kColumns, cloud.memory_lo, cloud.memory_hi) / kGiB;
            const double y = y_of_objective(centre(cell.row, ScreenedCloud::kRows, cloud.objective_lo, cloud.objective_hi));
            cells[{static_cast<int>((f.px(x) - f.area().x) / kCell), static_cast<int>((f.py(y) - f.area().y) / kCell)}] +=
                static_cast<std::int64_t>(cell.count);
        }
        std::int64_t most = 1;
        for (const auto& [k, n] : cells) most = std::max(most, n);
        for (const auto& [k, n] : cells)
            svg.add(rect(f.area().x + k.first * kCell, f.area().y + k.second * kCell, kCell, kCell,
                         fmt::format("fill=\"#555555\" fill-opacity=\"{:.2f}\" data-key=\"screened-cell\" data-count=\"{}\"",
                                     0.12 + 0.8 * std::log1p(n) / std::log1p(most), n)));
    }
    const double hbm = f.px(capacity);
    svg.add(line(hbm, f.area().y, hbm, f.area().y + f.area().h, "stroke=\"#000000\" stroke-width=\"2\" data-key=\"candidates-hbm\""));
    svg.add(text(hbm - 5, f.area().y + 14, "HBM", "text-anchor=\"end\" class=\"ref-label\""));
    for (std::size_t i = v.simulated.size(); i-- > 0;) {
        const auto& p = v.simulated[i];
        const double x = f.px(p.peak_memory_bytes / kGiB), yv = f.py(y_of(p.mfu, p.tokens_per_s));
        svg.marker(i == 0 ? 0 : 1, x, yv, i == 0 ? 13 : 8,
                   fmt::format("data-key=\"{}\" data-rank=\"{}\"", i == 0 ? "winner-point" : "simulated-point", i + 1));
    }
    if (!v.simulated.empty()) {
        const auto& w = v.simulated.front();
        const double x = f.px(w.peak_memory_bytes / kGiB), yv = f.py(y_of(w.mfu, w.tokens_per_s));
        const std::string label = fmt::format("winner {}: {}, MFU {:.1f}%", w.label, format_seconds(w.step_time_s), pct(w.mfu));
        const bool left = x + text_width(label) + 12 > f.area().x + f.area().w;
        svg.add(text(left ? x - 10 : x + 10, std::max(yv - 12, f.area().y + 12), label,
                     fmt::format("text-anchor=\"{}\" font-weight=\"bold\" data-key=\"winner-label\" {}", left ? "end" : "start", kHalo)));
    }
    legend(svg, 80, 48, kWidth - 120,
           {{"screened layout (closed form)", 0, LegendEntry::Kind::Swatch, "#8c8c8c"},
            {"simulated best", 1, LegendEntry::Kind::Point},
            {"winner", 0, LegendEntry::Kind::Point}});
    return svg.str();
}

std::string sweep_chart(const PlannerView& v, const std::string& id) {
    std::vector<const SweepPoint*> points;
    for (const auto& s : v.sweep)
        if (s.best) points.push_back(&s);
    const bool budget = !points.empty() && points.front()->train_days > 0;
    Svg svg(id, kWidth, 400, "How many GPUs: time and cost against the GPU count");
    if (points.empty()) return svg.str();
    std::vector<double> gpus;
    for (const auto* p : points) gpus.push_back(static_cast<double>(p->gpus));
    const double glo = gpus.front(), ghi = std::max(gpus.back(), glo * 2);
    auto panel = [&](double x0, const std::string& label, auto value, std::size_t ink_index, const char* key) {
        double hi = 0;
        for (const auto* p : points) hi = std::max(hi, value(*p));
        const Frame f({x0, 80, kWidth / 2 - 100, 400 - 80 - 55},
                      log_axis("GPUs", glo / 1.3, ghi * 1.3, gpus, [](double g) { return fmt::format("{:.0f}", g); }),
                      number_axis(label, 0, hi * 1.1));
        f.draw(svg, "");
        std::vector<std::pair<double, double>> xy;
        for (const auto* p : points) xy.emplace_back(f.px(static_cast<double>(p->gpus)), f.py(value(*p)));
        svg.add(polyline(xy, fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\"", ink(ink_index).colour)));
        for (std::size_t i = 0; i < xy.size(); ++i) {
            svg.marker(ink_index, xy[i].first, xy[i].second, 8, fmt::format("data-key=\"{}\" data-gpus=\"{}\"", key, points[i]->gpus));
            svg.add(text(xy[i].first, xy[i].second - 9, fmt::format("{:.3g}", value(*points[i])),
                         fmt::format("text-anchor=\"middle\" class=\"value-label\" {}", kHalo)));
        }
    };
    if (budget) {
        panel(80, "failure-free days to train", [](const SweepPoint& p) { return p.train_days; }, 0, "sweep-days");
        panel(kWidth / 2 + 60, "GPU-hours (millions)", [](const SweepPoint& p) { return p.gpu_hours / 1e6; }, 1, "sweep-gpu-hours");
    } else {
        panel(80, "tokens per second (millions)", [](const SweepPoint& p) { return p.best->tokens_per_s / 1e6; }, 0, "sweep-tokens");
        panel(kWidth / 2 + 60, "MFU (%)", [](const SweepPoint& p) { return pct(p.best->mfu); }, 1, "sweep-mfu");
    }
    svg.add(text(16, 22, budget ? "How many GPUs? Days and GPU-hours for the token budget, best layout per GPU count"
                                : "How many GPUs? Throughput and MFU of the best layout per GPU count",
                 "font-size=\"15\" font-weight=\"bold\" class=\"chart-title\""));
    return svg.str();
}

std::string goodput_chart(const reliability::IntervalStudy& st, const std::string& id, const std::string& title) {
    std::vector<std::pair<double, double>> mean;
    double lo = 1, hi = 0, widest = 0;
    for (const auto& p : st.curve) {
        const auto& g = p.summary.goodput;
        mean.emplace_back(p.interval_s, pct(g.mean));
        lo = std::min(lo, g.ci_low), hi = std::max(hi, g.ci_high), widest = std::max(widest, (g.ci_high - g.ci_low) / 2);
    }
    const std::vector<VerticalMarker> markers = {
        {st.optimal_interval_s, fmt::format("simulated optimum {}: {:.2f}%", reliability::duration_label(st.optimal_interval_s),
                                            pct(st.at_optimum.goodput.mean)),
         1},
        {st.young_interval_s, "Young " + reliability::duration_label(st.young_interval_s), 5},
        {st.daly_interval_s, "Daly " + reliability::duration_label(st.daly_interval_s), 4},
    };
    const double x0 = st.curve.front().interval_s, x1 = st.curve.back().interval_s;
    Axis x = log_axis("checkpoint interval (log scale)", x0, x1, duration_ladder(), short_duration, 9);
    const double pad = (hi - lo) * 0.06 + 1e-5;
    Axis y = number_axis("goodput (%)", pct(lo - pad), pct(hi + pad));
    // The label rows above the plot depend on where the markers fall: size the top margin to them.
    const Frame probe({80, 0, kWidth - 80 - 30, 300}, x, y);
    const double top = 76 + kRowHeight * marker_rows(probe, markers);
    // Optima closer than a few pixels get a magnified strip under the axis, where they separate.
    double px_lo = 1e300, px_hi = -1e300, v_lo = 1e300, v_hi = 0;
    for (const auto& m : markers)
        if (m.x >= x0 && m.x <= x1) {
            px_lo = std::min(px_lo, probe.px(m.x)), px_hi = std::max(px_hi, probe.px(m.x));
            v_lo = std::min(v_lo, m.x), v_hi = std::max(v_hi, m.x);
        }
    const bool magnify = px_hi > px_lo - 1 && px_hi - px_lo < 24 && v_hi > v_lo;
    const double height = top + 300 + 60 + (magnify ? 64 : 0);
    Svg svg(id, kWidth, height, title);
    const Frame f({80, top, kWidth - 80 - 30, 300}, x, y);
    f.draw(svg, title);
    std::vector<std::pair<double, double>> band, upper, lower;
    for (const auto& p : st.curve) upper.emplace_back(f.px(p.interval_s), f.py(pct(p.summary.goodput.ci_high)));
    for (const auto& p : st.curve) lower.emplace_back(f.px(p.interval_s), f.py(pct(p.summary.goodput.ci_low)));
    band = upper;
    band.insert(band.end(), lower.rbegin(), lower.rend());
    svg.add(polygon(band, fmt::format("fill=\"{}\" fill-opacity=\"0.45\" data-key=\"ci-band\"", ink(2).colour)));
    // The band's edges, so that a narrow band stays visible as two lines.
    svg.add(polyline(upper, "fill=\"none\" stroke=\"#2b6a99\" stroke-width=\"1\" stroke-dasharray=\"3 2\""));
    svg.add(polyline(lower, "fill=\"none\" stroke=\"#2b6a99\" stroke-width=\"1\" stroke-dasharray=\"3 2\""));
    std::vector<std::pair<double, double>> curve;
    for (const auto& [xv, yv] : mean) curve.emplace_back(f.px(xv), f.py(yv));
    svg.add(polyline(curve, fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2.2\" data-key=\"goodput-curve\"", ink(0).colour)));
    for (const auto& [px, py] : curve) svg.marker(0, px, py, 6, "data-key=\"goodput-point\"");
    std::vector<VerticalMarker> inside;
    for (const auto& m : markers)
        if (m.x >= x0 && m.x <= x1) inside.push_back(m);
    vertical_markers(svg, f, inside);
    // Each optimum also marked on the curve with its own shape.
    for (const auto& m : inside) svg.marker(m.ink, f.px(m.x), f.py(interpolate_log_x(mean, m.x)), 10, "data-key=\"optimum-on-curve\"");
    if (magnify) {
        // The interval axis around the optima, magnified: where each optimum lies.
        const double widen = std::exp(std::log(v_hi / v_lo) * 0.25);
        Axis detail = log_axis("", v_lo / widen, v_hi * widen, {}, short_duration);
        const Frame strip({f.area().x, f.area().y + f.area().h + 62, f.area().w, 0}, detail, y);
        const double yy = strip.area().y;
        svg.add(line(strip.area().x, yy, strip.area().x + strip.area().w, yy, "stroke=\"#333333\""));
        svg.add(text(strip.area().x, yy - 8,
                     fmt::format("the optima magnified: {} to {} across the axis", reliability::duration_label(v_lo / widen),
                                 reliability::duration_label(v_hi * widen)),
                     "class=\"axis-label\" font-size=\"12\""));
        for (std::size_t k = 0; k < inside.size(); ++k) {
            const double at = strip.px(inside[k].x);
            svg.marker(inside[k].ink, at, yy, 10, "data-key=\"optimum-detail\"");
            svg.add(text(at, yy + 22 + 13 * static_cast<double>(k % 2), reliability::duration_label(inside[k].x),
                         "text-anchor=\"middle\" font-size=\"11\" class=\"tick\""));
        }
    }
    legend(svg, 80, 46, kWidth - 120,
           {{"simulated goodput (mean over trials)", 0, LegendEntry::Kind::LineAndPoint},
            {fmt::format("95% confidence band (half-width up to {:.2f} points)", pct(widest)), 2, LegendEntry::Kind::Swatch}});
    return svg.str();
}

std::string goodput_sweep_chart(const GoodputSweepView& v, const std::string& id, const std::string& title) {
    double label_w = 0, lo = 1, hi = 0;
    for (const auto& [label, e] : v.points) {
        label_w = std::max(label_w, text_width(label));
        lo = std::min(lo, e.ci_low), hi = std::max(hi, e.ci_high);
    }
    const double left = std::min(label_w + 20, 330.0), height = 90 + 30.0 * static_cast<double>(v.points.size()) + 50;
    Svg svg(id, kWidth, height, title);
    Axis y = category_axis("", v.points.size(), [&](double i) { return v.points[v.points.size() - 1 - static_cast<std::size_t>(i)].first; });
    const double pad = (hi - lo) * 0.08 + 1e-4;
    const Frame f({left, 60, kWidth - left - 90, height - 60 - 55}, number_axis("goodput (%)", pct(std::max(0.0, lo - pad)), pct(hi + pad)), y);
    f.draw(svg, title);
    for (std::size_t i = 0; i < v.points.size(); ++i) {
        const auto& [label, e] = v.points[i];
        const double yc = f.py(static_cast<double>(v.points.size() - 1 - i)), a = f.px(pct(e.ci_low)), b = f.px(pct(e.ci_high));
        svg.add(line(a, yc, b, yc, "stroke=\"#333333\" stroke-width=\"1.5\""));
        svg.add(line(a, yc - 5, a, yc + 5, "stroke=\"#333333\" stroke-width=\"1.5\""));
        svg.add(line(b, yc - 5, b, yc + 5, "stroke=\"#333333\" stroke-width=\"1.5\""));
        svg.marker(0, f.px(pct(e.mean)), yc, 8, fmt::format("data-key=\"sweep-point\" data-index=\"{}\"", i));
        svg.add(text(b + 8, yc + 4, fmt::format("{:.2f}%", pct(e.mean)), "class=\"value-label\""));
    }
    return svg.str();
}

std::string busbw_chart(const PredictedSweep& sweep, const std::string& id) {
    std::vector<const PredictedSweep::Row*> rows;
    double most = 0;
    for (const auto& r : sweep.rows)
        if (r.bytes > 0) {
            rows.push_back(&r);
            for (const auto& a : r.algorithms) most = std::max(most, a.busbw_gbps);
        }
    for (const auto& p : sweep.measured) most = std::max(most, p.busbw_gbps);
    Svg svg(id, kWidth, 470, "Bus bandwidth against message size");
    if (rows.empty()) return svg.str();
    const Frame f({80, 90, kWidth - 80 - 40, 470 - 90 - 55},
                  log_axis("message size (nccl-tests size, log scale)", rows.front()->bytes, rows.back()->bytes * 1.0001,
                           powers_of(2, rows.front()->bytes, rows.back()->bytes), short_bytes, 9),
                  number_axis("bus bandwidth (GB/s)", 0, most * 1.05));
    f.draw(svg, fmt::format("{} over {} ranks ({}), {}: bus bandwidth against size", op_name(sweep.op), sweep.ranks, sweep.span, sweep.cluster));
    // What NCCL's tuner picks: the fastest algorithm and protocol at each size, drawn wide underneath.
    std::vector<std::pair<double, double>> best;
    for (const auto* r : rows) best.emplace_back(f.px(r->bytes), f.py(r->best.busbw_gbps));
    svg.add(polyline(best, "fill=\"none\" stroke=\"#c8c8c8\" stroke-width=\"9\" stroke-linejoin=\"round\" data-key=\"busbw-best\""));
    std::vector<std::string> names;
    for (const auto* r : rows)
        for (const auto& a : r->algorithms) {
            const std::string name(a.algorithm.substr(0, a.algorithm.find('/')));
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
    std::vector<LegendEntry> entries = {{"what NCCL's tuner picks (fastest)", 0, LegendEntry::Kind::Swatch, "#c8c8c8"}};
    for (std::size_t k = 0; k < names.size(); ++k) {
        std::vector<std::pair<double, double>> xy;
        for (const auto* r : rows)
            for (const auto& a : r->algorithms)
                if (a.algorithm.substr(0, a.algorithm.find('/')) == names[k]) xy.emplace_back(f.px(r->bytes), f.py(a.busbw_gbps));
        const Ink& in = ink(k);
        svg.add(polyline(xy, fmt::format("fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\" data-key=\"busbw-line\" "
                                         "data-algorithm=\"{}\"",
                                         in.colour, in.dash, names[k])));
        for (const auto& [px, py] : xy) svg.marker(k, px, py, 6);
        entries.push_back({names[k] + " (best protocol)", k, LegendEntry::Kind::LineAndPoint});
    }
    for (const auto& p : sweep.measured)
        if (p.bytes >= rows.front()->bytes && p.bytes <= rows.back()->bytes)
            svg.marker(5, f.px(p.bytes), f.py(p.busbw_gbps), 10, "data-key=\"measured-point\"");
    if (!sweep.measured.empty()) entries.push_back({"measured (calibration profile)", 5, LegendEntry::Kind::Point});
    legend(svg, 80, 48, kWidth - 120, entries);
    return svg.str();
}

}  // namespace sextant
