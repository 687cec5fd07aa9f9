#include "topology/cluster_graph.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/visitors.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
enum class VertexKind { Gpu, NvSwitch, Nic, Leaf, Pod, Core };

struct VertexProps {
    VertexKind kind = VertexKind::Gpu;
    std::int64_t index = 0;
};
struct EdgeProps {
    std::uint32_t link = 0;
};
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, VertexProps, EdgeProps>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
}  // namespace

struct ClusterGraph::Impl {
    ClusterSpec cluster;
    Graph graph;
    std::int64_t leaf_gpus = 0, pod_gpus = 0, leaves_per_group = 1;
    std::int64_t domain_gpus = 1;      // the job's GPUs in each NVLink domain (ClusterSpec::job_domain_gpus)
    std::vector<Vertex> nic;           // per GPU
    std::vector<std::uint32_t> nic_link;  // GPU-to-NIC link per GPU
    std::vector<double> capacity;      // per link
    std::vector<LinkTier> tier;        // per link
    std::vector<Vertex> parent;        // BFS tree towards the top of the fabric
    std::vector<std::uint32_t> up_link;  // link from a vertex to its parent
    std::vector<int> depth;
    std::vector<std::uint32_t> leaf_uplink, leaf_pod, pod_uplink;  // by leaf / pod index

    std::uint32_t add_link(Vertex a, Vertex b, double bytes_per_s, LinkTier t) {
        const auto id = static_cast<std::uint32_t>(capacity.size());
        boost::add_edge(a, b, EdgeProps{id}, graph);
        capacity.push_back(bytes_per_s);
        tier.push_back(t);
        return id;
    }
};

ClusterGraph::ClusterGraph(const ClusterSpec& c) : impl_(std::make_unique<Impl>()) {
    Impl& g = *impl_;
    g.cluster = c;
    const std::int64_t gpus = c.gpus, per_node = c.gpus_per_node;
    g.pod_gpus = c.fabric.pod_gpus > 0 ? std::min(c.fabric.pod_gpus, gpus) : gpus;
    g.leaf_gpus = c.fabric.leaf_gpus > 0 ? std::min(c.fabric.leaf_gpus, g.pod_gpus) : g.pod_gpus;
    g.leaves_per_group = c.fabric.rail_optimized ? std::min(per_node, gpus) : 1;
    const double nic_bw = c.fabric.nic_gbps_per_gpu / 8.0 * 1e9;
    const double nvlink_bw = c.gpu.nvlink_gbps * 1e9;

    g.domain_gpus = c.nvlink_domain_gpus > 0 ? c.job_domain_gpus() : per_node;
    const std::int64_t domain_gpus = g.domain_gpus;
    const std::int64_t domains = (gpus + domain_gpus - 1) / domain_gpus;
    const std::int64_t leaf_groups = (gpus + g.leaf_gpus - 1) / g.leaf_gpus;
    const std::int64_t pods = (gpus + g.pod_gpus - 1) / g.pod_gpus;

    auto vertex = [&](VertexKind kind, std::int64_t index) { return boost::add_vertex(VertexProps{kind, index}, g.graph); };
    const Vertex core = vertex(VertexKind::Core, 0);
    std::vector<Vertex> pod(static_cast<std::size_t>(pods)), leaf(static_cast<std::size_t>(leaf_groups * g.leaves_per_group));
    for (std::int64_t p = 0; p < pods; ++p) {
        pod[static_cast<std::size_t>(p)] = vertex(VertexKind::Pod, p);
        g.pod_uplink.push_back(g.add_link(pod[static_cast<std::size_t>(p)], core,
                   static_cast<double>(std::min(g.pod_gpus, gpus - p * g.pod_gpus)) * nic_bw / c.fabric.pod_oversubscription,
                   LinkTier::PodUplink));
    }
    for (std::int64_t l = 0; l < static_cast<std::int64_t>(leaf.size()); ++l) {
        const std::int64_t group = l / g.leaves_per_group;
        leaf[static_cast<std::size_t>(l)] = vertex(VertexKind::Leaf, l);
        const std::int64_t nics = std::min(g.leaf_gpus, gpus - group * g.leaf_gpus) / g.leaves_per_group;
        const std::int64_t parent = group * g.leaf_gpus / g.pod_gpus;
        g.leaf_pod.push_back(static_cast<std::uint32_t>(parent));
        g.leaf_uplink.push_back(g.add_link(leaf[static_cast<std::size_t>(l)], pod[static_cast<std::size_t>(parent)],
                                           static_cast<double>(std::max<std::int64_t>(nics, 1)) * nic_bw / c.fabric.leaf_oversubscription,
                                           LinkTier::LeafUplink));
    }
    std::vector<Vertex> domain(static_cast<std::size_t>(domains));
    for (std::int64_t d = 0; d < domains; ++d) domain[static_cast<std::size_t>(d)] = vertex(VertexKind::NvSwitch, d);
    g.nic.resize(static_cast<std::size_t>(gpus));
    for (std::int64_t gpu = 0; gpu < gpus; ++gpu) {
        const Vertex v = vertex(VertexKind::Gpu, gpu);
        g.add_link(v, domain[static_cast<std::size_t>(gpu / domain_gpus)], nvlink_bw, LinkTier::NvLink);
        const Vertex n = vertex(VertexKind::Nic, gpu);
        g.nic[static_cast<std::size_t>(gpu)] = n;
        g.nic_link.push_back(g.add_link(v, n, nic_bw, LinkTier::Nic));
        g.add_link(n, leaf[static_cast<std::size_t>(leaf_of(gpu))], nic_bw, LinkTier::Nic);
    }

    // Parents towards the core: the fabric part of the graph is a tree, so the route between two
    // NICs climbs to their lowest common ancestor. Each NIC is reached from its leaf before any
    // path through a GPU and its NVSwitch could reach it, so NIC parents are leaves.
    const std::size_t n = boost::num_vertices(g.graph);
    g.parent.assign(n, core);
    g.depth.assign(n, 0);
    g.up_link.assign(n, 0);
    std::vector<boost::default_color_type> color(n);
    auto record = boost::make_bfs_visitor(std::make_pair(
        boost::record_predecessors(g.parent.data(), boost::on_tree_edge()),
        boost::record_distances(g.depth.data(), boost::on_tree_edge())));
    boost::breadth_first_search(g.graph, core, boost::visitor(record).color_map(color.data()));
    for (auto [e, end] = boost::edges(g.graph); e != end; ++e) {
        Vertex a = boost::source(*e, g.graph), b = boost::target(*e, g.graph);
        if (g.parent[a] == b) g.up_link[a] = g.graph[*e].link;
        else if (g.parent[b] == a) g.up_link[b] = g.graph[*e].link;
    }
}

ClusterGraph::~ClusterGraph() = default;
ClusterGraph::ClusterGraph(ClusterGraph&&) noexcept = default;
ClusterGraph& ClusterGraph::operator=(ClusterGraph&&) noexcept = default;

void ClusterGraph::route(std::int64_t gpu_a, std::int64_t gpu_b, std::vector<std::uint32_t>& out) const {
    const Impl& g = *impl_;
    if (domain_of(gpu_a) == domain_of(gpu_b)) return;
    Vertex a = g.nic[static_cast<std::size_t>(gpu_a)], b = g.nic[static_cast<std::size_t>(gpu_b)];
    const auto up = [&](Vertex v) { return 2 * g.up_link[v]; };
    const auto down = [&](Vertex v) { return 2 * g.up_link[v] + 1; };
    out.push_back(2 * g.nic_link[static_cast<std::size_t>(gpu_a)]);
    out.push_back(2 * g.nic_link[static_cast<std::size_t>(gpu_b)] + 1);
    while (g.depth[a] > g.depth[b]) { out.push_back(up(a)); a = g.parent[a]; }
    while (g.depth[b] > g.depth[a]) { out.push_back(down(b)); b = g.parent[b]; }
    while (a != b) {
        out.push_back(up(a));
        out.push_back(down(b));
        a = g.parent[a];
        b = g.parent[b];
    }
}

double ClusterGraph::capacity(std::uint32_t link) const { return impl_->capacity[link]; }
LinkTier ClusterGraph::tier(std::uint32_t link) const { return impl_->tier[link]; }
std::size_t ClusterGraph::link_count() const { return impl_->capacity.size(); }
std::size_t ClusterGraph::vertex_count() const { return boost::num_vertices(impl_->graph); }

ClusterGraph::FabricLinks ClusterGraph::fabric_links(std::int64_t gpu) const {
    const Impl& g = *impl_;
    const auto i = static_cast<std::size_t>(gpu);
    return {g.nic_link[i], g.up_link[g.nic[i]], static_cast<std::uint32_t>(leaf_of(gpu))};
}
std::size_t ClusterGraph::leaf_count() const { return impl_->leaf_uplink.size(); }
std::size_t ClusterGraph::pod_count() const { return impl_->pod_uplink.size(); }
std::uint32_t ClusterGraph::leaf_uplink(std::uint32_t leaf) const { return impl_->leaf_uplink[leaf]; }
std::uint32_t ClusterGraph::pod_of_leaf(std::uint32_t leaf) const { return impl_->leaf_pod[leaf]; }
std::uint32_t ClusterGraph::pod_uplink(std::uint32_t pod) const { return impl_->pod_uplink[pod]; }

std::int64_t ClusterGraph::domain_of(std::int64_t gpu) const {
    return gpu / impl_->domain_gpus;
}
std::int64_t ClusterGraph::rail_of(std::int64_t gpu) const { return gpu % impl_->cluster.gpus_per_node; }
std::int64_t ClusterGraph::pod_of(std::int64_t gpu) const { return gpu / impl_->pod_gpus; }
std::int64_t ClusterGraph::leaf_of(std::int64_t gpu) const {
    const Impl& g = *impl_;
    const std::int64_t group = gpu / g.leaf_gpus;
    return group * g.leaves_per_group + (g.leaves_per_group > 1 ? rail_of(gpu) : 0);
}

}  // namespace sextant
