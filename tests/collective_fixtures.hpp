#pragma once
// Clusters and communicator groups the collective tests build: a topology preset at a GPU count,
// and a group of GPUs with the offsets of its concurrent copies.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/presets.hpp"
#include "spec/scenario.hpp"
#include "topology/placement.hpp"

namespace sextant::testing {

inline ClusterSpec cluster(const char* preset, std::int64_t gpus = 0) {
    json c = load_preset("topologies", preset, "/cluster");
    if (gpus) c["gpus"] = gpus;
    return parse_cluster(c, "/cluster", load_gpu);
}

inline GroupPlacement group(std::vector<std::int64_t> gpus, std::vector<std::int64_t> offsets = {0}) {
    GroupPlacement g;
    g.gpus = std::move(gpus);
    g.offsets = std::move(offsets);
    g.concurrent_groups = static_cast<std::int64_t>(g.offsets.size());
    return g;
}

// 0, stride, 2 x stride, ... (n values).
inline std::vector<std::int64_t> range(std::int64_t n, std::int64_t stride = 1) {
    std::vector<std::int64_t> v;
    for (std::int64_t i = 0; i < n; ++i) v.push_back(i * stride);
    return v;
}

}  // namespace sextant::testing
