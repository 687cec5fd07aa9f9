#include "topology/placement.hpp"

#include <algorithm>
#include <array>

namespace sextant {

namespace {
// Every rank whose coordinates are zero outside `member` dimensions and vary inside them.
std::vector<std::int64_t> span_of(const std::array<std::int64_t, 5>& size, const std::array<std::int64_t, 5>& stride,
                                  const std::array<bool, 5>& member) {
    std::vector<std::int64_t> ranks{0};
    for (std::size_t i = 0; i < 5; ++i) {
        if (!member[i]) continue;
        std::vector<std::int64_t> next;
        next.reserve(ranks.size() * static_cast<std::size_t>(size[i]));
        for (std::int64_t c = 0; c < size[i]; ++c)
            for (auto r : ranks) next.push_back(r + c * stride[i]);
        ranks = std::move(next);
    }
    std::sort(ranks.begin(), ranks.end());
    return ranks;
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

GroupPlacement place_group(const Layout& l, std::initializer_list<ParallelDim> dims) {
    std::array<std::int64_t, 5> stride{}, size{};
    std::array<bool, 5> member{};
    std::int64_t s = 1;
    for (std::size_t i = 0; i < 5; ++i) {
        const ParallelDim d = l.rank_order[i];
        size[i] = dimension_size(l, d);
        stride[i] = s;
        s *= size[i];
        for (ParallelDim dim : dims) member[i] = member[i] || d == dim;
    }
    GroupPlacement g;
    g.gpus = span_of(size, stride, member);
    std::array<bool, 5> others{};
    for (std::size_t i = 0; i < 5; ++i) others[i] = !member[i];
    g.offsets = span_of(size, stride, others);
    g.concurrent_groups = static_cast<std::int64_t>(g.offsets.size());
    return g;
}

GroupPlacement place_expert_group(const Layout& l, ExpertDim dim) {
    // The ranks of pipeline stage 0 in rank order; position p holds expert coordinates
    // (p % etp, p / etp % ep, p / (etp ep)).
    const std::vector<std::int64_t> block = place_group(l, {ParallelDim::TP, ParallelDim::CP, ParallelDim::DP}).gpus;
    const std::int64_t etp = l.etp, ep = l.ep, edp = static_cast<std::int64_t>(block.size()) / (etp * ep);
    const auto at = [&](std::int64_t e, std::int64_t k, std::int64_t q) { return block[static_cast<std::size_t>(e + etp * (k + ep * q))]; };
    GroupPlacement g;
    const std::int64_t size = dim == ExpertDim::ETP ? etp : dim == ExpertDim::EP ? ep : edp;
    for (std::int64_t i = 0; i < size; ++i)
        g.gpus.push_back(dim == ExpertDim::ETP ? at(i, 0, 0) : dim == ExpertDim::EP ? at(0, i, 0) : at(0, 0, i));
    std::sort(g.gpus.begin(), g.gpus.end());
    // Every other group of this dimension, in every pipeline stage, as a translation of this one;
    // where the fold makes a group that is no translation (an exotic rank order), the groups
    // are counted but not placed.
    bool translations = true;
    const std::int64_t pp_stride = dimension_stride(l, ParallelDim::PP);
    for (std::int64_t a = 0; a < (dim == ExpertDim::ETP ? 1 : etp); ++a)
        for (std::int64_t b = 0; b < (dim == ExpertDim::EP ? 1 : ep); ++b)
            for (std::int64_t c = 0; c < (dim == ExpertDim::EDP ? 1 : edp); ++c) {
                std::vector<std::int64_t> other;
                for (std::int64_t i = 0; i < size; ++i)
                    other.push_back(dim == ExpertDim::ETP ? at(i, b, c) : dim == ExpertDim::EP ? at(a, i, c) : at(a, b, i));
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
