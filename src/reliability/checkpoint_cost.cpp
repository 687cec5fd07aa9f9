#include "reliability/checkpoint_cost.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/units.hpp"
#include "model/params.hpp"

namespace sextant::reliability {

namespace {
// FP8 and FP4 training keep their weights in bf16; the checkpoint holds those.
double weight_bytes(Precision p) { return p == Precision::Fp8 || p == Precision::Fp4 ? 2.0 : precision_bytes(p); }

double node_nic_bytes_per_s(const ClusterSpec& c) {
    return c.fabric.nic_gbps_per_gpu * 1e9 / 8.0 * static_cast<double>(c.gpus_per_node);
}

void require_storage(const ClusterSpec& c, const char* what) {
    if (c.storage.write_gbps <= 0)
        throw InputError("/cluster/storage", "",
                         std::string("is needed to compute the checkpoint ") + what +
                             " time; describe the storage or give /reliability/checkpoint/write_s and "
                             "/reliability/restart/load_s");
}
}  // namespace

CheckpointSize checkpoint_size(const Scenario& s) {
    const Layout l = resolve_layout(s, s.layout);
    const ParamCounts counts = count_params(s.model);
    const OptimizerSpec& o = s.training.optimizer;
    CheckpointSize c;
    c.params = counts.total() + counts.mtp;
    const double weights = weight_bytes(s.training.precision.operands);
    const double state = (o.master_weights ? 4.0 : 0.0) + 2.0 * precision_bytes(o.state_dtype);
    c.bytes_per_param = weights + state;
    c.total_bytes = c.params * c.bytes_per_param;
    const double gpus = static_cast<double>(s.cluster.gpus);
    c.per_rank_write_bytes = c.total_bytes / gpus;
    const double model_parallel = static_cast<double>(l.tp * l.pp * l.cp);
    // A rank loads its ZeRO shard: of its shard group under HSDP, replicated across the groups.
    const double state_shards = l.zero_stage >= 1 ? model_parallel * static_cast<double>(l.shard_dp())
                                                  : model_parallel;
    const double weight_shards = l.zero_stage >= 3 ? state_shards : model_parallel;
    c.per_rank_load_bytes = c.params * (weights / weight_shards + state / state_shards);
    return c;
}

CheckpointTimes checkpoint_times(const Scenario& s, const ReliabilitySpec& spec,
                                 const CheckpointSize& size) {
    const ClusterSpec& c = s.cluster;
    const double nodes = static_cast<double>(c.nodes() > 0 ? c.nodes() : 1);
    const double nic = node_nic_bytes_per_s(c);
    CheckpointTimes t;
    if (spec.checkpoint.write_s) {
        t.write_s = *spec.checkpoint.write_s;
        t.write_limit = "given";
    } else {
        require_storage(c, "write");
        const double storage = size.total_bytes / (c.storage.write_gbps * kGB * spec.checkpoint.write_efficiency);
        const double link = size.total_bytes / nodes / nic;
        t.write_s = std::max(storage, link);
        t.write_limit = storage >= link ? "storage" : "node NIC";
    }
    if (spec.restart.load_s) {
        t.load_s = *spec.restart.load_s;
        t.load_limit = "given";
    } else {
        require_storage(c, "load");
        const double gpus = static_cast<double>(c.gpus);
        const double storage = size.per_rank_load_bytes * gpus /
                               (c.storage.read_gbps * kGB * spec.restart.read_efficiency);
        const double link = size.per_rank_load_bytes * static_cast<double>(c.gpus_per_node) / nic;
        t.load_s = std::max(storage, link);
        t.load_limit = storage >= link ? "storage" : "node NIC";
    }
    t.snapshot_s = size.per_rank_write_bytes / (spec.checkpoint.snapshot_gbps * kGB);
    return t;
}

}  // namespace sextant::reliability
