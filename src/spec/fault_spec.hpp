#pragma once
// The scenario's `stragglers` and `degraded_links`: GPUs (or every GPU of a node) that compute
// slower than their peers, and NICs below line rate. Parsed with the scenario, against its cluster.
#include <cstdint>
#include <span>
#include <vector>

#include "spec/cluster_spec.hpp"
#include "spec/fields.hpp"

namespace sextant {

// A GPU (or every GPU of a node) that runs slower than its peers.
struct Straggler {
    std::int64_t first_gpu = 0, last_gpu = 0;
    double slowdown = 1.0;  // compute time multiplier
};

// A GPU whose NIC runs below line rate: collectives of groups crossing the network through it slow.
struct DegradedLink {
    std::int64_t gpu = 0;
    double bandwidth_factor = 1.0;  // achieved fraction of the link's rate
};

// `list` is the part's JSON array (null: none); `path` its JSON pointer. Every entry names a GPU
// or a node of `cluster`.
std::vector<Straggler> parse_stragglers(const json& list, const std::string& path, const ClusterSpec& cluster);
std::vector<DegradedLink> parse_degraded_links(const json& list, const std::string& path, const ClusterSpec& cluster);
// Every straggler and degraded link still names a GPU of `cluster` (after a command changed its
// GPU count: plan --gpus); the error names `path`, where the count came from.
void check_faults_in_cluster(const std::vector<Straggler>& stragglers, const std::vector<DegradedLink>& links,
                             const ClusterSpec& cluster, const std::string& path);
std::span<const FieldDef> straggler_fields();
std::span<const FieldDef> degraded_link_fields();

}  // namespace sextant
