#include "report/accuracy_view.hpp"

#include <fmt/format.h>

namespace sextant {

// The rows the text shows of the runs like the scenario; JSON lists them all.
namespace {
constexpr std::size_t kShownRuns = 6;
}  // namespace

void add_accuracy(Output& out, const Scenario& s, const AccuracyContext& c) {
    const std::string kind = c.moe ? "MoE" : "dense";
    out.add_facts({
        {"/accuracy/gpu", "", c.gpu},
        {"/accuracy/moe", "", c.moe},
        {"/accuracy/other_gpus", "", c.other_gpus},
        {"/accuracy/runs", "", c.runs.size()},
        {"/accuracy/refused", "", c.refused},
        {"/accuracy/mape_pct", "", c.runs.empty() ? Value() : Value(c.mape_pct)},
        {"/accuracy/mean_error_pct", "", c.runs.empty() ? Value() : Value(c.mean_error_pct)},
        {"/accuracy/worst_run", "", c.runs.empty() ? Value() : Value(c.worst_run)},
        {"/accuracy/worst_error_pct", "", c.runs.empty() ? Value() : Value(c.worst_error_pct)},
        {"/accuracy/largest_gpus", "", c.largest_gpus},
    });
    if (c.runs.empty()) {
        out.note(fmt::format("no published {} run is in the validation set (tests/validation/, less the fit sets): nothing says how far "
                             "to trust this prediction",
                             kind));
        return;
    }
    Table& t = out.table("/accuracy/nearest", {{"id", c.other_gpus ? fmt::format("published {} runs, nearest first", kind)
                                                                     : fmt::format("published {} {} runs, nearest first", c.gpu, kind)},
                                               {"runtime", "runtime"},
                                               {"precision", "precision"},
                                               {"gpus", "GPUs"},
                                               {"error_pct", "error"}});
    for (std::size_t i = 0; i < c.runs.size(); ++i) {
        const SimilarRun& r = c.runs[i];
        t.rows.push_back({r.id, r.runtime, r.precision, r.gpus, Value(r.error_pct, Style::SignedPercent)});
        if (i >= kShownRuns) t.json_only_rows.push_back(i);
    }
    out.note(fmt::format("{} run{} like this one, none a fit used: MAPE {:.1f}%, mean error {:+.1f}% (+: predicted slower than "
                         "measured), worst {} at {:+.1f}%{}{}",
                         c.runs.size(), c.runs.size() == 1 ? "" : "s", c.mape_pct, c.mean_error_pct, c.worst_run, c.worst_error_pct,
                         c.runs.size() > kShownRuns ? fmt::format("; {} more in --json", c.runs.size() - kShownRuns) : "",
                         c.refused ? fmt::format("; {} more the model refuses (sextant validate says why)", c.refused) : ""),
             true);
    if (c.other_gpus)
        out.note(fmt::format("no published {} run on {} is in the validation set: these are {} runs on every GPU type", kind, c.gpu, kind),
                 true);
    if (s.cluster.gpus > c.largest_gpus)
        out.note(fmt::format("{} GPUs is more than any of them ran ({} the most): what grows with the GPU count is extrapolated",
                             s.cluster.gpus, c.largest_gpus),
                 true);
    if (!s.calibration.is_null())
        out.note("these errors are the shipped calibration's; this scenario reads its own", true);
}

}  // namespace sextant
