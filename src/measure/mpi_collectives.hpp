#pragma once
// Collectives across nodes: one process per GPU under mpirun/srun, NCCL communicators for the
// groups that matter to a training job (all GPUs; the GPUs of one node; one GPU per node on the
// same rail, i.e. the same local rank).
#include <optional>
#include <vector>

#include "plan.hpp"
#include "profile/measurements.hpp"
#include "profile/profile.hpp"

namespace sextant::measure {

struct MpiJob {
    int rank = 0, size = 1, local_rank = 0, local_size = 1;
};

// Initializes MPI when the process was started by mpirun/srun (and the tool was built with MPI);
// nothing otherwise.
std::optional<MpiJob> start_mpi(int& argc, char**& argv);
void stop_mpi();
// Collective sweeps in every distinct group with more than one member (the whole job, a node, a
// rail); rank 0 gets them, the caller fills in the provenance.
std::vector<CollectiveSweep> measure_job_collectives(const MeasurePlan& plan, const MpiJob& job);

}  // namespace sextant::measure
