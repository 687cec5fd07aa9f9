// HSDP (layout.shard_group): ZeRO states sharded inside groups of data-parallel ranks and
// replicated across them. Memory divides by the shard group, the gathers and reduce-scatters run
// inside it (priced for the group's own span: eight ranks of a node over NVLink), and the shard's
// gradient is all-reduced across the replicas, per microbatch (FSDP2) or once per step
// (Megatron-Core, Megatron-FSDP, DeepSpeed MiCS). README "ZeRO-3 and FSDP", "HSDP".
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "cost/layer_costs.hpp"
#include "memory/memory_model.hpp"
#include "memory/stage_params.hpp"
#include "planner/emit.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "sim/simulate.hpp"
#include "sim/stage_plan.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "topology/placement.hpp"

using namespace sextant;
using json = nlohmann::json;

namespace {
// Data parallelism only (tp = pp = cp = 1) on DGX H100 nodes of eight GPUs, one NIC per GPU.
json hsdp_doc(const char* model, const char* framework, std::int64_t gpus, std::int64_t zero, std::int64_t shard, double nic_gbps = 400) {
    json layout = {{"tp", 1}, {"pp", 1}, {"cp", 1}, {"dp", gpus}, {"microbatch", 1}, {"zero_stage", zero}, {"recompute", "full"}};
    if (shard > 0) layout["shard_group"] = shard;
    return {{"model", model},
            {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}, {"nic_gbps_per_gpu", nic_gbps}}},
            {"training", {{"seq_len", 4096}, {"global_batch", gpus * 2}, {"precision", "bf16"}, {"framework", framework}}},
            {"layout", layout}};
}

Scenario hsdp(const char* model, const char* framework, std::int64_t gpus, std::int64_t zero, std::int64_t shard, double nic_gbps = 400) {
    return parse_scenario(hsdp_doc(model, framework, gpus, zero, shard, nic_gbps), data_dir());
}

double total_params(const Scenario& s, const Layout& l) {
    const StageParams p = stage_params(s.model, l, 0);
    return p.dense + p.expert;
}
}  // namespace

TEST_CASE("HSDP memory: ZeRO-1, 2 and 3 divide what they shard by the shard group, not dp") {
    // Llama 3 8B on 64 GPUs in shard groups of 8 (one node), fp32 gradients (megatron-core-2025):
    // per parameter 2 B of weights, 4 B of gradients and 12 B of Adam state (fp32 master and two
    // moments), each divided by 8 from the stage that shards it on, as the ZeRO paper's
    // 4 + 12/N, 2 + 14/N and 16/N forms with N the shard group.
    for (const std::int64_t zero : {1, 2, 3}) {
        CAPTURE(zero);
        const Scenario s = hsdp("llama3-8b", "megatron-core-2025", 64, zero, 8);
        const Layout l = resolve_layout(s, s.layout);
        REQUIRE(l.shard_dp() == 8);
        REQUIRE(l.dp_replicas() == 8);
        const double n = total_params(s, l);
        const StageMemory m = estimate_memory(s, l).stages.front();
        CHECK(m.weights.value() == doctest::Approx(n * 2 / (zero >= 3 ? 8.0 : 1.0)).epsilon(1e-12));
        CHECK(m.gradients.value() == doctest::Approx(n * 4 / (zero >= 2 ? 8.0 : 1.0)).epsilon(1e-12));
        CHECK(m.optimizer.value() == doctest::Approx(n * 12 / 8.0).epsilon(1e-12));
    }
}

TEST_CASE("shard_group = dp is today's ZeRO: the same groups, memory, plan and step time to the bit") {
    for (const char* framework : {"torchtitan-2024", "megatron-core-2025"})
        for (const std::int64_t zero : {1, 3}) {
            CAPTURE(framework);
            CAPTURE(zero);
            const Scenario plain = hsdp("llama3-8b", framework, 64, zero, 0);
            const Scenario same = hsdp("llama3-8b", framework, 64, zero, 64);
            const Layout a = resolve_layout(plain, plain.layout), b = resolve_layout(same, same.layout);
            CHECK(b.dp_replicas() == 1);
            CHECK(place_group(b, {ParallelDim::DP, ParallelDim::CP}, DpPart::Shard).gpus ==
                  place_group(a, {ParallelDim::DP, ParallelDim::CP}).gpus);
            CHECK(estimate_memory(plain, a).peak.value() == estimate_memory(same, b).peak.value());
            const StepContext ca(plain), cb(same);
            const StepResult ra = estimate(ca, a, estimate_memory(plain, a, ca.traits()));
            const StepResult rb = estimate(cb, b, estimate_memory(same, b, cb.traits()));
            CHECK(ra.step_time_s == rb.step_time_s);
            CHECK(simulate(ca, a).result.step_time_s == simulate(cb, b).result.step_time_s);
        }
}

TEST_CASE("HSDP groups: a shard group of 8 data-parallel ranks is one node, its replicas one rank per node") {
    const Scenario s = hsdp("llama3-8b", "torchtitan-2024", 64, 3, 8);
    const Layout l = resolve_layout(s, s.layout);
    const GroupPlacement shard = place_group(l, {ParallelDim::DP, ParallelDim::CP}, DpPart::Shard);
    const GroupPlacement replicas = place_group(l, {ParallelDim::DP}, DpPart::Replicas);
    CHECK(shard.gpus == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(shard.concurrent_groups == 8);
    CHECK(replicas.gpus == std::vector<std::int64_t>{0, 8, 16, 24, 32, 40, 48, 56});
    CHECK(replicas.concurrent_groups == 8);
    const StepContext ctx(s);
    const LayoutGroups& g = ctx.groups(l);
    CHECK(g.dp_dense.ranks == 8);
    CHECK(g.dp_dense.domains == 1);  // NVLink only
    CHECK(g.dp_replicas.ranks == 8);
    CHECK(g.dp_replicas.domains == 8);
}

namespace {
// One HSDP layout's context, groups and the collective model's price of an op on a group.
struct Priced {
    Scenario s;
    StepContext ctx;
    Layout l;
    const LayoutGroups& g;
    explicit Priced(const Scenario& scenario)
        : s(scenario), ctx(scenario), l(resolve_layout(scenario, scenario.layout)), g(ctx.groups(l)) {}
    double cost(CollectiveOp op, double bytes, const GroupShape& group) const {
        return ctx.network().cost(op, Bytes(bytes), group).time.value();
    }
    // Dense parameters of the transformer layers, and of the stage's other layers (embedding,
    // output layer, final norm).
    double layer_params() const {
        double layers = 0;
        for (std::int64_t i = 0; i < s.model.layers; ++i) layers += layer_params_per_gpu(s.model, l, i).dense;
        return layers;
    }
    double outside_layers() const { return stage_params(s.model, l, 0).dense - layer_params(); }
};
}  // namespace

TEST_CASE("HSDP communication per layer and step against the closed form") {
    // Per layer of N parameters (per GPU before sharding) in shard groups of S ranks: the forward
    // gathers 2N bytes and the backward gathers 2N and reduce-scatters N x grad bytes in the shard
    // group; the gradient shard, N x grad bytes / S, is all-reduced across the dp / S replicas.
    const double grad = 4;  // fp32 gradients: torchtitan's reduce_dtype, Megatron-LM's main_grad
    SUBCASE("FSDP2 (torchtitan): the replicas' all-reduce runs in every microbatch's backward") {
        const Priced p(hsdp("llama3-8b", "torchtitan-2024", 64, 3, 8));
        const double n = layer_params_per_gpu(p.s.model, p.l, 0).total();
        const LayerCost c = layer_cost(p.ctx.costs(), p.l, p.g, 0);
        CHECK(c.forward.zero3 == doctest::Approx(p.cost(CollectiveOp::AllGather, 2 * n, p.g.dp_dense)).epsilon(1e-12));
        CHECK(c.backward.zero3 == doctest::Approx(p.cost(CollectiveOp::AllGather, 2 * n, p.g.dp_dense) +
                                                  p.cost(CollectiveOp::ReduceScatter, grad * n, p.g.dp_dense) +
                                                  p.cost(CollectiveOp::AllReduce, grad * n / 8, p.g.dp_replicas))
                                      .epsilon(1e-12));
        // The layers' gradients are done inside the backward: the stage's reduction after the
        // last microbatch keeps only the embedding and output layer (and their replicas' share).
        const double outside = p.outside_layers();
        CHECK(plan_step(p.ctx, p.l).stages.front().chunks.front().dp_reduce ==
              doctest::Approx(dp_reduce(p.ctx.costs(), p.l, p.g.dp_dense, outside) +
                              p.cost(CollectiveOp::AllReduce, grad * outside / 8, p.g.dp_replicas))
                  .epsilon(1e-12));
    }
    SUBCASE("Megatron-Core distributed optimizer instances (ZeRO-1): reduce-scatter and gather in the instance, one all-reduce across") {
        const Priced p(hsdp("llama3-8b", "megatron-core-2025", 64, 1, 8));
        const double n = total_params(p.s, p.l);
        const StagePlan stage = plan_step(p.ctx, p.l).stages.front();
        CHECK(stage.chunks.front().dp_reduce == doctest::Approx(p.cost(CollectiveOp::ReduceScatter, grad * n, p.g.dp_dense) +
                                                                p.cost(CollectiveOp::AllReduce, grad * n / 8, p.g.dp_replicas))
                                                    .epsilon(1e-12));
        CHECK(stage.param_gather == doctest::Approx(p.cost(CollectiveOp::AllGather, 2 * n, p.g.dp_dense)).epsilon(1e-12));
    }
    SUBCASE("Megatron-FSDP (ZeRO-3): the replicas' all-reduce once per step, after the last microbatch") {
        const Priced p(hsdp("llama3-8b", "megatron-core-2025", 64, 3, 8));
        const double n = layer_params_per_gpu(p.s.model, p.l, 0).total();
        const LayerCost c = layer_cost(p.ctx.costs(), p.l, p.g, 0);
        CHECK(c.backward.zero3 == doctest::Approx(p.cost(CollectiveOp::AllGather, 2 * n, p.g.dp_dense) +
                                                  p.cost(CollectiveOp::ReduceScatter, grad * n, p.g.dp_dense))
                                      .epsilon(1e-12));
        const double all = stage_params(p.s.model, p.l, 0).dense;
        CHECK(plan_step(p.ctx, p.l).stages.front().chunks.front().dp_reduce ==
              doctest::Approx(dp_reduce(p.ctx.costs(), p.l, p.g.dp_dense, p.outside_layers()) +
                              p.cost(CollectiveOp::AllReduce, grad * all / 8, p.g.dp_replicas))
                  .epsilon(1e-12));
    }
}

TEST_CASE("shard_group: bad values are input errors naming /layout/shard_group") {
    const auto rejects = [](json doc, const char* rule) {
        CAPTURE(doc.dump());
        try {
            parse_scenario(doc, data_dir());
            FAIL("accepted");
        } catch (const InputError& e) {
            CHECK(e.path() == "/layout/shard_group");
            CHECK(std::string(e.what()).find(rule) != std::string::npos);
        }
    };
    rejects(hsdp_doc("llama3-8b", "torchtitan-2024", 64, 3, 12), "must divide dp");
    rejects(hsdp_doc("llama3-8b", "torchtitan-2024", 64, 0, 8), "needs ZeRO stage 1-3");
    json zero = hsdp_doc("llama3-8b", "torchtitan-2024", 64, 3, 0);
    zero["layout"]["shard_group"] = 0;
    CHECK_THROWS_AS(parse_scenario(zero, data_dir()), InputError);
    // Mixtral's 8 experts over ep 8 leave one expert-data-parallel rank per 8 GPUs: 8 GPUs in
    // shard groups of 4 would need 2 replicas of it.
    json moe = {{"model", "mixtral-8x7b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 8}}},
                {"training", {{"seq_len", 4096}, {"global_batch", 16}, {"precision", "bf16"}, {"framework", "megatron-core-2025"}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"cp", 1}, {"dp", 8}, {"ep", 8}, {"expert_tp", 1}, {"zero_stage", 1}, {"shard_group", 4}}}};
    rejects(moe, "expert-data-parallel ranks");
}

TEST_CASE("the planner shards in a node where the network between nodes is slow, and over every rank where a node's shard does not fit") {
    PlanOptions o;
    o.simulate_top = 3;
    o.threads = 2;
    const auto best = [&](const char* model, double nic_gbps) {
        json doc = hsdp_doc(model, "megatron-core-2025", 64, 3, 0, nic_gbps);
        doc["training"]["global_batch"] = 512;  // up to 8 microbatches per step
        doc["layout"].erase("microbatch");
        doc["layout"]["optimizer_offload"] = false;  // offloaded Adam state would let a node's 70B shard fit
        Scenario s = parse_scenario(doc, data_dir());
        Planner p(s, o, make_step_evaluator);
        const auto plans = p.finish(p.screen({0, 1}));
        REQUIRE(!plans.empty());
        REQUIRE(plans.front().simulated.fits);
        return plans.front().layout;
    };
    // Megatron-FSDP, Llama 3 8B: 8e9 x 18 B / 8 = 18 GB of states per GPU in a node's shard. At
    // 25 Gb/s per GPU between nodes, full sharding sends every microbatch's gathers (2 + 2 B per
    // parameter) and reduce-scatter (4 B) across nodes; in shard groups of a node the gathers stay
    // on NVLink and only the shard's all-reduce, once per step, crosses nodes.
    const Layout slow = best("llama3-8b", 25);
    CHECK(slow.dp_replicas() > 1);
    CHECK(slow.shard_dp() <= 8);
    // Llama 3 70B: 70e9 x 18 B / 8 = 158 GB per GPU in a node's shard does not fit 80 GB.
    const Layout big = best("llama3-70b", 25);
    CHECK(big.dp_replicas() == 1);
}

TEST_CASE("HSDP exports: each framework's flag, or a note where it has none") {
    const Scenario s = hsdp("llama3-8b", "torchtitan-2024", 64, 3, 8);
    Layout l = resolve_layout(s, s.layout);
    const Emitted titan = emit_plan(EmitFormat::Torchtitan, s, l);
    CHECK(titan.settings["parallelism"]["data_parallel_shard_degree"] == 8);
    CHECK(titan.settings["parallelism"]["data_parallel_replicate_degree"] == 8);
    const Emitted megatron = emit_plan(EmitFormat::Megatron, s, l);
    CHECK(megatron.text.find("--num-distributed-optimizer-instances 8") != std::string::npos);
    CHECK(megatron.text.find("--use-megatron-fsdp") != std::string::npos);  // torch FSDP2 under Megatron has no replicas
    CHECK(json::parse(emit_plan(EmitFormat::DeepSpeed, s, l).text)["zero_optimization"]["mics_shard_size"] == 8);
    l.zero_stage = 1;
    const Emitted ds = emit_plan(EmitFormat::DeepSpeed, s, l);
    CHECK_FALSE(json::parse(ds.text)["zero_optimization"].contains("mics_shard_size"));
    bool noted = false;
    for (const auto& n : ds.notes) noted = noted || n.find("MiCS (mics_shard_size) is ZeRO-3 only") != std::string::npos;
    CHECK(noted);
    CHECK(emit_plan(EmitFormat::Megatron, s, l).text.find("--num-distributed-optimizer-instances 8") != std::string::npos);
}
