// The per-step work outside the microbatches (README "What grows with the GPU count"): gradient
// clipping reads the local gradients once for their norm and all-reduces that one fp32 number over
// every GPU of the job, priced by the collective model, so it grows with the GPU count; host
// overheads (step_overhead_s) stay as the runtime profile states them.
#include <doctest/doctest.h>

#include <numeric>
#include <nlohmann/json.hpp>

#include "cost/layer_costs.hpp"
#include "sim/simulate.hpp"
#include "sim/stage_plan.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"

using namespace sextant;
using json = nlohmann::json;

namespace {
Scenario llama8b(std::int64_t gpus) {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}}},
                {"training", {{"seq_len", 4096}, {"global_batch", gpus * 2}, {"precision", "bf16"}, {"framework", "megatron-core-2024"}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"cp", 1}, {"dp", gpus}, {"microbatch", 1}, {"zero_stage", 1}}}};
    return parse_scenario(doc, data_dir());
}
}  // namespace

TEST_CASE("the gradient norm's all-reduce joins every GPU of the job and grows with their count") {
    double previous = 0;
    for (const std::int64_t gpus : {8, 64, 1024}) {
        CAPTURE(gpus);
        const Scenario s = llama8b(gpus);
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        GroupPlacement all;
        all.gpus.resize(static_cast<std::size_t>(gpus));
        std::iota(all.gpus.begin(), all.gpus.end(), std::int64_t{0});
        all.offsets = {0};
        const GroupShape world = ctx.network().analyse(all);
        CHECK(world.ranks == gpus);
        const double norm = ctx.network().cost(CollectiveOp::AllReduce, Bytes(4), world).time.value();
        REQUIRE(ctx.runtime().grad_clip);
        const StepPlan plan = plan_step(ctx, l);
        CHECK(plan.step_overhead == doctest::Approx(ctx.runtime().step_overhead_s + norm).epsilon(1e-12));
        CHECK(norm > previous);
        previous = norm;
        // Closed form and simulation both end the step with it.
        const StepResult r = estimate(ctx, l);
        CHECK(r.breakdown.other >= plan.step_overhead);
    }
}

TEST_CASE("clipping reads the local gradient shard once beside the optimizer, and costs nothing where the runtime does not clip") {
    const Scenario s = llama8b(64);
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const CostContext costs = ctx.costs();
    const double local = 1e9;
    // fp32 gradients (Megatron-LM) at the profile's HBM rate and the runtime's efficiency.
    CHECK(grad_norm_time(costs, l, local) ==
          doctest::Approx(local * 4 / (ctx.profile().memory_tbps() * ctx.runtime().compute_efficiency * 1e12)).epsilon(1e-12));
    const StepPlan plan = plan_step(ctx, l);
    const StagePlan& stage = plan.stages.front();
    double params = 0;
    for (const ChunkPlan& c : stage.chunks) params += c.dense_params + c.expert_params;
    const double shard = params / static_cast<double>(l.dp);  // ZeRO-1: the optimizer's and the norm's shard
    CHECK(stage.optimizer == doctest::Approx((optimizer_time(costs, l, shard) + grad_norm_time(costs, l, shard)) * stage.slowdown).epsilon(1e-9));
    RuntimeProfile no_clip = ctx.runtime();
    no_clip.grad_clip = false;
    const CostContext unclipped{costs.scenario, costs.profile, no_clip, costs.network};
    CHECK(grad_norm_time(unclipped, l, local) == 0.0);
    CHECK(grad_norm_all_reduce(unclipped, ctx.world_group()) == 0.0);
    CHECK(grad_norm_all_reduce(costs, ctx.world_group()) > 0.0);
}
