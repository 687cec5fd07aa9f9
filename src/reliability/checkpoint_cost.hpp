#pragma once
// How big a checkpoint of the scenario is and how long it takes to write and read, from the
// model, the optimizer, the sharding and the cluster's storage and NIC bandwidths.
#include <string>

#include "spec/reliability_spec.hpp"
#include "spec/scenario.hpp"

namespace sextant::reliability {

struct CheckpointSize {
    double params = 0;
    double bytes_per_param = 0;    // weights + fp32 master + optimizer moments
    double total_bytes = 0;        // every byte once (what a save writes)
    double per_rank_write_bytes = 0;  // a fully parallel save spreads the bytes over all ranks
    double per_rank_load_bytes = 0;   // what one rank holds: its model-parallel shard of the
                                      // weights and its (ZeRO) slice of the optimizer state
};

struct CheckpointTimes {
    double write_s = 0;
    std::string write_limit;   // "storage" or "node NIC"
    double load_s = 0;
    std::string load_limit;
    double snapshot_s = 0;     // device-to-host copy that an async save blocks on
};

CheckpointSize checkpoint_size(const Scenario& scenario);

// Write: max(total / (storage write x efficiency), per-node bytes / node NIC). Load: every rank
// reads what it holds, so storage serves per_rank_load x gpus bytes. Missing storage bandwidth is
// an InputError unless write_s and load_s are given.
CheckpointTimes checkpoint_times(const Scenario& scenario, const ReliabilitySpec& spec,
                                 const CheckpointSize& size);

}  // namespace sextant::reliability
