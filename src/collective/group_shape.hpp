#pragma once
// What a communicator group looks like on the cluster graph, reduced to the few numbers the
// collective cost formulas need. Computing it routes every concurrent group's flows over the
// graph (expensive, once per group shape); using it is arithmetic.
#include <cstdint>
#include <string>

#include "topology/cluster_graph.hpp"
#include "topology/placement.hpp"

namespace sextant {

enum class Span { Node, Rail, Pod, Cluster };

struct GroupShape {
    std::int64_t ranks = 1;
    std::int64_t domains = 1;     // distinct NVLink domains the group touches
    std::int64_t per_domain = 1;  // members in the fullest domain: the parallel channels across domains
    Span span = Span::Node;
    // Seconds per byte carried by one crossing of a ring over the group's domains (channel j joins
    // the j-th members of consecutive domains), with every concurrent group's rings loading the
    // same links: the most loaded link's load / capacity.
    double ring_seconds_per_byte = 0;
    // Seconds per byte of one pairwise flow of an all-to-all among the members, all groups at once.
    double all_to_all_seconds_per_byte = 0;
    // The same two with the group alone on the fabric: what a benchmark of this one group sees.
    double alone_ring_seconds_per_byte = 0;
    double alone_all_to_all_seconds_per_byte = 0;

    // This group with no concurrent group loading its links.
    GroupShape alone() const {
        GroupShape g = *this;
        g.ring_seconds_per_byte = alone_ring_seconds_per_byte;
        g.all_to_all_seconds_per_byte = alone_all_to_all_seconds_per_byte;
        return g;
    }
};

// `link_efficiency` is the achieved fraction of line rate on the scale-out network. Link loads are
// counted per fabric tier from the members' leaves and pods (arithmetic on the tree).
GroupShape analyse_group(const ClusterGraph& graph, const GroupPlacement& group, double link_efficiency,
                         bool with_all_to_all);
// The same by walking every flow's route over the graph, link by link: the reference the tier
// arithmetic is tested against, and the way to analyse a fabric that is not the regular tree.
GroupShape analyse_group_routed(const ClusterGraph& graph, const GroupPlacement& group, double link_efficiency,
                                bool with_all_to_all);

std::string span_name(Span span);

}  // namespace sextant
