// The collective model against nccl-tests conventions and published sweeps
// (reference-data.md section 12), and contention on oversubscribed tiers.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "collective/network_model.hpp"
#include "collective_fixtures.hpp"
#include "profile/profile.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::testing;

namespace {
NetworkModel model(const ClusterSpec& c) {
    CalibrationProfile p = CalibrationProfile::for_gpu(c.gpu);
    return NetworkModel(c, p.comm());
}
}  // namespace

TEST_CASE("nccl-tests bus bandwidth factors") {
    CHECK(bus_factor(CollectiveOp::AllReduce, 8) == doctest::Approx(2.0 * 7 / 8));
    CHECK(bus_factor(CollectiveOp::AllGather, 8) == doctest::Approx(7.0 / 8));
    CHECK(bus_factor(CollectiveOp::ReduceScatter, 16) == doctest::Approx(15.0 / 16));
    CHECK(bus_factor(CollectiveOp::Broadcast, 8) == 1.0);
}

TEST_CASE("large ring collectives approach the closed forms 2(n-1)/n and (n-1)/n") {
    // Without NVLS (A100), a 16 GiB all-reduce moves 2(n-1)/n of the buffer per GPU at the ring
    // bandwidth, an all-gather (n-1)/n: their times differ by 2x up to latency and ramp.
    ClusterSpec c = cluster("dgx-a100-superpod");
    NetworkModel m = model(c);
    const GroupShape node = m.analyse(group(range(8)));
    const double S = 16.0 * 1024 * 1024 * 1024;
    const double ar = m.cost(CollectiveOp::AllReduce, Bytes(S), node).time.value();
    const double ag = m.cost(CollectiveOp::AllGather, Bytes(S), node).time.value();
    CHECK(ar / ag == doctest::Approx(2.0).epsilon(0.01));
    const double ring_bw = 300e9 * CalibrationProfile::for_gpu(c.gpu).comm().nvlink_ring_efficiency;
    CHECK(ag == doctest::Approx(7.0 / 8 * S / ring_bw).epsilon(0.01));
}

TEST_CASE("8 x A100 all-reduce sweep (reference-data.md 12a): within 15% from 64 MB, 35% below") {
    const std::pair<double, double> measured[] = {
        {32768, 43.83}, {65536, 46.80}, {131072, 51.76}, {262144, 61.38}, {524288, 80.40},
        {1048576, 101.9}, {2097152, 101.4}, {4194304, 101.5}, {8388608, 133.5}, {16777216, 276.6},
        {33554432, 424.0}, {67108864, 684.6}, {134217728, 1327.6}, {268435456, 2420.6},
        {536870912, 4218.4}, {1073741824, 8203.9}, {2147483648, 16240}, {4294967296, 32136},
        {8589934592, 64074}, {17179869184, 127997}};
    ClusterSpec c = cluster("dgx-a100-superpod");
    NetworkModel m = model(c);
    const GroupShape node = m.analyse(group(range(8)));
    for (const auto& [bytes, us] : measured) {
        CAPTURE(bytes);
        const double predicted = m.cost(CollectiveOp::AllReduce, Bytes(bytes), node).time.value() * 1e6;
        CHECK(predicted == doctest::Approx(us).epsilon(bytes >= 64.0 * 1024 * 1024 ? 0.15 : 0.35));
    }
}

TEST_CASE("8 x H100 large all-reduce: ~370 GB/s busbw as a ring, ~480 with NVLS") {
    ClusterSpec c = cluster("dgx-h100-superpod");
    NetworkModel m = model(c);
    const GroupShape node = m.analyse(group(range(8)));
    const double S = 16.0 * 1024 * 1024 * 1024;
    CollectiveResult nvls = m.cost(CollectiveOp::AllReduce, Bytes(S), node);
    CHECK(nvls.algorithm == "nvls/simple");
    CHECK(nvls.busbw_gbps == doctest::Approx(480).epsilon(0.03));
    c.gpu.nvls = false;
    NetworkModel ring_only = model(c);
    CollectiveResult ring = ring_only.cost(CollectiveOp::AllReduce, Bytes(S), ring_only.analyse(group(range(8))));
    CHECK(ring.algorithm == "ring/simple");
    CHECK(ring.busbw_gbps == doctest::Approx(370).epsilon(0.03));
}

TEST_CASE("across nodes a rail group is bounded by its NIC: 46-48 GB/s per 400 Gb/s NIC") {
    ClusterSpec c = cluster("dgx-h100-superpod");
    NetworkModel m = model(c);
    CollectiveResult r = m.cost(CollectiveOp::AllReduce, Bytes(16.0 * 1024 * 1024 * 1024), group(range(16, 8)));
    CHECK(r.busbw_gbps >= 45.0);
    CHECK(r.busbw_gbps <= 48.0);
}

TEST_CASE("contention: groups crossing a 1:7 pod boundary get a seventh when all run") {
    ClusterSpec c = cluster("llama3-24k-roce", 6144);  // two pods of 3,072 GPUs, 1:7 between them
    NetworkModel m = model(c);
    const std::vector<std::int64_t> pair = {0, 3072};  // same rail position, one GPU in each pod
    const double S = 1024.0 * 1024 * 1024;
    const double alone = m.cost(CollectiveOp::SendRecv, Bytes(S), group(pair)).time.value();
    const double all = m.cost(CollectiveOp::SendRecv, Bytes(S), group(pair, range(3072))).time.value();
    CHECK(all / alone == doctest::Approx(7.0).epsilon(0.01));
    // Inside a pod (full bisection) the same number of pairs do not slow each other.
    GroupPlacement inside = group({0, 1536}, range(1536));
    CHECK(m.cost(CollectiveOp::SendRecv, Bytes(S), inside).time.value() == doctest::Approx(alone).epsilon(0.01));
}

TEST_CASE("ring latency: steps that cross nodes pay the network's latency, steps inside a node NVLink's") {
    // NCCL's tuner (src/graph/tuning.cc, ncclTopoTuneModel) counts nNodes - 1 of an all-gather
    // ring's nRanks - 1 steps as inter-node, 2(nNodes - 1) of an all-reduce's 2(nRanks - 1).
    // At 1 KiB the bandwidth term is negligible and LL's latency factor is 1.
    ClusterSpec c = cluster("dgx-a100-superpod");
    NetworkModel m = model(c);
    const CommCalibration k = CalibrationProfile::for_gpu(c.gpu).comm();
    const double S = 1024;
    SUBCASE("1,024 ranks on 128 nodes of 8") {
        const GroupShape g = m.analyse(group(range(1024)));
        REQUIRE(g.domains == 128);
        // 1,024 GPUs span the 160-GPU leaves of the pod: a network step climbs to the spines and
        // passes two more switches than the profile's one-leaf figure.
        REQUIRE(g.span == Span::Pod);
        const double network_step = k.network_latency_us + 2 * c.fabric.switch_latency_us;
        const double ag = (896 * k.nvlink_latency_us + 127 * network_step) * 1e-6;
        CHECK(m.cost(CollectiveOp::AllGather, Bytes(S), g).time.value() == doctest::Approx(ag).epsilon(0.01));
        CHECK(m.cost(CollectiveOp::ReduceScatter, Bytes(S), g).time.value() == doctest::Approx(ag).epsilon(0.01));
        // Every step at the network's latency, as before: 1,023 x 6 us = 6.1 ms.
        CHECK(ag < 0.6 * 1023 * k.network_latency_us * 1e-6);
    }
    SUBCASE("one GPU per node: every step crosses") {
        const GroupShape g = m.analyse(group(range(128, 8)));  // 128 nodes, one GPU each
        REQUIRE(g.per_domain == 1);
        REQUIRE(g.span == Span::Pod);
        CHECK(m.cost(CollectiveOp::AllGather, Bytes(S), g).time.value() ==
              doctest::Approx(127 * (k.network_latency_us + 2 * c.fabric.switch_latency_us) * 1e-6).epsilon(0.01));
    }
}

TEST_CASE("the cluster's fabric latencies: a NIC slower than the reference, switches above the leaf, its own NVLink figure") {
    // The profile's network step is NIC to NIC through one leaf of the reference fabric
    // (FabricSpec's defaults); a ring step waits for its slowest crossing. At 1 KiB (LL) the
    // bandwidth term is the same in every variant below, so differences are latency alone.
    const ClusterSpec c = cluster("dgx-a100-superpod");
    const double S = 1024;
    auto all_gather_us = [&](const ClusterSpec& cl, const GroupPlacement& members) {
        NetworkModel m = model(cl);
        return m.cost(CollectiveOp::AllGather, Bytes(S), m.analyse(members)).time.value() * 1e6;
    };
    auto with = [&](double nic_us, double switch_us) {
        ClusterSpec v = c;
        v.fabric.nic_latency_us = nic_us;
        v.fabric.switch_latency_us = switch_us;
        return v;
    };
    const GroupPlacement rail = group(range(16, 8));  // GPU 0 of 16 nodes: one rail, one 160-GPU leaf
    const GroupPlacement pod = group(range(64, 8));    // 64 nodes: four leaves of the pod
    const GroupPlacement node = group(range(8));
    REQUIRE(model(c).analyse(rail).span == Span::Rail);
    REQUIRE(model(c).analyse(pod).span == Span::Pod);
    // Inside one leaf the switches above it do not count; across leaves two more per step.
    CHECK(all_gather_us(with(2.0, 5.0), rail) == doctest::Approx(all_gather_us(with(2.0, 0.0), rail)).epsilon(1e-9));
    CHECK(all_gather_us(c, pod) - all_gather_us(with(2.0, 0.0), pod) == doctest::Approx(63 * 2 * 0.6).epsilon(1e-6));
    // A NIC hop 10 us above the reference adds 10 us to every crossing step, none inside a node.
    CHECK(all_gather_us(with(12.0, 0.6), rail) - all_gather_us(c, rail) == doctest::Approx(15 * 10.0).epsilon(1e-6));
    CHECK(all_gather_us(with(12.0, 1.5), pod) - all_gather_us(c, pod) == doctest::Approx(63 * (10.0 + 2 * 0.9)).epsilon(1e-6));
    CHECK(all_gather_us(with(12.0, 1.5), node) == doctest::Approx(all_gather_us(c, node)).epsilon(1e-9));

    SUBCASE("across pods the core adds four switches") {
        ClusterSpec two_pods = c;
        two_pods.fabric.pod_gpus = 560;
        ClusterSpec flat_switches = two_pods;
        flat_switches.fabric.switch_latency_us = 0;
        const GroupPlacement across = group({0, 560});
        REQUIRE(model(two_pods).analyse(across).span == Span::Cluster);
        CHECK(all_gather_us(two_pods, across) - all_gather_us(flat_switches, across) == doctest::Approx(4 * 0.6).epsilon(1e-6));
    }
    SUBCASE("the cluster's own NVLink step latency replaces the profile's") {
        ClusterSpec own = c;
        own.nvlink_latency_us = 10.0;
        const double profile_us = CalibrationProfile::for_gpu(c.gpu).comm().nvlink_latency_us;
        CHECK(all_gather_us(own, node) - all_gather_us(c, node) == doctest::Approx(7 * (10.0 - profile_us)).epsilon(1e-6));
    }
}

TEST_CASE("4 x 8 B200 over EFA (reference-data.md 12d): a flat ring at the NICs' rate from 1 GiB") {
    // stas00/ml-engineering network/README.md, all_reduce_bench on four P6-B200 nodes (eight
    // 400 Gb/s EFA NICs per node), NCCL 2.27.7: bus bandwidth in GB/s. NCCL runs a ring across
    // nodes (its ring beat its NVLS tree on the same kind of cluster, 364.9 against 310.1 GB/s on
    // 4 x 8 H200), whose NICs carry 2(n-1)/n of each eighth of the buffer: the bus bandwidth
    // tends to eight NICs' achieved rate. There is no hierarchical all-reduce that would carry
    // 2(m-1)/m (the model had one: 484 GB/s at 16 GiB, 1.27x).
    json doc = {{"gpu", "B200"}, {"gpus", 32}, {"gpus_per_node", 8}, {"nic_gbps_per_gpu", 400}, {"fabric", "ethernet"}};
    const ClusterSpec c = parse_cluster(doc, "/cluster", load_gpu);
    NetworkModel m = model(c);
    const GroupShape g = m.analyse(group(range(32)));
    const double GiB = 1024.0 * 1024 * 1024;
    const std::pair<double, double> measured[] = {{GiB, 361.99}, {4 * GiB, 377.34}, {16 * GiB, 381.80}};
    for (const auto& [bytes, busbw] : measured) {
        CAPTURE(bytes);
        CHECK(m.cost(CollectiveOp::AllReduce, Bytes(bytes), g).busbw_gbps == doctest::Approx(busbw).epsilon(0.05));
    }
    const CollectiveResult big = m.cost(CollectiveOp::AllReduce, Bytes(16 * GiB), g);
    CHECK(big.algorithm == "ring/simple");
    const double nic = 50e9 * CalibrationProfile::for_gpu(c.gpu).comm().nic_efficiency;
    CHECK(big.time.value() == doctest::Approx(2.0 * 31 / 32 * 16 * GiB / 8 / nic).epsilon(0.01));
    // Below 1 GiB EFA's latency shows, and the model (network step latency 6 us, calibrated on
    // InfiniBand-era sweeps) stays optimistic: 1.3x at 256 MiB, 2.6x at 16 MiB (README
    // "Collectives", limits).
    CHECK(m.cost(CollectiveOp::AllReduce, Bytes(256.0 * 1024 * 1024), g).busbw_gbps > 229.09);
}

TEST_CASE("placement: Megatron's rank order puts TP in a node and spreads DP over a rail") {
    json doc = {{"model", "llama3-70b"}, {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 1024}}},
                {"seq_len", 8192}, {"global_batch", 512},
                {"layout", {{"tp", 8}, {"pp", 4}, {"dp", 32}}}};
    Scenario s = parse_scenario(doc, data_dir());
    Layout l = resolve_layout(s, s.layout);
    NetworkModel m = model(s.cluster);
    GroupPlacement tp = place_group(l, ParallelDim::TP);
    CHECK(tp.gpus == range(8));
    CHECK(tp.concurrent_groups == 128);
    CHECK(m.analyse(tp).span == Span::Node);
    GroupPlacement dp = place_group(l, ParallelDim::DP);
    CHECK(dp.gpus.size() == 32);
    CHECK(dp.gpus[1] - dp.gpus[0] == 8);
    CHECK(m.analyse(dp).span == Span::Rail);  // 32 nodes x 1 rail: one 256-GPU scalable unit
    GroupPlacement pp = place_group(l, ParallelDim::PP);
    CHECK(pp.gpus[1] - pp.gpus[0] == 256);

    // A TP group across two nodes costs what the network costs.
    GroupPlacement tp16 = group(range(16));
    const double S = 256.0 * 1024 * 1024;
    CHECK(m.analyse(tp16).span == Span::Pod);
    CHECK(m.cost(CollectiveOp::AllReduce, Bytes(S), tp16).time.value() >
          1.3 * m.cost(CollectiveOp::AllReduce, Bytes(S), tp).time.value());
}

TEST_CASE("GEMM throughput: thin shapes are capped by the memory roofline, square ones are not") {
    const CalibrationProfile p = CalibrationProfile::for_gpu(parse_gpu(load_preset("topologies/gpus", "A100-SXM4-80GB", ""), ""));
    // An attention score product with a head of 64: 2 m n k FLOPs over (m k + k n) 2 B + m n 2 B.
    const double m = 2048, n = 2048, k = 64;
    const double roofline = 2 * m * n * k / ((m * k + k * n) * 2 + m * n * 2) * p.memory_tbps();
    CHECK(p.gemm_tflops(Precision::Bf16, 2048, 2048, 64) <= roofline * (1 + 1e-9));
    CHECK(p.gemm_tflops(Precision::Bf16, 2048, 2048, 64) == doctest::Approx(roofline));
    // 8192^3 moves 2 bytes per 2,731 FLOPs: far above any roofline; the measured point stands.
    CHECK(p.gemm_tflops(Precision::Bf16, 8192, 8192, 8192) > 0.75 * 312);
}

TEST_CASE("a profile inherits from another and overrides sections: A100 40 GB is the 80 GB part with less HBM") {
    const auto gpu = [](const char* name) { return parse_gpu(load_preset("topologies/gpus", name, ""), ""); };
    const CalibrationProfile a80 = CalibrationProfile::for_gpu(gpu("A100-SXM4-80GB"));
    const CalibrationProfile a40 = CalibrationProfile::for_gpu(gpu("A100-SXM4-40GB"));
    CHECK(a40.gemm_tflops(Precision::Bf16, 8192, 8192, 8192) == doctest::Approx(a80.gemm_tflops(Precision::Bf16, 8192, 8192, 8192)));
    CHECK(a40.memory_tbps() == doctest::Approx(a80.memory_tbps() * 1.555 / 2.039).epsilon(0.01));
    // H800: the H100's compute, fitted factor included, with a third less NVLink.
    const CalibrationProfile h100 = CalibrationProfile::for_gpu(gpu("H100-SXM5-80GB"));
    const CalibrationProfile h800 = CalibrationProfile::for_gpu(gpu("H800-SXM5-80GB"));
    CHECK(h800.factors().compute == doctest::Approx(h100.factors().compute));
    CHECK(gpu("H800-SXM5-80GB").nvlink_gbps < gpu("H100-SXM5-80GB").nvlink_gbps);
}
