#pragma once
// Which GPUs a parallel group of a layout occupies. Ranks are laid out with the layout's rank
// order (fastest-varying dimension first, Megatron default tp-cp-ep-dp-pp) and rank r runs on
// GPU r. Nothing assumes TP stays inside a node: the group is whatever the mapping gives.
//
// Expert layers fold the same GPUs differently (Megatron-Core's MoE parallel folding, Liu et al.
// 2025, "MoE Parallel Folding"): the tp x cp x dp ranks of one pipeline stage, taken in rank
// order, split into expert-tensor (fastest), expert (ep) and expert-data groups. The ep entry of
// the dense rank order therefore places nothing.
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "spec/cluster_spec.hpp"
#include "spec/layout_spec.hpp"

namespace sextant {

struct GroupPlacement {
    std::vector<std::int64_t> gpus;     // global GPU ids of one representative group, in rank order
    std::int64_t concurrent_groups = 1; // groups of this dimension that run the same collective at once
    // GPU offsets that map the representative onto each concurrent group (the first is 0); empty
    // means the concurrent groups are described by their count only and never share a link.
    std::vector<std::int64_t> offsets;
};

// Ranks along `dim` in the dense rank order (EP has size 1 there), and the distance between
// neighbouring ranks of that dimension.
std::int64_t dimension_size(const Layout& layout, ParallelDim dim);
std::int64_t dimension_stride(const Layout& layout, ParallelDim dim);

// The group of `dim` that contains rank 0, and every concurrent group of that dimension as an
// offset.
GroupPlacement place_group(const Layout& layout, ParallelDim dim);
// Which data-parallel ranks a group takes under HSDP (layout.shard_group): all of them, those of
// one shard group, or one rank of each replica of a shard group.
enum class DpPart { Whole, Shard, Replicas };
// The group spanning several dimensions at once (Megatron reduces dense gradients over dp x cp).
GroupPlacement place_group(const Layout& layout, std::initializer_list<ParallelDim> dims, DpPart part = DpPart::Whole);

// EDP: the expert-data-parallel ranks that shard an expert's ZeRO states (all of them without
// HSDP); EDPReplicas: one rank of each replica of that shard group.
enum class ExpertDim { ETP, EP, EDP, EDPReplicas };
// The expert-tensor, expert-parallel or expert-data-parallel group of rank 0 under MoE folding,
// with its concurrent groups.
GroupPlacement place_expert_group(const Layout& layout, ExpertDim dim);

// `count` disjoint translations of `gpus` inside a cluster of `total` GPUs, smallest first: the
// concurrent groups of a synthetic placement (the collective command's --concurrent-groups).
std::vector<std::int64_t> disjoint_offsets(const std::vector<std::int64_t>& gpus, std::int64_t count,
                                           std::int64_t total);

}  // namespace sextant
