#include "report/plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <fmt/format.h>

namespace sextant::plot {

namespace {
// Okabe and Ito's palette (colour-blind safe) ordered so that neighbours differ in lightness
// (CIE L* 26, 54, 70, 89, 61, 58): in grey scale the fills stay apart, and the patterns on every
// other one separate the close pairs.
constexpr std::array<Ink, kInks> kInkTable = {{
    {"#1f3b73", "", "", 'o'},
    {"#D55E00", "hatch", "7 4", 's'},
    {"#56B4E9", "", "2 3", '^'},
    {"#F0E442", "dots", "9 3 2 3", 'd'},
    {"#CC79A7", "cross", "4 2", 'v'},
    {"#009E73", "backhatch", "1 2", 'x'},
}};

// The step between ticks: 1, 2, 2.5 or 5 x 10^k, the smallest that needs at most max_ticks.
double nice_step(double span, int max_ticks) {
    const double raw = span / std::max(1, max_ticks - 1);
    const double decade = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * decade >= raw * (1 - 1e-9)) return m * decade;
    return 10 * decade;
}

std::string pattern_def(const std::string& id, const Ink& ink) {
    const std::string p = ink.pattern;
    std::string marks;
    if (p == "hatch" || p == "backhatch")
        marks = fmt::format("<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"white\" stroke-width=\"1.6\"/>");
    else if (p == "dots")
        marks = "<circle cx=\"3\" cy=\"3\" r=\"1.1\" fill=\"#333333\"/>";
    else if (p == "cross")
        marks = "<path d=\"M0 0L6 6M6 0L0 6\" stroke=\"white\" stroke-width=\"1\"/>";
    const char* rotate = p == "hatch" ? " patternTransform=\"rotate(45)\"" : p == "backhatch" ? " patternTransform=\"rotate(-45)\"" : "";
    return fmt::format("<pattern id=\"{}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\"{}>"
                       "<rect width=\"6\" height=\"6\" fill=\"{}\"/>{}</pattern>",
                       id, rotate, ink.colour, marks);
}

std::string points_text(const std::vector<std::pair<double, double>>& points) {
    std::string out;
    for (const auto& [x, y] : points) out += (out.empty() ? "" : " ") + num(x) + "," + num(y);
    return out;
}
}  // namespace

double Axis::fraction(double value) const {
    if (scale == Scale::Log) return (std::log(value) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return hi > lo ? (value - lo) / (hi - lo) : 0.5;
}

Axis linear_axis(std::string label, double lo, double hi, TickText text, int max_ticks) {
    if (!(hi > lo)) {
        const double pad = std::max(std::fabs(lo) * 0.1, 1e-9);
        lo -= pad;
        hi += pad;
    }
    const double step = nice_step(hi - lo, max_ticks);
    Axis a{std::move(label), Scale::Linear, std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step, {}, std::move(text)};
    for (double v = a.lo; v <= a.hi + step * 1e-6; v += step) a.ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
    return a;
}

Axis log_axis(std::string label, double lo, double hi, const std::vector<double>& ladder, TickText text, int max_ticks) {
    if (!(hi > lo)) hi = lo * 2;
    Axis a{std::move(label), Scale::Log, lo, hi, {}, std::move(text)};
    std::vector<double> inside;
    for (double v : ladder)
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) inside.push_back(v);
    const std::size_t keep = std::max<std::size_t>(1, static_cast<std::size_t>(max_ticks));
    const std::size_t stride = (inside.size() + keep - 1) / keep;
    for (std::size_t i = 0; i < inside.size(); i += std::max<std::size_t>(stride, 1)) a.ticks.push_back(inside[i]);
    return a;
}

std::vector<double> powers_of(double base, double lo, double hi) {
    std::vector<double> out;
    for (double v = std::pow(base, std::floor(std::log(lo) / std::log(base))); v <= hi * base; v *= base) out.push_back(v);
    return out;
}

std::vector<double> decades_125(double lo, double hi) {
    std::vector<double> out;
    for (double d = std::pow(10.0, std::floor(std::log10(lo))); d <= hi * 10; d *= 10)
        for (double m : {1.0, 2.0, 5.0}) out.push_back(m * d);
    return out;
}

std::vector<double> duration_ladder() {
    return {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 3 * 3600.0, 4 * 3600.0, 6 * 3600.0, 8 * 3600.0,
            12 * 3600.0, 86400, 2 * 86400.0, 4 * 86400.0, 7 * 86400.0, 14 * 86400.0, 30 * 86400.0};
}

std::string escape(std::string_view text) {
    std::string out;
    for (char c : text) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else out += c;
    }
    return out;
}

std::string num(double value) {
    const std::string s = fmt::format("{:.1f}", std::fabs(value) < 0.05 ? 0.0 : value);
    return s.size() > 2 && s.ends_with(".0") ? s.substr(0, s.size() - 2) : s;
}

const Ink& ink(std::size_t index) { return kInkTable[index % kInks]; }

Svg::Svg(std::string id, double width, double height, std::string title)
    : id_(std::move(id)), width_(width), height_(height), title_(std::move(title)) {}

void Svg::add(std::string element) {
    body_ += element;
    body_ += '\n';
}

std::string Svg::fill(std::size_t index) {
    const Ink& k = ink(index);
    if (!*k.pattern) return k.colour;
    const std::string pid = fmt::format("{}-ink{}", id_, index % kInks);
    if (std::find(defined_.begin(), defined_.end(), index % kInks) == defined_.end()) {
        defined_.push_back(index % kInks);
        defs_ += pattern_def(pid, k);
    }
    return "url(#" + pid + ")";
}

void Svg::marker(std::size_t index, double x, double y, double size, std::string_view attrs) {
    const Ink& k = ink(index);
    const double r = size / 2;
    const std::string style = fmt::format("fill=\"{}\" stroke=\"#222222\" stroke-width=\"0.8\" {}", k.colour, attrs);
    switch (k.marker) {
        case 's': add(rect(x - r, y - r, size, size, style)); break;
        case '^': add(polygon({{x, y - r * 1.2}, {x + r * 1.1, y + r * 0.8}, {x - r * 1.1, y + r * 0.8}}, style)); break;
        case 'v': add(polygon({{x, y + r * 1.2}, {x + r * 1.1, y - r * 0.8}, {x - r * 1.1, y - r * 0.8}}, style)); break;
        case 'd': add(polygon({{x, y - r * 1.3}, {x + r, y}, {x, y + r * 1.3}, {x - r, y}}, style)); break;
        case 'x':
            add(fmt::format("<path d=\"M{0} {1}L{2} {3}M{0} {3}L{2} {1}\" stroke=\"{4}\" stroke-width=\"2\" {5}/>", num(x - r), num(y - r),
                            num(x + r), num(y + r), k.colour, attrs));
            break;
        default: add(fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}/>", num(x), num(y), num(r), style));
    }
}

std::string Svg::str() const {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
                       "font-family=\"sans-serif\" font-size=\"{}\" role=\"img\" aria-labelledby=\"{}-title\">\n"
                       "<title id=\"{}-title\">{}</title>\n<defs>{}</defs>\n"
                       "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{}</svg>\n",
                       id_, num(width_), num(height_), num(width_), num(height_), num(kFontSize), id_, id_, escape(title_), defs_, body_);
}

std::string rect(double x, double y, double w, double h, std::string_view attrs) {
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}/>", num(x), num(y), num(std::max(w, 0.0)),
                       num(std::max(h, 0.0)), attrs);
}

std::string rect(double x, double y, double w, double h, std::string_view attrs, std::string_view tooltip) {
    return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" {}><title>{}</title></rect>", num(x), num(y),
                       num(std::max(w, 0.0)), num(std::max(h, 0.0)), attrs, escape(tooltip));
}

std::string line(double x1, double y1, double x2, double y2, std::string_view attrs) {
    return fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>", num(x1), num(y1), num(x2), num(y2), attrs);
}

std::string text(double x, double y, std::string_view content, std::string_view attrs) {
    return fmt::format("<text x=\"{}\" y=\"{}\" {}>{}</text>", num(x), num(y), attrs, escape(content));
}

std::string polyline(const std::vector<std::pair<double, double>>& points, std::string_view attrs) {
    return fmt::format("<polyline points=\"{}\" {}/>", points_text(points), attrs);
}

std::string polygon(const std::vector<std::pair<double, double>>& points, std::string_view attrs) {
    return fmt::format("<polygon points=\"{}\" {}/>", points_text(points), attrs);
}

double text_width(std::string_view t, double font_size) { return static_cast<double>(t.size()) * font_size * 0.6; }

Frame::Frame(Box area, Axis x, Axis y) : area_(area), x_(std::move(x)), y_(std::move(y)) {}

double Frame::px(double x) const { return area_.x + x_.fraction(x) * area_.w; }
double Frame::py(double y) const { return area_.y + area_.h - y_.fraction(y) * area_.h; }

void Frame::draw(Svg& svg, std::string_view title) const {
    const Box& a = area_;
    const std::string grid = "stroke=\"#d9d9d9\" stroke-width=\"1\"";
    const std::string axis = "stroke=\"#333333\" stroke-width=\"1\"";
    for (double t : y_.ticks) {
        const double y = py(t);
        svg.add(line(a.x, y, a.x + a.w, y, grid));
        svg.add(line(a.x - 4, y, a.x, y, axis));
        svg.add(text(a.x - 7, y + 4, y_.text(t), "text-anchor=\"end\" class=\"tick\""));
    }
    for (double t : x_.ticks) {
        const double x = px(t);
        svg.add(line(x, a.y, x, a.y + a.h, grid));
        svg.add(line(x, a.y + a.h, x, a.y + a.h + 4, axis));
        svg.add(text(x, a.y + a.h + 17, x_.text(t), "text-anchor=\"middle\" class=\"tick\""));
    }
    svg.add(line(a.x, a.y + a.h, a.x + a.w, a.y + a.h, axis));
    svg.add(line(a.x, a.y, a.x, a.y + a.h, axis));
    svg.add(text(a.x + a.w / 2, a.y + a.h + 36, x_.label, "text-anchor=\"middle\" class=\"axis-label\""));
    svg.add(fmt::format("<text transform=\"translate({},{}) rotate(-90)\" text-anchor=\"middle\" class=\"axis-label\">{}</text>",
                        num(a.x - 52), num(a.y + a.h / 2), escape(y_.label)));
    if (!title.empty()) svg.add(text(16, 22, title, "font-size=\"15\" font-weight=\"bold\" class=\"chart-title\""));
}

double legend(Svg& svg, double x0, double y0, double max_width, const std::vector<LegendEntry>& entries) {
    double x = x0, y = y0;
    for (const auto& e : entries) {
        const double w = 34 + text_width(e.label);
        if (x > x0 && x + w > x0 + max_width) {
            x = x0;
            y += kRowHeight + 3;
        }
        const Ink& k = ink(e.ink);
        const bool has_line = e.kind == LegendEntry::Kind::Line || e.kind == LegendEntry::Kind::LineAndPoint;
        if (e.kind == LegendEntry::Kind::Swatch)
            svg.add(rect(x, y - 10, 22, 12,
                         fmt::format("fill=\"{}\" stroke=\"#333333\" stroke-width=\"0.6\"", e.colour.empty() ? svg.fill(e.ink) : e.colour)));
        if (has_line)
            svg.add(line(x, y - 4, x + 22, y - 4,
                         fmt::format("stroke=\"{}\" stroke-width=\"2.2\" stroke-dasharray=\"{}\"", e.colour.empty() ? k.colour : e.colour, k.dash)));
        if (e.kind == LegendEntry::Kind::Point || e.kind == LegendEntry::Kind::LineAndPoint) svg.marker(e.ink, x + 11, y - 4, 8);
        svg.add(text(x + 27, y, e.label, "class=\"legend\""));
        x += w + 12;
    }
    return y - y0 + kRowHeight;
}

namespace {
// The row of each marker's label: the first row where it overlaps no label placed before it.
std::vector<int> label_rows(const Frame& frame, const std::vector<VerticalMarker>& markers) {
    std::vector<std::vector<std::pair<double, double>>> taken;
    std::vector<int> rows;
    for (const auto& m : markers) {
        const double x = frame.px(m.x), w = text_width(m.label) + 8;
        // Labels start at the marker; near the right edge they end there instead.
        const bool flip = x + w > frame.area().x + frame.area().w + 40;
        const double left = flip ? x - w : x, right = flip ? x : x + w;
        int row = 0;
        for (;; ++row) {
            if (row == static_cast<int>(taken.size())) taken.emplace_back();
            bool clear = true;
            for (const auto& [l, r] : taken[static_cast<std::size_t>(row)])
                if (left < r && l < right) clear = false;
            if (clear) break;
        }
        taken[static_cast<std::size_t>(row)].emplace_back(left, right);
        rows.push_back(row);
    }
    return rows;
}
}  // namespace

int marker_rows(const Frame& frame, const std::vector<VerticalMarker>& markers) {
    const auto rows = label_rows(frame, markers);
    return rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end()) + 1;
}

void vertical_markers(Svg& svg, const Frame& frame, const std::vector<VerticalMarker>& markers) {
    const auto rows = label_rows(frame, markers);
    const Box& a = frame.area();
    for (std::size_t i = 0; i < markers.size(); ++i) {
        const auto& m = markers[i];
        const Ink& k = ink(m.ink);
        const double x = frame.px(m.x);
        const double label_y = a.y - 6 - kRowHeight * rows[i];
        const bool flip = x + text_width(m.label) + 8 > a.x + a.w + 40;
        svg.add(line(x, label_y + 3, x, a.y + a.h,
                     fmt::format("stroke=\"{}\" stroke-width=\"1.6\" stroke-dasharray=\"{}\" class=\"marker-line\"", k.colour,
                                 *k.dash ? k.dash : "5 3")));
        svg.marker(m.ink, x, label_y - 4, 9);
        svg.add(text(flip ? x - 8 : x + 8, label_y, m.label,
                     fmt::format("text-anchor=\"{}\" class=\"marker-label\" data-key=\"marker-label\" data-x=\"{}\" {}", flip ? "end" : "start", m.x, kHalo)));
    }
}

}  // namespace sextant::plot
