#pragma once
// What sextant-calibrate measures and records beside the profile's interpolation tables: the
// collective points of an nccl-tests-style sweep and the provenance of a measurement.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profile/busbw.hpp"

namespace sextant {

enum class GroupKind { Node, Rail, All };  // all GPUs of a node, one GPU per node on a rail, all

struct CollectivePoint {
    NcclTestOp op = NcclTestOp::AllReduce;
    std::int64_t ranks = 0;
    GroupKind group = GroupKind::Node;
    std::string algorithm;  // as NCCL reported or forced it ("Ring", "NVLS"), "" when unknown
    double bytes = 0;
    double time_us = 0;
    double busbw_gbps = 0;
};

struct Provenance {
    std::string kind;  // "measured" or "published"
    std::string gpu, driver, cuda, cublas, cudnn, nccl, date, command;
    std::vector<std::string> hosts;
};

inline std::string group_kind_name(GroupKind g) {
    switch (g) {
        case GroupKind::Node: return "node";
        case GroupKind::Rail: return "rail";
        case GroupKind::All: return "all";
    }
    return "node";
}

}  // namespace sextant
