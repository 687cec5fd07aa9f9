#include "collective/group_shape.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/repeated_sum.hpp"

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

// The all-to-all's loads by counting instead of by pair. Every member sends one flow to each
// member outside its NVLink domain, so its NIC carries as many flows each way as the group has
// members outside that domain, its leaf's uplink as many as are also on another leaf, and its
// pod's uplink as many as are also in another pod (inclusion and exclusion over the members'
// domain, leaf and pod). That is work per member, where the walk above visits every pair: a
// 256-rank expert group on 8-GPU nodes is 63,488 flows, and with its concurrent groups up to the
// sampling budget's 400,000. Every flow adds the same weight, so a link's load is that weight
// added once per crossing flow, in any order: RepeatedSum gives those sums, tier_worst_link's bits.
struct MemberTiers {
    std::int64_t gpu = 0, domain = 0;
    std::uint32_t leaf = 0, pod = 0;
};
struct Crossings {
    std::int64_t nic = 0, leaf = 0, pod = 0;  // flows out of (and into) the member at each tier
};

class AllToAllCounts {
public:
    // The members at `offset` and their crossings; false when the shift does not keep which
    // members share a domain (then the pairs are not those of the unshifted group).
    bool count(const ClusterGraph& graph, const std::vector<std::int64_t>& gpus, std::int64_t offset) {
        const std::size_t n = gpus.size();
        members_.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
            const std::int64_t g = gpus[i] + offset;
            const auto leaf = static_cast<std::uint32_t>(graph.leaf_of(g));
            members_[i] = {g, graph.domain_of(g), leaf, graph.pod_of_leaf(leaf)};
        }
        if (offset == 0) {
            // The unshifted domains order the members for every offset's runs.
            order_.resize(n);
            for (std::size_t i = 0; i < n; ++i) order_[i] = i;
            std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return members_[a].domain < members_[b].domain; });
            base_domain_.resize(n);
            for (std::size_t i = 0; i < n; ++i) base_domain_[i] = members_[i].domain;
        } else if (!same_partition()) {
            return false;
        }
        per_leaf_.resize(std::max(per_leaf_.size(), graph.leaf_count()));
        per_pod_.resize(std::max(per_pod_.size(), graph.pod_count()));
        for (const MemberTiers& m : members_) {
            ++per_leaf_[m.leaf];
            ++per_pod_[m.pod];
        }
        crossings_.resize(n);
        const auto total = static_cast<std::int64_t>(n);
        for (std::size_t r0 = 0; r0 < n;) {
            std::size_t r1 = r0;
            while (r1 < n && base_domain_[order_[r1]] == base_domain_[order_[r0]]) ++r1;
            const auto outside = total - static_cast<std::int64_t>(r1 - r0);
            for (std::size_t i = r0; i < r1; ++i) {
                const MemberTiers& a = members_[order_[i]];
                std::int64_t same_leaf = 0, same_pod = 0;  // in a's domain, a included
                for (std::size_t j = r0; j < r1; ++j) {
                    same_leaf += members_[order_[j]].leaf == a.leaf ? 1 : 0;
                    same_pod += members_[order_[j]].pod == a.pod ? 1 : 0;
                }
                crossings_[order_[i]] = {outside, outside - per_leaf_[a.leaf] + same_leaf, outside - per_pod_[a.pod] + same_pod};
            }
            r0 = r1;
        }
        for (const MemberTiers& m : members_) per_leaf_[m.leaf] = per_pod_[m.pod] = 0;
        return true;
    }
    // Another offset of the same group orders its members as the unshifted count did.
    void order_from(const AllToAllCounts& base) {
        order_ = base.order_;
        base_domain_ = base.base_domain_;
    }
    const std::vector<MemberTiers>& members() const { return members_; }
    const std::vector<Crossings>& crossings() const { return crossings_; }

private:
    // Members in one unshifted domain share a shifted one, and different ones do not (false too
    // without the unshifted group's order: order_from was not called for this group).
    bool same_partition() {
        runs_.clear();
        const std::size_t n = members_.size();
        if (order_.size() != n) return false;
        for (std::size_t r0 = 0; r0 < n;) {
            std::size_t r1 = r0;
            const std::int64_t shifted = members_[order_[r0]].domain;
            while (r1 < n && base_domain_[order_[r1]] == base_domain_[order_[r0]]) {
                if (members_[order_[r1]].domain != shifted) return false;
                ++r1;
            }
            runs_.push_back(shifted);
            r0 = r1;
        }
        std::sort(runs_.begin(), runs_.end());
        return std::adjacent_find(runs_.begin(), runs_.end()) == runs_.end();
    }

    std::vector<MemberTiers> members_;
    std::vector<std::size_t> order_;
    std::vector<std::int64_t> base_domain_, runs_;
    std::vector<std::int64_t> per_leaf_, per_pod_;  // zero between calls
    std::vector<Crossings> crossings_;
};

// tier_worst_link for the all-to-all of `group`, per member; `pairs` is the flow list it falls
// back to where a concurrent group's shift regroups the domains (not on the fabrics Sextant builds).
template <class Flows>
double all_to_all_worst_link(const ClusterGraph& graph, const GroupPlacement& group, double efficiency, const Flows& pairs) {
    thread_local AllToAllCounts base, shifted;
    thread_local TierLoads t;
    thread_local RepeatedSum fold;
    base.count(graph, group.gpus, 0);
    std::size_t flows = 0;
    std::int64_t top = 0, shift = 0;
    for (std::size_t i = 0; i < group.gpus.size(); ++i) {
        flows += static_cast<std::size_t>(base.crossings()[i].nic);
        top = std::max(top, group.gpus[i]);
    }
    if (flows == 0) return 0.0;
    const Sample sample = sample_groups(group, flows);
    for (auto offset : sample.offsets) shift = std::max(shift, offset);
    t.start(graph, static_cast<std::size_t>(top + shift + 1));
    // Crossing counts first (integers, exact in a double), the weight folded in when read.
    shifted.order_from(base);
    for (auto offset : sample.offsets) {
        const AllToAllCounts* at = &base;
        if (offset != 0) {
            if (!shifted.count(graph, group.gpus, offset)) return tier_worst_link(graph, group, efficiency, pairs);
            at = &shifted;
        }
        for (std::size_t i = 0; i < group.gpus.size(); ++i) {
            const MemberTiers& m = at->members()[i];
            const Crossings& c = at->crossings()[i];
            const auto cross = [&](std::vector<TierLoads::Slot>& up, std::vector<TierLoads::Slot>& down, std::size_t slot, std::int64_t k) {
                if (k == 0) return;
                t.add(up, slot, static_cast<double>(k));
                t.add(down, slot, static_cast<double>(k));
            };
            cross(t.nic_up, t.nic_down, static_cast<std::size_t>(m.gpu), c.nic);
            cross(t.leaf_up, t.leaf_down, m.leaf, c.leaf);
            cross(t.pod_up, t.pod_down, m.pod, c.pod);
        }
    }
    const double w = sample.weight;
    double worst = 0;
    const auto ratio = [&](const std::vector<TierLoads::Slot>& loads, std::size_t slot, std::uint32_t link) {
        worst = std::max(worst, fold(w, static_cast<std::size_t>(t.get(loads, slot))) / (graph.capacity(link) * efficiency));
    };
    for (std::size_t i = 0; i < group.gpus.size(); ++i) {
        const MemberTiers& m = base.members()[i];
        const Crossings& c = base.crossings()[i];
        if (c.nic == 0) continue;
        const auto f = graph.fabric_links(m.gpu);
        const auto gpu = static_cast<std::size_t>(m.gpu);
        for (const auto* loads : {&t.nic_up, &t.nic_down}) {
            ratio(*loads, gpu, f.nic);
            ratio(*loads, gpu, f.nic_leaf);
        }
        if (c.leaf == 0) continue;
        ratio(t.leaf_up, f.leaf, graph.leaf_uplink(f.leaf));
        ratio(t.leaf_down, f.leaf, graph.leaf_uplink(f.leaf));
        if (c.pod == 0) continue;
        ratio(t.pod_up, m.pod, graph.pod_uplink(m.pod));
        ratio(t.pod_down, m.pod, graph.pod_uplink(m.pod));
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
    const auto all_to_all_link = [&](const GroupPlacement& g) {
        return Routed ? routed_worst_link(graph, g, efficiency, all_to_all) : all_to_all_worst_link(graph, g, efficiency, all_to_all);
    };
    s.ring_seconds_per_byte = worst_link(group, ring);
    s.alone_ring_seconds_per_byte = worst_link(alone, ring);
    if (with_all_to_all) {
        s.all_to_all_seconds_per_byte = all_to_all_link(group);
        s.alone_all_to_all_seconds_per_byte = all_to_all_link(alone);
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
