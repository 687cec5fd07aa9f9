#pragma once
// Collective costs on a cluster graph, NCCL-style: ring, tree and NVLS algorithms
// with the LL, LL128 and Simple protocols, each a latency term and a bandwidth term; the fastest
// is chosen per size, as NCCL's tuner does. Contention comes from the group's shape on the graph
// (every concurrent group's flows routed at once). A profile's measured sweeps replace the model's
// idle-fabric time where they apply (collective/measured_collectives.hpp), contention staying on
// top.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collective/group_shape.hpp"
#include "collective/measured_collectives.hpp"
#include "core/units.hpp"
#include "profile/comm_calibration.hpp"
#include "profile/profile.hpp"
#include "spec/cluster_spec.hpp"
#include "topology/placement.hpp"

namespace sextant {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv };

struct CollectiveResult {
    Seconds time;
    double algbw_gbps = 0;  // bytes / time, GB/s (nccl-tests convention)
    double busbw_gbps = 0;  // algbw x the op's bus factor (nccl-tests convention)
    // static: "ring/simple", "nvls/simple", "tree/ll128"; "measured" (a
    // measured sweep of this op and group, interpolated) or "measured-fit" (the latency-bandwidth
    // law fitted to sweeps of this op and span at other rank counts)
    std::string_view algorithm;
};

// A fabric constant of the collective model that measured sweeps replaced.
struct FittedConstant {
    std::string name;  // the CommCalibration key, e.g. "nvlink_ring_efficiency"
    double published = 0, fitted = 0;
    std::string fit_set;  // the curves it was read from, e.g. "all_gather over node (8 ranks)"
};

struct FittedComm {
    CommCalibration calibration;
    std::vector<FittedConstant> constants;
};

class NetworkModel {
public:
    NetworkModel(const ClusterSpec& cluster, const CommCalibration& calibration, double communication_factor = 1.0);
    // The profile's comm constants (those its measured sweeps determine replaced), its measured
    // sweeps and its communication factor.
    NetworkModel(const ClusterSpec& cluster, const CalibrationProfile& profile);
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
    // The comm constants in use, and which of them measured sweeps fitted.
    const CommCalibration& calibration() const;
    const std::vector<FittedConstant>& fitted_constants() const;
    // The same network with every bandwidth scaled (a fitted calibration factor); group shapes
    // analysed by one stay valid for the other.
    NetworkModel with_factor(double communication_factor) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The published constants with those measured spans determine replaced, by inverting the model
// at a curve's ends: bandwidth constants from its largest size (at least 256 MiB, the Simple
// pipeline ramp taken out), step latencies from its smallest (at most 64 KiB). Node curves give
// the NVLink ring efficiency (all-gather, reduce-scatter; all-reduce where there is no NVLS), the
// NVLS efficiency (all-reduce with NVLS) and the NVLink step latency; rail curves the NIC
// efficiency (`nic_gbps`: a GPU's NIC line rate, Gb/s; 0 keeps it) and the network step latency.
// Several curves for one constant are averaged; values are clamped to the comm fields' ranges.
FittedComm fitted_comm_calibration(const CommCalibration& published, const MeasuredCollectives& measured,
                                   const GpuSpec& gpu, double nic_gbps);

std::string op_name(CollectiveOp op);
CollectiveOp parse_op(const std::string& name, const std::string& path);  // InputError with suggestions
double bus_factor(CollectiveOp op, std::int64_t ranks);  // nccl-tests busbw / algbw
NcclTestOp nccl_test_op(CollectiveOp op);

}  // namespace sextant
