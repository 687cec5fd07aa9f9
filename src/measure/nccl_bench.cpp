#include "nccl_bench.hpp"

#include <algorithm>
#include <chrono>

#include "kernels.hpp"
#include "timing.hpp"

namespace sextant::measure {

namespace {
struct Rank {
    int device;
    ncclComm_t comm;
    cudaStream_t stream;
    void* send;
    void* recv;
};

// Issues one collective of `bytes` (nccl-tests' size: the larger of input and output) on every
// rank, as BF16 elements.
void issue(NcclTestOp op, std::size_t bytes, std::vector<Rank>& ranks) {
    const auto n = ranks.size();
    const std::size_t count = bytes / 2;
    SEXTANT_CHECK(ncclGroupStart());
    for (std::size_t r = 0; r < n; ++r) {
        Rank& k = ranks[r];
        switch (op) {
            case NcclTestOp::AllReduce: SEXTANT_CHECK(ncclAllReduce(k.send, k.recv, count, ncclBfloat16, ncclSum, k.comm, k.stream)); break;
            case NcclTestOp::AllGather: SEXTANT_CHECK(ncclAllGather(k.send, k.recv, count / n, ncclBfloat16, k.comm, k.stream)); break;
            case NcclTestOp::ReduceScatter:
                SEXTANT_CHECK(ncclReduceScatter(k.send, k.recv, count / n, ncclBfloat16, ncclSum, k.comm, k.stream));
                break;
            case NcclTestOp::AllToAll:
                for (std::size_t peer = 0; peer < n; ++peer) {
                    const std::size_t chunk = count / n;
                    SEXTANT_CHECK(ncclSend(static_cast<char*>(k.send) + 2 * chunk * peer, chunk, ncclBfloat16, int(peer), k.comm, k.stream));
                    SEXTANT_CHECK(ncclRecv(static_cast<char*>(k.recv) + 2 * chunk * peer, chunk, ncclBfloat16, int(peer), k.comm, k.stream));
                }
                break;
            case NcclTestOp::Broadcast: SEXTANT_CHECK(ncclBroadcast(k.send, k.recv, count, ncclBfloat16, 0, k.comm, k.stream)); break;
            case NcclTestOp::Reduce: SEXTANT_CHECK(ncclReduce(k.send, k.recv, count, ncclBfloat16, ncclSum, 0, k.comm, k.stream)); break;
            case NcclTestOp::SendRecv: {
                // A ring of point-to-point transfers, as nccl-tests' sendrecv_perf.
                const int next = int((r + 1) % n), prev = int((r + n - 1) % n);
                SEXTANT_CHECK(ncclSend(k.send, count, ncclBfloat16, next, k.comm, k.stream));
                SEXTANT_CHECK(ncclRecv(k.recv, count, ncclBfloat16, prev, k.comm, k.stream));
                break;
            }
        }
    }
    SEXTANT_CHECK(ncclGroupEnd());
}

void synchronize(std::vector<Rank>& ranks) {
    for (Rank& k : ranks) {
        SEXTANT_CHECK(cudaSetDevice(k.device));
        SEXTANT_CHECK(cudaStreamSynchronize(k.stream));
    }
}

// Wall-clock time over all ranks (events on one stream would miss the slowest rank), median of
// `reps` after `warmup`.
double time_us(NcclTestOp op, std::size_t bytes, std::vector<Rank>& ranks, int warmup, int reps) {
    for (int i = 0; i < warmup; ++i) issue(op, bytes, ranks);
    synchronize(ranks);
    std::vector<double> samples;
    for (int i = 0; i < reps; ++i) {
        const auto start = std::chrono::steady_clock::now();
        issue(op, bytes, ranks);
        synchronize(ranks);
        samples.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    std::nth_element(samples.begin(), samples.begin() + reps / 2, samples.end());
    return samples[static_cast<std::size_t>(reps / 2)];
}
}  // namespace

std::vector<CollectiveSweep> measure_node_collectives(const MeasurePlan& plan, int devices) {
    std::vector<CollectiveSweep> out;
    if (devices < 2) return out;
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(devices));
    SEXTANT_CHECK(ncclCommInitAll(comms.data(), devices, nullptr));
    std::vector<Rank> ranks;
    for (int d = 0; d < devices; ++d) {
        Rank k{d, comms[static_cast<std::size_t>(d)], nullptr, nullptr, nullptr};
        SEXTANT_CHECK(cudaSetDevice(d));
        SEXTANT_CHECK(cudaStreamCreate(&k.stream));
        SEXTANT_CHECK(cudaMalloc(&k.send, plan.max_bytes));
        SEXTANT_CHECK(cudaMalloc(&k.recv, plan.max_bytes));
        fill_random(k.send, plan.max_bytes / 2, ElementType::Bf16, std::uint64_t(d) + 100, k.stream);
        ranks.push_back(k);
    }
    const auto n = static_cast<std::size_t>(devices);
    for (NcclTestOp op : plan.collectives) {
        CollectiveSweep sweep;
        sweep.op = op;
        sweep.span = MeasuredSpan::Node;
        sweep.ranks = devices;
        sweep.dtype = "bfloat16";
        for (std::size_t bytes = std::max(plan.min_bytes, 2 * n); bytes <= plan.max_bytes; bytes *= 2) {
            const std::size_t rounded = bytes / (2 * n) * (2 * n);  // whole BF16 chunks per rank
            const int reps = bytes >= (std::size_t(256) << 20) ? std::max(5, plan.reps / 5) : plan.reps;
            sweep.samples.push_back({double(rounded), time_us(op, rounded, ranks, plan.warmup / 4 + 1, reps), 0, 0});
        }
        out.push_back(std::move(sweep));
    }
    for (Rank& k : ranks) {
        cudaSetDevice(k.device);
        cudaFree(k.send);
        cudaFree(k.recv);
        cudaStreamDestroy(k.stream);
        ncclCommDestroy(k.comm);
    }
    return out;
}

}  // namespace sextant::measure
