#pragma once
// How `sextant calibrate import-nccl-tests` and `sextant calibrate show` print a profile's
// measured collectives: one line per sweep, one per fitted latency-bandwidth law.
#include <string>
#include <vector>

#include "collective/measured_collectives.hpp"
#include "profile/measurements.hpp"
#include "spec/fields.hpp"

namespace sextant::cli {

std::string sweeps_table(const std::vector<CollectiveSweep>& sweeps);
json sweeps_json(const std::vector<CollectiveSweep>& sweeps);
std::string fits_table(const MeasuredCollectives& measured);
json fits_json(const MeasuredCollectives& measured);

}  // namespace sextant::cli
