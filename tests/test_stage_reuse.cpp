// The screen plans a middle pipeline stage once and copies it to the following stages that hold
// the same kinds of layers (issue 18). These hold every stage, copied or not, to what its own
// layers give: its parameters (summed layer by layer from the model), its activations (each
// layer's bytes times the schedule's microbatches in flight), and stages whose layers differ in
// kind must not be copied.
#include <doctest/doctest.h>

#include <cmath>

#include "memory/activations.hpp"
#include "memory/memory_model.hpp"
#include "memory/stage_params.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
// DeepSeek-V3's published layout (ZeRO-1: 16-bit weights unsharded) with the MoE layers on
// every other layer from layer 0 and the 61 layers split as given.
std::pair<Scenario, Layout> alternating_moe(std::vector<std::int64_t> split) {
    Scenario s = load_scenario(data_dir() / "scenarios" / "deepseek-v3-h100.json");
    s.model.moe.first_dense_layers = 0;
    s.model.moe.layer_frequency = 2;
    const auto pp = static_cast<std::int64_t>(split.size());
    s.layout.pp = pp;
    s.layout.dp = s.cluster.gpus / pp;
    s.layout.stage_layers = split;
    return {s, resolve_layout(s, s.layout)};
}

double layers_total(const Scenario& s, const Layout& l, std::int64_t stage) {
    double total = 0;
    for (std::int64_t layer = 0, first = 0; layer < l.pp; ++layer) {
        const std::int64_t n = l.stage_layers[static_cast<std::size_t>(layer)];
        if (layer == stage)
            for (std::int64_t i = first; i < first + n; ++i) total += layer_params_per_gpu(s.model, l, i).total();
        first += n;
    }
    return total;
}

void check_stages(const Scenario& s, const Layout& l) {
    const RuntimeTraits traits = runtime_traits(s);
    const MemoryReport memory = estimate_memory(s, l, traits);
    const std::int64_t m = l.microbatches(s.training.global_batch);
    REQUIRE(memory.stages.size() == static_cast<std::size_t>(l.pp));
    std::int64_t first = 0;
    for (std::int64_t stage = 0; stage < l.pp; ++stage) {
        const std::int64_t n = l.stage_layers[static_cast<std::size_t>(stage)];
        const StageMemory& sm = memory.stages[static_cast<std::size_t>(stage)];
        CAPTURE(stage);
        // ZeRO-1 keeps 16-bit weights whole: 2 bytes per parameter of the stage.
        CHECK(sm.weights.value() == doctest::Approx(2.0 * stage_params(s.model, l, stage).total()).epsilon(1e-12));
        if (stage > 0 && stage + 1 < l.pp) {
            CHECK(stage_params(s.model, l, stage).total() == doctest::Approx(layers_total(s, l, stage)).epsilon(1e-12));
            // Full recompute: each layer keeps its input, times the microbatches in flight.
            double per_microbatch = 0;
            for (std::int64_t i = first; i < first + n; ++i) per_microbatch += layer_activation_bytes(s, l, traits, i);
            CHECK(sm.activations.value() == doctest::Approx(per_microbatch * microbatches_in_flight(l, stage, m, traits)).epsilon(1e-12));
        }
        first += n;
    }
    const StepContext ctx(s);
    const StepPlan plan = plan_step(ctx, l);
    for (std::int64_t stage = 1; stage + 1 < l.pp; ++stage) {
        double params = 0;
        for (const ChunkPlan& c : plan.stages[static_cast<std::size_t>(stage)].chunks) params += c.dense_params + c.expert_params;
        CAPTURE(stage);
        CHECK(params == doctest::Approx(stage_params(s.model, l, stage).total()).epsilon(1e-12));
    }
}
}  // namespace

TEST_CASE("copied middle stages hold what their own layers give") {
    // Every middle stage starts on an even layer: stages 1-6 hold the same kinds and are copied.
    const auto [s, l] = alternating_moe({8, 8, 8, 8, 8, 8, 8, 5});
    check_stages(s, l);
    const StepContext ctx(s);
    const StepPlan plan = plan_step(ctx, l);
    CHECK(plan.stages[1].chunks.front().forward == plan.stages[6].chunks.front().forward);
}

TEST_CASE("middle stages whose layers differ in kind are planned each on its own") {
    // Stage 1 starts on layer 15 (dense first), stage 2 on layer 30 (MoE first): same count,
    // different kinds, different parameters.
    const auto [s, l] = alternating_moe({15, 15, 15, 16});
    check_stages(s, l);
    CHECK(stage_params(s.model, l, 1).total() != stage_params(s.model, l, 2).total());
    const MemoryReport memory = estimate_memory(s, l, runtime_traits(s));
    CHECK(memory.stages[1].weights.value() != memory.stages[2].weights.value());
    CHECK(same_layer_kinds(s.model, {15, 30}, {30, 45}) == false);
    CHECK(same_layer_kinds(s.model, {16, 30}, {30, 44}) == true);
}
