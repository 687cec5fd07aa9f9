#pragma once
// Collective bandwidth through NCCL, nccl-tests style: out-of-place buffers, `bytes` as
// nccl-tests prints it, busbw from profile/busbw.hpp.
#include <vector>

#include "plan.hpp"
#include "profile/measurements.hpp"
#include "profile/profile.hpp"

namespace sextant::measure {

// All GPUs of this process (ncclCommInitAll), one thread driving them with group calls.
// One node sweep per collective of the plan; the caller fills in the provenance.
std::vector<CollectiveSweep> measure_node_collectives(const MeasurePlan& plan, int devices);

}  // namespace sextant::measure
