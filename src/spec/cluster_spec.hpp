#pragma once
// A cluster: the GPUs, their NVLink domains and the scale-out fabric. The shorthand of published
// runs (gpu, gpus, gpus_per_node, nic_gbps_per_gpu, pod_gpus, pod_oversubscription) is a complete
// cluster; the richer fields describe fat-tree tiers, latencies and storage.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "spec/fields.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {

enum class FabricKind { InfiniBand, RoCE, Ethernet };
inline constexpr std::string_view kFabricNames[] = {"infiniband", "roce", "ethernet"};
constexpr std::span<const std::string_view> enum_names(FabricKind) { return kFabricNames; }

// The scale-out network: a rail-optimized fat tree. Leaf switches join one rail of `leaf_gpus /
// gpus_per_node` nodes; spines join leaves into a pod of `pod_gpus`; a core tier joins pods.
struct FabricSpec {
    FabricKind kind = FabricKind::InfiniBand;
    double nic_gbps_per_gpu = 0;          // Gb/s, line rate of the GPU's NIC
    bool rail_optimized = true;
    std::int64_t leaf_gpus = 0;           // GPUs whose same-rail NICs share one leaf (0: = pod)
    double leaf_oversubscription = 1.0;   // leaf down : up bandwidth
    std::int64_t pod_gpus = 0;            // 0: one pod spans the cluster
    double pod_oversubscription = 1.0;    // bandwidth between pods is cut N:1
    // One NIC-to-NIC hop through a leaf, software included; the defaults are the reference fabric
    // of the calibration profiles' network step latency (collective/network_model.cpp).
    double nic_latency_us = 2.0;
    double switch_latency_us = 0.6;       // each further switch passed above the leaf
};

struct StorageSpec {
    double write_gbps = 0;  // aggregate checkpoint write bandwidth, GB/s (0: not described)
    double read_gbps = 0;
};

// The host side of each GPU, for optimizer offload: the GPU-host link and the host DRAM
// bandwidth a GPU's share of the CPUs sees.
struct HostSpec {
    double link_gbps = 51;            // GPU-host per direction, GB/s (measured H2D, PCIe Gen5 x16)
    double memory_gbps_per_gpu = 60;  // host DRAM bandwidth per GPU, GB/s
    double memory_gib_per_gpu = 0;    // host DRAM per GPU, GiB, for what is offloaded to it; 0: unknown, unchecked
};

struct ClusterSpec {
    std::string name;
    GpuSpec gpu;
    std::int64_t gpus = 0;
    std::int64_t gpus_per_node = 8;
    std::int64_t nvlink_domain_gpus = 0;  // GPUs sharing one NVLink domain (NVL72: 72)
    std::int64_t segment_nodes = 0;       // the job's nodes in each domain (SLURM --segment); 0: job_domain_gpus's rule
    double nvlink_latency_us = 0;         // 0: from the calibration profile
    // Spread of per-GPU compute speed across the cluster's GPUs (coefficient of variation): the
    // same SKU runs at different speeds under power management and manufacturing variability, and
    // a synchronous step waits for the slowest of its GPUs. Sinha et al. (SC'22, arXiv:2208.11035)
    // measured 8% average variation over more than 90% of the GPUs of five clusters (Summit,
    // Vortex, Frontera, Longhorn, Corona), the spread between the slowest and fastest GPU without
    // outliers, relative to the median; read as the whisker span of a normal distribution
    // (Q1 - 1.5 IQR to Q3 + 1.5 IQR = 5.4 standard deviations), that is 0.08 / 5.4 = 0.015.
    double rank_time_cv = 0.015;
    FabricSpec fabric;
    StorageSpec storage;
    HostSpec host;
    std::string source;

    std::int64_t nodes() const { return gpus / gpus_per_node; }
    // The job's GPUs in each NVLink domain it spans, consecutive ranks filling one domain's share
    // before the next. A job larger than one domain asks the scheduler for equal whole-node
    // segments (SLURM's --segment on block topologies): `segment_nodes` where the cluster names
    // it, else the largest divisor of the job's nodes that fits in one domain, as Megatron-Bridge's
    // launcher asks for on 4-GPU NVL72 trays (scripts/performance/utils/executors.py, v0.1.0rc4
    // to v0.3.0: 128 or 256 GB200s run 16 trays, 64 GPUs, to a rack). A job within one domain has
    // it to itself; where the domain is the node, there is nothing to segment.
    std::int64_t job_domain_gpus() const;
};

// `gpu_loader` turns a GPU name (at `path`) into its datasheet: the presets in topologies/gpus.
template <class GpuLoader>
ClusterSpec parse_cluster(const json& object, const std::string& path, GpuLoader&& gpu_loader);

ClusterSpec parse_cluster_fields(const json& object, const std::string& path, GpuSpec gpu);
// The rules of a GPU count on this cluster's nodes (whole nodes, within the work limit), for the
// file's /cluster/gpus and for every count a command puts in its place (plan --gpus).
void check_gpu_count(const ClusterSpec& cluster, std::int64_t gpus, const std::string& path);
std::span<const FieldDef> cluster_fields();
std::span<const FieldDef> storage_fields();
std::span<const FieldDef> host_fields();

template <class GpuLoader>
ClusterSpec parse_cluster(const json& object, const std::string& path, GpuLoader&& gpu_loader) {
    ObjectReader r(object, path, cluster_fields());
    GpuSpec gpu = gpu_loader(r.require_string("gpu"), r.path_of("gpu"));
    return parse_cluster_fields(object, path, std::move(gpu));
}

}  // namespace sextant
