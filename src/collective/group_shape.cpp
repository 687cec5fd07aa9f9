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
    static const std::vector<std::int64_t> kAlone{0};
    const std::vector<std::int64_t>& all = group.offsets.empty() ? kAlone : group.offsets;
    const std::size_t keep = std::max<std::size_t>(1, std::min(all.size(), budget / std::max<std::size_t>(1, flows_per_group)));
    const std::size_t step = all.size() / keep;
    for (std::size_t i = 0; i < all.size() && s.offsets.size() < keep; i += step) s.offsets.push_back(all[i]);
    s.weight = static_cast<double>(all.size()) / static_cast<double>(s.offsets.size());
    return s;
}

// Loads every directed link with the flows of every (sampled) concurrent group, then returns the
// worst load / capacity over the links the representative group's flows use. The reference: each
// flow walked over the graph.
template <class Flows>
double routed_worst_link(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, const Flows& flows) {
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

// The same loads per tier by arithmetic on the endpoints' leaf and pod (ClusterGraph::fabric_links):
// each directed link's load receives the same additions in the same order as the walk above, so
// the result is the same to the bit. Loads live in per-thread arrays indexed by GPU, leaf and pod;
// a generation stamp marks the entries of the current call, so nothing is cleared or allocated
// per group (the walk's hash map was 40% of a 405B plan's profile, issue 18).
struct TierLoads {
    struct Slot {
        std::uint32_t generation = 0;
        double load = 0;
    };
    std::uint32_t generation = 0;
    std::vector<Slot> nic_up, nic_down, leaf_up, leaf_down, pod_up, pod_down;
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs;

    void start(const ClusterGraph& graph, std::size_t gpus) {
        if (++generation == 0) {  // wrapped: forget every stamp
            for (auto* v : {&nic_up, &nic_down, &leaf_up, &leaf_down, &pod_up, &pod_down}) v->assign(v->size(), Slot{});
            generation = 1;
        }
        const auto fit = [](std::vector<Slot>& v, std::size_t n) { if (v.size() < n) v.resize(n); };
        fit(nic_up, gpus);
        fit(nic_down, gpus);
        fit(leaf_up, graph.leaf_count());
        fit(leaf_down, graph.leaf_count());
        fit(pod_up, graph.pod_count());
        fit(pod_down, graph.pod_count());
    }
    void add(std::vector<Slot>& v, std::size_t i, double w) const {
        Slot& s = v[i];
        if (s.generation != generation) s = {generation, 0.0};
        s.load += w;
    }
    double get(const std::vector<Slot>& v, std::size_t i) const { return v[i].generation == generation ? v[i].load : 0.0; }
};

template <class Flows>
double tier_worst_link(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, const Flows& flows) {
    thread_local TierLoads t;
    t.pairs.clear();
    flows(group.gpus, t.pairs);
    if (t.pairs.empty()) return 0.0;
    const Sample sample = sample_groups(group, t.pairs.size());
    std::int64_t top = 0, shift = 0;
    for (const auto& [a, b] : t.pairs) top = std::max({top, a, b});
    for (auto offset : sample.offsets) shift = std::max(shift, offset);
    t.start(graph, static_cast<std::size_t>(top + shift + 1));
    const double w = sample.weight;
    for (auto offset : sample.offsets) {
        for (const auto& [a0, b0] : t.pairs) {
            const std::int64_t a = a0 + offset, b = b0 + offset;
            if (graph.domain_of(a) == graph.domain_of(b)) continue;
            t.add(t.nic_up, static_cast<std::size_t>(a), w);
            t.add(t.nic_down, static_cast<std::size_t>(b), w);
            const auto la = static_cast<std::uint32_t>(graph.leaf_of(a)), lb = static_cast<std::uint32_t>(graph.leaf_of(b));
            if (la == lb) continue;
            t.add(t.leaf_up, la, w);
            t.add(t.leaf_down, lb, w);
            const std::uint32_t pa = graph.pod_of_leaf(la), pb = graph.pod_of_leaf(lb);
            if (pa == pb) continue;
            t.add(t.pod_up, pa, w);
            t.add(t.pod_down, pb, w);
        }
    }
    double worst = 0;
    const auto ratio = [&](double load, std::uint32_t link) { worst = std::max(worst, load / (graph.capacity(link) * efficiency)); };
    for (const auto& [a, b] : t.pairs) {
        if (graph.domain_of(a) == graph.domain_of(b)) continue;
        const auto fa = graph.fabric_links(a), fb = graph.fabric_links(b);
        const double up = t.get(t.nic_up, static_cast<std::size_t>(a)), down = t.get(t.nic_down, static_cast<std::size_t>(b));
        ratio(up, fa.nic);
        ratio(up, fa.nic_leaf);
        ratio(down, fb.nic);
        ratio(down, fb.nic_leaf);
        if (fa.leaf == fb.leaf) continue;
        ratio(t.get(t.leaf_up, fa.leaf), graph.leaf_uplink(fa.leaf));
        ratio(t.get(t.leaf_down, fb.leaf), graph.leaf_uplink(fb.leaf));
        const std::uint32_t pa = graph.pod_of_leaf(fa.leaf), pb = graph.pod_of_leaf(fb.leaf);
        if (pa == pb) continue;
        ratio(t.get(t.pod_up, pa), graph.pod_uplink(pa));
        ratio(t.get(t.pod_down, pb), graph.pod_uplink(pb));
    }
    return worst;
}
}  // namespace

namespace {
template <bool Routed>
GroupShape analyse(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, bool with_all_to_all) {
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
    const auto worst_link = [&](const GroupPlacement& g, const auto& flows) {
        return Routed ? routed_worst_link(graph, g, efficiency, flows) : tier_worst_link(graph, g, efficiency, flows);
    };
    s.ring_seconds_per_byte = worst_link(group, ring);
    s.alone_ring_seconds_per_byte = worst_link(alone, ring);
    if (with_all_to_all) {
        s.all_to_all_seconds_per_byte = worst_link(group, all_to_all);
        s.alone_all_to_all_seconds_per_byte = worst_link(alone, all_to_all);
    }
    return s;
}
}  // namespace

GroupShape analyse_group(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, bool with_all_to_all) {
    return analyse<false>(graph, group, efficiency, with_all_to_all);
}

GroupShape analyse_group_routed(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, bool with_all_to_all) {
    return analyse<true>(graph, group, efficiency, with_all_to_all);
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
