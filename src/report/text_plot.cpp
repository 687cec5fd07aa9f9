#include "report/text_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace sextant {

namespace {
int cell(double fraction, int cells) { return std::clamp(static_cast<int>(std::lround(fraction * (cells - 1))), 0, cells - 1); }
}  // namespace

std::string text_plot(const std::vector<TextPlotPoint>& points, const std::vector<TextPlotMarker>& markers, const TextPlotAxes& axes,
                      int width, int height) {
    if (points.size() < 2) return "";
    double lo = points.front().y_low, hi = points.front().y_high;
    for (const auto& p : points) lo = std::min(lo, p.y_low), hi = std::max(hi, p.y_high);
    const plot::Axis x = plot::log_axis(axes.x_label, points.front().x, points.back().x, axes.x_ladder, axes.x_text, 6);
    const plot::Axis y = plot::linear_axis(axes.y_label, lo, hi, axes.y_text, 7);
    const auto w = static_cast<std::size_t>(width), h = static_cast<std::size_t>(height);
    std::vector<std::string> grid(h, std::string(w, ' '));
    auto put = [&](int col, int row, char c) { grid[h - 1 - static_cast<std::size_t>(row)][static_cast<std::size_t>(col)] = c; };
    // Markers: a vertical rule in the plot, the symbols on a line above it; symbols that would
    // fall on the same column sit side by side.
    std::string marker_line(w + 2, ' ');
    for (const auto& m : markers) {
        if (m.x < x.lo || m.x > x.hi) continue;
        const int col = cell(x.fraction(m.x), width);
        for (int row = 0; row < height; ++row) put(col, row, '|');
        std::size_t at = static_cast<std::size_t>(col);
        while (at + 1 < marker_line.size() && marker_line[at] != ' ') ++at;
        marker_line[at] = m.symbol;
    }
    while (!marker_line.empty() && marker_line.back() == ' ') marker_line.pop_back();
    // The band between points, interpolated column by column in log x.
    for (int col = 0; col < width; ++col) {
        const double lx = std::log(x.lo) + (std::log(x.hi) - std::log(x.lo)) * col / (width - 1);
        std::size_t i = 0;
        while (i + 2 < points.size() && std::log(points[i + 1].x) < lx) ++i;
        const double a = std::log(points[i].x), b = std::log(points[i + 1].x);
        const double t = std::clamp((lx - a) / (b - a), 0.0, 1.0);
        auto mix = [&](double p, double q) { return p + (q - p) * t; };
        const int low = cell(y.fraction(mix(points[i].y_low, points[i + 1].y_low)), height);
        const int high = cell(y.fraction(mix(points[i].y_high, points[i + 1].y_high)), height);
        for (int row = low; row <= high; ++row) put(col, row, ':');
    }
    for (const auto& p : points) put(cell(x.fraction(p.x), width), cell(y.fraction(p.y), height), '*');
    // Rows labelled at the y ticks; the x ticks under the axis, where they do not collide.
    std::vector<std::string> row_label(h);
    for (double t : y.ticks) row_label[h - 1 - static_cast<std::size_t>(cell(y.fraction(t), height))] = y.text(t);
    const std::size_t margin = 9;
    std::string out = axes.title.empty() ? "" : axes.title + "\n";
    if (!marker_line.empty()) out += std::string(margin + 1, ' ') + marker_line + "\n";
    for (std::size_t row = 0; row < h; ++row) {
        std::string line = fmt::format("{:>{}} |", row_label[row], margin - 1) + grid[row];
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    out += std::string(margin, ' ') + "+" + std::string(w, '-') + "\n";
    std::string ticks(margin + w + 12, ' ');
    std::size_t free_from = 0;
    for (double t : x.ticks) {
        const std::string label = x.text(t);
        const std::size_t centre = margin + 1 + static_cast<std::size_t>(cell(x.fraction(t), width));
        const std::size_t start = centre >= label.size() / 2 ? centre - label.size() / 2 : 0;
        if (start < free_from || start + label.size() > ticks.size()) continue;
        ticks.replace(start, label.size(), label);
        free_from = start + label.size() + 1;
    }
    while (!ticks.empty() && ticks.back() == ' ') ticks.pop_back();
    out += ticks + "\n";
    std::string legend;
    for (const auto& m : markers) legend += fmt::format("{}{} {}", legend.empty() ? "" : ", ", m.symbol, m.label);
    out += fmt::format("{}{} (log scale); y: {}; * simulated mean, : 95% CI; {}\n", std::string(margin, ' '), axes.x_label, axes.y_label,
                       legend);
    return out;
}

}  // namespace sextant
