#pragma once
// Which GPUs a parallel group of a layout occupies. Ranks are laid out with the layout's rank
// order (fastest-varying dimension first, Megatron default tp-cp-ep-dp-pp) and rank r runs on
// GPU r. Nothing assumes TP stays inside a node: the group is whatever the mapping gives.
#include <cstdint>
#include <vector>

#include "spec/cluster_spec.hpp"
#include "spec/layout_spec.hpp"

namespace sextant {

struct GroupPlacement {
    std::vector<std::int64_t> gpus;     // global GPU ids of one representative group, in rank order
    std::int64_t concurrent_groups = 1; // groups of this dimension that run the same collective at once
};

// The group of `dim` that contains `rank` (default: rank 0), and how many such groups exist.
GroupPlacement place_group(const ClusterSpec& cluster, const Layout& layout, ParallelDim dim,
                           std::int64_t rank = 0);

}  // namespace sextant
