#include "collective/network_model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

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

enum class Algorithm { Ring, Nvls, Tree, AllToAll, P2p };

// "algorithm/protocol" names in static storage: a cost query allocates nothing.
constexpr std::string_view kNames[5][3] = {
    {"ring/ll", "ring/ll128", "ring/simple"},
    {"nvls/ll", "nvls/ll128", "nvls/simple"},
    {"tree/ll", "tree/ll128", "tree/simple"},
    {"all_to_all/ll", "all_to_all/ll128", "all_to_all/simple"},
    {"p2p/ll", "p2p/ll128", "p2p/simple"}};

struct Candidate {
    Algorithm algorithm;
    double latency;    // seconds, before the protocol factor
    double bandwidth;  // seconds at full protocol efficiency
    bool simple_only;
};

// At most three algorithms apply to one op (all-reduce: ring, NVLS, tree). NCCL has no
// hierarchical all-reduce (reduce-scatter in the node, all-reduce across, all-gather in the
// node) outside NVLS trees and CollNet: its algorithms are ring, tree, CollNet, NVLS, NVLS tree
// and PAT (src/graph/tuning.cc), and a ring across nodes is what it runs for large buffers (4 x 8
// H200 over EFA: ring 364.9 GB/s busbw, NVLS tree 310.1; reference-data.md 12d).
struct Candidates {
    std::array<Candidate, 3> items{};
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
    std::shared_ptr<const MeasuredCollectives> measured;  // null: no measured sweeps
    std::vector<FittedConstant> fitted;
    Impl(const ClusterSpec& c, const CommCalibration& k, double f)
        : cluster(c), calibration(k), factor(f), graph(std::make_shared<const ClusterGraph>(c)) {}

    double nvlink_bytes_per_s() const { return cluster.gpu.nvlink_gbps * 1e9 * calibration.nvlink_ring_efficiency; }
    bool network_latency_measured = false;  // the profile's sweeps measured this cluster's NICs
    // A step inside an NVLink domain: the cluster's own figure where it gives one.
    double nvlink_latency() const {
        return (cluster.nvlink_latency_us > 0 ? cluster.nvlink_latency_us : calibration.nvlink_latency_us) * 1e-6;
    }
    double network_latency(Span span) const;

    Candidates candidates(CollectiveOp op, double S, const GroupShape& g) const;
    // The fastest candidate and protocol: seconds, and its "algorithm/protocol" name.
    std::pair<double, std::string_view> fastest(CollectiveOp op, double S, const GroupShape& g, double bandwidth_factor) const;
    // One algorithm's fastest protocol, as NCCL's tuner picks it.
    std::pair<double, std::string_view> fastest_protocol(const Candidate& c, double S, double bandwidth_factor) const;
};

// A ring step across nodes. The profile's figure (published, or read from a cluster's sweeps over
// one rail, `fitted_comm_calibration`) is a step from NIC to NIC through one leaf switch of the
// reference fabric, FabricSpec's defaults (InfiniBand, 2.0 us NIC to NIC). A cluster's fabric
// adds the difference of its NIC-to-NIC latency from that reference (not where the profile's
// figure was measured on its own NICs) and, where a group's crossings climb above the leaves,
// switch_latency_us for each further switch a packet passes: up to a spine and down (two) for a
// group inside one pod, through the core (four) for one across pods. A ring step waits for its
// slowest crossing, so the group's widest span sets it.
double NetworkModel::Impl::network_latency(Span span) const {
    static const FabricSpec reference;
    const FabricSpec& f = cluster.fabric;
    const double nic = network_latency_measured ? 0.0 : f.nic_latency_us - reference.nic_latency_us;
    const double switches = span == Span::Cluster ? 4.0 : span == Span::Pod ? 2.0 : 0.0;
    return std::max(0.0, calibration.network_latency_us + nic + switches * f.switch_latency_us) * 1e-6;
}

NetworkModel::NetworkModel(const ClusterSpec& cluster, const CommCalibration& calibration, double communication_factor)
    : impl_(std::make_unique<Impl>(cluster, calibration, communication_factor)) {}

NetworkModel::NetworkModel(const ClusterSpec& cluster, const CalibrationProfile& profile)
    : NetworkModel(cluster, profile.comm(), profile.factors().communication) {
    if (profile.collective_sweeps().empty()) return;
    auto measured = std::make_shared<const MeasuredCollectives>(profile.collective_sweeps());
    FittedComm comm = fitted_comm_calibration(profile.comm(), *measured, cluster.gpu, cluster.fabric.nic_gbps_per_gpu);
    // The graph itself does not depend on the calibration; only the shapes analysed on it do.
    impl_->calibration = comm.calibration;
    impl_->network_latency_measured = std::any_of(comm.constants.begin(), comm.constants.end(),
                                                  [](const FittedConstant& c) { return c.name == "network_latency_us"; });
    impl_->fitted = std::move(comm.constants);
    impl_->measured = std::move(measured);
}
NetworkModel::~NetworkModel() = default;
NetworkModel::NetworkModel(NetworkModel&&) noexcept = default;
NetworkModel& NetworkModel::operator=(NetworkModel&&) noexcept = default;

const ClusterGraph& NetworkModel::graph() const { return *impl_->graph; }
const CommCalibration& NetworkModel::calibration() const { return impl_->calibration; }
const std::vector<FittedConstant>& NetworkModel::fitted_constants() const { return impl_->fitted; }

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
    const double network_step = network_latency(g.span);
    const double lat_step = g.domains > 1 ? network_step : nvlink_latency();
    const double net = g.ring_seconds_per_byte;  // per byte of one ring crossing
    Candidates out;
    // A ring over all members: intra-domain edges on NVLink, domain crossings split over `per`
    // channels (one NIC each); the slower side bounds the pipelined ring. Of its `steps` steps,
    // `inter_steps` cross from one domain to the next and pay the network's latency, the others
    // NVLink's, as NCCL's tuner counts a ring (src/graph/tuning.cc, ncclTopoTuneModel: nInterSteps
    // = nNodes - 1 for all-gather and reduce-scatter, 2(nNodes - 1) for all-reduce; at one GPU per
    // domain every step crosses).
    auto ring = [&](double steps, double inter_steps) {
        const double per_edge = steps * S / n;
        const double intra = g.per_domain > 1 ? per_edge / B : 0.0;
        const double inter = g.domains > 1 ? per_edge / per * net : 0.0;
        const double crossing = g.domains > 1 ? inter_steps : 0.0;
        return Candidate{Algorithm::Ring, (steps - crossing) * nvlink_latency() + crossing * network_step,
                         std::max(intra, inter), false};
    };
    switch (op) {
        case CollectiveOp::AllReduce: {
            out.add(ring(2 * (n - 1), 2 * (m - 1)));
            if (g.domains == 1 && cluster.gpu.nvls && g.ranks > 2) {
                // NVLink SHARP reduces in the switch: each GPU sends and receives the buffer once,
                // at the algbw the 8-GPU busbw of the calibration implies.
                const double algbw = cluster.gpu.nvlink_gbps * 1e9 * calibration.nvls_allreduce_efficiency / 1.75;
                out.add({Algorithm::Nvls, 2 * nvlink_latency(), S / algbw, true});
            }
            if (g.domains > 1) {
                const double tree_inter = 2 * S / per * net;
                out.add({Algorithm::Tree, 2 * (std::ceil(std::log2(m)) * network_step + (per - 1) * nvlink_latency()),
                               std::max(S / B, tree_inter), false});
            }
            break;
        }
        case CollectiveOp::AllGather:
        case CollectiveOp::ReduceScatter: out.add(ring(n - 1, m - 1)); break;
        case CollectiveOp::Broadcast:
        case CollectiveOp::Reduce: {
            Candidate c = ring(n - 1, m - 1);
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

std::pair<double, std::string_view> NetworkModel::Impl::fastest_protocol(const Candidate& c, double S, double bandwidth_factor) const {
    double best_time = std::numeric_limits<double>::infinity();
    std::string_view name;
    for (std::size_t i = 0; i < kProtocols.size(); ++i) {
        const Protocol& p = kProtocols[i];
        if (c.simple_only && !p.pipeline_ramp) continue;
        const double ramp = p.pipeline_ramp ? 1.0 + kSimpleHalfBandwidthBytes / S : 1.0;
        const double t = c.latency * p.latency_factor + c.bandwidth / (p.bandwidth_factor * bandwidth_factor) * ramp;
        if (t < best_time) {
            best_time = t;
            name = kNames[static_cast<std::size_t>(c.algorithm)][i];
        }
    }
    return {best_time, name};
}

std::pair<double, std::string_view> NetworkModel::Impl::fastest(CollectiveOp op, double S, const GroupShape& g,
                                                                double bandwidth_factor) const {
    std::pair<double, std::string_view> best{std::numeric_limits<double>::infinity(), {}};
    for (const Candidate& c : candidates(op, S, g)) {
        const auto r = fastest_protocol(c, S, bandwidth_factor);
        if (r.first < best.first) best = r;  // ties keep the earlier candidate
    }
    return best;
}

namespace {
// Which measured span a group's idle time is read from: one NVLink domain, one GPU per domain
// (a rail, whatever leaves it crosses: idle, a rail group and a cross-leaf one move alike), or
// several GPUs on each of several domains.
MeasuredSpan measured_span(const GroupShape& g) {
    if (g.domains == 1) return MeasuredSpan::Node;
    return g.per_domain == 1 ? MeasuredSpan::Rail : MeasuredSpan::Cluster;
}
}  // namespace

CollectiveResult NetworkModel::cost(CollectiveOp op, Bytes bytes, const GroupShape& shape) const {
    CollectiveResult best;
    const double S = std::max(bytes.value(), 1.0);
    if (shape.ranks <= 1 && op != CollectiveOp::SendRecv) {
        best.algorithm = "none";
        return best;
    }
    auto [seconds, algorithm] = impl_->fastest(op, S, shape, impl_->factor);
    if (impl_->measured && shape.ranks > 1) {
        // A measurement is one group on an idle fabric at the fitted factor 1: the model's time
        // of this group among its concurrent groups, at the fitted factor, over its time alone
        // carries contention and the factor on top of it.
        if (const auto idle = impl_->measured->idle_time(nccl_test_op(op), measured_span(shape), shape.ranks, shape.domains, S)) {
            const double alone = impl_->fastest(op, S, shape.alone(), 1.0).first;
            seconds = idle->seconds * seconds / alone;
            algorithm = idle->basis == MeasuredTime::Basis::Interpolated ? "measured" : "measured-fit";
        }
    }
    best.time = Seconds(seconds);
    best.algorithm = algorithm;
    best.algbw_gbps = S / seconds / 1e9;
    best.busbw_gbps = best.algbw_gbps * bus_factor(op, shape.ranks);
    return best;
}

std::vector<CollectiveResult> NetworkModel::cost_per_algorithm(CollectiveOp op, Bytes bytes, const GroupShape& shape) const {
    std::vector<CollectiveResult> out;
    if (shape.ranks <= 1 && op != CollectiveOp::SendRecv) return out;
    const double S = std::max(bytes.value(), 1.0);
    for (const Candidate& c : impl_->candidates(op, S, shape)) {
        const auto [seconds, algorithm] = impl_->fastest_protocol(c, S, impl_->factor);
        CollectiveResult r;
        r.time = Seconds(seconds);
        r.algorithm = algorithm;
        r.algbw_gbps = S / seconds / 1e9;
        r.busbw_gbps = r.algbw_gbps * bus_factor(op, shape.ranks);
        out.push_back(r);
    }
    return out;
}

CollectiveResult NetworkModel::cost(CollectiveOp op, Bytes bytes, const GroupPlacement& group) const {
    return cost(op, bytes, analyse(group, op == CollectiveOp::AllToAll));
}

NcclTestOp nccl_test_op(CollectiveOp op) {
    switch (op) {
        case CollectiveOp::AllReduce: return NcclTestOp::AllReduce;
        case CollectiveOp::AllGather: return NcclTestOp::AllGather;
        case CollectiveOp::ReduceScatter: return NcclTestOp::ReduceScatter;
        case CollectiveOp::Broadcast: return NcclTestOp::Broadcast;
        case CollectiveOp::Reduce: return NcclTestOp::Reduce;
        case CollectiveOp::AllToAll: return NcclTestOp::AllToAll;
        case CollectiveOp::SendRecv: return NcclTestOp::SendRecv;
    }
    return NcclTestOp::AllReduce;
}

double bus_factor(CollectiveOp op, std::int64_t ranks) { return busbw_factor(nccl_test_op(op), ranks); }

namespace {
// One constant's readings from several curves, averaged.
struct Readings {
    double sum = 0;
    int count = 0;
    std::string curves;
    void add(double value, const std::string& curve) {
        sum += value;
        ++count;
        curves += (curves.empty() ? "" : "; ") + curve;
    }
};
}  // namespace

FittedComm fitted_comm_calibration(const CommCalibration& published, const MeasuredCollectives& m, const GpuSpec& gpu,
                                   double nic_gbps) {
    std::map<std::string, Readings> readings;
    for (const MeasuredCollectives::Curve& c : m.curves()) {
        const double big = c.bytes.back(), small = c.bytes.front();
        // Bus bandwidth at the largest size with the Simple protocol's ramp S / (S + S0) undone;
        // step latency at the smallest, where the LL protocol's latency factor is 1.
        const bool has_big = big >= 256.0 * 1024 * 1024, has_small = small <= 64.0 * 1024;
        const double busbw = big * busbw_factor(c.op, c.ranks) / c.seconds.back() * (1.0 + kSimpleHalfBandwidthBytes / big) / 1e9;
        const double step_us = c.seconds.front() / latency_steps(c.op, c.ranks) * 1e6;
        const bool ring = c.op == NcclTestOp::AllGather || c.op == NcclTestOp::ReduceScatter ||
                          (c.op == NcclTestOp::AllReduce && !(gpu.nvls && c.ranks > 2));
        if (c.span == MeasuredSpan::Node && ring) {
            if (has_big) readings["nvlink_ring_efficiency"].add(busbw / gpu.nvlink_gbps, c.label());
            if (has_small) readings["nvlink_latency_us"].add(step_us, c.label());
        }
        // The model's NVLS all-reduce runs at algbw = NVLink rate x efficiency / 1.75.
        if (c.span == MeasuredSpan::Node && c.op == NcclTestOp::AllReduce && gpu.nvls && c.ranks > 2 && has_big)
            readings["nvls_allreduce_efficiency"].add(busbw / busbw_factor(c.op, c.ranks) * 1.75 / gpu.nvlink_gbps, c.label());
        const bool rail_ring = c.op == NcclTestOp::AllGather || c.op == NcclTestOp::ReduceScatter || c.op == NcclTestOp::AllReduce;
        if (c.span == MeasuredSpan::Rail && rail_ring) {
            if (has_big && nic_gbps > 0) readings["nic_efficiency"].add(busbw / (nic_gbps / 8.0), c.label());
            if (has_small) readings["network_latency_us"].add(step_us, c.label());
        }
    }
    FittedComm out{published, {}};
    CommCalibration& k = out.calibration;
    const std::tuple<const char*, double*, double, double> fields[] = {
        {"nvlink_ring_efficiency", &k.nvlink_ring_efficiency, 0.05, 1.0},
        {"nvls_allreduce_efficiency", &k.nvls_allreduce_efficiency, 0.05, 2.0},
        {"nic_efficiency", &k.nic_efficiency, 0.05, 1.0},
        {"nvlink_latency_us", &k.nvlink_latency_us, 0.0, 1e6},
        {"network_latency_us", &k.network_latency_us, 0.0, 1e6}};
    for (const auto& [name, field, lo, hi] : fields) {
        const auto it = readings.find(name);
        if (it == readings.end()) continue;
        const double value = std::clamp(it->second.sum / it->second.count, lo, hi);
        out.constants.push_back({name, *field, value, it->second.curves});
        *field = value;
    }
    return out;
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
