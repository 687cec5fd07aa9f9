#pragma once
// What a calibration profile records of collective measurements: nccl-tests-style sweeps of one
// collective on one group of GPUs, each with where and how it was measured. Header-only and free
// of library types, so that the CUDA measurement tool, the nccl-tests importer and the simulator
// share these definitions.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/busbw.hpp"

namespace sextant {

// Which part of the fabric a measured group crossed: the GPUs of one node (NVLink only), one GPU
// per node on the same rail (one NIC each, one leaf), or several GPUs on each of several nodes.
enum class MeasuredSpan { Node, Rail, Cluster };

inline constexpr std::array<std::string_view, 3> kMeasuredSpanNames = {"node", "rail", "cluster"};

constexpr std::string_view measured_span_name(MeasuredSpan span) {
    return kMeasuredSpanNames[static_cast<std::size_t>(span)];
}

constexpr std::optional<MeasuredSpan> parse_measured_span(std::string_view name) {
    for (std::size_t i = 0; i < kMeasuredSpanNames.size(); ++i)
        if (kMeasuredSpanNames[i] == name) return static_cast<MeasuredSpan>(i);
    return std::nullopt;
}

// One size of a sweep, in nccl-tests' terms: `bytes` is the size column (the larger of the input
// and output buffers), times are per collective in microseconds.
struct CollectiveSample {
    double bytes = 0;
    double time_us = 0;           // out-of-place
    double in_place_time_us = 0;  // 0 when the in-place variant was not measured
    std::int64_t line = 0;        // line of the log the row came from (0: not from a log)
};

// Where a sweep comes from: enough to find the run again and to judge it.
struct SweepProvenance {
    std::string kind = "measured";  // "measured" or "published"
    std::string tool;               // "nccl-tests 2.17.6", "sextant-calibrate"
    std::string file;               // the log it was read from, as given
    std::string date;               // when it was measured, ISO 8601, "" when unknown
    std::string date_from;          // what `date` rests on: "log", "file modification time", "clock"
    std::string nccl;               // NCCL library version, "" when the log does not say
    std::vector<std::string> hosts;
    std::string device;  // the CUDA device name the run reported
    std::string command;
    bool verified = true;  // the tool checked every result (nccl-tests -c 1, #wrong 0)
};

// One collective swept over sizes on one group: the unit that interpolation and fits work on.
struct CollectiveSweep {
    NcclTestOp op = NcclTestOp::AllReduce;
    MeasuredSpan span = MeasuredSpan::Node;
    std::int64_t ranks = 0;
    std::int64_t nodes = 1;  // hosts the ranks ran on
    std::string dtype;       // nccl-tests' type column ("float", "bfloat16"), "" when not said
    std::string algorithm;   // as NCCL reported or was forced to use ("Ring", "NVLS"), "" unknown
    SweepProvenance provenance;
    std::vector<CollectiveSample> samples;
};

// The provenance of a whole sextant-calibrate measurement: library versions, host, date.
struct Provenance {
    std::string kind;  // "measured" or "published"
    std::string gpu, driver, cuda, cublas, cudnn, nccl, date, command;
    std::vector<std::string> hosts;
};

}  // namespace sextant
