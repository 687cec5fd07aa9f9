// The memory model against closed forms (ZeRO, Korthikanti et al. Table 2, pipeline schedules)
// and the published Figure 1/7 readings of Korthikanti et al.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/memory_model.hpp"
#include "memory/stage_params.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"

using namespace sextant;

namespace {
// A GPT model of the Korthikanti et al. setup: A100s, s = 2048, Megatron-LM 2022 (no flash
// attention, dropout on), TP 8.
Scenario korthikanti(const char* model, std::int64_t pp, std::int64_t microbatch, std::int64_t batch,
                     const char* recompute, bool sp, std::int64_t vp = 1) {
    json doc = {{"model", model},
                {"cluster", {{"gpu", "A100-SXM4-80GB"}, {"gpus", 8 * pp}, {"nic_gbps_per_gpu", 200}}},
                {"seq_len", 2048},
                {"global_batch", batch},
                {"precision", "fp16"},
                {"framework", "megatron-lm-2022"},
                {"layout", {{"tp", 8}, {"pp", pp}, {"dp", 1}, {"microbatch", microbatch}, {"vp", vp},
                            {"sequence_parallel", sp}, {"recompute", recompute}}}};
    return parse_scenario(doc, data_dir());
}

double table2(const Scenario& s, const Layout& l) {
    // Korthikanti et al. Table 2, bytes per layer: s b h (a + b 5as/h) with the row's a and b.
    const double S = static_cast<double>(s.training.seq_len), B = static_cast<double>(l.microbatch);
    const double h = static_cast<double>(s.model.hidden), a = static_cast<double>(s.model.heads);
    const double t = static_cast<double>(l.tp);
    const double scores = 5 * a * S / (h * t);
    if (l.recompute == Recompute::Full) return S * B * h * 2;
    if (l.recompute == Recompute::Selective) return S * B * h * (l.sequence_parallel ? 34 / t : 10 + 24 / t);
    return S * B * h * (l.sequence_parallel ? 34 / t + scores : 10 + 24 / t + scores);
}

Scenario zero_scenario(int zero_stage) {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 64}, {"nic_gbps_per_gpu", 400}}},
                {"training", {{"seq_len", 4096}, {"global_batch", 64}, {"optimizer", {{"grad_dtype", "bf16"}}}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"zero_stage", zero_stage}}}};
    return parse_scenario(doc, data_dir());
}
}  // namespace

TEST_CASE("ZeRO stages 0-3: 16, 4 + 12/N, 2 + 14/N and 16/N bytes per parameter") {
    // The ZeRO paper's mixed-precision Adam: fp16 weights (2) and gradients (2), and 12 bytes of
    // fp32 master weights and moments; N = 64 data-parallel ranks.
    const double N = 64;
    const double expected[] = {16, 4 + 12 / N, 2 + 14 / N, 16 / N};
    for (int z = 0; z <= 3; ++z) {
        Scenario s = zero_scenario(z);
        Layout l = resolve_layout(s, s.layout);
        MemoryReport r = estimate_memory(s, l);
        const StageMemory& m = r.stages.front();
        const double params = stage_params(s.model, l, 0).total();
        CHECK((m.weights + m.gradients + m.optimizer).value() / params == doctest::Approx(expected[z]).epsilon(1e-12));
    }
}

TEST_CASE("Megatron's fp32 gradient accumulation: 18 bytes per parameter without ZeRO") {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                {"seq_len", 4096}, {"global_batch", 8}, {"layout", {{"tp", 1}, {"dp", 8}}}};
    Scenario s = parse_scenario(doc, data_dir());
    Layout l = resolve_layout(s, s.layout);
    const StageMemory m = estimate_memory(s, l).stages.front();
    CHECK((m.weights + m.gradients + m.optimizer).value() / stage_params(s.model, l, 0).total() == doctest::Approx(18.0));
}

TEST_CASE("the gradient dtype is the runtime's unless the scenario sets one: NeMo's recipes keep bf16 gradients") {
    // 2 (weights) + grad + 12 (fp32 master and moments) bytes per parameter without ZeRO.
    auto bytes_per_param = [](const json& training) {
        json doc = {{"model", "llama3-8b"},
                    {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                    {"training", training},
                    {"layout", {{"tp", 1}, {"dp", 8}, {"zero_stage", 0}}}};
        Scenario s = parse_scenario(doc, data_dir());
        Layout l = resolve_layout(s, s.layout);
        const StageMemory m = estimate_memory(s, l).stages.front();
        return (m.weights + m.gradients + m.optimizer).value() / stage_params(s.model, l, 0).total();
    };
    const json nemo = {{"seq_len", 4096}, {"global_batch", 8}, {"framework", "nemo-2024"}};
    CHECK(bytes_per_param(nemo) == doctest::Approx(16.0));
    json nemo_fp32 = nemo;
    nemo_fp32["optimizer"] = {{"grad_dtype", "fp32"}};
    CHECK(bytes_per_param(nemo_fp32) == doctest::Approx(18.0));
    CHECK(bytes_per_param({{"seq_len", 4096}, {"global_batch", 8}, {"framework", "megatron-core-2024"}}) == doctest::Approx(18.0));
}

TEST_CASE("a layout that names no ZeRO stage runs its framework's: NeMo's distributed optimizer, torchtitan's FSDP") {
    // Per parameter on 8 data-parallel ranks: 2 B of weights, the gradient, 12 B of fp32 master
    // and moments; the distributed optimizer (1) shards the 12 B, FSDP (3) all of them.
    auto resolved = [](const std::string& framework) {
        json doc = {{"model", "llama3-8b"},
                    {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                    {"training", {{"seq_len", 4096}, {"global_batch", 8}, {"framework", framework}}},
                    {"layout", {{"tp", 1}, {"dp", 8}}}};
        const Scenario s = parse_scenario(doc, data_dir());
        const Layout l = resolve_layout(s, s.layout);
        const StageMemory m = estimate_memory(s, l).stages.front();
        return std::pair{l.zero_stage, (m.weights + m.gradients + m.optimizer).value() / stage_params(s.model, l, 0).total()};
    };
    const auto [megatron_stage, megatron_bytes] = resolved("megatron-core-2024");
    CHECK(megatron_stage == 0);  // Megatron-LM's --use-distributed-optimizer is off by default
    CHECK(megatron_bytes == doctest::Approx(2 + 4 + 12));
    for (const char* nemo : {"nemo-2024", "nemo-2025", "nemo-2026"}) {
        CAPTURE(nemo);
        const auto [stage, bytes] = resolved(nemo);
        CHECK(stage == 1);
        CHECK(bytes == doctest::Approx(2 + 2 + 12.0 / 8));  // bf16 gradients (the recipes')
        CHECK(stage == load_runtime_profile(nemo, "").zero_stage);
    }
    const auto [titan_stage, titan_bytes] = resolved("torchtitan-2024");
    CHECK(titan_stage == 3);
    CHECK(titan_bytes == doctest::Approx((2 + 4 + 12) / 8.0));
    // A runtime's default must be a stage it implements.
    json runtime = {{"zero_stage", 3}, {"features", {{"zero_stages", {0, 1}}}}};
    try {
        parse_runtime_profile(runtime, "mine", "/calibration/runtime/mine");
        FAIL("ZeRO-3 is not among the framework's stages");
    } catch (const InputError& e) {
        CHECK(e.path() == "/calibration/runtime/mine/zero_stage");
        CHECK(std::string(e.what()).find("features.zero_stages") != std::string::npos);
    }
}

TEST_CASE("Korthikanti Table 2: activation bytes per layer for every row") {
    struct Row { const char* recompute; bool sp; };
    for (const char* model : {"gpt-22b", "gpt3-175b", "mt-nlg-530b", "gpt-1t"}) {
        for (Row row : {Row{"none", false}, Row{"none", true}, Row{"selective", false}, Row{"selective", true},
                        Row{"full", false}}) {
            CAPTURE(model);
            CAPTURE(row.recompute);
            CAPTURE(row.sp);
            Scenario s = korthikanti(model, 1, 1, 1, row.recompute, row.sp);
            Layout l = resolve_layout(s, s.layout);
            const double modelled = layer_activation_bytes(s, l, runtime_traits(s), 1);
            CHECK(modelled == doctest::Approx(table2(s, l)).epsilon(1e-12));
        }
    }
}

TEST_CASE("Korthikanti Figure 1: first-stage activations of the Table 3 layouts") {
    // Readings of Fig. 1 (SECONDARY, from calculon's validation targets): activations of the
    // first pipeline stage in GiB, TP baseline and SP + selective recompute. The paper's extras
    // shard the embedding's dropout mask over TP even without sequence parallelism; Sextant keeps
    // it whole on every TP rank there (it is, without SP), which adds up to 2.4% on the 1T
    // baseline (64 microbatches in flight). 3% covers that and the chart reading.
    struct Case { const char* model; std::int64_t pp, mb, batch, vp; double baseline, present; };
    const Case cases[] = {{"gpt-22b", 1, 4, 4, 1, 59.25, 9.5625},
                          {"gpt3-175b", 8, 1, 64, 3, 66.84375, 12.3515625},
                          {"mt-nlg-530b", 35, 1, 280, 3, 114.0234375, 23.076171875},
                          {"gpt-1t", 64, 1, 512, 1, 131.25, 26.5625}};
    for (const auto& c : cases) {
        CAPTURE(c.model);
        Scenario base = korthikanti(c.model, c.pp, c.mb, c.batch, "none", false, c.vp);
        Scenario present = korthikanti(c.model, c.pp, c.mb, c.batch, "selective", true, c.vp);
        const double b = estimate_memory(base, resolve_layout(base, base.layout)).stages.front().activations.value();
        const double p = estimate_memory(present, resolve_layout(present, present.layout)).stages.front().activations.value();
        CHECK(b / kGiB == doctest::Approx(c.baseline).epsilon(0.03));
        CHECK(p / kGiB == doctest::Approx(c.present).epsilon(0.03));
    }
}

TEST_CASE("Korthikanti Figure 7: relative activation memory of SP, selective and full recompute") {
    // 175B: none / seq / sel / seq+sel / full = 100 / 62.04 / 56.53 / 18.49 / 8.71 percent.
    const double expected[] = {100, 62.04, 56.53, 18.49, 8.71};
    const std::pair<const char*, bool> rows[] = {{"none", false}, {"none", true}, {"selective", false},
                                                 {"selective", true}, {"full", false}};
    double baseline = 0;
    for (std::size_t i = 0; i < 5; ++i) {
        Scenario s = korthikanti("gpt3-175b", 1, 1, 1, rows[i].first, rows[i].second);
        const double a = layer_activation_bytes(s, resolve_layout(s, s.layout), runtime_traits(s), 1);
        if (i == 0) baseline = a;
        CHECK(100 * a / baseline == doctest::Approx(expected[i]).epsilon(0.01));
    }
}

TEST_CASE("pipeline schedules: microbatches in flight") {
    Layout l;
    l.pp = 8;
    l.schedule = Schedule::GPipe;
    CHECK(microbatches_in_flight(l, 0, 32) == 32);
    l.schedule = Schedule::OneFOneB;
    CHECK(microbatches_in_flight(l, 0, 32) == 8);
    CHECK(microbatches_in_flight(l, 7, 32) == 1);
    CHECK(microbatches_in_flight(l, 0, 4) == 4);  // fewer microbatches than stages
    // Interleaved: the first stage holds pp x (1 + (pp - 1)/(pp vp)) microbatches' worth.
    l.schedule = Schedule::Interleaved;
    l.vp = 3;
    CHECK(microbatches_in_flight(l, 0, 64) == doctest::Approx(8.0 * (1 + 7.0 / 24.0)));
}

TEST_CASE("first and last stages: embedding on the first, output layer and logits on the last") {
    Scenario s = load_scenario(data_dir() / "scenarios" / "llama3-70b-h100.json");
    Layout l = resolve_layout(s, s.layout);
    const double first = stage_params(s.model, l, 0).total(), middle = stage_params(s.model, l, 1).total();
    const double last = stage_params(s.model, l, l.pp - 1).total();
    const double vocab_shard = 128256.0 * 8192.0 / 8.0;
    CHECK(first - middle == doctest::Approx(vocab_shard));
    CHECK(last - middle == doctest::Approx(vocab_shard + 8192.0));  // output layer + final norm
    MemoryReport r = estimate_memory(s, l);
    CHECK(r.stages.back().buffers.value() >= 2 * 4.0 * 8192 * 128256 / 8);  // fp32 logits and gradient
}

TEST_CASE("every preset scenario fits on its GPUs") {
    for (const auto& name : preset_names("scenarios")) {
        CAPTURE(name);
        Scenario s = load_scenario(data_dir() / "scenarios" / (name + ".json"));
        CHECK(estimate_memory(s, resolve_layout(s, s.layout)).fits());
    }
}

namespace {
// pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md, Tables 1 and 3 (eager, no
// Float8): local batch 2, 8,192-token sequences, selective activation checkpointing, FSDP over
// 8 and 128 H100s; peak 82.4 and 67.0 GiB. Their H100s have 96 GB, so only usage is compared.
constexpr std::pair<std::int64_t, double> kTorchtitanPeaks[] = {{8, 82.4}, {128, 67.0}};

Scenario torchtitan_llama3_8b(std::int64_t gpus) {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 2 * gpus}, {"precision", "bf16"}, {"framework", "torchtitan-2024"}}},
                {"layout", {{"tp", 1}, {"pp", 1}, {"dp", gpus}, {"microbatch", 2}, {"zero_stage", 3}, {"recompute", "selective"}}}};
    return parse_scenario(doc, data_dir());
}

double peak_gib(const Scenario& s) { return estimate_memory(s, resolve_layout(s, s.layout)).peak.value() / double(1ull << 30); }
}  // namespace

TEST_CASE("held-out: torchtitan's reported peak memory of Llama 3.1 8B under FSDP bounds Sextant's from above, within 12%") {
    // torchtitan reports the caching allocator's peak *reserved* bytes (torchtitan/metrics.py,
    // reserved_bytes.all.peak, at ba2469780, December 2024), which holds the allocated tensors
    // Sextant counts and the blocks the allocator keeps cached. Under torchtitan's per-op
    // selective checkpointing (selective_checkpoint "ops": the layer keeps its input, wq, wv, w1,
    // w2 and SDPA outputs, 31.1 GiB here) and its unfused loss (cross_entropy "pytorch": three
    // fp32 tensors of the logits' size in log_softmax's backward, 12 B per logit against the 8 of
    // Megatron's in-place kernel, +7.8 GiB at 16,384 tokens x 128,256) Sextant's peak is 76.4 and
    // 59.9 GiB against 82.4 and 67.0. What remains is the allocator's reserve under the recompute's
    // per-layer allocations, which has no formula (the fragmentation term below is 5% of tensors).
    for (const auto& [gpus, measured_gib] : kTorchtitanPeaks) {
        CAPTURE(gpus);
        const double predicted = peak_gib(torchtitan_llama3_8b(gpus));
        CHECK(predicted < measured_gib);
        CHECK(predicted == doctest::Approx(measured_gib).epsilon(0.12));
    }
}

TEST_CASE("the loss kernel's transients: PyTorch's F.cross_entropy on fp32 holds 12 B per logit, Megatron's vocab-parallel 8, TE's fused 2") {
    // Where the loss's transient is the stage's largest, the two kernels differ by exactly
    // 4 B x tokens x vocab / tp: the closed form of cross_entropy_bytes' peaks.
    Scenario s = torchtitan_llama3_8b(8);
    const Layout l = resolve_layout(s, s.layout);
    const double tokens = 2.0 * 8192, vocab = double(s.model.vocab);
    const StageMemory pytorch = estimate_memory(s, l).stages.front();
    RuntimeTraits traits = runtime_traits(s);
    REQUIRE(traits.cross_entropy == CrossEntropyKernel::PyTorch);
    traits.cross_entropy = CrossEntropyKernel::VocabParallel;
    const StageMemory megatron = estimate_memory(s, l, traits).stages.front();
    CHECK(pytorch.buffers.value() - megatron.buffers.value() == doctest::Approx(4.0 * tokens * vocab));
    CHECK(cross_entropy_bytes(CrossEntropyKernel::PyTorch).peak == 12.0);
    CHECK(cross_entropy_bytes(CrossEntropyKernel::VocabParallel).peak == 8.0);
    // Transformer Engine's fused kernel (v2.2-v2.17) writes the gradient over the bf16 logits
    // Megatron-Core hands it: the logits alone, 2 B, 6 B per logit below the vocab-parallel one.
    traits.cross_entropy = CrossEntropyKernel::Fused;
    const StageMemory fused = estimate_memory(s, l, traits).stages.front();
    CHECK(megatron.buffers.value() - fused.buffers.value() == doctest::Approx(6.0 * tokens * vocab));
    CHECK(cross_entropy_bytes(CrossEntropyKernel::Fused).peak == 2.0);
}

TEST_CASE("fragmentation: 5% of the tensors by default") {
    // The caching allocator's reserved-over-allocated gap has no formula; 5% of the tensor bytes
    // brought the two peaks above within 3% when torchtitan's selective checkpointing was priced
    // as Megatron's (84.0 and 67.4 GiB); under its own per-op policy they fall short (above).
    for (const auto& [gpus, measured_gib] : kTorchtitanPeaks) {
        CAPTURE(gpus);
        Scenario s = torchtitan_llama3_8b(gpus);
        CHECK(s.memory.fragmentation == 0.05);
        const StageMemory& m = estimate_memory(s, resolve_layout(s, s.layout)).stages.front();
        const double tensors = (m.weights + m.gradients + m.optimizer + m.activations + m.buffers).value();
        CHECK(m.fragmentation.value() == doctest::Approx(0.05 * tensors));
        s.memory.fragmentation = 0;
        CHECK(peak_gib(s) < peak_gib(torchtitan_llama3_8b(gpus)));
    }
}

TEST_CASE("ZeRO-3 under pipeline parallelism in torchtitan holds what ZeRO-1 holds, without PP it shards") {
    // torchtitan keeps FSDP's weights gathered after forward when pipelining and accumulates
    // whole gradients over the microbatches: only the optimizer state stays sharded.
    json doc = {{"model", "llama3-70b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 64}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 64}, {"precision", "bf16"}, {"framework", "torchtitan-2024"}}},
                {"layout", {{"tp", 8}, {"pp", 4}, {"dp", 2}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "full"}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    Layout l = resolve_layout(s, s.layout);
    const MemoryReport z3 = estimate_memory(s, l);
    l.zero_stage = 1;
    const MemoryReport z1 = estimate_memory(s, l);
    CHECK(z3.peak.value() == doctest::Approx(z1.peak.value()));
    // Megatron-Core-style ZeRO-3 (resharding after forward) keeps its weights sharded under PP.
    RuntimeTraits resharding = runtime_traits(s);
    resharding.zero3_reshard_with_pp = true;
    l.zero_stage = 3;
    CHECK(estimate_memory(s, l, resharding).stages[0].weights.value() == doctest::Approx(z1.stages[0].weights.value() / 2));
}

TEST_CASE("Muon keeps one momentum buffer: 2 + 2 + 4 + 4 bytes per parameter without ZeRO, AdamW 2 + 2 + 12") {
    auto bytes_per_param = [](const json& optimizer) {
        json doc = {{"model", "llama3-8b"},
                    {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                    {"training", {{"seq_len", 4096}, {"global_batch", 8}, {"framework", "nemo-2024"},
                                  {"optimizer", optimizer}}},
                    {"layout", {{"tp", 1}, {"dp", 8}, {"zero_stage", 0}}}};
        Scenario s = parse_scenario(doc, data_dir());
        Layout l = resolve_layout(s, s.layout);
        const StageMemory m = estimate_memory(s, l).stages.front();
        return (m.weights + m.gradients + m.optimizer).value() / stage_params(s.model, l, 0).total();
    };
    CHECK(bytes_per_param({{"name", "adamw"}}) == doctest::Approx(16.0));
    CHECK(bytes_per_param({{"name", "muon"}}) == doctest::Approx(12.0));
    // The name alone, as the published-runs files' fields block writes Kimi K2's optimizer.
    CHECK(bytes_per_param("muon") == doctest::Approx(12.0));
    CHECK(bytes_per_param("adamw") == doctest::Approx(16.0));
    try {
        bytes_per_param("sgd");
        FAIL("sgd is no optimizer Sextant prices");
    } catch (const InputError& e) {
        CHECK(e.path() == "/training/optimizer/name");
    }
}

TEST_CASE("host memory holds what is offloaded: an optimizer's states with their fp32 gradient copy, whole layers for each microbatch in flight") {
    // Llama 3 70B on 64 GB200s (the preset's 223.5 GiB of LPDDR5X per GPU), TP 4, ZeRO-1 over dp 16.
    json doc = {{"model", "llama3-70b"},
                {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "bf16"}, {"framework", "nemo-2025"}}},
                {"layout", {{"tp", 4}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 1}, {"recompute", "none"}}}};
    const Scenario on_gpu = parse_scenario(doc, data_dir());
    const MemoryReport kept = estimate_memory(on_gpu, resolve_layout(on_gpu, on_gpu.layout));
    CHECK(kept.host_peak.value() == 0);
    CHECK(kept.host_capacity.value() == doctest::Approx(223.5 * 1073741824.0));

    // AdamW's fp32 master weights and two fp32 moments (12 B a parameter) move to the host with an
    // fp32 gradient shard (4 B): host = the GPU's optimizer bytes x 16 / 12.
    doc["layout"]["optimizer_offload"] = true;
    const Scenario offloaded = parse_scenario(doc, data_dir());
    const MemoryReport a = estimate_memory(offloaded, resolve_layout(offloaded, offloaded.layout));
    CHECK(a.stages[0].optimizer.value() == 0);
    CHECK(a.host_peak.value() == doctest::Approx(kept.stages[0].optimizer.value() * 16.0 / 12.0));

    // 20 whole layers at PP 1: one microbatch in flight, 20 layers' activations on the host.
    doc["layout"]["optimizer_offload"] = false;
    doc["layout"]["activation_offload_layers"] = 20;
    const Scenario layers = parse_scenario(doc, data_dir());
    const Layout l = resolve_layout(layers, layers.layout);
    const MemoryReport b = estimate_memory(layers, l);
    CHECK(b.host_peak.value() == doctest::Approx(20 * layer_activation_bytes(layers, l, runtime_traits(layers), 0)));
    CHECK(b.fits());

    // A host that cannot hold them: the layout does not fit, and the planner's screen refuses it.
    doc["cluster"]["host"] = {{"memory_gib_per_gpu", 1}};
    const Scenario small_host = parse_scenario(doc, data_dir());
    const Layout ls = resolve_layout(small_host, small_host.layout);
    const MemoryReport c = estimate_memory(small_host, ls);
    CHECK(c.peak <= c.capacity);
    CHECK_FALSE(c.fits_host());
    CHECK_FALSE(c.fits());
    CHECK_FALSE(memory_within(small_host, ls, runtime_traits(small_host), 0.0).has_value());
}
