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

const MeasuredCollectives::Curve* MeasuredCollectives::nearest(NcclTestOp op, MeasuredSpan span, std::int64_t ranks) const {
    const Curve* best = nullptr;
    double best_distance = 0;
    for (const Curve& c : curves_) {
        if (c.op != op || c.span != span) continue;
        const double distance = std::abs(std::log(d(c.ranks)) - std::log(d(ranks)));
        if (!best || distance < best_distance || (distance == best_distance && c.ranks > best->ranks)) {
            best = &c;
            best_distance = distance;
        }
    }
    return best;
}

// The curve at `bytes`: log-log between measured sizes; beyond them along the fitted law's shape
// from the edge point (or, without a fit, at the edge's time below and its bandwidth above).
double MeasuredCollectives::interpolate(const Curve& c, double bytes) const {
    const AlphaBetaFit* f = fit(c.op, c.span);
    const auto& x = c.bytes;
    const auto& y = c.seconds;
    const auto beyond = [&](std::size_t edge) {
        if (f) return y[edge] * f->seconds(c.ranks, bytes) / f->seconds(c.ranks, x[edge]);
        return bytes < x[edge] ? y[edge] : y[edge] * bytes / x[edge];
    };
    if (bytes <= x.front()) return bytes == x.front() ? y.front() : beyond(0);
    if (bytes >= x.back()) return bytes == x.back() ? y.back() : beyond(x.size() - 1);
    const std::size_t hi = static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), bytes) - x.begin());
    return log_lerp(x[hi - 1], y[hi - 1], x[hi], y[hi], bytes);
}

std::optional<MeasuredTime> MeasuredCollectives::idle_time(NcclTestOp op, MeasuredSpan span, std::int64_t ranks,
                                                           std::int64_t nodes, double bytes) const {
    if (const Curve* c = curve(op, span, ranks, nodes)) return MeasuredTime{interpolate(*c, bytes), MeasuredTime::Basis::Interpolated};
    // Another rank count: its measured curve carries the protocol changes over sizes that no
    // two-term law does; the fitted law carries it from that rank count to this one.
    const AlphaBetaFit* f = fit(op, span);
    const Curve* c = nearest(op, span, ranks);
    if (!f || !c) return std::nullopt;
    return MeasuredTime{interpolate(*c, bytes) * f->seconds(ranks, bytes) / f->seconds(c->ranks, bytes),
                        MeasuredTime::Basis::Fitted};
}

std::string MeasuredCollectives::Curve::label() const {
    std::string out = std::string(nccl_test_op_name(op)) + " over " + std::string(measured_span_name(span)) + " (" +
                      std::to_string(ranks) + " ranks";
    if (span == MeasuredSpan::Cluster) out += ", " + std::to_string(nodes) + " nodes";
    return out + ")";
}

}  // namespace sextant
