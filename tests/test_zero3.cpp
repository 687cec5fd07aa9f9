// ZeRO-3 / FSDP as the frameworks run it (README "ZeRO-3 and FSDP"): DeepSpeed's per-module
// gathers under its live-parameter cap and device-wide synchronisation, FSDP's per-block prefetch
// hidden as far as the compute under it lasts, the re-gather full recompute costs DeepSpeed, one
// gradient reduction per microbatch and none after it, the buffers each framework holds; and
// validate listing a run that cannot fit with what it needs while it predicts the others.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "cost/layer_costs.hpp"
#include "memory/memory_model.hpp"
#include "memory/stage_params.hpp"
#include "profile/profile.hpp"
#include "sim/simulate.hpp"
#include "sim/stage_plan.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "validate/published_runs.hpp"

using namespace sextant;
using json = nlohmann::json;

namespace {
// Data parallelism only, ZeRO-3, one microbatch of the whole per-GPU batch, full recompute: the
// setting of the 2021 ZeRO-3 comparisons, on A100s with one 200 Gb/s NIC per GPU.
Scenario zero3_dp(const char* framework, const char* model, std::int64_t gpus, std::int64_t batch, const char* precision = "fp16",
                  double nic_gbps = 200) {
    json doc = {{"model", model},
                {"cluster", {{"gpu", "A100-SXM4-80GB"}, {"gpus", gpus}, {"nic_gbps_per_gpu", nic_gbps}}},
                {"seq_len", 2048},
                {"global_batch", batch},
                {"precision", precision},
                {"framework", framework},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", gpus}, {"microbatch", batch / gpus}, {"zero_stage", 3}, {"recompute", "full"}}}};
    return parse_scenario(doc, data_dir());
}

std::size_t at(Cost c) { return static_cast<std::size_t>(c); }
}  // namespace

TEST_CASE("DeepSpeed's per-module prefetch under stage3_max_live_parameters (1e9), and its re-gather after recompute") {
    // A GPT layer's modules: QKV 3h^2, output h^2, MLP 4h^2 and 4h^2 parameters. The coordinator
    // prefetches the next module only after a module under the cap.
    const double cap = 1e9;
    SUBCASE("530B (h 20480): only the first MLP projection follows a module under the cap") {
        const Scenario s = zero3_dp("deepspeed-2021", "mt-nlg-530b", 8, 8);
        const Layout l = resolve_layout(s, s.layout);
        const double h2 = 20480.0 * 20480.0;
        CHECK(zero3_prefetched_share(s.model, l, 0, cap) == doctest::Approx(4.0 / 12.0).epsilon(1e-3));
        // Output projection and the prefetched first MLP projection are the most gathered at once.
        CHECK(zero3_gathered_peak(s.model, l, 0, cap) == doctest::Approx(5 * h2).epsilon(1e-9));
        // Backward after recompute: the second MLP projection is reused at once, the first after
        // 2 x 4h^2 > 1e9 parameters, so it and everything before it are gathered again.
        CHECK(regathered_after_recompute(s.model, l, 0, cap) == doctest::Approx(8 * h2).epsilon(1e-9));
    }
    SUBCASE("175B (h 12288): every module is under the cap, so every one is prefetched") {
        const Scenario s = zero3_dp("deepspeed-2021", "gpt3-175b", 8, 8);
        const Layout l = resolve_layout(s, s.layout);
        CHECK(zero3_prefetched_share(s.model, l, 0, cap) == doctest::Approx(1.0));
        CHECK(regathered_after_recompute(s.model, l, 0, cap) == doctest::Approx(8 * 12288.0 * 12288.0).epsilon(1e-9));
    }
    SUBCASE("FSDP (no cap) prefetches whole blocks and gathers nothing again") {
        const Scenario s = zero3_dp("torchtitan-2024", "gpt3-175b", 8, 8, "bf16");
        const Layout l = resolve_layout(s, s.layout);
        CHECK(zero3_prefetched_share(s.model, l, 0, 0) == doctest::Approx(1.0));
        CHECK(zero3_gathered_peak(s.model, l, 0, 0) == doctest::Approx(2 * layer_params_per_gpu(s.model, l, 0).total()));
        const StepContext ctx(s);
        CHECK_FALSE(ctx.runtime().zero3.regather_for_recompute);
    }
}

TEST_CASE("ZeRO-3 layer costs: gathers forward and backward, DeepSpeed's re-gather, the reduce-scatter in the gradient dtype") {
    // MT-NLG 530B (GPT: LayerNorm, biases), h = 20480, on 256 GPUs. DeepSpeed from September 2021
    // (PR #1188, deepspeed-2022 here) gathers a module's parameters in one all-gather; before it
    // (deepspeed-2021) one all-gather per tensor, each after a device synchronisation and a host
    // launch that copies every rank's chunk out of PyTorch's flat buffer: 380 us on the 8 GPUs of
    // DeepSpeed issue #1069, 348 us + 4 us a rank in general, so none overlaps the compute.
    for (const char* framework : {"deepspeed-2022", "deepspeed-2021"}) {
        CAPTURE(framework);
        const Scenario s = zero3_dp(framework, "mt-nlg-530b", 256, 256);
        const StepContext ctx(s);
        const Layout l = resolve_layout(s, s.layout);
        const LayoutGroups& g = ctx.groups(l);
        const double block = layer_params_per_gpu(s.model, l, 0).total();
        const double regathered = regathered_after_recompute(s.model, l, 0, 1e9);
        const auto cost = [&](CollectiveOp op, double bytes) { return ctx.network().cost(op, Bytes(bytes), g.dp_dense).time.value(); };
        const LayerCost c = layer_cost(ctx.costs(), l, g, 0);
        // The layer's 12 tensors: two LayerNorms' weights and biases; the QKV, output and two MLP
        // projections' weights and biases.
        const double h = 20480;
        const double tensors[] = {h, h, h, h, 3 * h * h, 3 * h, h * h, h, 4 * h * h, 4 * h, 4 * h * h, h};
        const Zero3Traits& z = ctx.runtime().zero3;
        const double host = z.per_tensor_gather_host_s + static_cast<double>(g.dp_dense.ranks) * z.gather_copy_per_rank_s;
        if (std::string(framework) == "deepspeed-2021") {
            CHECK(z.per_tensor_gather_host_s + 8 * z.gather_copy_per_rank_s == doctest::Approx(380e-6));  // #1069's node
            CHECK(host == doctest::Approx(348e-6 + 256 * 4e-6));
        }
        double per_tensor = 0, sum = 0;
        for (const double t : tensors) {
            per_tensor += host + cost(CollectiveOp::AllGather, 2 * t);
            sum += t;
        }
        REQUIRE(sum == doctest::Approx(block).epsilon(1e-12));
        const bool by_tensor = std::string(framework) == "deepspeed-2021";
        const double gather = by_tensor ? per_tensor : cost(CollectiveOp::AllGather, 2 * block);
        const double regather = by_tensor ? per_tensor * regathered / block : cost(CollectiveOp::AllGather, 2 * regathered);
        CHECK(c.forward.zero3 == doctest::Approx(gather).epsilon(1e-12));
        // 16-bit gradients, 2 bytes each (DeepSpeed reduces in the training dtype).
        CHECK(c.backward.zero3 == doctest::Approx(gather + regather + cost(CollectiveOp::ReduceScatter, 2 * block)).epsilon(1e-12));
        // Grouped: two thirds of the gathers are not prefetched, the device waits for them. Per
        // tensor: the device waits for every one.
        CHECK(c.forward.zero3_waited == doctest::Approx(c.forward.zero3 * (by_tensor ? 1.0 : 8.0 / 12.0)).epsilon(1e-3));
        // Eight of the twelve tensors are tiny: their latency and launch, not their bytes, set their time.
        if (by_tensor) CHECK(per_tensor > cost(CollectiveOp::AllGather, 2 * block) + 8 * host);
    }
}

TEST_CASE("the plan exposes what prefetch cannot hide: DeepSpeed's waited gathers, FSDP's gathers beyond the block's compute") {
    for (const char* framework : {"deepspeed-2021", "torchtitan-2024"}) {
        CAPTURE(framework);
        for (const std::int64_t gpus : {64, 1024}) {
            CAPTURE(gpus);
            const Scenario s = zero3_dp(framework, "mt-nlg-530b", gpus, 1024, "bf16");
            const StepContext ctx(s);
            const Layout l = resolve_layout(s, s.layout);
            const LayerCost c = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
            const StepPlan plan = plan_step(ctx, l);
            const ChunkPlan& chunk = plan.stages.front().chunks.front();
            const double layers = static_cast<double>(s.model.layers);
            for (const auto& [phase, parts] : {std::pair{c.forward, chunk.forward_parts}, std::pair{c.backward, chunk.backward_parts}}) {
                const double prefetched = phase.zero3 - phase.zero3_waited;
                CHECK(parts[at(Cost::ZeRO)] == doctest::Approx(layers * (phase.zero3_waited + std::max(0.0, prefetched - phase.compute()))));
            }
        }
    }
}

TEST_CASE("ZeRO-3 reduces each layer's gradient once per microbatch and only the embedding and output layer after the backward") {
    const Scenario s = zero3_dp("torchtitan-2024", "gpt3-175b", 64, 256, "bf16");
    const StepContext ctx(s);
    Layout l = resolve_layout(s, s.layout);
    const StageParams all = stage_params(s.model, l, 0);
    double layers = 0;
    for (std::int64_t i = 0; i < s.model.layers; ++i) layers += layer_params_per_gpu(s.model, l, i).dense;
    const StepPlan plan = plan_step(ctx, l);
    CHECK(plan.stages.front().chunks.front().dp_reduce ==
          doctest::Approx(dp_reduce(ctx.costs(), l, ctx.groups(l).dp_dense, all.dense - layers)).epsilon(1e-12));
    // ZeRO-1 keeps the whole stage's reduction after the last microbatch.
    l.zero_stage = 1;
    CHECK(plan_step(ctx, l).stages.front().chunks.front().dp_reduce ==
          doctest::Approx(dp_reduce(ctx.costs(), l, ctx.groups(l).dp_dense, all.dense)).epsilon(1e-12));
}

TEST_CASE("data-parallel ZeRO-3 at a fixed batch: doubling the GPUs halves the compute, not the gathers, so a comm-bound step stops falling") {
    // GPT-3 175B, batch 1,024 sequences of 2,048 tokens over 256, 512 and 1,024 A100s: each GPU's
    // microbatch halves (4, 2, 1) while every GPU still gathers every parameter each pass. Fabrics:
    // 50 Gb/s per GPU (four 100 Gb/s NICs per 8-GPU node, as AWS p4d of 2021), 100, and 200 Gb/s
    // per GPU (a DGX A100 SuperPOD, Selene's fabric).
    struct Point {
        double step, compute, zero3_per_layer, forward_gathers, compute_per_layer, waited_per_layer;
    };
    const auto sweep = [](const char* framework, double nic_gbps) {
        std::vector<Point> points;
        for (const std::int64_t gpus : {256, 512, 1024}) {
            const Scenario s = zero3_dp(framework, "gpt3-175b", gpus, 1024, "fp16", nic_gbps);
            const StepContext ctx(s);
            const Layout l = resolve_layout(s, s.layout);
            const LayerCost c = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
            const StepResult r = estimate(ctx, l, estimate_memory(s, l, ctx.traits()));
            points.push_back({r.step_time_s, r.breakdown.compute + r.breakdown.recompute, c.forward.zero3 + c.backward.zero3,
                              c.forward.zero3, c.forward.compute() + c.backward.compute(), c.forward.zero3_waited + c.backward.zero3_waited});
        }
        return points;
    };
    for (const double nic : {50.0, 200.0}) {
        CAPTURE(nic);
        const std::vector<Point> grouped = sweep("deepspeed-2022", nic), by_tensor = sweep("deepspeed-2021", nic);
        for (std::size_t i = 1; i < grouped.size(); ++i) {
            CAPTURE(i);
            CHECK(grouped[i].compute / grouped[i - 1].compute == doctest::Approx(0.5).epsilon(0.1));
            // One gather per module: per GPU the ring moves (N - 1)/N of the same bytes, so the
            // communication stays.
            CHECK(grouped[i].zero3_per_layer == doctest::Approx(grouped[i - 1].zero3_per_layer).epsilon(0.1));
            // One per tensor: each of the layer's 12 forward gathers pays the ring's latency,
            // (N - nodes) NVLink steps and (nodes - 1) network steps (NCCL's count), and copies
            // N chunks out of the gathered buffer, 4 us each: both grow with N. From 512 to 1,024
            // GPUs by at least 448 NVLink and 64 network steps (LL's latency factor 1 is the least
            // of the protocols') and 512 copies a gather.
            if (i == 2) {
                const CommCalibration k = CalibrationProfile::for_gpu(zero3_dp("deepspeed-2021", "gpt3-175b", 8, 8).cluster.gpu).comm();
                const double growth = (448 * k.nvlink_latency_us + 64 * k.network_latency_us) * 1e-6 + 512 * 4e-6;
                CHECK(by_tensor[i].forward_gathers - by_tensor[i - 1].forward_gathers >= 12 * growth * (1 - 1e-9));
            }
        }
        // The latency a step pays for them is microbatches x gathers x ring latency: the
        // microbatches halve as the latency doubles, so that part of the step stays. Where the
        // gathers outlast the compute the step stops halving.
        CHECK(by_tensor[2].zero3_per_layer > by_tensor[2].compute_per_layer);
        CHECK(by_tensor[2].step > grouped[2].step * 1.2);
    }
    // Nothing overlaps the per-tensor gathers: the step is the compute plus every gather of its
    // 96 layers (the reduce-scatters run on their own stream; the optimizer and the embedding and
    // output layers are the rest). The compute halves as the GPUs double, the gathers' latency part
    // stays, so the step falls by less and less.
    const std::vector<Point> slow = sweep("deepspeed-2021", 50.0), fast = sweep("deepspeed-2021", 200.0);
    for (const auto* sweep_points : {&slow, &fast})
        for (const Point& p : *sweep_points) CHECK(p.step == doctest::Approx(p.compute + 96 * p.waited_per_layer).epsilon(0.03));
    CHECK(slow[2].step / slow[1].step > 0.85);
    // 200 Gb/s: one gather per module still halves the step at 1,024 GPUs. One per tensor stays
    // flat from 512 to 1,024, as the 2021 runs measured on such a fabric did: the copies out of
    // each gather double as the compute halves (96 layers x 12 gathers x 512 more copies x 4 us,
    // 2.4 s more a pass). From 256 to 512 it still falls, by 0.70x.
    const std::vector<Point> fast_grouped = sweep("deepspeed-2022", 200.0);
    CHECK(fast_grouped[2].step / fast_grouped[1].step < 0.6);
    CHECK(fast[2].step / fast[1].step == doctest::Approx(1.0).epsilon(0.05));
    CHECK(fast[1].step / fast[0].step < 0.8);
}

TEST_CASE("FSDP2 hides a block's gathers under its compute where the compute covers them") {
    // torchtitan, Llama 3 8B, 8,192-token sequences, local batch 2 on 64 H100s (400 Gb/s per GPU).
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 64}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "bf16"}, {"framework", "torchtitan-2024"}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"microbatch", 2}, {"zero_stage", 3}, {"recompute", "selective"}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const LayerCost c = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
    REQUIRE(c.forward.zero3 > 0);
    CHECK(c.forward.zero3 < c.forward.compute());
    CHECK(c.backward.zero3 < c.backward.compute());
    const ChunkPlan& chunk = plan_step(ctx, l).stages.front().chunks.front();
    CHECK(chunk.forward_parts[at(Cost::ZeRO)] == 0.0);
    CHECK(chunk.backward_parts[at(Cost::ZeRO)] == 0.0);
}

TEST_CASE("ZeRO-3 buffers: DeepSpeed holds a module and its prefetched successor and a 16-bit gradient bucket, FSDP two blocks") {
    // MT-NLG 530B shape (h 20480): DeepSpeed's peak is the output projection with the prefetched
    // first MLP projection (5 h^2 parameters, 16-bit) and the largest module's gradient (4 h^2,
    // fp16); FSDP holds two whole blocks (12 h^2 each, plus biases and norms) and one block's
    // gradient.
    const double h2 = 20480.0 * 20480.0;
    const Scenario ds = zero3_dp("deepspeed-2021", "mt-nlg-530b", 8, 8);
    const Layout l = resolve_layout(ds, ds.layout);
    const double expected = 5 * h2 * 2 + 4 * h2 * 2;
    const StageMemory m = estimate_memory(ds, l).stages.front();
    CHECK(m.buffers.value() >= expected * (1 - 1e-9));  // the logits may be larger still
    const RuntimeTraits traits = runtime_traits(ds);
    CHECK(zero3_buffer_bytes(ds.model, l, traits, 0) == doctest::Approx(expected).epsilon(1e-9));
    const Scenario titan = zero3_dp("torchtitan-2024", "mt-nlg-530b", 8, 8, "bf16");
    const double block = layer_params_per_gpu(titan.model, l, 0).total();
    CHECK(zero3_buffer_bytes(titan.model, l, runtime_traits(titan), 0) == doctest::Approx(block * (2 * 2 + 4)).epsilon(1e-9));
}

TEST_CASE("validate lists a run whose layout does not fit with what it needs, and predicts the others") {
    // Narayanan et al.'s 1T run squeezed onto one data-parallel replica of 40 GB A100s beside the
    // 1.7B run: the first cannot fit, the second is predicted and alone in the summary.
    json doc = load_json_file(std::filesystem::path(SEXTANT_VALIDATION_DIR) / "published-runs.json", "");
    json small, big;
    for (const auto& run : doc["runs"]) {
        if (run["id"] == "narayanan2021_t1_1.7B") small = run;
        if (run["id"] == "narayanan2021_t1_1008.0B") big = run;
    }
    big["id"] = "one_replica_on_40gb";
    big["cluster"]["gpu"] = "A100-SXM4-40GB";
    big["layout"]["dp"] = 1;
    big["cluster"]["gpus"] = big["layout"]["tp"].get<std::int64_t>() * big["layout"]["pp"].get<std::int64_t>();
    doc["runs"] = json::array({big, small});
    const auto file = std::filesystem::temp_directory_path() / "sextant-validate-refused.json";
    std::ofstream(file) << doc.dump();
    const ValidationReport r = validate_runs(file);
    std::filesystem::remove(file);
    REQUIRE(r.runs.size() == 2);
    CHECK(r.failed == 1);
    REQUIRE(r.runs[0].error);
    CHECK(std::string(r.runs[0].error->what()).find("fits in memory (with the defaults for them, stage") != std::string::npos);
    CHECK_FALSE(r.runs[1].error);
    CHECK(r.mape_pct == doctest::Approx(std::fabs(r.runs[1].error_pct)));
    CHECK_THROWS_AS(throw_first_error(r), InputError);  // the exit code says a run failed
}

TEST_CASE("a rank's parameter tensors (what DeepSpeed gathers one by one) add up to its share of the layer, for every layer kind") {
    struct Case {
        const char* model;
        std::int64_t tp, ep, etp;
    };
    // Dense, grouped-query, latent attention with shared experts, hybrid Mamba with latent MoE,
    // gated delta nets; expert tensor parallelism folded inside tp.
    for (const Case c : {Case{"llama3-70b", 4, 1, 1}, Case{"mixtral-8x7b", 2, 4, 2}, Case{"deepseek-v3", 2, 8, 1},
                         Case{"nemotron-3-super-120b-a12b", 2, 8, 2}, Case{"qwen3-next-80b-a3b", 2, 16, 2}, Case{"nemotron-h-8b", 2, 1, 1}}) {
        const std::string name = c.model;
        CAPTURE(name);
        json layout = {{"tp", c.tp}, {"pp", 1}, {"dp", 64 / c.tp}, {"microbatch", 1}, {"zero_stage", 3}};
        if (c.ep > 1) {
            layout["ep"] = c.ep;
            layout["expert_tp"] = c.etp;
        }
        const json doc = {{"model", c.model},
                          {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 64}}},
                          {"training", {{"seq_len", 4096}, {"global_batch", 64}, {"precision", "bf16"}}},
                          {"layout", layout}};
        const Scenario s = parse_scenario(doc, data_dir());
        const Layout l = resolve_layout(s, s.layout);
        for (std::int64_t layer = 0; layer < s.model.layers; ++layer) {
            CAPTURE(layer);
            const std::vector<double> tensors = layer_parameter_tensors(s.model, l, layer);
            double sum = 0;
            for (const double t : tensors) sum += t;
            CHECK(sum == doctest::Approx(layer_params_per_gpu(s.model, l, layer).total()).epsilon(1e-12));
        }
    }
}
