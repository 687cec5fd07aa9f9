#pragma once
// Every chart of Sextant's reports, each an SVG document drawn with the plot library
// (report/plot.hpp). `id` must be unique on a page: it prefixes the document's pattern ids.
// Elements that the browser tests measure carry data-key attributes (and data-stage, data-part,
// data-cause, data-kind, data-algorithm where one chart has several kinds).
#include <string>

#include "report/report_model.hpp"

namespace sextant {

// Stacked bars per pipeline stage (weights, gradients, optimizer, activations, other) against the
// HBM line and the safety-margin line.
std::string memory_chart(const MemoryView& view, const std::string& id);
// The critical stage's breakdown: one bar per cause, seconds and share of the step.
std::string breakdown_chart(const StepView& view, const std::string& id);
// Every stage's streams over the step: forward, backward, recompute, communication, optimizer,
// waits, and idle time (the bubble) behind them.
std::string timeline_chart(const StepView& view, const std::string& id);
// MFU (or tokens/s) against peak memory: every screened layout that fits, the simulated best, the
// winner labelled, HBM as a vertical line.
std::string candidates_chart(const PlannerView& view, const std::string& id);
// A GPU-count sweep: train days and GPU-hours (or, without a token budget, tokens/s and MFU)
// against the GPU count.
std::string sweep_chart(const PlannerView& view, const std::string& id);
// Goodput against the checkpoint interval with its 95% confidence band, and the Young, Daly and
// simulated optima as labelled markers.
std::string goodput_chart(const reliability::IntervalStudy& study, const std::string& id, const std::string& title);
// Goodput (and its 95% CI) for each value of a swept setting.
std::string goodput_sweep_chart(const GoodputSweepView& view, const std::string& id, const std::string& title);
// Bus bandwidth against message size for every algorithm, what NCCL's tuner picks, and the
// calibration profile's measured points.
std::string busbw_chart(const PredictedSweep& sweep, const std::string& id);

// Compact axis texts: "5m", "1h", "1.5h", "2d"; "64 KiB", "1 GiB".
std::string short_duration(double seconds);
std::string short_bytes(double bytes);

}  // namespace sextant
