#include "report/nccl_tests.hpp"

#include <fmt/format.h>

namespace sextant {

namespace {
constexpr std::int64_t kElementBytes = 4;  // float

// nccl-tests' redop and root columns: reductions print the op (sum by default), the others
// "none"; broadcast and reduce run from root 0 by default, the rest print -1.
const char* redop(CollectiveOp op) {
    switch (op) {
        case CollectiveOp::AllReduce:
        case CollectiveOp::ReduceScatter:
        case CollectiveOp::Reduce:
        case CollectiveOp::SendRecv: return "sum";
        default: return "none";
    }
}
int root(CollectiveOp op) { return op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce ? 0 : -1; }
}  // namespace

NcclTestsSize nccl_tests_size(CollectiveOp op, double requested_bytes, std::int64_t ranks) {
    const auto count = static_cast<std::int64_t>(requested_bytes) / kElementBytes;
    // Per-rank shares are rounded down to 16 bytes: count / ranks & ~(16 / element - 1).
    const std::int64_t share = (count / ranks) & ~(16 / kElementBytes - 1);
    switch (op) {
        case CollectiveOp::AllGather:
        case CollectiveOp::ReduceScatter:
        case CollectiveOp::AllToAll: return {static_cast<double>(share * ranks * kElementBytes), share};
        default: return {static_cast<double>(count * kElementBytes), count};
    }
}

PredictedSweep sweep_collective(const NetworkModel& model, CollectiveOp op, const GroupShape& shape, double lo, double hi) {
    PredictedSweep sweep;
    sweep.op = op;
    sweep.ranks = shape.ranks;
    sweep.span = span_name(shape.span);
    for (double requested = lo; requested <= hi * 1.0000001; requested *= 2) {
        const NcclTestsSize size = nccl_tests_size(op, requested, shape.ranks);
        sweep.rows.push_back({size.bytes, size.count, model.cost(op, Bytes(size.bytes), shape), model.cost_per_algorithm(op, Bytes(size.bytes), shape)});
    }
    return sweep;
}

std::vector<PredictedSweep::Measured> measured_points(const CalibrationProfile& profile, CollectiveOp op, Span span, std::int64_t ranks) {
    // Pod and cluster spans were measured as "cluster" sweeps (several GPUs on several nodes).
    const MeasuredSpan wanted = span == Span::Node ? MeasuredSpan::Node : span == Span::Rail ? MeasuredSpan::Rail : MeasuredSpan::Cluster;
    std::vector<PredictedSweep::Measured> out;
    for (const CollectiveSweep& sweep : profile.collective_sweeps())
        if (nccl_test_op_name(sweep.op) == op_name(op) && sweep.ranks == ranks && sweep.span == wanted)
            for (const CollectiveSample& sample : sweep.samples)
                out.push_back({sample.bytes, busbw_gbps(sweep.op, sweep.ranks, sample.bytes, sample.time_us)});
    return out;
}

std::string nccl_tests_cell(double value, int width) {
    const auto w = static_cast<std::size_t>(width);
    for (int decimals : {2, 1, 0})
        if (std::string s = fmt::format("{:>{}.{}f}", value, width, decimals); s.size() <= w) return s;
    return fmt::format("{:>{}.{}e}", value, width, width >= 7 ? 1 : 0);
}

std::string nccl_tests_table(const PredictedSweep& sweep, const std::vector<std::string>& notes) {
    std::string out;
    for (const auto& n : notes) out += "# " + n + "\n";
    out += "#\n";
    out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n", "", "", "", "",
                       "");
    out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {}\n", "size", "count",
                       "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", "algorithm");
    out += fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n", "(B)", "(elements)",
                       "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    double busbw_sum = 0;
    for (const auto& row : sweep.rows) {
        const CollectiveResult& r = row.best;
        const std::string block = fmt::format("  {:>7}  {:>6}  {:>6}    N/A", nccl_tests_cell(r.time.value() * 1e6, 7),
                                              nccl_tests_cell(r.algbw_gbps, 6), nccl_tests_cell(r.busbw_gbps, 6));
        out += fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}  {}\n", static_cast<std::int64_t>(row.bytes), row.count, "float",
                           redop(sweep.op), root(sweep.op), block, block, r.algorithm);
        busbw_sum += 2 * r.busbw_gbps;
    }
    const double average = sweep.rows.empty() ? 0.0 : busbw_sum / (2.0 * static_cast<double>(sweep.rows.size()));
    out += fmt::format("# {:<20} : {:g}\n#\n", "Avg bus bandwidth", average);
    return out;
}

}  // namespace sextant
