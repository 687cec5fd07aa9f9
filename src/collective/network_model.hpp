#pragma once
// Collective costs on a cluster graph, NCCL-style: algorithm and protocol chosen as NCCL's tuner
// does, with contention when many groups run at once.
#include <cstdint>
#include <memory>
#include <string>

#include "core/units.hpp"
#include "profile/comm_calibration.hpp"
#include "spec/cluster_spec.hpp"
#include "topology/placement.hpp"

namespace sextant {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

struct CollectiveResult {
    Seconds time;
    double algbw_gbps = 0;  // bytes / time, GB/s (nccl-tests convention)
    double busbw_gbps = 0;  // algbw x the op's bus factor (nccl-tests convention)
    std::string algorithm;  // e.g. "ring/simple", "nvls/simple", "tree/ll128", "hier-ring"
};

class NetworkModel {
public:
    NetworkModel(const ClusterSpec& cluster, const CommCalibration& calibration);
    ~NetworkModel();
    NetworkModel(NetworkModel&&) noexcept;
    NetworkModel& operator=(NetworkModel&&) noexcept;

    // `bytes` is the nccl-tests "size": the buffer of all_reduce/broadcast/reduce, the gathered
    // output of all_gather, the input of reduce_scatter, the send buffer of all_to_all, the
    // message of send/recv. All `group.concurrent_groups` groups run the same op at once.
    CollectiveResult cost(CollectiveOp op, Bytes bytes, const GroupPlacement& group) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

std::string op_name(CollectiveOp op);
double bus_factor(CollectiveOp op, std::int64_t ranks);  // nccl-tests busbw / algbw

}  // namespace sextant
