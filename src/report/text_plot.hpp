#pragma once
// A curve with its confidence band as terminal text (the goodput curve of `whatif checkpoint`):
// x on a log scale, ticks from the plot library's axes on both, vertical markers whose symbols sit
// on a line above the plot.
#include <string>
#include <vector>

#include "report/plot.hpp"

namespace sextant {

struct TextPlotPoint {
    double x = 0, y = 0, y_low = 0, y_high = 0;
};

struct TextPlotMarker {
    double x = 0;
    char symbol = '|';
    std::string label;
};

struct TextPlotAxes {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::vector<double> x_ladder;  // candidate x ticks (log axis)
    plot::TickText x_text;
    plot::TickText y_text;
};

std::string text_plot(const std::vector<TextPlotPoint>& points, const std::vector<TextPlotMarker>& markers, const TextPlotAxes& axes,
                      int width = 64, int height = 16);

}  // namespace sextant
