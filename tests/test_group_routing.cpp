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
