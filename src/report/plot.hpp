#pragma once
// The one small plotting library every picture of Sextant uses (the HTML report's charts and the
// goodput SVG of `whatif checkpoint --svg`): axes with readable ticks on linear and log scales, an
// SVG document built element by element, a plot frame (grid, ticks, axis labels, title), legends,
// labelled vertical markers that never print over each other, and inks whose fills, patterns,
// dashes and marker shapes stay distinct in grey scale.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace sextant::plot {

using TickText = std::function<std::string(double)>;

enum class Scale { Linear, Log };

struct Axis {
    std::string label;  // what is plotted and its unit: "peak memory per GPU (GiB)"
    Scale scale = Scale::Linear;
    double lo = 0, hi = 1;
    std::vector<double> ticks;  // labelled values, inside [lo, hi]
    TickText text;
    // 0 at lo, 1 at hi (in log space on a log scale); may lie outside [0, 1].
    double fraction(double value) const;
};

// Ticks at 1, 2, 2.5 or 5 x 10^k covering [lo, hi] with at most `max_ticks`; the axis ends on ticks.
Axis linear_axis(std::string label, double lo, double hi, TickText text, int max_ticks = 7);
// A log axis from lo to hi (both > 0) with ticks from `ladder` (ascending), thinned evenly to at
// most `max_ticks`.
Axis log_axis(std::string label, double lo, double hi, const std::vector<double>& ladder, TickText text, int max_ticks = 8);

// Tick ladders: every power of `base` in [lo, hi]; 1-2-5 per decade; human durations (seconds).
std::vector<double> powers_of(double base, double lo, double hi);
std::vector<double> decades_125(double lo, double hi);
std::vector<double> duration_ladder();

// Text safe inside XML elements and attribute values.
std::string escape(std::string_view text);
// A number for SVG coordinates: one decimal, no exponent.
std::string num(double value);

// How one data series is drawn. Fills differ in lightness and every other one carries a pattern;
// lines differ in dash; points in shape. Colours are Okabe and Ito's colour-blind-safe set.
struct Ink {
    const char* colour;
    const char* pattern;  // "", "hatch", "dots", "cross", "backhatch"
    const char* dash;     // stroke-dasharray, "" for solid
    char marker;          // 'o' circle, 's' square, '^' triangle, 'd' diamond, 'v' down triangle, 'x' cross
};
const Ink& ink(std::size_t index);
constexpr std::size_t kInks = 6;

struct Box {
    double x = 0, y = 0, w = 0, h = 0;
};

// An SVG document. Every element goes through `add`; patterned fills are defined once per
// document, under ids prefixed with the document's id (unique on a page).
class Svg {
public:
    Svg(std::string id, double width, double height, std::string title);
    const std::string& id() const { return id_; }
    double width() const { return width_; }
    double height() const { return height_; }
    void add(std::string element);
    // The fill attribute value of an ink: its colour, or its pattern over its colour.
    std::string fill(std::size_t ink_index);
    // A point marker of the ink's shape centred on (x, y); `attrs` are added to the element.
    void marker(std::size_t ink_index, double x, double y, double size, std::string_view attrs = "");
    // Standalone (with the XML namespace) or for inlining in HTML.
    std::string str() const;

private:
    std::string id_;
    double width_, height_;
    std::string title_;
    std::string defs_;
    std::vector<std::size_t> defined_;
    std::string body_;
};

// Element helpers: `attrs` is inserted verbatim ("fill=\"...\" class=\"...\"").
std::string rect(double x, double y, double w, double h, std::string_view attrs);
// The same with a tooltip (an SVG <title> child, shown on hover).
std::string rect(double x, double y, double w, double h, std::string_view attrs, std::string_view tooltip);
std::string line(double x1, double y1, double x2, double y2, std::string_view attrs);
std::string text(double x, double y, std::string_view content, std::string_view attrs = "");
std::string polyline(const std::vector<std::pair<double, double>>& points, std::string_view attrs);
std::string polygon(const std::vector<std::pair<double, double>>& points, std::string_view attrs);

// A plot area with its two axes.
class Frame {
public:
    Frame(Box area, Axis x, Axis y);
    double px(double x) const;
    double py(double y) const;
    const Box& area() const { return area_; }
    const Axis& x_axis() const { return x_; }
    const Axis& y_axis() const { return y_; }
    // Grid lines at the ticks, both axes with tick labels, the axis labels, and the title above.
    void draw(Svg& svg, std::string_view title) const;

private:
    Box area_;
    Axis x_, y_;
};

struct LegendEntry {
    std::string label;
    std::size_t ink = 0;
    enum class Kind { Swatch, Line, Point, LineAndPoint } kind = Kind::Swatch;
    std::string colour = "";  // instead of the ink's, for a swatch or line drawn in its own colour
};
// One row of entries from (x, y), wrapping at `max_width`; returns the height used.
double legend(Svg& svg, double x, double y, double max_width, const std::vector<LegendEntry>& entries);

// A vertical marker at data x, labelled; labels sit in rows above the plot area (one row per
// marker whose label would overlap a previous one), with the marker line from its label down.
struct VerticalMarker {
    double x = 0;
    std::string label;
    std::size_t ink = 0;
};
// Rows needed above the frame for these markers' labels (to size the top margin).
int marker_rows(const Frame& frame, const std::vector<VerticalMarker>& markers);
void vertical_markers(Svg& svg, const Frame& frame, const std::vector<VerticalMarker>& markers);

// A white outline under a label, so that it stays readable over lines and points.
inline constexpr const char* kHalo = "paint-order=\"stroke\" stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\"";

constexpr double kFontSize = 12;
constexpr double kRowHeight = 15;
// Width of a label at the page's 12 px sans-serif, for layout (an upper estimate).
double text_width(std::string_view text, double font_size = kFontSize);

}  // namespace sextant::plot
