#include "collective/measured_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "profile/collective_sweeps.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct FitPoint {
    double steps, bus_bytes, seconds;
};

// Weighted least squares of t = a x steps + b x bus_bytes with weights 1/t^2 (relative error, so
// that 8-byte latencies and 8-GiB transfers count alike), a >= 0, b > 0. Nothing when the points
// cannot separate a bandwidth (no time grows with size).
std::optional<std::pair<double, double>> fit_alpha_beta(const std::vector<FitPoint>& points) {
    double s11 = 0, s12 = 0, s22 = 0, r1 = 0, r2 = 0;
    for (const FitPoint& p : points) {
        const double w = 1.0 / (p.seconds * p.seconds);
        s11 += w * p.steps * p.steps;
        s12 += w * p.steps * p.bus_bytes;
        s22 += w * p.bus_bytes * p.bus_bytes;
        r1 += w * p.steps * p.seconds;
        r2 += w * p.bus_bytes * p.seconds;
    }
    const double det = s11 * s22 - s12 * s12;
    double a = 0, b = 0;
    if (std::abs(det) > 1e-12 * s11 * s22) {
        a = (r1 * s22 - r2 * s12) / det;
        b = (s11 * r2 - s12 * r1) / det;
    }
    if (a < 0 || b <= 0) {  // one point, or a negative latency: the bandwidth term alone
        a = 0;
        b = s22 > 0 ? r2 / s22 : 0;
    }
    if (b <= 0 || !std::isfinite(b)) return std::nullopt;
    return std::make_pair(a, b);
}

double log_lerp(double x0, double y0, double x1, double y1, double x) {
    const double t = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
    return std::exp(std::log(y0) + t * (std::log(y1) - std::log(y0)));
}
}  // namespace

double latency_steps(NcclTestOp op, std::int64_t ranks) {
    const double n = d(std::max<std::int64_t>(ranks, 2));
    switch (op) {
        case NcclTestOp::AllReduce: return 2 * (n - 1);
        case NcclTestOp::AllGather:
        case NcclTestOp::ReduceScatter:
        case NcclTestOp::AllToAll:
        case NcclTestOp::Broadcast:
        case NcclTestOp::Reduce: return n - 1;
        case NcclTestOp::SendRecv: return 1;
    }
    return n - 1;
}

double AlphaBetaFit::seconds(std::int64_t ranks, double bytes) const {
    return step_latency_us * 1e-6 * latency_steps(op, ranks) + bytes * busbw_factor(op, ranks) / (busbw_gbps * 1e9);
}

MeasuredCollectives::MeasuredCollectives(std::vector<CollectiveSweep> sweeps) : sweeps_(std::move(sweeps)) {
    // Curves: every sweep of one (op, span, ranks, nodes), sizes merged.
    using CurveKey = std::tuple<int, int, std::int64_t, std::int64_t>;
    std::map<CurveKey, std::map<double, std::vector<double>>> merged;
    using FitKey = std::pair<int, int>;
    std::map<FitKey, std::vector<std::size_t>> fit_sets;
    for (std::size_t i = 0; i < sweeps_.size(); ++i) {
        const CollectiveSweep& s = sweeps_[i];
        auto& sizes = merged[{int(s.op), int(s.span), s.ranks, s.nodes}];
        for (const CollectiveSample& sample : s.samples) sizes[sample.bytes].push_back(sample.time_us * 1e-6);
        fit_sets[{int(s.op), int(s.span)}].push_back(i);
    }
    for (const auto& [key, sizes] : merged) {
        Curve c{static_cast<NcclTestOp>(std::get<0>(key)), static_cast<MeasuredSpan>(std::get<1>(key)), std::get<2>(key),
                std::get<3>(key), {}, {}};
        for (const auto& [bytes, times] : sizes) {
            c.bytes.push_back(bytes);
            c.seconds.push_back(median(times));
        }
        curves_.push_back(std::move(c));
    }
    for (const auto& [key, members] : fit_sets) {
        AlphaBetaFit f;
        f.op = static_cast<NcclTestOp>(key.first);
        f.span = static_cast<MeasuredSpan>(key.second);
        f.sweeps = members;
        std::vector<FitPoint> points;
        for (std::size_t i : members)
            for (const CollectiveSample& sample : sweeps_[i].samples)
                points.push_back({latency_steps(f.op, sweeps_[i].ranks), sample.bytes * busbw_factor(f.op, sweeps_[i].ranks),
                                  sample.time_us * 1e-6});
        const auto ab = fit_alpha_beta(points);
        if (!ab) continue;
        f.step_latency_us = ab->first * 1e6;
        f.busbw_gbps = 1.0 / ab->second / 1e9;
        f.points = points.size();
        double squares = 0;
        for (std::size_t i : members)
            for (const CollectiveSample& sample : sweeps_[i].samples) {
                const double t = sample.time_us * 1e-6, e = (f.seconds(sweeps_[i].ranks, sample.bytes) - t) / t;
                squares += e * e;
            }
        f.rms_error_pct = 100.0 * std::sqrt(squares / d(static_cast<std::int64_t>(points.size())));
        fits_.push_back(std::move(f));
    }
}

const AlphaBetaFit* MeasuredCollectives::fit(NcclTestOp op, MeasuredSpan span) const {
    for (const AlphaBetaFit& f : fits_)
        if (f.op == op && f.span == span) return &f;
    return nullptr;
}

const MeasuredCollectives::Curve* MeasuredCollectives::curve(NcclTestOp op, MeasuredSpan span, std::int64_t ranks,
                                                             std::int64_t nodes) const {
    for (const Curve& c : curves_)
        if (c.op == op && c.span == span && c.ranks == ranks && (span != MeasuredSpan::Cluster || c.nodes == nodes)) return &c;
    return nullptr;
}

std::optional<MeasuredTime> MeasuredCollectives::idle_time(NcclTestOp op, MeasuredSpan span, std::int64_t ranks,
                                                           std::int64_t nodes, double bytes) const {
    const AlphaBetaFit* f = fit(op, span);
    const Curve* c = curve(op, span, ranks, nodes);
    if (!c) {
        if (!f) return std::nullopt;
        return MeasuredTime{f->seconds(ranks, bytes), MeasuredTime::Basis::Fitted};
    }
    const auto& x = c->bytes;
    const auto& y = c->seconds;
    // Beyond the measured sizes the curve continues along the fitted law's shape from its last
    // point (or, without a fit, at the edge's time below and the edge's bandwidth above).
    const auto beyond = [&](std::size_t edge) {
        if (f) return y[edge] * f->seconds(ranks, bytes) / f->seconds(ranks, x[edge]);
        return bytes < x[edge] ? y[edge] : y[edge] * bytes / x[edge];
    };
    double seconds = 0;
    if (bytes <= x.front()) seconds = bytes == x.front() ? y.front() : beyond(0);
    else if (bytes >= x.back()) seconds = bytes == x.back() ? y.back() : beyond(x.size() - 1);
    else {
        const std::size_t hi = static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), bytes) - x.begin());
        seconds = log_lerp(x[hi - 1], y[hi - 1], x[hi], y[hi], bytes);
    }
    return MeasuredTime{seconds, MeasuredTime::Basis::Interpolated};
}

namespace {
// The mean of one fitted quantity over the fits of `ops` on `span`, with the fit set named.
struct Mean {
    double value = 0;
    std::string fit_set;
};

template <class Quantity>
std::optional<Mean> mean_over(const MeasuredCollectives& m, MeasuredSpan span, const std::vector<NcclTestOp>& ops,
                              Quantity quantity) {
    double sum = 0;
    int count = 0;
    std::string set;
    for (NcclTestOp op : ops) {
        const AlphaBetaFit* f = m.fit(op, span);
        if (!f) continue;
        sum += quantity(*f);
        ++count;
        std::string ranks;
        for (std::size_t i : f->sweeps) ranks += (ranks.empty() ? "" : ", ") + std::to_string(m.sweeps()[i].ranks);
        set += (set.empty() ? "" : "; ") + std::string(nccl_test_op_name(op)) + " over " +
               std::string(measured_span_name(span)) + " (" + ranks + " ranks)";
    }
    if (count == 0) return std::nullopt;
    return Mean{sum / count, set};
}

std::int64_t largest_ranks(const MeasuredCollectives& m, const AlphaBetaFit& f) {
    std::int64_t n = 2;
    for (std::size_t i : f.sweeps) n = std::max(n, m.sweeps()[i].ranks);
    return n;
}
}  // namespace

FittedComm fitted_comm_calibration(const CommCalibration& published, const MeasuredCollectives& m, const GpuSpec& gpu,
                                   double nic_gbps) {
    FittedComm out{published, {}};
    CommCalibration& c = out.calibration;
    const auto set = [&](const char* name, double& field, std::optional<Mean> mean, double lo, double hi) {
        if (!mean) return;
        const double value = std::clamp(mean->value, lo, hi);
        out.constants.push_back({name, field, value, mean->fit_set});
        field = value;
    };
    // Ring collectives over NVLink: busbw = NVLink rate x ring efficiency (the model's ring).
    // All-reduce is a ring only where NVLS is absent.
    std::vector<NcclTestOp> ring_ops = {NcclTestOp::AllGather, NcclTestOp::ReduceScatter};
    if (!gpu.nvls) ring_ops.push_back(NcclTestOp::AllReduce);
    set("nvlink_ring_efficiency", c.nvlink_ring_efficiency,
        mean_over(m, MeasuredSpan::Node, ring_ops, [&](const AlphaBetaFit& f) { return f.busbw_gbps / gpu.nvlink_gbps; }), 0.05, 1.0);
    set("nvlink_latency_us", c.nvlink_latency_us,
        mean_over(m, MeasuredSpan::Node, ring_ops, [](const AlphaBetaFit& f) { return f.step_latency_us; }), 0.0, 1e6);
    if (gpu.nvls) {
        // The model's NVLS all-reduce runs at algbw = NVLink rate x efficiency / 1.75 (the
        // efficiency is the 8-GPU busbw over the line rate): read it at the largest measured group.
        set("nvls_allreduce_efficiency", c.nvls_allreduce_efficiency,
            mean_over(m, MeasuredSpan::Node, {NcclTestOp::AllReduce},
                      [&](const AlphaBetaFit& f) {
                          const std::int64_t n = largest_ranks(m, f);
                          return f.busbw_gbps / busbw_factor(f.op, n) * 1.75 / gpu.nvlink_gbps;
                      }),
            0.05, 2.0);
    }
    // One GPU per node: every collective is bound by the GPU's NIC.
    const std::vector<NcclTestOp> rail_ops = {NcclTestOp::AllGather, NcclTestOp::ReduceScatter, NcclTestOp::AllReduce};
    if (nic_gbps > 0)
        set("nic_efficiency", c.nic_efficiency,
            mean_over(m, MeasuredSpan::Rail, rail_ops, [&](const AlphaBetaFit& f) { return f.busbw_gbps / (nic_gbps / 8.0); }),
            0.05, 1.0);
    set("network_latency_us", c.network_latency_us,
        mean_over(m, MeasuredSpan::Rail, rail_ops, [](const AlphaBetaFit& f) { return f.step_latency_us; }), 0.0, 1e6);
    return out;
}

}  // namespace sextant
