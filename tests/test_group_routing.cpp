// Group shapes from per-tier arithmetic (analyse_group) against the flow-level walk over the graph
// (analyse_group_routed) on the regular fabrics Sextant builds: every parallel group of a range of
// layouts and rank orders, on rail-optimized and rack-leaf fabrics, whole and partial pods,
// with and without the sampling of very many concurrent groups. The two must agree to the bit.
#include <doctest/doctest.h>

#include "collective/group_shape.hpp"
#include "collective_fixtures.hpp"
#include "topology/cluster_graph.hpp"

using namespace sextant;
using namespace sextant::testing;

namespace {
void check_same(const ClusterGraph& graph, const GroupPlacement& g, bool all_to_all) {
    const GroupShape tiers = analyse_group(graph, g, 0.9, all_to_all);
    const GroupShape routed = analyse_group_routed(graph, g, 0.9, all_to_all);
    CHECK(tiers.domains == routed.domains);
    CHECK(tiers.span == routed.span);
    CHECK(tiers.ring_seconds_per_byte == routed.ring_seconds_per_byte);
    CHECK(tiers.alone_ring_seconds_per_byte == routed.alone_ring_seconds_per_byte);
    CHECK(tiers.all_to_all_seconds_per_byte == routed.all_to_all_seconds_per_byte);
    CHECK(tiers.alone_all_to_all_seconds_per_byte == routed.alone_all_to_all_seconds_per_byte);
}

Layout layout(std::int64_t tp, std::int64_t cp, std::int64_t pp, std::int64_t dp, std::int64_t ep, bool pp_inside_dp) {
    Layout l;
    l.tp = tp;
    l.cp = cp;
    l.pp = pp;
    l.dp = dp;
    l.ep = ep;
    if (pp_inside_dp) l.rank_order = {ParallelDim::TP, ParallelDim::CP, ParallelDim::EP, ParallelDim::PP, ParallelDim::DP};
    return l;
}
}  // namespace

TEST_CASE("per-tier link loads equal the flow-level route on regular fabrics") {
    struct Case {
        const char* preset;
        std::int64_t gpus;
    };
    // dgx-h100-superpod: rail-optimized leaves; llama3-24k-roce: rack leaves of 16 GPUs, 1:7
    // between 3,072-GPU pods (7,168 GPUs: a partial third pod); gb200-nvl72: 72-GPU NVLink domains.
    for (const Case c : {Case{"dgx-h100-superpod", 1024}, Case{"llama3-24k-roce", 7168}, Case{"dgx-a100-superpod", 512},
                         Case{"gb200-nvl72", 576}}) {
        const ClusterSpec spec = cluster(c.preset, c.gpus);
        const ClusterGraph graph(spec);
        for (std::int64_t tp : {1, 2, 8})
            for (std::int64_t cp : {1, 2})
                for (std::int64_t pp : {1, 4, 16})
                    for (bool pp_inside_dp : {false, true}) {
                        if (c.gpus % (tp * cp * pp) != 0) continue;
                        const Layout l = layout(tp, cp, pp, c.gpus / (tp * cp * pp), 8, pp_inside_dp);
                        INFO(c.preset, " tp", tp, " cp", cp, " pp", pp, pp_inside_dp ? " pp inside dp" : "");
                        check_same(graph, place_group(l, ParallelDim::TP), false);
                        check_same(graph, place_group(l, ParallelDim::CP), false);
                        check_same(graph, place_group(l, ParallelDim::PP), false);
                        check_same(graph, place_group(l, {ParallelDim::DP, ParallelDim::CP}), false);
                        if ((l.tp * l.cp * l.dp) % 8 == 0) {
                            check_same(graph, place_expert_group(l, ExpertDim::EP), true);
                            check_same(graph, place_expert_group(l, ExpertDim::EDP), false);
                        }
                    }
    }
}

TEST_CASE("per-tier link loads equal the flow-level route when concurrent groups are sampled") {
    // 64 ranks one per node, all-to-all: 4,032 flows a group, 256 groups, over the 400,000-flow
    // budget, so both walk the same even sample with the same weight.
    const ClusterGraph graph(cluster("llama3-24k-roce", 16384));
    check_same(graph, group(range(64, 256), range(256)), true);
}

TEST_CASE("all-to-all loads counted per member equal the flow-level route") {
    // Wide expert groups (the counting's reason): 64 and 256 ranks over rail-optimized leaves,
    // 16 per node on rack leaves, and 144 over two NVL72 domains, each with its concurrent groups.
    const ClusterGraph rails(cluster("dgx-h100-superpod", 2048));
    check_same(rails, group(range(64), range(32, 64)), true);
    check_same(rails, group(range(256), range(8, 256)), true);
    check_same(rails, group(range(64, 8), {0, 1, 2, 3, 512, 513}), true);
    const ClusterGraph racks(cluster("llama3-24k-roce", 7168));
    check_same(racks, group(range(256, 2), {0, 1, 512, 1024, 4096}), true);
    const ClusterGraph nvl72(cluster("gb200-nvl72", 576));
    check_same(nvl72, group(range(144), {0, 144, 288}), true);
    // A shift that regroups the domains (members 4-11 of one node and the next, moved by 4):
    // the pairs of the unshifted group then differ from the shifted ones', and the pair walk
    // answers instead of the count.
    check_same(rails, group(range(16, 1), {0, 4, 16}), true);
    std::vector<std::int64_t> straddling;
    for (std::int64_t g = 4; g < 12; ++g) straddling.push_back(g);
    for (std::int64_t g = 20; g < 28; ++g) straddling.push_back(g);
    check_same(rails, group(straddling, {0, 4, 8}), true);
}
