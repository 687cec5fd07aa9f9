#pragma once
// nccl-tests' conventions for a sweep of one collective (NVIDIA/nccl-tests, src/<op>.cu and
// src/util.cu): the size and element count its *_perf binaries run for a requested size, and the
// table they print, so that scripts written for nccl-tests logs read Sextant's predictions.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/profile.hpp"
#include "report/report_model.hpp"

namespace sextant {

struct NcclTestsSize {
    double bytes = 0;        // the "size" column: the larger of the send and receive buffers
    std::int64_t count = 0;  // the "count" column: elements per rank of the op's argument
};
// For float elements (nccl-tests' default -d float): all-gather, reduce-scatter and all-to-all
// split the buffer per rank and round each rank's share down to a multiple of 16 bytes.
NcclTestsSize nccl_tests_size(CollectiveOp op, double requested_bytes, std::int64_t ranks);

// The sizes nccl-tests would run from `lo` to `hi` bytes (doubling), each priced by the model:
// the fastest algorithm and every algorithm's own curve. The caller fills the sweep's names.
PredictedSweep sweep_collective(const NetworkModel& model, CollectiveOp op, const GroupShape& shape, double lo, double hi);

// The profile's measured points of this op over this many ranks with this span (node, rail, or
// across nodes for pod and cluster spans).
std::vector<PredictedSweep::Measured> measured_points(const CalibrationProfile& profile, CollectiveOp op, Span span, std::int64_t ranks);

// The table nccl-tests prints (without per-iteration timing): `#`-prefixed header lines (the
// caller's `notes`, then the column headers), one row per size with the out-of-place and in-place
// blocks (the prediction is the same for both; #wrong is N/A, no data is checked), the
// algorithm NCCL's tuner would pick as an extra last column, and the "# Avg bus bandwidth"
// footer (the mean busbw over both blocks, as nccl-tests averages it).
std::string nccl_tests_table(const PredictedSweep& sweep, const std::vector<std::string>& notes);

// nccl-tests' number cells: "%*.2f", else fewer decimals, else an exponent, to fit `width`.
std::string nccl_tests_cell(double value, int width);

}  // namespace sextant
