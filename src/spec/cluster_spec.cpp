#include "spec/cluster_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/work_limits.hpp"
#include "spec/field_binding.hpp"

namespace sextant {

namespace {
constexpr FieldDef kClusterFields[] = {
    {"name", FieldType::String, "display name", "", "the GPU's name + \" cluster\"", -1e300, 1e300, "", bind<&ClusterSpec::name>()},
    {"preset", FieldType::String, "start from this topologies/ preset; other keys override it"},
    {"gpu", FieldType::String, "GPU type, a topologies/gpus/ preset", "", required()},
    {"gpus", FieldType::Integer, "total GPUs", "", required(), 1, 1 << 24, "", bind<&ClusterSpec::gpus>()},
    {"gpus_per_node", FieldType::Integer, "GPUs per node (host)", "", default_integer(8), 1, 1 << 24, "",
     bind<&ClusterSpec::gpus_per_node>()},
    {"nvlink_domain_gpus", FieldType::Integer, "GPUs per NVLink/NVSwitch domain", "", "gpus_per_node", 1, 1 << 24, "",
     bind<&ClusterSpec::nvlink_domain_gpus>()},
    {"segment_nodes", FieldType::Integer, "the job's nodes in each NVLink domain it spans (SLURM --segment)", "",
     "the largest divisor of the job's nodes that fits in one domain", 1, 1 << 24, "", bind<&ClusterSpec::segment_nodes>()},
    {"nvlink_latency_us", FieldType::Number, "NVLink hop latency (0: the calibration profile's)", "us", default_number(0), 0, 1e300,
     "", bind<&ClusterSpec::nvlink_latency_us>()},
    {"rank_time_cv", FieldType::Number,
     "coefficient of variation of per-GPU compute speed (the step waits for the slowest GPU; source at ClusterSpec::rank_time_cv)",
     "", default_number(0.015), 0, 0.5, "", bind<&ClusterSpec::rank_time_cv>()},
    {"nic_gbps_per_gpu", FieldType::Number, "scale-out NIC line rate per GPU", "Gb/s", "the GPU preset's platform_nic_gbps", 1, 1e300,
     "", bind<&ClusterSpec::fabric, &FabricSpec::nic_gbps_per_gpu>()},
    {"fabric", FieldType::String, "scale-out fabric", "", default_string("infiniband"), -1e300, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::kind>()},
    {"rail_optimized", FieldType::Boolean, "NIC k of every node on leaf k", "", default_bool(true), -1e300, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::rail_optimized>()},
    {"leaf_gpus", FieldType::Integer, "GPUs under one leaf group (scalable unit)", "", "pod_gpus", 1, 1 << 24,
     "", bind<&ClusterSpec::fabric, &FabricSpec::leaf_gpus>()},
    {"leaf_oversubscription", FieldType::Number, "leaf down:up bandwidth", "", default_number(1), 1, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::leaf_oversubscription>()},
    {"pod_gpus", FieldType::Integer, "GPUs per pod (full bisection inside)", "", "all", 1, 1 << 24,
     "", bind<&ClusterSpec::fabric, &FabricSpec::pod_gpus>()},
    {"pod_oversubscription", FieldType::Number, "bandwidth between pods is cut N:1", "", default_number(1), 1, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::pod_oversubscription>()},
    {"nic_latency_us", FieldType::Number, "NIC-to-NIC latency through one leaf switch; a ring step across nodes pays the calibration profile's figure plus this minus the reference 2.0", "us", default_number(2.0), 0, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::nic_latency_us>()},
    {"switch_latency_us", FieldType::Number, "latency of each further switch a packet passes above the leaf (spine: two, up and down; core: four)", "us", default_number(0.6), 0, 1e300, "",
     bind<&ClusterSpec::fabric, &FabricSpec::switch_latency_us>()},
    {"storage", FieldType::Object, "checkpoint storage, see /cluster/storage"},
    {"host", FieldType::Object, "host link and memory per GPU, see /cluster/host"},
    {"source", FieldType::String, "where the description comes from", "", default_string(""), -1e300, 1e300, "",
     bind<&ClusterSpec::source>()},
};

constexpr FieldDef kStorageFields[] = {
    {"write_gbps", FieldType::Number, "aggregate write bandwidth", "GB/s", required(), 0.001, 1e300, "", bind<&StorageSpec::write_gbps>()},
    {"read_gbps", FieldType::Number, "aggregate read bandwidth", "GB/s", "write_gbps", 0.001, 1e300, "", bind<&StorageSpec::read_gbps>()},
};

constexpr FieldDef kHostFields[] = {
    {"link_gbps", FieldType::Number, "GPU-host bandwidth per direction (PCIe, NVLink-C2C)", "GB/s",
     "the GPU preset's platform_host_link_gbps, else 51 (HostSpec)", 0.1, 1e300, "", bind<&HostSpec::link_gbps>()},
    {"memory_gbps_per_gpu", FieldType::Number, "host DRAM bandwidth per GPU (sockets' bandwidth / GPUs)", "GB/s", default_number(60),
     0.1, 1e300, "", bind<&HostSpec::memory_gbps_per_gpu>()},
    {"memory_gib_per_gpu", FieldType::Number,
     "host DRAM per GPU (the node's memory / its GPUs), which offloaded activations and optimizer states must fit; 0: unknown, not checked",
     "GiB", default_number(0), 0, 1e300, "", bind<&HostSpec::memory_gib_per_gpu>()},
    {"source", FieldType::String, "where the numbers come from"},
};
}  // namespace

std::span<const FieldDef> cluster_fields() { return kClusterFields; }
std::span<const FieldDef> storage_fields() { return kStorageFields; }
std::span<const FieldDef> host_fields() { return kHostFields; }

std::int64_t ClusterSpec::job_domain_gpus() const {
    if (nvlink_domain_gpus <= gpus_per_node || gpus <= nvlink_domain_gpus) return nvlink_domain_gpus;
    if (segment_nodes > 0) return segment_nodes * gpus_per_node;
    const std::int64_t fit = nvlink_domain_gpus / gpus_per_node, job = nodes();
    std::int64_t segment = fit;
    while (job % segment != 0) --segment;
    return segment * gpus_per_node;
}

void check_gpu_count(const ClusterSpec& c, std::int64_t gpus, const std::string& path) {
    check_work(Work::ClusterGpus, static_cast<double>(gpus), path, std::to_string(gpus));
    if (gpus % c.gpus_per_node != 0 && gpus > c.gpus_per_node)
        throw InputError(path, std::to_string(gpus), "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");
    // A named segment tiles the job in whole segments, as SLURM requires of --segment.
    if (c.segment_nodes > 0 && gpus > c.nvlink_domain_gpus && (gpus / c.gpus_per_node) % c.segment_nodes != 0)
        throw InputError(path, std::to_string(gpus),
                         "must be a whole number of segments of segment_nodes (" + std::to_string(c.segment_nodes) + " nodes of " +
                             std::to_string(c.gpus_per_node) + " GPUs)");
}

ClusterSpec parse_cluster_fields(const json& object, const std::string& path, GpuSpec gpu) {
    ObjectReader r(object, path, kClusterFields);
    ClusterSpec c;
    c.gpu = std::move(gpu);
    read_fields(r, c);
    // The rules of the defaults the table states as text.
    if (!r.has("name")) c.name = c.gpu.name + " cluster";
    if (!r.has("nvlink_domain_gpus")) c.nvlink_domain_gpus = c.gpus_per_node;
    if (c.nvlink_domain_gpus % c.gpus_per_node != 0)
        throw InputError(r.path_of("nvlink_domain_gpus"), std::to_string(c.nvlink_domain_gpus),
                         "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");
    if (c.segment_nodes * c.gpus_per_node > c.nvlink_domain_gpus)
        throw InputError(r.path_of("segment_nodes"), std::to_string(c.segment_nodes),
                         "must fit in one NVLink domain (nvlink_domain_gpus / gpus_per_node = " +
                             std::to_string(c.nvlink_domain_gpus / c.gpus_per_node) + " nodes)");
    check_gpu_count(c, c.gpus, r.path_of("gpus"));

    FabricSpec& f = c.fabric;
    // Published runs often leave the NIC out (single-node runs need none; others quote the
    // platform): the GPU's reference platform (DGX, NVL72) supplies it.
    if (!r.has("nic_gbps_per_gpu")) {
        if (c.gpu.platform_nic_gbps <= 0)
            throw InputError(r.path_of("nic_gbps_per_gpu"), "", "is required: the GPU preset " + c.gpu.name + " names no platform NIC (platform_nic_gbps)");
        f.nic_gbps_per_gpu = c.gpu.platform_nic_gbps;
    }
    if (f.pod_gpus > 0 && f.pod_gpus % c.gpus_per_node != 0)
        throw InputError(r.path_of("pod_gpus"), std::to_string(f.pod_gpus),
                         "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");
    if (f.leaf_gpus > 0 && f.leaf_gpus % c.gpus_per_node != 0)
        throw InputError(r.path_of("leaf_gpus"), std::to_string(f.leaf_gpus),
                         "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");
    if (f.leaf_gpus > 0 && f.pod_gpus > 0 && f.pod_gpus % f.leaf_gpus != 0)
        throw InputError(r.path_of("pod_gpus"), std::to_string(f.pod_gpus),
                         "must be a multiple of leaf_gpus (" + std::to_string(f.leaf_gpus) + ")");

    if (const json* s = r.raw("storage")) {
        ObjectReader sr(*s, r.path_of("storage"), kStorageFields);
        read_fields(sr, c.storage);
        if (!sr.has("read_gbps")) c.storage.read_gbps = c.storage.write_gbps;
    }
    if (c.gpu.platform_host_link_gbps > 0) c.host.link_gbps = c.gpu.platform_host_link_gbps;
    if (const json* h = r.raw("host")) read_fields(ObjectReader(*h, r.path_of("host"), kHostFields), c.host);
    return c;
}

}  // namespace sextant
