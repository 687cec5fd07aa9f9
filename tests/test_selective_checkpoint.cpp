// What "selective" activation checkpointing costs under torchtitan's two policies (runtime
// selective_checkpoint "ops" and "layers"), against closed forms on a small Llama-shaped model:
// the activations each keeps, the FLOPs each recomputes, and the recompute time of a layer.
// Sources: pytorch/torchtitan 1ea476e9f (2024-04) and 820504e20 (2025-06), parallelize_llama.py
// (the op policy's save list and its every-other-mm rule; the layer policy's every N-th block).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "cost/layer_costs.hpp"
#include "memory/activations.hpp"
#include "memory/memory_model.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
// h = 1024, 8 query heads and 2 KV heads of 128, SwiGLU ffn 4096, 4 layers; 8 H100s, seq 2048.
constexpr double kH = 1024, kQ = 8 * 128, kKv = 2 * 128, kF = 4096, kHeads = 8, kSeq = 2048;

Scenario small(const char* recompute, std::int64_t tp = 1, const char* framework = "torchtitan-2024", json extra = json::object()) {
    json layout = {{"tp", tp}, {"pp", 1}, {"dp", 8 / tp}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", recompute},
                   {"sequence_parallel", tp > 1}};
    layout.update(extra);
    const json doc = {{"model", {{"name", "small"}, {"arch", "llama"}, {"layers", 4}, {"hidden", 1024}, {"ffn_hidden", 4096},
                                 {"heads", 8}, {"kv_heads", 2}, {"vocab", 32000}}},
                      {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                      {"seq_len", 2048},
                      {"global_batch", 8 / tp},
                      {"precision", "bf16"},
                      {"framework", framework},
                      {"layout", layout}};
    return parse_scenario(doc, data_dir());
}
}  // namespace

TEST_CASE("torchtitan's per-op policy saves wq, wv, w1, w2 and SDPA: what a layer keeps") {
    // Forward mm order wq, wk, wv, wo, w1, w3, w2: the 1st, 3rd, 5th and 7th outputs are saved.
    const auto mms = op_checkpoint_matmuls(small("selective").model, 0);
    REQUIRE(mms.size() == 7);
    const bool saved[] = {true, false, true, false, true, false, true};
    for (std::size_t i = 0; i < mms.size(); ++i) CHECK(mms[i].saved == saved[i]);
    SUBCASE("no TP: the block input, q, v, w1's and w2's outputs, SDPA's output and fp32 log-sum-exp") {
        const Scenario s = small("selective");
        const Layout l = resolve_layout(s, s.layout);
        const double per_token = 2 * kH + 2 * kQ + 2 * kKv + 2 * kF + 2 * kH + 2 * kQ + 4 * kHeads;
        CHECK(layer_activation_bytes(s, l, runtime_traits(s), 0) == doctest::Approx(kSeq * per_token).epsilon(1e-12));
    }
    SUBCASE("TP 2 with sequence parallelism: column outputs split, w2's partial sums whole, two reduce-scatter outputs kept") {
        const Scenario s = small("selective", 2);
        const Layout l = resolve_layout(s, s.layout);
        const double per_token = (2 * kH + 2 * 2 * kH) / 2 + (2 * kQ + 2 * kKv + 2 * kF + 2 * kQ + 4 * kHeads) / 2 + 2 * kH;
        CHECK(layer_activation_bytes(s, l, runtime_traits(s), 0) == doctest::Approx(kSeq * per_token).epsilon(1e-12));
    }
    SUBCASE("a layout's Megatron recompute_modules are refused under this policy (exit 2, naming the field)") {
        const Scenario s = small("selective", 1, "torchtitan-2024", {{"recompute_modules", json::array({"layernorm", "mlp"})}});
        CHECK_THROWS_WITH_AS(StepContext{s}, doctest::Contains("/layout/recompute_modules"), InputError);
    }
}

TEST_CASE("torchtitan's per-op policy recomputes wk, wo and w3 once more: hardware FLOPs and layer time") {
    const Scenario s = small("selective");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const double tokens = 8 * kSeq;
    const double recomputed = 2 * (kH * kKv + kQ * kH + kH * kF);  // per token and layer
    CHECK(hardware_flops_per_step(s, l, ctx.model_flops(), ctx.runtime()) ==
          doctest::Approx(ctx.model_flops() + tokens * 4 * recomputed).epsilon(1e-12));
    // The layer's recompute time: at least those GEMMs at the GPU's dense peak, and less than
    // full recompute without the (saved) attention core.
    const LayerCost op = layer_cost(ctx.costs(), l, ctx.groups(l), 0);
    const double peak = s.cluster.gpu.peak_tflops(Precision::Bf16) * 1e12;
    CHECK(op.recompute >= kSeq * recomputed / peak);
    CHECK(op.recompute < op.forward.compute() - op.forward.attention);
    CHECK(op.backward.compute() == doctest::Approx(layer_cost(ctx.costs(), resolve_layout(small("none"), small("none").layout),
                                                              ctx.groups(l), 0).backward.compute() + op.recompute));
}

TEST_CASE("torchtitan's layer policy: every N-th block checkpointed whole, 1/N of full recompute per layer") {
    const Scenario s = small("selective");
    const StepContext ctx(s);
    const Layout l = resolve_layout(s, s.layout);
    const Scenario none_s = small("none"), full_s = small("full");
    const Layout none = resolve_layout(none_s, none_s.layout), full = resolve_layout(full_s, full_s.layout);
    for (const std::int64_t n : {2, 4}) {
        CAPTURE(n);
        RuntimeProfile runtime = ctx.runtime();
        runtime.selective_checkpoint = SelectiveCheckpoint::Layers;
        runtime.selective_checkpoint_interval = n;
        const CostContext costs{ctx.scenario(), ctx.profile(), runtime, ctx.network()};
        const LayerCost c = layer_cost(costs, l, ctx.groups(l), 0);
        const LayerCost f = layer_cost(costs, full, ctx.groups(full), 0);
        CHECK(c.recompute == doctest::Approx(f.recompute / double(n)).epsilon(1e-12));
        CHECK(hardware_flops_per_step(s, l, ctx.model_flops(), runtime) ==
              doctest::Approx(ctx.model_flops() * (1 + 1.0 / (3.0 * double(n)))).epsilon(1e-12));
        // Memory: one block in n keeps its input (2 h bytes a token), the others everything.
        RuntimeTraits traits = runtime_traits(s, runtime);
        const double kept = layer_activation_bytes(s, none, traits, 0);
        CHECK(layer_activation_bytes(s, l, traits, 0) == doctest::Approx((kSeq * 2 * kH + double(n - 1) * kept) / double(n)).epsilon(1e-12));
    }
}

TEST_CASE("the two torchtitan policies cost about half a forward each on Llama 3 8B (the arithmetic behind one meaning)") {
    // Per token and layer, h = 4096, 8 KV heads of 128, ffn 14336, s = 8192 (causal attention,
    // FlashAttention's count 2 h s): the op policy reruns wk, wo, w3 = 31.7% of the forward FLOPs
    // (plus memory-bound ops), the layer policy at N = 2 half of it.
    const double h = 4096, kv = 1024, f = 14336, s = 8192;
    const double forward = 2 * (h * h + 2 * h * kv + h * h + 3 * h * f) + 2 * h * s;
    const double op = 2 * (h * kv + h * h + h * f);
    CHECK(op / forward == doctest::Approx(0.317).epsilon(0.005));
    const Scenario llama = [] {
        const json doc = {{"model", "llama3-8b"},
                          {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                          {"seq_len", 8192},
                          {"global_batch", 8},
                          {"framework", "torchtitan-2024"},
                          {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "selective"}}}};
        return parse_scenario(doc, data_dir());
    }();
    const StepContext ctx(llama);
    const Layout l = resolve_layout(llama, llama.layout);
    const double extra = hardware_flops_per_step(llama, l, ctx.model_flops(), ctx.runtime()) - ctx.model_flops();
    CHECK(extra == doctest::Approx(8 * s * 32 * op).epsilon(1e-12));
}

TEST_CASE("torchtitan Llama 2 70B on 64 A100 80GB: the op policy fits local batch 1 and not 2 (performance.md, footnote 1)") {
    // "the 70B training with local batch size 2 will cause an OOM error when selective activation
    // checkpointing is used" (pytorch/torchtitan docs/performance.md at 1ea476e9f; FSDP over 64
    // GPUs, seq 4096).
    for (const std::int64_t mb : {1, 2}) {
        CAPTURE(mb);
        const json doc = {{"model", {{"name", "llama2-70b"}, {"arch", "llama"}, {"layers", 80}, {"hidden", 8192}, {"ffn_hidden", 28672},
                                     {"heads", 64}, {"kv_heads", 8}, {"vocab", 32000}}},
                          {"cluster", {{"gpu", "A100-SXM4-80GB"}, {"gpus", 64}, {"nic_gbps_per_gpu", 200}}},
                          {"seq_len", 4096},
                          {"global_batch", 64 * mb},
                          {"framework", "torchtitan-2024"},
                          {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"microbatch", mb}, {"zero_stage", 3}, {"recompute", "selective"}}}};
        const Scenario s = parse_scenario(doc, data_dir());
        CHECK(estimate_memory(s, resolve_layout(s, s.layout)).fits() == (mb == 1));
    }
}
