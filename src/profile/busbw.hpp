#pragma once
// nccl-tests' bus bandwidth: busbw = algbw * factor, where the factor makes a collective's
// busbw comparable to the per-GPU link bandwidth whatever the rank count (nccl-tests
// doc/PERFORMANCE.md). Header-only and free of library types so that the CUDA measurement tool
// and the simulator share this one definition.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sextant {

enum class NcclTestOp { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Reduce, SendRecv };

inline constexpr std::array<std::string_view, 7> kNcclTestOpNames = {
    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce", "send_recv"};

constexpr std::string_view nccl_test_op_name(NcclTestOp op) {
    return kNcclTestOpNames[static_cast<std::size_t>(op)];
}

constexpr std::optional<NcclTestOp> parse_nccl_test_op(std::string_view name) {
    for (std::size_t i = 0; i < kNcclTestOpNames.size(); ++i)
        if (kNcclTestOpNames[i] == name) return static_cast<NcclTestOp>(i);
    return std::nullopt;
}

// busbw / algbw for `ranks` participants. All-reduce moves 2(n-1)/n of the buffer over each
// GPU's link; all-gather, reduce-scatter and all-to-all move (n-1)/n; broadcast, reduce and
// point-to-point move the buffer once.
constexpr double busbw_factor(NcclTestOp op, std::int64_t ranks) {
    const double n = static_cast<double>(ranks);
    switch (op) {
        case NcclTestOp::AllReduce: return ranks > 1 ? 2.0 * (n - 1.0) / n : 1.0;
        case NcclTestOp::AllGather:
        case NcclTestOp::ReduceScatter:
        case NcclTestOp::AllToAll: return ranks > 1 ? (n - 1.0) / n : 1.0;
        case NcclTestOp::Broadcast:
        case NcclTestOp::Reduce:
        case NcclTestOp::SendRecv: return 1.0;
    }
    return 1.0;
}

// nccl-tests reports algbw = bytes / time, with bytes the buffer size of the op as the test
// prints it (the full output for all-gather, the full input for reduce-scatter).
constexpr double busbw_gbps(NcclTestOp op, std::int64_t ranks, double bytes, double time_us) {
    return bytes / (time_us * 1e-6) / 1e9 * busbw_factor(op, ranks);
}

}  // namespace sextant
