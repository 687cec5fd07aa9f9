#pragma once
// The cluster as a graph (Boost.Graph): GPUs, their NVLink/NVSwitch domains, one NIC per GPU,
// leaf switches (one per rail and scalable unit when rail-optimized, one per rack otherwise),
// a spine tier per pod and a core tier joining pods. ECMP over the spines of a tier is modelled as
// one aggregate link per leaf (and per pod) whose capacity is the tier's uplink bandwidth after
// oversubscription, so the fabric is a tree and every NIC-to-NIC route is unique.
#include <cstdint>
#include <memory>
#include <vector>

#include "spec/cluster_spec.hpp"

namespace sextant {

enum class LinkTier { NvLink, Nic, LeafUplink, PodUplink };

class ClusterGraph {
public:
    explicit ClusterGraph(const ClusterSpec& cluster);
    ~ClusterGraph();
    ClusterGraph(ClusterGraph&&) noexcept;
    ClusterGraph& operator=(ClusterGraph&&) noexcept;

    // Fabric links a message crosses from GPU a's NIC to GPU b's NIC, NIC links included, as
    // directed link ids (2 x link, + 1 going down towards b); appended to `out`. Nothing inside one
    // NVLink domain.
    void route(std::int64_t gpu_a, std::int64_t gpu_b, std::vector<std::uint32_t>& out) const;
    double capacity(std::uint32_t link) const;  // bytes/s per direction
    LinkTier tier(std::uint32_t link) const;
    std::size_t link_count() const;
    std::size_t vertex_count() const;

    std::int64_t domain_of(std::int64_t gpu) const;
    std::int64_t leaf_of(std::int64_t gpu) const;
    std::int64_t pod_of(std::int64_t gpu) const;
    std::int64_t rail_of(std::int64_t gpu) const;

    // The fabric tiers as arithmetic (the tree above, without walking it): a route from GPU a to
    // GPU b in another NVLink domain crosses a's NIC links up and b's down; if their leaves differ,
    // a's leaf uplink up and b's down; if those leaves' pods differ, the pod uplinks likewise.
    struct FabricLinks {
        std::uint32_t nic = 0, nic_leaf = 0;  // GPU to NIC, NIC to leaf
        std::uint32_t leaf = 0;               // leaf_of(gpu)
    };
    FabricLinks fabric_links(std::int64_t gpu) const;
    std::size_t leaf_count() const;
    std::size_t pod_count() const;
    std::uint32_t leaf_uplink(std::uint32_t leaf) const;
    std::uint32_t pod_of_leaf(std::uint32_t leaf) const;  // the pod the leaf hangs from
    std::uint32_t pod_uplink(std::uint32_t pod) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace sextant
