#include "cli/profile_report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "profile/collective_sweeps.hpp"
#include "core/table.hpp"

namespace sextant::cli {

namespace {
struct SweepSummary {
    double min_bytes, max_bytes, peak_busbw;
};

SweepSummary summarize(const CollectiveSweep& s) {
    SweepSummary out{s.samples.front().bytes, s.samples.front().bytes, 0};
    for (const CollectiveSample& p : s.samples) {
        out.min_bytes = std::min(out.min_bytes, p.bytes);
        out.max_bytes = std::max(out.max_bytes, p.bytes);
        out.peak_busbw = std::max(out.peak_busbw, sample_busbw_gbps(s, p));
    }
    return out;
}

std::string fit_set(const MeasuredCollectives& m, const AlphaBetaFit& f) {
    std::vector<std::int64_t> ranks;
    for (std::size_t i : f.sweeps) ranks.push_back(m.sweeps()[i].ranks);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string out;
    for (auto r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out;
}
}  // namespace

std::string sweeps_table(const std::vector<CollectiveSweep>& sweeps) {
    TextTable t({"op", "span", "ranks", "nodes", "sizes", "points", "peak busbw", "verified", "measured by", "log"});
    for (const CollectiveSweep& s : sweeps) {
        const SweepSummary sum = summarize(s);
        t.add_row({std::string(nccl_test_op_name(s.op)), std::string(measured_span_name(s.span)), std::to_string(s.ranks),
                   std::to_string(s.nodes), format_bytes(sum.min_bytes) + ".." + format_bytes(sum.max_bytes),
                   std::to_string(s.samples.size()), fmt::format("{:.1f} GB/s", sum.peak_busbw),
                   s.provenance.verified ? "yes" : "no", s.provenance.tool, s.provenance.file});
    }
    return t.render();
}

json sweeps_json(const std::vector<CollectiveSweep>& sweeps) {
    json out = json::array();
    for (const CollectiveSweep& s : sweeps) {
        const SweepSummary sum = summarize(s);
        out.push_back({{"op", nccl_test_op_name(s.op)}, {"span", measured_span_name(s.span)}, {"ranks", s.ranks},
                       {"nodes", s.nodes}, {"points", s.samples.size()}, {"min_bytes", sum.min_bytes},
                       {"max_bytes", sum.max_bytes}, {"peak_busbw_gbps", sum.peak_busbw}, {"verified", s.provenance.verified},
                       {"tool", s.provenance.tool}, {"file", s.provenance.file}, {"date", s.provenance.date},
                       {"hosts", s.provenance.hosts}});
    }
    return out;
}

std::string fits_table(const MeasuredCollectives& m) {
    TextTable t({"op", "span", "fit set (ranks)", "alpha (us/step)", "busbw (GB/s)", "rms error", "points"});
    for (const AlphaBetaFit& f : m.fits())
        t.add_row({std::string(nccl_test_op_name(f.op)), std::string(measured_span_name(f.span)), fit_set(m, f),
                   fmt::format("{:.2f}", f.step_latency_us), fmt::format("{:.1f}", f.busbw_gbps),
                   fmt::format("{:.1f}%", f.rms_error_pct), std::to_string(f.points)});
    return t.render();
}

json fits_json(const MeasuredCollectives& m) {
    json out = json::array();
    for (const AlphaBetaFit& f : m.fits()) {
        json ranks = json::array();
        for (std::size_t i : f.sweeps) ranks.push_back(m.sweeps()[i].ranks);
        out.push_back({{"op", nccl_test_op_name(f.op)}, {"span", measured_span_name(f.span)}, {"fit_set_ranks", ranks},
                       {"step_latency_us", f.step_latency_us}, {"busbw_gbps", f.busbw_gbps},
                       {"rms_error_pct", f.rms_error_pct}, {"points", f.points}});
    }
    return out;
}

}  // namespace sextant::cli
