#pragma once
// The "collectives" section of a calibration profile: measured sweeps, read and written. Every
// sweep carries its provenance; every point is checked against nccl-tests' busbw convention.
#include <span>
#include <string>
#include <vector>

#include "profile/measurements.hpp"
#include "spec/fields.hpp"

namespace sextant {

// Reads the array at `path`; an InputError names the sweep, the point and the rule.
std::vector<CollectiveSweep> parse_collective_sweeps(const json& array, const std::string& path);
// The JSON a profile stores (parse_collective_sweeps reads it back unchanged).
json collective_sweep_json(const CollectiveSweep& sweep);

// A sweep's busbw at one sample, nccl-tests' convention (profile/busbw.hpp).
double sample_busbw_gbps(const CollectiveSweep& sweep, const CollectiveSample& sample);
// "all_reduce on 16 ranks (2 nodes, cluster)"
std::string sweep_label(const CollectiveSweep& sweep);

std::span<const FieldDef> collective_sweep_fields();
std::span<const FieldDef> collective_sample_fields();
std::span<const FieldDef> sweep_provenance_fields();

}  // namespace sextant
