#include "topology/placement.hpp"

#include <algorithm>
#include <array>

namespace sextant {

namespace {
// One axis of the rank grid: its size, the distance between neighbouring ranks along it, and
// whether the group varies along it (the others give the concurrent groups).
struct Axis {
    std::int64_t size = 1, stride = 1;
    bool member = false;
};

// Every rank whose coordinates are zero outside the member axes (or, with `others`, inside
// them) and vary along the rest.
std::vector<std::int64_t> span_of(const std::vector<Axis>& axes, bool others) {
    std::vector<std::int64_t> ranks{0};
    for (const Axis& a : axes) {
        if (a.member == others) continue;
        std::vector<std::int64_t> next;
        next.reserve(ranks.size() * static_cast<std::size_t>(a.size));
        for (std::int64_t c = 0; c < a.size; ++c)
            for (auto r : ranks) next.push_back(r + c * a.stride);
        ranks = std::move(next);
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
}

GroupPlacement place_axes(const std::vector<Axis>& axes) {
    GroupPlacement g;
    g.gpus = span_of(axes, false);
    g.offsets = span_of(axes, true);
    g.concurrent_groups = static_cast<std::int64_t>(g.offsets.size());
    return g;
}

// The dense rank grid in rank order, the data-parallel dimension split in two: its shard part
// (the fastest shard_dp() coordinates, as torchtitan's mesh puts dp_shard inside dp_replicate and
// Megatron-Core takes each distributed-optimizer instance from consecutive data-parallel ranks)
// and its replica part.
std::vector<Axis> dense_axes(const Layout& l, std::initializer_list<ParallelDim> dims, DpPart part) {
    std::vector<Axis> axes;
    std::int64_t s = 1;
    for (const ParallelDim d : l.rank_order) {
        const std::int64_t size = dimension_size(l, d);
        bool member = false;
        for (ParallelDim dim : dims) member = member || d == dim;
        if (d == ParallelDim::DP) {
            const std::int64_t shard = l.shard_dp();
            axes.push_back({shard, s, member && part != DpPart::Replicas});
            axes.push_back({size / shard, s * shard, member && part != DpPart::Shard});
        } else {
            axes.push_back({size, s, member});
        }
        s *= size;
    }
    return axes;
}
}  // namespace

std::int64_t dimension_size(const Layout& l, ParallelDim d) {
    switch (d) {
        case ParallelDim::TP: return l.tp;
        case ParallelDim::CP: return l.cp;
        case ParallelDim::EP: return 1;
        case ParallelDim::DP: return l.dp;
        case ParallelDim::PP: return l.pp;
    }
    return 1;
}

std::int64_t dimension_stride(const Layout& l, ParallelDim dim) {
    std::int64_t stride = 1;
    for (ParallelDim d : l.rank_order) {
        if (d == dim) break;
        stride *= dimension_size(l, d);
    }
    return stride;
}

GroupPlacement place_group(const Layout& l, ParallelDim dim) { return place_group(l, {dim}); }

GroupPlacement place_group(const Layout& l, std::initializer_list<ParallelDim> dims, DpPart part) {
    return place_axes(dense_axes(l, dims, part));
}

GroupPlacement place_expert_group(const Layout& l, ExpertDim dim) {
    // The ranks of pipeline stage 0 in rank order; position p holds expert coordinates
    // (p % etp, p / etp % ep, p / (etp ep)), the last split into the shard part (the fastest
    // edp / replicas) and the replica part, as for dense data parallelism.
    const std::vector<std::int64_t> block = place_group(l, {ParallelDim::TP, ParallelDim::CP, ParallelDim::DP}).gpus;
    const std::int64_t replicas = l.dp_replicas();
    const std::int64_t edp = static_cast<std::int64_t>(block.size()) / (l.etp * l.ep);
    const std::array<std::int64_t, 4> size = {l.etp, l.ep, edp / replicas, replicas};
    const std::array<std::int64_t, 4> step = {1, l.etp, l.etp * l.ep, l.etp * l.ep * (edp / replicas)};
    std::array<bool, 4> member{};
    member[static_cast<std::size_t>(dim == ExpertDim::ETP ? 0 : dim == ExpertDim::EP ? 1 : dim == ExpertDim::EDP ? 2 : 3)] = true;
    if (dim == ExpertDim::EDP && replicas == 1) member[3] = true;  // size 1: nothing changes
    // Positions of one group (coordinates zero off its axis) and of its translations.
    const auto positions = [&](bool others) {
        std::vector<std::int64_t> out{0};
        for (std::size_t a = 0; a < 4; ++a) {
            if (member[a] == others) continue;
            std::vector<std::int64_t> next;
            for (std::int64_t c = 0; c < size[a]; ++c)
                for (auto p : out) next.push_back(p + c * step[a]);
            out = std::move(next);
        }
        return out;
    };
    const std::vector<std::int64_t> own = positions(false), bases = positions(true);
    GroupPlacement g;
    for (auto p : own) g.gpus.push_back(block[static_cast<std::size_t>(p)]);
    std::sort(g.gpus.begin(), g.gpus.end());
    // Every other group of this dimension, in every pipeline stage, as a translation of this one;
    // where the fold makes a group that is no translation (an exotic rank order), the groups
    // are counted but not placed.
    bool translations = true;
    const std::int64_t pp_stride = dimension_stride(l, ParallelDim::PP);
    for (auto base : bases) {
        std::vector<std::int64_t> other;
        for (auto p : own) other.push_back(block[static_cast<std::size_t>(base + p)]);
        std::sort(other.begin(), other.end());
        const std::int64_t shift = other.front() - g.gpus.front();
        for (std::size_t i = 0; i < other.size(); ++i) translations = translations && other[i] - g.gpus[i] == shift;
        for (std::int64_t s = 0; s < l.pp; ++s) g.offsets.push_back(shift + s * pp_stride);
    }
    g.concurrent_groups = static_cast<std::int64_t>(g.offsets.size());
    std::sort(g.offsets.begin(), g.offsets.end());
    if (!translations) g.offsets.clear();
    return g;
}

std::vector<std::int64_t> disjoint_offsets(const std::vector<std::int64_t>& gpus, std::int64_t count, std::int64_t total) {
    std::vector<bool> used(static_cast<std::size_t>(total), false);
    std::vector<std::int64_t> offsets;
    const std::int64_t top = *std::max_element(gpus.begin(), gpus.end());
    for (std::int64_t o = 0; o + top < total && static_cast<std::int64_t>(offsets.size()) < count; ++o) {
        bool free = std::none_of(gpus.begin(), gpus.end(), [&](std::int64_t g) { return used[static_cast<std::size_t>(g + o)]; });
        if (!free) continue;
        for (auto g : gpus) used[static_cast<std::size_t>(g + o)] = true;
        offsets.push_back(o);
    }
    return offsets;
}

}  // namespace sextant
