#include "collective/network_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "profile/busbw.hpp"

namespace sextant {

namespace {
// NCCL's protocols trade latency for bandwidth. LL sends 8-byte words with inline flags and runs
// on few channels; LL128 keeps 120 of every 128 bytes; Simple moves raw buffers but pays more
// per step and needs large messages to fill its pipeline. The constants place the crossovers
// where NCCL's tuner puts them (LL to ~512 KB, LL128 to tens of MB, Simple above; the H200 log
// of reference-data.md 12c shows Ring/LL up to 1 MiB).
struct Protocol {  // LL, LL128, Simple, in the order of the name table below
    double latency_factor;
    double bandwidth_factor;
    bool pipeline_ramp;
};
constexpr std::array<Protocol, 3> kProtocols = {{{1.0, 0.15, false}, {1.6, 0.80, false}, {3.0, 1.00, true}}};

// Simple's bandwidth ramps as S / (S + S0): S0 = 24 MiB matches the 64-256 MiB part of the
// 8 x H200 NVLS sweep (reference-data.md 12c: 346, 402, 436 GB/s of 482).
constexpr double kSimpleHalfBandwidthBytes = 24.0 * 1024 * 1024;

enum class Algorithm { Ring, Nvls, Tree, Hierarchical, AllToAll, P2p };

// "algorithm/protocol" names in static storage: a cost query allocates nothing.
constexpr std::string_view kNames[6][3] = {
    {"ring/ll", "ring/ll128", "ring/simple"},
    {"nvls/ll", "nvls/ll128", "nvls/simple"},
    {"tree/ll", "tree/ll128", "tree/simple"},
    {"hierarchical/ll", "hierarchical/ll128", "hierarchical/simple"},
    {"all_to_all/ll", "all_to_all/ll128", "all_to_all/simple"},
    {"p2p/ll", "p2p/ll128", "p2p/simple"}};

struct Candidate {
    Algorithm algorithm;
    double latency;    // seconds, before the protocol factor
    double bandwidth;  // seconds at full protocol efficiency
    bool simple_only;
};

// At most four algorithms apply to one op (all-reduce: ring, NVLS, tree, hierarchical).
struct Candidates {
    std::array<Candidate, 4> items{};
    std::size_t count = 0;
    void add(const Candidate& c) { items[count++] = c; }
    const Candidate* begin() const { return items.data(); }
    const Candidate* end() const { return items.data() + count; }
};

double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

struct NetworkModel::Impl {
    ClusterSpec cluster;
    CommCalibration calibration;
    double factor = 1.0;  // scales every bandwidth term at cost time, so group shapes do not depend on it
    std::shared_ptr<const ClusterGraph> graph;
    Impl(const ClusterSpec& c, const CommCalibration& k, double f)
        : cluster(c), calibration(k), factor(f), graph(std::make_shared<const ClusterGraph>(c)) {}

    double nvlink_bytes_per_s() const { return cluster.gpu.nvlink_gbps * 1e9 * calibration.nvlink_ring_efficiency; }
    double nvlink_latency() const { return calibration.nvlink_latency_us * 1e-6; }
    double network_latency() const { return calibration.network_latency_us * 1e-6; }

    Candidates candidates(CollectiveOp op, double S, const GroupShape& g) const;
    CollectiveResult fastest_protocol(const Candidate& c, CollectiveOp op, double S, std::int64_t ranks) const;
};

NetworkModel::NetworkModel(const ClusterSpec& cluster, const CommCalibration& calibration, double communication_factor)
    : impl_(std::make_unique<Impl>(cluster, calibration, communication_factor)) {}
NetworkModel::~NetworkModel() = default;
NetworkModel::NetworkModel(NetworkModel&&) noexcept = default;
NetworkModel& NetworkModel::operator=(NetworkModel&&) noexcept = default;

const ClusterGraph& NetworkModel::graph() const { return *impl_->graph; }

NetworkModel NetworkModel::with_factor(double communication_factor) const {
    NetworkModel copy(*this);
    copy.impl_->factor = communication_factor;
    return copy;
}

NetworkModel::NetworkModel(const NetworkModel& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}

GroupShape NetworkModel::analyse(const GroupPlacement& group, bool with_all_to_all) const {
    return analyse_group(*impl_->graph, group, impl_->calibration.nic_efficiency, with_all_to_all);
}

Candidates NetworkModel::Impl::candidates(CollectiveOp op, double S, const GroupShape& g) const {
    const double n = d(g.ranks), m = d(g.domains), per = d(g.per_domain);
    const double B = nvlink_bytes_per_s();
    const double lat_step = g.domains > 1 ? network_latency() : nvlink_latency();
    const double net = g.ring_seconds_per_byte;  // per byte of one ring crossing
    Candidates out;
    // A ring over all members: intra-domain edges on NVLink, domain crossings split over `per`
    // channels (one NIC each); the slower side bounds the pipelined ring.
    auto ring = [&](double steps) {
        const double per_edge = steps * S / n;
        const double intra = g.per_domain > 1 ? per_edge / B : 0.0;
        const double inter = g.domains > 1 ? per_edge / per * net : 0.0;
        return Candidate{Algorithm::Ring, steps * lat_step, std::max(intra, inter), false};
    };
    switch (op) {
        case CollectiveOp::AllReduce: {
            out.add(ring(2 * (n - 1)));
            if (g.domains == 1 && cluster.gpu.nvls && g.ranks > 2) {
                // NVLink SHARP reduces in the switch: each GPU sends and receives the buffer once,
                // at the algbw the 8-GPU busbw of the calibration implies.
                const double algbw = cluster.gpu.nvlink_gbps * 1e9 * calibration.nvls_allreduce_efficiency / 1.75;
                out.add({Algorithm::Nvls, 2 * nvlink_latency(), S / algbw, true});
            }
            if (g.domains > 1) {
                const double tree_inter = 2 * S / per * net;
                out.add({Algorithm::Tree, 2 * (std::ceil(std::log2(m)) * network_latency() + (per - 1) * nvlink_latency()),
                               std::max(S / B, tree_inter), false});
            }
            if (g.domains > 1 && g.per_domain > 1) {
                // Reduce-scatter inside each domain, all-reduce across domains rail by rail on a
                // 1/per share, all-gather inside each domain; chunks pipeline the three phases,
                // so the slower of NVLink and network bounds it. The network carries
                // 2(m-1)/m of a share where a flat ring carries 2(n-1)/n.
                const double intra = 2 * (per - 1) / per * S / B;
                const double inter = 2 * (m - 1) / m * S / per * net;
                out.add({Algorithm::Hierarchical, 2 * (per - 1) * nvlink_latency() + 2 * (m - 1) * network_latency(),
                               std::max(intra, inter), false});
            }
            break;
        }
        case CollectiveOp::AllGather:
        case CollectiveOp::ReduceScatter: out.add(ring(n - 1)); break;
        case CollectiveOp::Broadcast:
        case CollectiveOp::Reduce: {
            Candidate c = ring(n - 1);
            c.bandwidth = std::max(g.per_domain > 1 ? S / B : 0.0, g.domains > 1 ? S / per * net : 0.0);
            out.add(c);
            break;
        }
        case CollectiveOp::AllToAll: {
            const double intra = (per - 1) / n * S / B;
            const double inter = g.domains > 1 ? S / n * g.all_to_all_seconds_per_byte : 0.0;
            out.add({Algorithm::AllToAll, 2 * lat_step + (n - 1) * 0.1e-6, std::max(intra, inter), false});
            break;
        }
        case CollectiveOp::SendRecv: {
            const double bw = g.domains > 1 ? S * net : S / (cluster.gpu.nvlink_gbps * 1e9);
            out.add({Algorithm::P2p, lat_step, bw, false});
            break;
        }
    }
    return out;
}

// The fastest protocol of one algorithm for S bytes, as NCCL's tuner picks it.
CollectiveResult NetworkModel::Impl::fastest_protocol(const Candidate& c, CollectiveOp op, double S, std::int64_t ranks) const {
    CollectiveResult best;
    double best_time = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < kProtocols.size(); ++i) {
        const Protocol& p = kProtocols[i];
        if (c.simple_only && !p.pipeline_ramp) continue;
        const double ramp = p.pipeline_ramp ? 1.0 + kSimpleHalfBandwidthBytes / S : 1.0;
        const double t = c.latency * p.latency_factor + c.bandwidth / (p.bandwidth_factor * factor) * ramp;
        if (t < best_time) {
            best_time = t;
            best.algorithm = kNames[static_cast<std::size_t>(c.algorithm)][i];
        }
    }
    best.time = Seconds(best_time);
    best.algbw_gbps = S / best_time / 1e9;
    best.busbw_gbps = best.algbw_gbps * bus_factor(op, ranks);
    return best;
}

CollectiveResult NetworkModel::cost(CollectiveOp op, Bytes bytes, const GroupShape& shape) const {
    CollectiveResult best;
    const double S = std::max(bytes.value(), 1.0);
    if (shape.ranks <= 1 && op != CollectiveOp::SendRecv) {
        best.algorithm = "none";
        return best;
    }
    best.time = Seconds(std::numeric_limits<double>::infinity());
    for (const Candidate& c : impl_->candidates(op, S, shape)) {
        const CollectiveResult r = impl_->fastest_protocol(c, op, S, shape.ranks);
        if (r.time.value() < best.time.value()) best = r;
    }
    return best;
}

std::vector<CollectiveResult> NetworkModel::cost_per_algorithm(CollectiveOp op, Bytes bytes, const GroupShape& shape) const {
    std::vector<CollectiveResult> out;
    if (shape.ranks <= 1 && op != CollectiveOp::SendRecv) return out;
    const double S = std::max(bytes.value(), 1.0);
    for (const Candidate& c : impl_->candidates(op, S, shape)) out.push_back(impl_->fastest_protocol(c, op, S, shape.ranks));
    return out;
}

CollectiveResult NetworkModel::cost(CollectiveOp op, Bytes bytes, const GroupPlacement& group) const {
    return cost(op, bytes, analyse(group, op == CollectiveOp::AllToAll));
}

double bus_factor(CollectiveOp op, std::int64_t ranks) {
    switch (op) {
        case CollectiveOp::AllReduce: return busbw_factor(NcclTestOp::AllReduce, ranks);
        case CollectiveOp::AllGather: return busbw_factor(NcclTestOp::AllGather, ranks);
        case CollectiveOp::ReduceScatter: return busbw_factor(NcclTestOp::ReduceScatter, ranks);
        case CollectiveOp::Broadcast: return busbw_factor(NcclTestOp::Broadcast, ranks);
        case CollectiveOp::Reduce: return busbw_factor(NcclTestOp::Reduce, ranks);
        case CollectiveOp::AllToAll: return busbw_factor(NcclTestOp::AllToAll, ranks);
        case CollectiveOp::SendRecv: return busbw_factor(NcclTestOp::SendRecv, ranks);
    }
    return 1.0;
}

std::string op_name(CollectiveOp op) {
    switch (op) {
        case CollectiveOp::AllReduce: return "all_reduce";
        case CollectiveOp::AllGather: return "all_gather";
        case CollectiveOp::ReduceScatter: return "reduce_scatter";
        case CollectiveOp::Broadcast: return "broadcast";
        case CollectiveOp::Reduce: return "reduce";
        case CollectiveOp::AllToAll: return "all_to_all";
        case CollectiveOp::SendRecv: return "send_recv";
    }
    return "";
}

CollectiveOp parse_op(const std::string& name, const std::string& path) {
    const std::vector<std::string> names = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "all_to_all", "send_recv"};
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return static_cast<CollectiveOp>(i);
    throw InputError(path, "\"" + name + "\"", "unknown collective; " + suggestion_text(name, names));
}

}  // namespace sextant
