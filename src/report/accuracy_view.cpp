#include "report/accuracy_view.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/table.hpp"

namespace sextant {

namespace {
// The rows the text shows of the runs like the scenario; JSON lists them all.
constexpr std::size_t kShownRuns = 6;

std::string kind(const AccuracyContext& c) { return c.moe ? "MoE" : "dense"; }
}  // namespace

std::string accuracy_heading(const AccuracyContext& c) {
    return c.other_gpus ? fmt::format("published {} runs, nearest first", kind(c))
                        : fmt::format("published {} {} runs, nearest first", c.gpu, kind(c));
}

std::vector<std::string> accuracy_notes(const AccuracyContext& c, std::size_t listed) {
    if (c.runs.empty())
        return {fmt::format("no published {} run is in the validation set (tests/validation/, less the fit sets): nothing says how far to "
                            "trust this prediction",
                            kind(c))};
    std::vector<std::string> notes;
    notes.push_back(fmt::format("{} run{} like this one, none a fit used: MAPE {:.1f}%, mean error {:+.1f}% (+: predicted slower than "
                                "measured), worst {} at {:+.1f}%{}{}",
                                c.runs.size(), c.runs.size() == 1 ? "" : "s", c.mape_pct, c.mean_error_pct, c.worst_run, c.worst_error_pct,
                                c.runs.size() > listed ? fmt::format("; {} more in --json", c.runs.size() - listed) : "",
                                c.refused ? fmt::format("; {} more the model refuses (sextant validate says why)", c.refused) : ""));
    if (c.other_gpus)
        notes.push_back(fmt::format("no published {} run on {} is in the validation set: these are {} runs on every GPU type", kind(c), c.gpu,
                                    kind(c)));
    if (c.has_range)
        notes.push_back(fmt::format("if this prediction errs as theirs did (their middle 80%: {:+.1f}% to {:+.1f}%), the measured step is {} "
                                    "to {} (predicted {})",
                                    c.error_p10_pct, c.error_p90_pct, format_seconds(c.step_time_low_s), format_seconds(c.step_time_high_s),
                                    format_seconds(c.predicted_step_time_s)));
    const auto none_ran = [&](auto field, const std::string& value) {
        return std::none_of(c.runs.begin(), c.runs.end(), [&](const SimilarRun& r) { return r.*field == value; });
    };
    if (none_ran(&SimilarRun::precision, c.precision))
        notes.push_back(fmt::format("none of them ran {}: how that recipe's kernels cost on this GPU and kind is unvalidated", c.precision));
    if (none_ran(&SimilarRun::runtime, c.runtime))
        notes.push_back(fmt::format("none of them ran {}: what that runtime fuses and overlaps is unvalidated here", c.runtime));
    if (c.scenario_gpus > c.largest_gpus)
        notes.push_back(fmt::format("{} GPUs is more than any of them ran ({} the most): what grows with the GPU count is extrapolated",
                                    c.scenario_gpus, c.largest_gpus));
    if (c.own_calibration) notes.push_back("these errors are the shipped calibration's; this scenario reads its own");
    return notes;
}

void add_accuracy(Output& out, const AccuracyContext& c) {
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
        {"/accuracy/error_p10_pct", "", c.has_range ? Value(c.error_p10_pct) : Value()},
        {"/accuracy/error_p90_pct", "", c.has_range ? Value(c.error_p90_pct) : Value()},
        {"/accuracy/step_time_low_s", "", c.has_range ? Value(c.step_time_low_s) : Value()},
        {"/accuracy/step_time_high_s", "", c.has_range ? Value(c.step_time_high_s) : Value()},
    });
    if (!c.runs.empty()) {
        Table& t = out.table("/accuracy/nearest",
                             {{"id", accuracy_heading(c)}, {"runtime", "runtime"}, {"precision", "precision"}, {"gpus", "GPUs"}, {"error_pct", "error"}});
        for (std::size_t i = 0; i < c.runs.size(); ++i) {
            const SimilarRun& r = c.runs[i];
            t.rows.push_back({r.id, r.runtime, r.precision, r.gpus, Value(r.error_pct, Style::SignedPercent)});
            if (i >= kShownRuns) t.json_only_rows.push_back(i);
        }
    }
    for (auto& n : accuracy_notes(c, std::min(c.runs.size(), kShownRuns))) out.note(std::move(n), !c.runs.empty());
}

nlohmann::json accuracy_json(const AccuracyContext& c) {
    Output out;
    add_accuracy(out, c);
    return render_json(out)["accuracy"];
}

}  // namespace sextant
