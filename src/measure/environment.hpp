#pragma once
// The provenance of a measurement: library versions, host, date, command line.
#include <string>

#include "profile/measurements.hpp"
#include "profile/profile.hpp"

namespace sextant::measure {

// Number of CUDA devices; 0 (with `why` set) when there is no usable device or driver.
int cuda_device_count(std::string& why);
// Compute capability major version of device 0 (9 on Hopper, 10 on Blackwell).
int compute_capability_major();
Provenance measured_provenance(const std::string& command);

}  // namespace sextant::measure
