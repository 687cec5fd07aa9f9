#pragma once
// nccl-tests output read as nccl-tests writes it (NVIDIA/nccl-tests src/common.cu, src/util.cu):
// the "# nThread ... nGpus ..." parameters, one "#  Rank N Group G Pid P on HOST device D [BUS]
// NAME" line per rank (no Group before 2.13), the column header, one row per size (size, count,
// type, redop, root, then time, algbw, busbw and #wrong for out-of-place and in-place; "error"
// instead of #wrong before 2.13; per-iteration and timestamp columns when asked for), and the
// "# Out of bounds values" and "# Avg bus bandwidth" footer; 2.17 and later add "# nccl-tests
// version" and "# Collective test starting/concluded" lines. Lines that are not nccl-tests'
// (NCCL INFO, mpirun, shell echo) are skipped. A pure function of the text, so that it can be
// fuzzed: every malformed line is an InputError at "FILE:LINE".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/measurements.hpp"

namespace sextant {

struct NcclTestsRank {
    std::int64_t rank = 0;
    std::string host;
    std::int64_t device = 0;  // CUDA device index on its host
    std::string device_name;  // "NVIDIA H100 80GB HBM3"
};

struct NcclTestsResult {
    double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;
    std::optional<double> wrong;  // #wrong (elements); nothing when N/A (nccl-tests -c 0)
};

struct NcclTestsRow {
    std::int64_t line = 0;
    double bytes = 0;  // the size column
    std::string type, redop;
    std::int64_t root = -1;
    NcclTestsResult out_of_place;
    std::optional<NcclTestsResult> in_place;
    std::string timestamp;  // "2026-03-17 14:21:14" when the run printed timestamps
};

struct NcclTestsRun {
    std::int64_t first_line = 0;
    NcclTestOp op = NcclTestOp::AllReduce;
    std::string program;  // "all_reduce_perf"
    std::string op_from;  // how the op is known: "log", "command line", "file name" or "bus factor"
    std::string version;  // nccl-tests version, "" before 2.17
    std::string nccl;     // NCCL library version ("2.27.7"), "" when not printed
    std::string command;  // a command line naming the test, when the log holds one
    bool counts_wrong = true;  // #wrong (element counts, 2.13+) rather than "error" (max deviation)
    std::vector<NcclTestsRank> ranks;
    std::vector<NcclTestsRow> rows;
    std::optional<std::int64_t> out_of_bounds;  // the footer's failed-result count
    std::int64_t out_of_bounds_line = 0;
    std::optional<double> avg_busbw_gbps;       // the footer's average

    std::vector<std::string> hosts() const;  // in rank order, each once
    MeasuredSpan span() const;               // node (one host), rail (one GPU per host), cluster
};

// Every run in the text (a file may hold several, one after another). `file` names the log in
// errors and, when the log does not say which test it ran, its name may ("all_gather_perf.log").
std::vector<NcclTestsRun> parse_nccl_tests_log(std::string_view text, const std::string& file);

// The Sextant GPU type (topologies/gpus/) of a CUDA device name, when there is one.
std::optional<std::string> gpu_type_of_device(std::string_view device_name);

// What to do with results nccl-tests found wrong (#wrong > 0, or a FAILED footer).
enum class WrongResults { Reject, Drop };

struct ImportedSweeps {
    std::vector<CollectiveSweep> sweeps;  // one per (type, redop) of each run
    std::vector<std::string> notes;       // what was left out, and why
};

// The measured sweeps of a log's runs, with their provenance (file, hosts, device, versions;
// `date` and `date_from` when the log has no timestamps). Results nccl-tests marked wrong are an
// InputError at their line, or with WrongResults::Drop left out and noted.
ImportedSweeps nccl_tests_sweeps(const std::vector<NcclTestsRun>& runs, const std::string& file, WrongResults wrong,
                                 const std::string& date, const std::string& date_from);

}  // namespace sextant
