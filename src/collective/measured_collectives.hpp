#pragma once
// Measured collective sweeps as the collective model uses them. A measured time is that of one
// collective on an idle fabric (what nccl-tests measures); the network model puts its contention
// on top. Three tiers, most specific first:
//   1. a sweep of this op on this many ranks over this span: interpolated in size, log-log;
//   2. sweeps of this op over this span at other rank counts: the nearest rank count's sweep,
//      scaled by the latency-bandwidth law fitted to all of them (alpha per ring step, one bus
//      bandwidth) from that rank count to this one;
//   3. neither: the model, with the fabric constants the sweeps imply (network_model.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/measurements.hpp"

namespace sextant {

// Ring steps of one collective on `ranks` GPUs: what the latency term scales with (2(n-1) for
// all-reduce, n-1 for all-gather, reduce-scatter, all-to-all, broadcast and reduce, 1 for a
// send/recv).
double latency_steps(NcclTestOp op, std::int64_t ranks);

// t(n, S) = alpha x steps(op, n) + S x busbw_factor(op, n) / busbw, least squares in relative
// error over every point of the fit set. nccl-tests' busbw is built to be independent of n for
// ring algorithms, which is what lets one bandwidth serve every rank count.
struct AlphaBetaFit {
    NcclTestOp op = NcclTestOp::AllReduce;
    MeasuredSpan span = MeasuredSpan::Node;
    double step_latency_us = 0;  // alpha, per ring step
    double busbw_gbps = 0;       // 1 / beta, in bus bytes
    double rms_error_pct = 0;    // of the fit over its points
    std::size_t points = 0;
    std::vector<std::size_t> sweeps;  // the fit set: indices into MeasuredCollectives::sweeps()

    double seconds(std::int64_t ranks, double bytes) const;
};

struct MeasuredTime {
    enum class Basis { Interpolated, Fitted };
    double seconds = 0;
    Basis basis = Basis::Interpolated;
};

class MeasuredCollectives {
public:
    // One (op, span, ranks, nodes) curve: every sweep of it merged, sizes ascending, repeated
    // sizes at their median time.
    struct Curve {
        NcclTestOp op;
        MeasuredSpan span;
        std::int64_t ranks, nodes;
        std::vector<double> bytes, seconds;
        std::string label() const;  // "all_gather over node (8 ranks)"
    };

    explicit MeasuredCollectives(std::vector<CollectiveSweep> sweeps);

    bool empty() const { return sweeps_.empty(); }
    const std::vector<CollectiveSweep>& sweeps() const { return sweeps_; }
    const std::vector<Curve>& curves() const { return curves_; }
    const std::vector<AlphaBetaFit>& fits() const { return fits_; }
    const AlphaBetaFit* fit(NcclTestOp op, MeasuredSpan span) const;

    // Idle-fabric time of one collective from tiers 1 and 2; nothing when neither applies.
    // `nodes` matters for the cluster span only (ranks / nodes GPUs per node).
    std::optional<MeasuredTime> idle_time(NcclTestOp op, MeasuredSpan span, std::int64_t ranks, std::int64_t nodes,
                                          double bytes) const;

private:
    const Curve* curve(NcclTestOp op, MeasuredSpan span, std::int64_t ranks, std::int64_t nodes) const;
    const Curve* nearest(NcclTestOp op, MeasuredSpan span, std::int64_t ranks) const;
    double interpolate(const Curve& c, double bytes) const;

    std::vector<CollectiveSweep> sweeps_;
    std::vector<Curve> curves_;
    std::vector<AlphaBetaFit> fits_;
};

}  // namespace sextant
