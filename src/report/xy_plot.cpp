#include "report/xy_plot.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace sextant {

namespace {
struct Frame {
    double x0, x1, y0, y1;
    double fx(double x) const { return (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0)); }
    double fy(double y) const { return y1 > y0 ? (y - y0) / (y1 - y0) : 0.5; }
};

Frame frame_of(const std::vector<PlotPoint>& points) {
    Frame f{points.front().x, points.back().x, points.front().y_low, points.front().y_high};
    for (const auto& p : points) {
        f.y0 = std::min(f.y0, p.y_low);
        f.y1 = std::max(f.y1, p.y_high);
    }
    const double pad = std::max((f.y1 - f.y0) * 0.05, 1e-6);
    f.y0 -= pad;
    f.y1 += pad;
    return f;
}

int cell(double fraction, int cells) {
    return std::clamp(static_cast<int>(std::lround(fraction * (cells - 1))), 0, cells - 1);
}

std::string xml_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

std::string legend(const std::vector<PlotMarker>& markers, const char* sep) {
    std::string out;
    for (const auto& m : markers) out += fmt::format("{}{} {}", out.empty() ? "" : sep, m.symbol, m.label);
    return out;
}
}  // namespace

std::string text_plot(const std::vector<PlotPoint>& points, const std::vector<PlotMarker>& markers,
                      const PlotLabels& labels, std::string (*x_text)(double), int width, int height) {
    if (points.size() < 2) return "";
    const Frame f = frame_of(points);
    std::vector<std::string> grid(static_cast<std::size_t>(height), std::string(static_cast<std::size_t>(width), ' '));
    auto put = [&](int col, int row, char c) { grid[static_cast<std::size_t>(height - 1 - row)][static_cast<std::size_t>(col)] = c; };
    // Markers: a vertical rule in the plot, their symbols on a line above it; symbols that
    // would fall on the same column sit side by side.
    std::string marker_line(static_cast<std::size_t>(width) + 2, ' ');
    for (const auto& m : markers) {
        if (m.x < f.x0 || m.x > f.x1) continue;
        const int col = cell(f.fx(m.x), width);
        for (int row = 0; row < height; ++row) put(col, row, '|');
        std::size_t at = static_cast<std::size_t>(col);
        while (at + 1 < marker_line.size() && marker_line[at] != ' ') ++at;
        marker_line[at] = m.symbol;
    }
    while (!marker_line.empty() && marker_line.back() == ' ') marker_line.pop_back();
    // The band between points, interpolated column by column in log x.
    for (int col = 0; col < width; ++col) {
        const double lx = std::log(f.x0) + (std::log(f.x1) - std::log(f.x0)) * col / (width - 1);
        std::size_t i = 0;
        while (i + 2 < points.size() && std::log(points[i + 1].x) < lx) ++i;
        const double a = std::log(points[i].x), b = std::log(points[i + 1].x);
        const double w = std::clamp((lx - a) / (b - a), 0.0, 1.0);
        auto mix = [&](double p, double q) { return p + (q - p) * w; };
        const int lo = cell(f.fy(mix(points[i].y_low, points[i + 1].y_low)), height);
        const int hi = cell(f.fy(mix(points[i].y_high, points[i + 1].y_high)), height);
        for (int row = lo; row <= hi; ++row) put(col, row, ':');
    }
    for (const auto& p : points) put(cell(f.fx(p.x), width), cell(f.fy(p.y), height), '*');
    std::string out = labels.title.empty() ? "" : labels.title + "\n";
    if (!marker_line.empty()) out += std::string(9, ' ') + marker_line + "\n";
    for (int row = 0; row < height; ++row) {
        std::string axis = row == 0 ? fmt::format("{:>7.4f}", f.y1) : row == height - 1 ? fmt::format("{:>7.4f}", f.y0) : std::string(7, ' ');
        std::string line = axis + " |" + grid[static_cast<std::size_t>(row)];
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    out += std::string(8, ' ') + "+" + std::string(static_cast<std::size_t>(width), '-') + "\n";
    const std::string left = x_text(f.x0), right = x_text(f.x1);
    const int gap = std::max(1, width + 1 - static_cast<int>(left.size() + right.size()));
    out += std::string(8, ' ') + left + std::string(static_cast<std::size_t>(gap), ' ') + right + "\n";
    out += fmt::format("{}{} (log scale); y: {}; * simulated mean, : 95% CI; {}\n", std::string(8, ' '),
                       labels.x_label, labels.y_label, legend(markers, ", "));
    return out;
}

std::string svg_plot(const std::vector<PlotPoint>& points, const std::vector<PlotMarker>& markers,
                     const PlotLabels& labels, std::string (*x_text)(double)) {
    if (points.size() < 2) return "";
    const Frame f = frame_of(points);
    const double W = 720, H = 420, L = 70, R = 20, T = 40, B = 60;
    auto px = [&](double x) { return L + f.fx(x) * (W - L - R); };
    auto py = [&](double y) { return H - B - f.fy(y) * (H - T - B); };
    std::string band, line;
    for (const auto& p : points) band += fmt::format("{:.1f},{:.1f} ", px(p.x), py(p.y_high));
    for (auto it = points.rbegin(); it != points.rend(); ++it) band += fmt::format("{:.1f},{:.1f} ", px(it->x), py(it->y_low));
    for (const auto& p : points) line += fmt::format("{:.1f},{:.1f} ", px(p.x), py(p.y));
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
        "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        "<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n"
        "<polygon points=\"{}\" fill=\"#9ecae1\" opacity=\"0.6\"/>\n"
        "<polyline points=\"{}\" fill=\"none\" stroke=\"#08519c\" stroke-width=\"2\"/>\n"
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n"
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n",
        W, H, L, xml_escape(labels.title), band, line, L, H - B, W - R, H - B, L, T, L, H - B);
    const char* colors[] = {"#d62728", "#2ca02c", "#ff7f0e", "#9467bd"};
    for (std::size_t i = 0; i < markers.size(); ++i) {
        const auto& m = markers[i];
        if (m.x < f.x0 || m.x > f.x1) continue;
        out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" stroke-dasharray=\"4 3\"/>\n"
                           "<text x=\"{4:.1f}\" y=\"{5}\" fill=\"{3}\">{6}</text>\n",
                           px(m.x), T, H - B, colors[i % 4], px(m.x) + 3, T + 14 * (static_cast<double>(i) + 1), xml_escape(m.label));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                       L, H - B + 18, x_text(f.x0), W - R, H - B + 18, x_text(f.x1));
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{} (log scale)</text>\n",
                       (L + W - R) / 2, H - 20, xml_escape(labels.x_label));
    out += fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\">{2:.4f}</text>\n<text x=\"{0}\" y=\"{3}\" text-anchor=\"end\">{4:.4f}</text>\n",
                       L - 6, T + 4, f.y1, H - B, f.y0);
    out += fmt::format("<text transform=\"translate(16,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n</svg>\n",
                       (T + H - B) / 2, xml_escape(labels.y_label));
    return out;
}

}  // namespace sextant
