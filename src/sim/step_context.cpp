#include "sim/step_context.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <numeric>
#include <tuple>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/presets.hpp"

namespace sextant {

CalibrationProfile scenario_profile(const Scenario& s) {
    if (s.calibration.is_null()) return CalibrationProfile::for_gpu(s.cluster.gpu);
    return CalibrationProfile::from_json(s.calibration, "/calibration", s.cluster.gpu);
}

// Compute, then publish: the lock guards only the lookup and the insertion, never the routing, so
// threads screening layouts do not wait on each other's new group shapes (issue 18: with the lock
// held while routing, two threads were no faster than one). Two threads that meet the same new
// shape both compute it; analysis is deterministic, so whichever is published first is the same.
struct StepContext::GroupCache {
    using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                           std::array<ParallelDim, 5>>;
    std::shared_mutex mutex;
    std::map<Key, std::unique_ptr<LayoutGroups>> groups;
    // The analysis of each placement by its content: layouts of different keys share most of
    // their groups (a TP group of 8 at stride 1 lands alike whatever pp and dp are), so a search
    // routes each placement once (issue 18: routing was 38% of the 405B screen). The key is the
    // whole placement, so a hit returns exactly what the network model would.
    // Keys hold a placement's GPUs and offsets (a million-GPU cluster's TP groups: 131,072
    // offsets), so the cache stops taking new ones past kShapeWords words (64 MB); later
    // placements are analysed each time, as before it.
    using ShapeKey = std::tuple<bool, std::int64_t, std::vector<std::int64_t>, std::vector<std::int64_t>>;
    // A placement looked up in place: a hit copies no GPU list (the key is built only to insert).
    struct ShapeView {
        bool all_to_all;
        const GroupPlacement& placement;
    };
    // ShapeKey's own order (the tuple's, field by field, the vectors lexicographically), for keys
    // and views alike: both are compared as the same tuple of references.
    struct ShapeLess {
        using is_transparent = void;
        static auto fields(const ShapeKey& k) { return std::tie(std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)); }
        static auto fields(const ShapeView& v) {
            return std::tie(v.all_to_all, v.placement.concurrent_groups, v.placement.gpus, v.placement.offsets);
        }
        template <class A, class B>
        bool operator()(const A& a, const B& b) const { return fields(a) < fields(b); }
    };
    static constexpr std::size_t kShapeWords = std::size_t{8} << 20;
    std::map<ShapeKey, GroupShape, ShapeLess> shapes;
    std::size_t shape_words = 0;
    std::once_flag world_once;
    GroupShape world;
};

namespace {
std::uint64_t next_context_id() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1);
}

// The runtime's overlap fractions scaled by the fitted overlap factor, within [0, 1].
RuntimeProfile with_overlap_factor(RuntimeProfile r, double factor) {
    r.overlap.tp = std::clamp(r.overlap.tp * factor, 0.0, 1.0);
    r.overlap.cp = std::clamp(r.overlap.cp * factor, 0.0, 1.0);
    r.overlap.ep = std::clamp(r.overlap.ep * factor, 0.0, 1.0);
    return r;
}
}  // namespace

void check_layout_runtime(const Scenario& scenario, const RuntimeProfile& runtime) {
    const LayoutSpec& k = scenario.layout;
    if (k.schedule) check_schedule_shipped(runtime, *k.schedule, "/layout/schedule");
    if (k.async_tp && *k.async_tp) check_async_tp_offered(runtime, "/layout/async_tp");
    if (k.tp && scenario.model.attention == AttentionKind::Standard) check_kv_heads_split(runtime, *k.tp, scenario.model.kv_heads, "/layout/tp");
    if (k.cp && scenario.model.has_gdn()) check_gdn_context_parallel(runtime, *k.cp, "/layout/cp");
    if (k.recompute_modules) check_recompute_modules(runtime, *k.recompute_modules, "/layout/recompute_modules");
    if (k.activation_offload_modules) check_offload_modules_offered(runtime, *k.activation_offload_modules, "/layout/activation_offload_modules");
    if (k.activation_offload_fraction) check_offload_fraction_offered(runtime, *k.activation_offload_fraction, "/layout/activation_offload_fraction");
    if (k.activation_offload_layers)
        check_activation_offload(runtime, *k.activation_offload_layers, k.pp, k.recompute, scenario.model.layers,
                                 "/layout/activation_offload_layers");
}

StepContext::StepContext(const Scenario& scenario) : StepContext(scenario, scenario_profile(scenario)) {}

StepContext::StepContext(const Scenario& scenario, const CalibrationProfile& profile)
    : scenario_(scenario),
      profile_(profile),
      runtime_(with_overlap_factor(load_runtime_profile(scenario.training.framework, "/framework"), profile.factors().overlap)),
      traits_(runtime_traits(scenario, runtime_)),
      network_(std::make_shared<NetworkModel>(scenario.cluster, profile)),
      stragglers_(scenario.stragglers),
      degraded_(scenario.degraded_links),
      cache_(std::make_shared<GroupCache>()),
      model_flops_(model_flops_per_step(scenario)),
      id_(next_context_id()) {
    check_layout_runtime(scenario, runtime_);
    for (std::int64_t layer = 0; layer < scenario.model.layers; ++layer) {
        const std::size_t kind = scenario.model.layer_kind(layer);
        layer_kinds_.push_back(static_cast<std::uint8_t>(kind));
        if (scenario.model.is_hybrid()) ++hybrid_kind_counts_[kind];
    }
    for (Recompute recompute : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        Layout l;
        l.recompute = recompute;
        hardware_flops_[static_cast<std::size_t>(recompute)] = hardware_flops_per_step(scenario, l, model_flops_, runtime_);
    }
}

StepContext StepContext::with_factors(const ProfileFactors& factors) const {
    StepContext c;
    c.scenario_ = scenario_;
    c.profile_ = profile_.with_factors(factors);
    c.runtime_ = with_overlap_factor(load_runtime_profile(scenario_.training.framework, "/framework"), factors.overlap);
    c.traits_ = traits_;
    c.network_ = std::make_shared<NetworkModel>(network_->with_factor(factors.communication));
    c.stragglers_ = stragglers_;
    c.degraded_ = degraded_;
    c.cache_ = cache_;
    c.model_flops_ = model_flops_;
    c.hardware_flops_ = hardware_flops_;
    c.hybrid_kind_counts_ = hybrid_kind_counts_;
    c.layer_kinds_ = layer_kinds_;
    c.id_ = next_context_id();  // other factors, other costs
    return c;
}

const GroupShape& StepContext::world_group() const {
    std::call_once(cache_->world_once, [&] {
        GroupPlacement all;
        all.gpus.resize(static_cast<std::size_t>(scenario_.cluster.gpus));
        std::iota(all.gpus.begin(), all.gpus.end(), std::int64_t{0});
        all.offsets = {0};
        cache_->world = network_->analyse(all);
    });
    return cache_->world;
}

const LayoutGroups& StepContext::groups(const Layout& l) const {
    const GroupCache::Key key{l.tp, l.pp, l.dp, l.cp, l.ep, l.etp, l.shard_dp(), l.rank_order};
    {
        std::shared_lock lock(cache_->mutex);
        const auto it = cache_->groups.find(key);
        if (it != cache_->groups.end()) return *it->second;
    }
    const auto analyse = [&](const GroupPlacement& p, bool all_to_all) {
        {
            std::shared_lock lock(cache_->mutex);
            const auto it = cache_->shapes.find(GroupCache::ShapeView{all_to_all, p});
            if (it != cache_->shapes.end()) return it->second;
        }
        GroupShape computed = network_->analyse(p, all_to_all);
        const std::size_t words = p.gpus.size() + p.offsets.size();
        std::unique_lock lock(cache_->mutex);
        if (cache_->shape_words + words > GroupCache::kShapeWords) return computed;
        const auto [it, inserted] =
            cache_->shapes.try_emplace(GroupCache::ShapeKey{all_to_all, p.concurrent_groups, p.gpus, p.offsets}, std::move(computed));
        if (inserted) cache_->shape_words += words;
        return it->second;
    };
    auto computed = std::make_unique<LayoutGroups>(analyse_groups(l, scenario_.model, analyse));
    std::unique_lock lock(cache_->mutex);
    // std::map nodes do not move, so the reference stays valid after later insertions.
    return *cache_->groups.try_emplace(key, std::move(computed)).first->second;
}

}  // namespace sextant
