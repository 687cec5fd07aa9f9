#include "profile/comm_calibration.hpp"

#include <nlohmann/json.hpp>

namespace sextant {

namespace {
constexpr FieldDef kCommFields[] = {
    {"nvlink_ring_efficiency", FieldType::Number, "ring bus bandwidth over NVLink line rate, large sizes", "", "0.82", 0.05, 1.0},
    {"nvls_allreduce_efficiency", FieldType::Number, "NVLS all-reduce bus bandwidth over NVLink line rate", "", "1.07", 0.05, 2.0},
    {"nic_efficiency", FieldType::Number, "achieved fraction of NIC line rate", "", "0.93", 0.05, 1.0},
    {"nvlink_latency_us", FieldType::Number, "latency of one ring step inside a node", "us", "3.0", 0},
    {"network_latency_us", FieldType::Number, "latency of one ring step across nodes", "us", "5.0", 0},
    {"source", FieldType::String, "where the figures come from"},
};
}  // namespace

std::span<const FieldDef> comm_calibration_fields() { return kCommFields; }

CommCalibration parse_comm_calibration(const json& object, const std::string& path) {
    ObjectReader r(object, path, kCommFields);
    CommCalibration c;
    c.nvlink_ring_efficiency = r.number("nvlink_ring_efficiency").value_or(c.nvlink_ring_efficiency);
    c.nvls_allreduce_efficiency = r.number("nvls_allreduce_efficiency").value_or(c.nvls_allreduce_efficiency);
    c.nic_efficiency = r.number("nic_efficiency").value_or(c.nic_efficiency);
    c.nvlink_latency_us = r.number("nvlink_latency_us").value_or(c.nvlink_latency_us);
    c.network_latency_us = r.number("network_latency_us").value_or(c.network_latency_us);
    c.source = r.string("source").value_or("");
    return c;
}

}  // namespace sextant
