#pragma once
// The "comm" section of a calibration profile: what the collective model needs to know about a
// GPU's NVLink domain and NICs that a datasheet does not say (achieved fractions of line rate,
// latencies, NVLS). Owned by the collective model; read by the profile loader.
#include <span>
#include <string>

#include "spec/fields.hpp"

namespace sextant {

struct CommCalibration {
    // Fraction of NVLink line rate that NCCL's ring achieves as bus bandwidth at large sizes
    // (nccl-tests issue #212: ~370 of 450 GB/s on H100).
    double nvlink_ring_efficiency = 0.82;
    // NVLS all-reduce bus bandwidth over NVLink line rate at large sizes (~480 of 450 on H100).
    double nvls_allreduce_efficiency = 1.07;
    // Fraction of NIC line rate achieved per NIC (46-48 GB/s of 50 on NDR 400).
    double nic_efficiency = 0.93;
    double nvlink_latency_us = 3.0;   // per ring step inside a node, protocol included
    double network_latency_us = 5.0;  // per ring step across nodes
    std::string source;
};

// Reads the "comm" object of a profile; absent keys keep the defaults above.
CommCalibration parse_comm_calibration(const json& object, const std::string& path);
std::span<const FieldDef> comm_calibration_fields();

}  // namespace sextant
