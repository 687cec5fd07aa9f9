#include "collective/group_shape.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace sextant {

namespace {
// Members grouped by NVLink domain, domains in order of their first member.
std::vector<std::vector<std::int64_t>> by_domain(const ClusterGraph& graph, const std::vector<std::int64_t>& gpus) {
    std::map<std::int64_t, std::vector<std::int64_t>> domains;
    for (auto g : gpus) domains[graph.domain_of(g)].push_back(g);
    std::vector<std::vector<std::int64_t>> out;
    for (auto& [d, members] : domains) out.push_back(std::move(members));
    return out;
}

Span classify(const ClusterGraph& graph, const std::vector<std::int64_t>& gpus, std::int64_t domains) {
    if (domains == 1) return Span::Node;
    bool one_rail = true, one_pod = true;
    for (auto g : gpus) {
        one_rail = one_rail && graph.rail_of(g) == graph.rail_of(gpus.front()) && graph.leaf_of(g) == graph.leaf_of(gpus.front());
        one_pod = one_pod && graph.pod_of(g) == graph.pod_of(gpus.front());
    }
    if (one_rail) return Span::Rail;
    return one_pod ? Span::Pod : Span::Cluster;
}

// Groups to route when there are very many: an even sample, each standing for `weight` groups.
struct Sample {
    std::vector<std::int64_t> offsets;
    double weight = 1;
};

Sample sample_groups(const GroupPlacement& group, std::size_t flows_per_group) {
    const std::size_t budget = 400000;
    Sample s;
    std::vector<std::int64_t> all = group.offsets.empty() ? std::vector<std::int64_t>{0} : group.offsets;
    const std::size_t keep = std::max<std::size_t>(1, std::min(all.size(), budget / std::max<std::size_t>(1, flows_per_group)));
    const std::size_t step = all.size() / keep;
    for (std::size_t i = 0; i < all.size() && s.offsets.size() < keep; i += step) s.offsets.push_back(all[i]);
    s.weight = static_cast<double>(all.size()) / static_cast<double>(s.offsets.size());
    return s;
}

// Loads every directed link with the flows of every (sampled) concurrent group, then returns the
// worst load / capacity over the links the representative group's flows use.
template <class Flows>
double worst_link(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, const Flows& flows) {
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
    flows(group.gpus, pairs);
    if (pairs.empty()) return 0.0;
    const Sample sample = sample_groups(group, pairs.size());
    std::unordered_map<std::uint32_t, double> load;
    std::vector<std::uint32_t> path;
    for (auto offset : sample.offsets) {
        for (const auto& [a, b] : pairs) {
            path.clear();
            graph.route(a + offset, b + offset, path);
            for (auto link : path) load[link] += sample.weight;
        }
    }
    double worst = 0;
    for (const auto& [a, b] : pairs) {
        path.clear();
        graph.route(a, b, path);
        for (auto link : path) worst = std::max(worst, load[link] / (graph.capacity(link / 2) * efficiency));
    }
    return worst;
}
}  // namespace

GroupShape analyse_group(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, bool with_all_to_all) {
    GroupShape s;
    s.ranks = static_cast<std::int64_t>(group.gpus.size());
    const auto domains = by_domain(graph, group.gpus);
    s.domains = static_cast<std::int64_t>(domains.size());
    for (const auto& d : domains) s.per_domain = std::max<std::int64_t>(s.per_domain, static_cast<std::int64_t>(d.size()));
    s.span = classify(graph, group.gpus, s.domains);
    if (s.domains == 1) return s;

    GroupPlacement alone = group;
    alone.offsets = {0};
    alone.concurrent_groups = 1;
    const auto ring = [&](const std::vector<std::int64_t>& gpus, auto& pairs) {
        const auto doms = by_domain(graph, gpus);
        for (std::size_t i = 0; i < doms.size(); ++i) {
            const auto& from = doms[i];
            const auto& to = doms[(i + 1) % doms.size()];
            for (std::size_t j = 0; j < static_cast<std::size_t>(s.per_domain); ++j)
                pairs.emplace_back(from[j % from.size()], to[j % to.size()]);
        }
    };
    const auto all_to_all = [&](const std::vector<std::int64_t>& gpus, auto& pairs) {
        for (auto a : gpus)
            for (auto b : gpus)
                if (graph.domain_of(a) != graph.domain_of(b)) pairs.emplace_back(a, b);
    };
    s.ring_seconds_per_byte = worst_link(graph, group, efficiency, ring);
    s.alone_ring_seconds_per_byte = worst_link(graph, alone, efficiency, ring);
    if (with_all_to_all) {
        s.all_to_all_seconds_per_byte = worst_link(graph, group, efficiency, all_to_all);
        s.alone_all_to_all_seconds_per_byte = worst_link(graph, alone, efficiency, all_to_all);
    }
    return s;
}

std::string span_name(Span span) {
    switch (span) {
        case Span::Node: return "node";
        case Span::Rail: return "rail";
        case Span::Pod: return "pod";
        case Span::Cluster: return "cluster";
    }
    return "node";
}

}  // namespace sextant
