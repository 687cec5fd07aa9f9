#include "mpi_collectives.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "kernels.hpp"
#include "timing.hpp"

#ifdef SEXTANT_HAVE_MPI
#include <mpi.h>
#endif

namespace sextant::measure {

#ifdef SEXTANT_HAVE_MPI
namespace {
bool launched_by_mpi() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "SLURM_STEP_NUM_TASKS"})
        if (std::getenv(var)) return true;
    return false;
}

void issue(NcclTestOp op, std::size_t bytes, int ranks, int me, ncclComm_t comm, void* send, void* recv,
           cudaStream_t stream) {
    const std::size_t count = bytes / 2, chunk = count / std::size_t(ranks);
    switch (op) {
        case NcclTestOp::AllReduce: SEXTANT_CHECK(ncclAllReduce(send, recv, count, ncclBfloat16, ncclSum, comm, stream)); return;
        case NcclTestOp::AllGather: SEXTANT_CHECK(ncclAllGather(send, recv, chunk, ncclBfloat16, comm, stream)); return;
        case NcclTestOp::ReduceScatter: SEXTANT_CHECK(ncclReduceScatter(send, recv, chunk, ncclBfloat16, ncclSum, comm, stream)); return;
        case NcclTestOp::Broadcast: SEXTANT_CHECK(ncclBroadcast(send, recv, count, ncclBfloat16, 0, comm, stream)); return;
        case NcclTestOp::Reduce: SEXTANT_CHECK(ncclReduce(send, recv, count, ncclBfloat16, ncclSum, 0, comm, stream)); return;
        case NcclTestOp::AllToAll:
        case NcclTestOp::SendRecv: break;
    }
    SEXTANT_CHECK(ncclGroupStart());
    if (op == NcclTestOp::AllToAll) {
        for (int peer = 0; peer < ranks; ++peer) {
            SEXTANT_CHECK(ncclSend(static_cast<char*>(send) + 2 * chunk * std::size_t(peer), chunk, ncclBfloat16, peer, comm, stream));
            SEXTANT_CHECK(ncclRecv(static_cast<char*>(recv) + 2 * chunk * std::size_t(peer), chunk, ncclBfloat16, peer, comm, stream));
        }
    } else {
        SEXTANT_CHECK(ncclSend(send, count, ncclBfloat16, (me + 1) % ranks, comm, stream));
        SEXTANT_CHECK(ncclRecv(recv, count, ncclBfloat16, (me + ranks - 1) % ranks, comm, stream));
    }
    SEXTANT_CHECK(ncclGroupEnd());
}

// One group's sweep; every rank takes part, the slowest rank's median is the result.
void sweep(const MeasurePlan& plan, ncclComm_t comm, MPI_Comm mpi, MeasuredSpan span, int nodes, void* send, void* recv,
           cudaStream_t stream, bool report, std::vector<CollectiveSweep>& out) {
    int ranks = 0, me = 0;
    SEXTANT_CHECK(ncclCommCount(comm, &ranks));
    SEXTANT_CHECK(ncclCommUserRank(comm, &me));
    if (ranks < 2) return;
    for (NcclTestOp op : plan.collectives) {
        CollectiveSweep s;
        s.op = op;
        s.span = span;
        s.ranks = ranks;
        s.nodes = nodes;
        s.dtype = "bfloat16";
        for (std::size_t bytes = std::max(plan.min_bytes, std::size_t(2 * ranks)); bytes <= plan.max_bytes; bytes *= 2) {
            const std::size_t rounded = bytes / std::size_t(2 * ranks) * std::size_t(2 * ranks);
            const int reps = bytes >= (std::size_t(256) << 20) ? std::max(5, plan.reps / 5) : plan.reps;
            MPI_Barrier(mpi);
            double us = median_us([&](int) { issue(op, rounded, ranks, me, comm, send, recv, stream); }, stream,
                                  plan.warmup / 4 + 1, reps);
            double slowest = 0;
            MPI_Reduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            s.samples.push_back({double(rounded), slowest, 0, 0});
        }
        if (report) out.push_back(std::move(s));
    }
}

ncclComm_t split(ncclComm_t world, int color, int key) {
    ncclComm_t comm;
    SEXTANT_CHECK(ncclCommSplit(world, color, key, &comm, nullptr));
    return comm;
}
}  // namespace

std::optional<MpiJob> start_mpi(int& argc, char**& argv) {
    if (!launched_by_mpi()) return std::nullopt;
    MPI_Init(&argc, &argv);
    MpiJob job;
    MPI_Comm_rank(MPI_COMM_WORLD, &job.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &job.size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &job.local_rank);
    MPI_Comm_size(node, &job.local_size);
    MPI_Comm_free(&node);
    return job;
}

void stop_mpi() { MPI_Finalize(); }

std::vector<CollectiveSweep> measure_job_collectives(const MeasurePlan& plan, const MpiJob& job) {
    SEXTANT_CHECK(cudaSetDevice(job.local_rank));
    ncclUniqueId id;
    if (job.rank == 0) SEXTANT_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t world;
    SEXTANT_CHECK(ncclCommInitRank(&world, job.size, id, job.rank));
    // A node's color is its lowest world rank, whatever order the launcher placed ranks in.
    MPI_Comm node_mpi;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job.rank, MPI_INFO_NULL, &node_mpi);
    int node_leader = job.rank;
    MPI_Allreduce(MPI_IN_PLACE, &node_leader, 1, MPI_INT, MPI_MIN, node_mpi);
    MPI_Comm_free(&node_mpi);
    ncclComm_t node = split(world, node_leader, job.local_rank);
    ncclComm_t rail = split(world, job.local_rank, job.rank);

    cudaStream_t stream;
    SEXTANT_CHECK(cudaStreamCreate(&stream));
    void *send = nullptr, *recv = nullptr;
    SEXTANT_CHECK(cudaMalloc(&send, plan.max_bytes));
    SEXTANT_CHECK(cudaMalloc(&recv, plan.max_bytes));
    fill_random(send, plan.max_bytes / 2, ElementType::Bf16, std::uint64_t(job.rank) + 1000, stream);

    std::vector<CollectiveSweep> out;
    const bool report = job.rank == 0;
    // The whole job is its own span only with several GPUs on each of several nodes; otherwise
    // it is the node group (one node) or the rail group (one GPU per node), measured below.
    const int nodes = job.size / job.local_size;
    if (nodes > 1 && job.local_size > 1)
        sweep(plan, world, MPI_COMM_WORLD, MeasuredSpan::Cluster, nodes, send, recv, stream, report, out);
    sweep(plan, node, MPI_COMM_WORLD, MeasuredSpan::Node, 1, send, recv, stream, report, out);
    sweep(plan, rail, MPI_COMM_WORLD, MeasuredSpan::Rail, nodes, send, recv, stream, report, out);

    cudaFree(send);
    cudaFree(recv);
    cudaStreamDestroy(stream);
    for (ncclComm_t c : {rail, node, world}) ncclCommDestroy(c);
    return out;
}
#else
std::optional<MpiJob> start_mpi(int&, char**&) { return std::nullopt; }
void stop_mpi() {}
std::vector<CollectiveSweep> measure_job_collectives(const MeasurePlan&, const MpiJob&) {
    throw std::logic_error("measure_job_collectives needs a build with MPI");
}
#endif

}  // namespace sextant::measure
