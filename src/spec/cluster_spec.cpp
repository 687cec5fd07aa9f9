#include "spec/cluster_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/work_limits.hpp"

namespace sextant {

namespace {
constexpr FieldDef kClusterFields[] = {
    {"name", FieldType::String, "display name"},
    {"preset", FieldType::String, "start from this topologies/ preset; other keys override it"},
    {"gpu", FieldType::String, "GPU type, a topologies/gpus/ preset"},
    {"gpus", FieldType::Integer, "total GPUs", "", "", 1, 1 << 24},
    {"gpus_per_node", FieldType::Integer, "GPUs per node (host)", "", "8", 1, 1 << 24},
    {"nvlink_domain_gpus", FieldType::Integer, "GPUs per NVLink/NVSwitch domain", "",
     "gpus_per_node", 1, 1 << 24},
    {"nvlink_latency_us", FieldType::Number, "NVLink hop latency", "us", "profile", 0},
    {"rank_time_cv", FieldType::Number, "coefficient of variation of per-GPU compute speed (the step waits for the slowest GPU)", "",
     "0.015", 0, 0.5},
    {"nic_gbps_per_gpu", FieldType::Number, "scale-out NIC line rate per GPU", "Gb/s",
     "the GPU preset's platform_nic_gbps", 1},
    {"fabric", FieldType::String, "scale-out fabric", "", "infiniband", -1e300, 1e300,
     "infiniband|roce|ethernet"},
    {"rail_optimized", FieldType::Boolean, "NIC k of every node on leaf k", "", "true"},
    {"leaf_gpus", FieldType::Integer, "GPUs under one leaf group (scalable unit)", "", "pod_gpus", 1, 1 << 24},
    {"leaf_oversubscription", FieldType::Number, "leaf down:up bandwidth", "", "1", 1},
    {"pod_gpus", FieldType::Integer, "GPUs per pod (full bisection inside)", "", "all", 1, 1 << 24},
    {"pod_oversubscription", FieldType::Number, "bandwidth between pods is cut N:1", "", "1", 1},
    {"nic_latency_us", FieldType::Number, "NIC-to-NIC latency through one leaf", "us", "2.0", 0},
    {"switch_latency_us", FieldType::Number, "latency of each further switch tier", "us", "0.6", 0},
    {"storage", FieldType::Object, "checkpoint storage, see /cluster/storage"},
    {"host", FieldType::Object, "host link and memory per GPU, see /cluster/host"},
    {"source", FieldType::String, "where the description comes from"},
};

constexpr FieldDef kStorageFields[] = {
    {"write_gbps", FieldType::Number, "aggregate write bandwidth", "GB/s", "", 0.001},
    {"read_gbps", FieldType::Number, "aggregate read bandwidth", "GB/s", "write_gbps", 0.001},
};

constexpr FieldDef kHostFields[] = {
    {"link_gbps", FieldType::Number, "GPU-host bandwidth per direction (PCIe, NVLink-C2C)", "GB/s", "51", 0.1},
    {"memory_gbps_per_gpu", FieldType::Number, "host DRAM bandwidth per GPU (sockets' bandwidth / GPUs)", "GB/s", "60", 0.1},
    {"source", FieldType::String, "where the numbers come from"},
};

FabricKind parse_fabric(const std::string& s) {
    if (s == "roce") return FabricKind::RoCE;
    if (s == "ethernet") return FabricKind::Ethernet;
    return FabricKind::InfiniBand;
}
}  // namespace

std::span<const FieldDef> cluster_fields() { return kClusterFields; }
std::span<const FieldDef> storage_fields() { return kStorageFields; }
std::span<const FieldDef> host_fields() { return kHostFields; }

void check_gpu_count(const ClusterSpec& c, std::int64_t gpus, const std::string& path) {
    check_work(Work::ClusterGpus, static_cast<double>(gpus), path, std::to_string(gpus));
    if (gpus % c.gpus_per_node != 0 && gpus > c.gpus_per_node)
        throw InputError(path, std::to_string(gpus), "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");
}

ClusterSpec parse_cluster_fields(const json& object, const std::string& path, GpuSpec gpu) {
    ObjectReader r(object, path, kClusterFields);
    ClusterSpec c;
    c.gpu = std::move(gpu);
    c.name = r.string("name").value_or(c.gpu.name + " cluster");
    c.gpus = r.require_integer("gpus");
    c.gpus_per_node = r.integer("gpus_per_node").value_or(8);
    c.nvlink_domain_gpus = r.integer("nvlink_domain_gpus").value_or(c.gpus_per_node);
    c.nvlink_latency_us = r.number("nvlink_latency_us").value_or(0);
    c.rank_time_cv = r.number("rank_time_cv").value_or(c.rank_time_cv);
    c.source = r.string("source").value_or("");
    check_gpu_count(c, c.gpus, r.path_of("gpus"));
    if (c.nvlink_domain_gpus % c.gpus_per_node != 0)
        throw InputError(r.path_of("nvlink_domain_gpus"), std::to_string(c.nvlink_domain_gpus),
                         "must be a multiple of gpus_per_node (" + std::to_string(c.gpus_per_node) + ")");

    FabricSpec& f = c.fabric;
    f.kind = parse_fabric(r.string("fabric").value_or("infiniband"));
    // Published runs often leave the NIC out (single-node runs need none; others quote the
    // platform): the GPU's reference platform (DGX, NVL72) supplies it.
    if (const auto nic = r.number("nic_gbps_per_gpu")) f.nic_gbps_per_gpu = *nic;
    else if (c.gpu.platform_nic_gbps > 0) f.nic_gbps_per_gpu = c.gpu.platform_nic_gbps;
    else throw InputError(r.path_of("nic_gbps_per_gpu"), "", "is required: the GPU preset " + c.gpu.name + " names no platform NIC (platform_nic_gbps)");
    f.rail_optimized = r.boolean("rail_optimized").value_or(true);
    f.pod_gpus = r.integer("pod_gpus").value_or(0);
    f.pod_oversubscription = r.number("pod_oversubscription").value_or(1.0);
    f.leaf_gpus = r.integer("leaf_gpus").value_or(0);
    f.leaf_oversubscription = r.number("leaf_oversubscription").value_or(1.0);
    f.nic_latency_us = r.number("nic_latency_us").value_or(2.0);
    f.switch_latency_us = r.number("switch_latency_us").value_or(0.6);
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
        c.storage.write_gbps = sr.require_number("write_gbps");
        c.storage.read_gbps = sr.number("read_gbps").value_or(c.storage.write_gbps);
    }
    if (c.gpu.platform_host_link_gbps > 0) c.host.link_gbps = c.gpu.platform_host_link_gbps;
    if (const json* h = r.raw("host")) {
        ObjectReader hr(*h, r.path_of("host"), kHostFields);
        c.host.link_gbps = hr.number("link_gbps").value_or(c.host.link_gbps);
        c.host.memory_gbps_per_gpu = hr.number("memory_gbps_per_gpu").value_or(c.host.memory_gbps_per_gpu);
    }
    return c;
}

}  // namespace sextant
