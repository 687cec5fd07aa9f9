#pragma once
// Collective costs on a cluster graph, NCCL-style: ring, tree, NVLS and hierarchical algorithms
// with the LL, LL128 and Simple protocols, each a latency term and a bandwidth term; the fastest
// is chosen per size, as NCCL's tuner does. Contention comes from the group's shape on the graph
// (every concurrent group's flows routed at once).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collective/group_shape.hpp"
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
    std::string_view algorithm;  // static: "ring/simple", "nvls/simple", "tree/ll128", "hierarchical/simple"
};

class NetworkModel {
public:
    NetworkModel(const ClusterSpec& cluster, const CommCalibration& calibration, double communication_factor = 1.0);
    ~NetworkModel();
    NetworkModel(const NetworkModel& other);  // shares the cluster graph
    NetworkModel(NetworkModel&&) noexcept;
    NetworkModel& operator=(NetworkModel&&) noexcept;

    // Routes the group and its concurrent groups over the graph: do it once per group shape.
    GroupShape analyse(const GroupPlacement& group, bool with_all_to_all = false) const;

    // `bytes` is the nccl-tests "size": the buffer of all_reduce/broadcast/reduce, the gathered
    // output of all_gather, the input of reduce_scatter, the send buffer of all_to_all, the
    // message of send/recv. Pure arithmetic on the shape: well under a microsecond.
    CollectiveResult cost(CollectiveOp op, Bytes bytes, const GroupShape& shape) const;
    CollectiveResult cost(CollectiveOp op, Bytes bytes, const GroupPlacement& group) const;
    // Each algorithm that applies to the op and group, with its fastest protocol: the curves NCCL's
    // tuner chooses among (cost() is the fastest of them).
    std::vector<CollectiveResult> cost_per_algorithm(CollectiveOp op, Bytes bytes, const GroupShape& shape) const;

    const ClusterGraph& graph() const;
    // The same network with every bandwidth scaled (a fitted calibration factor); group shapes
    // analysed by one stay valid for the other.
    NetworkModel with_factor(double communication_factor) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

std::string op_name(CollectiveOp op);
CollectiveOp parse_op(const std::string& name, const std::string& path);  // InputError with suggestions
double bus_factor(CollectiveOp op, std::int64_t ranks);  // nccl-tests busbw / algbw

}  // namespace sextant
