#pragma once
// Everything one scenario's step predictions share, built once: calibration and runtime profiles,
// the network model over the cluster graph, stragglers and degraded links, and a cache of group
// shapes per layout (routing groups over the graph is the expensive part). Thread-safe; no lock is
// held while a shape is analysed.
#include <array>
#include <map>
#include <memory>
#include <shared_mutex>
#include <tuple>
#include <vector>

#include "collective/network_model.hpp"
#include "cost/layer_costs.hpp"
#include "spec/runtime_profile.hpp"
#include "memory/activations.hpp"
#include "profile/profile.hpp"
#include "spec/scenario.hpp"

namespace sextant {

class StepContext {
public:
    explicit StepContext(const Scenario& scenario);
    StepContext(const Scenario& scenario, const CalibrationProfile& profile);

    const Scenario& scenario() const { return scenario_; }
    const CalibrationProfile& profile() const { return profile_; }
    const RuntimeProfile& runtime() const { return runtime_; }
    const NetworkModel& network() const { return *network_; }
    const RuntimeTraits& traits() const { return traits_; }
    const std::vector<Straggler>& stragglers() const { return stragglers_; }
    const std::vector<DegradedLink>& degraded_links() const { return degraded_; }
    CostContext costs() const { return {scenario_, profile_, runtime_, *network_}; }
    // Model FLOPs of one step: the same for every layout, so counted once.
    double model_flops() const { return model_flops_; }
    // Hardware FLOPs of one step: they depend on a layout only through its recompute (and on the
    // runtime's meaning of it), so counted once for each (hardware_flops_per_step).
    double hardware_flops(Recompute recompute) const { return hardware_flops_[static_cast<std::size_t>(recompute)]; }
    // A hybrid model's layers of each kind (ModelSpec::layer_kind), counted once; zeros for a
    // transformer (the stage plan's host floor reads them per layout).
    const std::array<std::int64_t, kLayerKinds>& hybrid_kind_counts() const { return hybrid_kind_counts_; }
    // Each layer's kind (ModelSpec::layer_kind), worked out once: the stage plan reads it for
    // every layer of every layout.
    std::size_t layer_kind(std::int64_t layer) const { return layer_kinds_[static_cast<std::size_t>(layer)]; }
    // Unique to this context's scenario and profile (copies share it): what keys per-thread
    // caches of costs, which outlive any one context.
    std::uint64_t id() const { return id_; }

    const LayoutGroups& groups(const Layout& layout) const;
    // Every GPU of the cluster as one group (the gradient-norm all-reduce of clipping), analysed
    // once.
    const GroupShape& world_group() const;

    // The same scenario with the profile's fitted factors replaced: shares the cluster graph and
    // the analysed group shapes, so fitting re-simulates without re-routing.
    StepContext with_factors(const ProfileFactors& factors) const;

private:
    StepContext() = default;
    struct GroupCache;
    Scenario scenario_;
    CalibrationProfile profile_;
    RuntimeProfile runtime_;
    RuntimeTraits traits_;
    std::shared_ptr<NetworkModel> network_;
    std::vector<Straggler> stragglers_;
    std::vector<DegradedLink> degraded_;
    std::shared_ptr<GroupCache> cache_;
    double model_flops_ = 0;
    std::array<double, 3> hardware_flops_{};  // by Recompute: none, selective, full
    std::array<std::int64_t, kLayerKinds> hybrid_kind_counts_{};
    std::vector<std::uint8_t> layer_kinds_;
    std::uint64_t id_ = 0;
};

// The calibration profile a scenario names (`calibration`: preset or file), else the GPU's.
CalibrationProfile scenario_profile(const Scenario& scenario);

// The layout's fixed knobs against what the framework generation implements (schedules, async TP,
// TP above the KV heads, gated delta net CP, recompute modules, activation offload): each an
// InputError at its key.
// StepContext checks it; `check` too, so that it refuses what a later command would.
void check_layout_runtime(const Scenario& scenario, const RuntimeProfile& runtime);

}  // namespace sextant
