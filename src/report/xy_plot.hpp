#pragma once
// A curve with a confidence band against a log-scaled x axis, as terminal text or as SVG:
// goodput against checkpoint interval is the picture of a what-if study.
#include <string>
#include <vector>

namespace sextant {

struct PlotPoint {
    double x = 0;
    double y = 0;
    double y_low = 0;
    double y_high = 0;
};

// A vertical marker at x, drawn with `symbol` (text) and named `label` (legend).
struct PlotMarker {
    double x = 0;
    char symbol = '|';
    std::string label;
};

struct PlotLabels {
    std::string title;
    std::string x_label;
    std::string y_label;
};

// `x_text` formats an x value for the axis ends (e.g. a duration).
std::string text_plot(const std::vector<PlotPoint>& points, const std::vector<PlotMarker>& markers,
                      const PlotLabels& labels, std::string (*x_text)(double), int width = 64,
                      int height = 16);

std::string svg_plot(const std::vector<PlotPoint>& points, const std::vector<PlotMarker>& markers,
                     const PlotLabels& labels, std::string (*x_text)(double));

}  // namespace sextant
