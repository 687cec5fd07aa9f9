#include "spec/fault_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
constexpr FieldDef kStragglerFields[] = {
    {"gpu", FieldType::Integer, "slow GPU (global index)", "", "", 0},
    {"node", FieldType::Integer, "slow node: all its GPUs", "", "", 0},
    {"slowdown", FieldType::Number, "compute time multiplier (1.1 = 10% slower)", "", required(), 1.0, 100.0},
};
constexpr FieldDef kDegradedFields[] = {
    {"gpu", FieldType::Integer, "GPU whose NIC link is degraded", "", "", 0},
    {"node", FieldType::Integer, "node whose NIC links are all degraded", "", "", 0},
    {"bandwidth_factor", FieldType::Number, "achieved fraction of the link rate", "", required(), 0.001, 1.0},
};

// One entry names a gpu or a node; returns the GPU range it covers.
std::pair<std::int64_t, std::int64_t> target(const ObjectReader& r, const ClusterSpec& c) {
    const auto gpu = r.integer("gpu"), node = r.integer("node");
    if (gpu.has_value() == node.has_value()) throw InputError(r.path(), "", "give exactly one of gpu or node");
    if (gpu) {
        if (*gpu >= c.gpus)
            throw InputError(r.path_of("gpu"), std::to_string(*gpu), "must be below /cluster/gpus (" + std::to_string(c.gpus) + ")");
        return {*gpu, *gpu};
    }
    if (*node >= c.nodes())
        throw InputError(r.path_of("node"), std::to_string(*node), "must be below the node count (" + std::to_string(c.nodes()) + ")");
    return {*node * c.gpus_per_node, (*node + 1) * c.gpus_per_node - 1};
}

// Reads each entry of a part's array (null: none) with `fields` and hands `add` its reader and
// the GPUs it names.
template <class Add>
void read_entries(const json& list, const std::string& path, std::span<const FieldDef> fields, const ClusterSpec& c, Add&& add) {
    if (list.is_null()) return;
    if (!list.is_array()) throw InputError(path, value_text(list), "must be an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
        ObjectReader r(list[i], path + "/" + std::to_string(i), fields);
        const auto [first, last] = target(r, c);
        add(r, first, last);
    }
}
}  // namespace

std::span<const FieldDef> straggler_fields() { return kStragglerFields; }
std::span<const FieldDef> degraded_link_fields() { return kDegradedFields; }

std::vector<Straggler> parse_stragglers(const json& list, const std::string& path, const ClusterSpec& cluster) {
    std::vector<Straggler> out;
    read_entries(list, path, kStragglerFields, cluster, [&](const ObjectReader& r, std::int64_t first, std::int64_t last) {
        out.push_back({first, last, r.require_number("slowdown")});
    });
    return out;
}

std::vector<DegradedLink> parse_degraded_links(const json& list, const std::string& path, const ClusterSpec& cluster) {
    std::vector<DegradedLink> out;
    read_entries(list, path, kDegradedFields, cluster, [&](const ObjectReader& r, std::int64_t first, std::int64_t last) {
        const double factor = r.require_number("bandwidth_factor");
        for (std::int64_t g = first; g <= last; ++g) out.push_back({g, factor});
    });
    return out;
}

void check_faults_in_cluster(const std::vector<Straggler>& stragglers, const std::vector<DegradedLink>& links, const ClusterSpec& c,
                             const std::string& path) {
    const auto refuse = [&](const char* part, std::int64_t gpu) {
        throw InputError(path, std::to_string(c.gpus),
                         std::string("leaves out GPU ") + std::to_string(gpu) + " that /" + part + " names; the count must exceed it");
    };
    for (const Straggler& s : stragglers)
        if (s.last_gpu >= c.gpus) refuse("stragglers", s.last_gpu);
    for (const DegradedLink& l : links)
        if (l.gpu >= c.gpus) refuse("degraded_links", l.gpu);
}

}  // namespace sextant
