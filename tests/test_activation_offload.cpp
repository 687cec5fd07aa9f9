// Activation offload as Megatron-Core runs it: --cpu-offloading of whole layers needs pp 1, no
// activation recomputation and fewer offloaded layers than the model has
// (TransformerConfig.__post_init__, core_r0.10.0 to d98e8a64dd); offload by module
// (--fine-grained-activation-offloading --offload-modules, core_v0.16.0, the MoE model zoo's
// dev builds) moves the named modules' inputs of every layer, beside both. Megatron-Bridge's recipes use the first (scripts/performance/utils/
// overrides.py: cpu_offloading, cpu_offloading_num_layers, v0.3.0), the model zoo the second.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_run.hpp"
#include "core/error.hpp"
#include "memory/activations.hpp"
#include "memory/memory_model.hpp"
#include "planner/emit.hpp"
#include "planner/explain.hpp"
#include "planner/search_space.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"

using namespace sextant;
using nlohmann::json;

namespace {
// Llama 3 70B on 64 GB200s (NVLink-C2C host link), FP8, under `framework`, with `layout`.
json llama70b_gb200(const std::string& framework, const json& layout) {
    return {{"name", "offload"},
            {"model", "llama3-70b"},
            {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
            {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "fp8"}, {"framework", framework}}},
            {"layout", layout}};
}

// The InputError the runtime's layout checks raise, or none.
std::optional<InputError> runtime_error(const json& doc) {
    const Scenario s = parse_scenario(doc, data_dir());
    try {
        check_layout_runtime(s, load_runtime_profile(s.training.framework, "/framework"));
    } catch (const InputError& e) {
        return e;
    }
    return std::nullopt;
}
}  // namespace

TEST_CASE("offloading whole layers needs pp 1, no recompute and fewer layers than the model has, under every runtime") {
    const json pp2 = {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"}, {"activation_offload_layers", 10}};
    const json selective = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "selective"}, {"activation_offload_layers", 10}};
    const json every_layer = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "none"}, {"activation_offload_layers", 80}};
    const json allowed = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "none"}, {"activation_offload_layers", 40}};
    for (const char* framework : {"nemo-2025", "nemo-2026", "megatron-core-2024", "megatron-core-2025", "megatron-core-2026"}) {
        CAPTURE(framework);
        const auto a = runtime_error(llama70b_gb200(framework, pp2));
        REQUIRE(a);
        CHECK(a->path() == "/layout/activation_offload_layers");
        CHECK(std::string(a->what()).find("no pipeline-parallel support") != std::string::npos);
        const auto b = runtime_error(llama70b_gb200(framework, selective));
        REQUIRE(b);
        CHECK(std::string(b->what()).find("does not work with activation recomputation") != std::string::npos);
        const auto c = runtime_error(llama70b_gb200(framework, every_layer));
        REQUIRE(c);
        CHECK(std::string(c->what()).find("below the model's layers (80)") != std::string::npos);
        CHECK_FALSE(runtime_error(llama70b_gb200(framework, allowed)));
    }
}

TEST_CASE("offload by module runs beside pipeline parallelism and recompute where the runtime ships it, under Megatron's rules") {
    json modules = {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "selective"}, {"activation_offload_modules", {"core_attn", "attn_proj"}}};
    for (const char* by_module : {"megatron-core-2025", "megatron-core-2026"}) CHECK_FALSE(runtime_error(llama70b_gb200(by_module, modules)));
    for (const char* whole_layers : {"nemo-2025", "nemo-2026", "megatron-core-2024"}) {
        const auto e = runtime_error(llama70b_gb200(whole_layers, modules));
        REQUIRE(e);
        CHECK(e->path() == "/layout/activation_offload_modules");
    }
    // Megatron's TransformerConfig.__post_init__ (d98e8a64dd) checks, and a full recompute that
    // leaves nothing to offload.
    const auto rule_of = [&](json layout) {
        try {
            parse_scenario(llama70b_gb200("megatron-core-2026", layout), data_dir());
        } catch (const InputError& e) {
            CHECK(e.path() == "/layout/activation_offload_modules");
            return std::string(e.what());
        }
        return std::string();
    };
    json l = modules;
    l["activation_offload_modules"] = {"attn_proj"};
    CHECK(rule_of(l).find("only with core_attn") != std::string::npos);
    l["activation_offload_modules"] = {"expert_fc1"};
    CHECK(rule_of(l).find("need a MoE model") != std::string::npos);
    l = modules;
    l["pp"] = 1;
    l["recompute"] = "none";
    l["activation_offload_layers"] = 10;
    CHECK(rule_of(l).find("excludes activation_offload_layers") != std::string::npos);
    l = modules;
    l["recompute"] = "full";
    CHECK(rule_of(l).find("excludes full recompute") != std::string::npos);
    l = modules;
    l["activation_offload_modules"] = {"qkv_linears"};
    try {  // an unknown name is refused at its index, with the close one
        parse_scenario(llama70b_gb200("megatron-core-2026", l), data_dir());
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(e.path() == "/layout/activation_offload_modules/0");
        CHECK(std::string(e.what()).find("qkv_linear") != std::string::npos);
    }
}

TEST_CASE("offload by module moves the named inputs of every layer: Llama 3 70B's Q, K, V and attention output, Qwen3-30B-A3B's expert inputs") {
    // Llama 3 70B at TP 1: Q 64 x 128, K and V 8 x 128 each, the attention output 64 x 128, all
    // 16-bit: 2 (8192 + 2 x 1024) + 2 x 8192 = 36,864 bytes a token.
    const Scenario s = parse_scenario(
        llama70b_gb200("megatron-core-2026", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"},
                                              {"activation_offload_modules", {"core_attn", "attn_proj"}}}),
        data_dir());
    const Layout with = resolve_layout(s, s.layout);
    Layout without = with;
    without.offload_modules = 0;
    const RuntimeTraits traits = runtime_traits(s);
    const double tokens = 8192;
    CHECK(offloaded_module_bytes(s, with, traits, 0) == doctest::Approx(tokens * 36864.0));
    CHECK(offloaded_module_bytes(s, without, traits, 0) == 0);
    // Stage 0 keeps 40 layers for each microbatch in flight, less what moved, and a double buffer
    // of one layer's moved inputs.
    const MemoryReport a = estimate_memory(s, with, traits), b = estimate_memory(s, without, traits);
    const double in_flight = microbatches_in_flight(with, 0, with.microbatches(s.training.global_batch), traits);
    const double moved = tokens * 36864.0;
    CHECK(b.stages[0].activations.value() - a.stages[0].activations.value() == doctest::Approx(40 * in_flight * moved - 2 * moved));

    // Qwen3-30B-A3B: each token's 8 routed copies, each the expert's 2,048-wide input and its
    // gate|up output of 2 x 768, 16-bit, on the busiest rank routed_share() times the mean.
    json moe = llama70b_gb200("megatron-core-2026", {{"tp", 1}, {"pp", 1}, {"ep", 8}, {"microbatch", 1}, {"recompute", "none"},
                                                     {"activation_offload_modules", {"expert_fc1", "moe_act"}}});
    moe["model"] = "qwen3-30b-a3b";
    moe["training"]["precision"] = "bf16";
    moe["training"]["seq_len"] = 4096;
    const Scenario q = parse_scenario(moe, data_dir());
    const Layout lq = resolve_layout(q, q.layout);
    const double per_token = q.model.moe.routed_share() * 8 * (2.0 * 2048 + 2.0 * 2 * 768);
    CHECK(offloaded_module_bytes(q, lq, runtime_traits(q), 0) == doctest::Approx(4096 * per_token));
    // Recomputing the experts' activation keeps its input, so it still moves.
    Layout recomputed = lq;
    recomputed.recompute = Recompute::Selective;
    recomputed.recompute_modules = kRecomputeMoeAct;
    CHECK(offloaded_module_bytes(q, recomputed, runtime_traits(q), 0) == doctest::Approx(4096 * per_token));
}

TEST_CASE("an offload fraction keeps each chunk's later groups on the GPU: int(groups x (1 - fraction)) of them, as Megatron-Core counts") {
    // Llama 3 70B, TP 1, PP 2 (40 layers a stage), core_attn and attn_proj: two groups a layer,
    // 20,480 and 16,384 bytes a token (Q, K, V; the attention output).
    const auto scenario = [](double fraction, std::int64_t vp) {
        json layout = {{"tp", 1}, {"pp", 2}, {"vp", vp}, {"microbatch", 1}, {"recompute", "none"},
                       {"activation_offload_modules", {"core_attn", "attn_proj"}}};
        if (fraction < 1) layout["activation_offload_fraction"] = fraction;
        return parse_scenario(llama70b_gb200("megatron-core-2026", layout), data_dir());
    };
    const double tokens = 8192, qkv = 20480 * tokens, out = 16384 * tokens;
    const Scenario all = scenario(1.0, 1);
    const RuntimeTraits traits = runtime_traits(all);
    const Layout l1 = resolve_layout(all, all.layout);
    CHECK(offloaded_chunk_bytes(all, l1, traits, 0, 40) == doctest::Approx(40 * (qkv + out)));
    // Half: 80 groups, int(80 x 0.5) = 40 kept, the first 20 layers' both move.
    const Scenario half = scenario(0.5, 1);
    const Layout lh = resolve_layout(half, half.layout);
    CHECK(lh.offload_fraction == 0.5);
    CHECK(offloaded_chunk_bytes(half, lh, traits, 0, 40) == doctest::Approx(20 * (qkv + out)));
    // 0.3: int(80 x 0.7) = 56 kept, 24 groups move: 12 layers. 0.0125: int(80 x 0.9875) = 79
    // kept, only layer 0's Q, K and V move (a group, not a layer, is the unit).
    Layout l = lh;
    l.offload_fraction = 0.3;
    CHECK(offloaded_chunk_bytes(half, l, traits, 0, 40) == doctest::Approx(12 * (qkv + out)));
    l.offload_fraction = 0.0125;
    CHECK(offloaded_chunk_bytes(half, l, traits, 0, 40) == doctest::Approx(qkv));
    // Each model chunk counts its own groups: with VP 2 a stage's two chunks of 20 layers each move
    // their first 10.
    const Scenario interleaved = scenario(0.5, 2);
    const Layout li = resolve_layout(interleaved, interleaved.layout);
    CHECK(offloaded_chunk_bytes(interleaved, li, traits, 0, 20) == doctest::Approx(10 * (qkv + out)));
    // Memory: what stays moves back onto the GPU, microbatch by microbatch in flight; the host
    // holds half of what it held.
    const MemoryReport m1 = estimate_memory(all, l1, traits), mh = estimate_memory(half, lh, traits);
    const double in_flight = microbatches_in_flight(l1, 0, l1.microbatches(all.training.global_batch), traits);
    CHECK(mh.stages[0].activations.value() - m1.stages[0].activations.value() == doctest::Approx(20 * (qkv + out) * in_flight));
    CHECK(mh.stages[0].host.value() == doctest::Approx(m1.stages[0].host.value() / 2));
    // The exports: Megatron's flag, Bridge's field; the label says it.
    const Emitted megatron = emit_plan(EmitFormat::Megatron, half, lh);
    CHECK(megatron.text.find("--activation-offload-fraction 0.5") != std::string::npos);
    CHECK(emit_plan(EmitFormat::MegatronBridge, half, lh).settings["model"]["activation_offload_fraction"] == 0.5);
    CHECK(emit_plan(EmitFormat::Megatron, all, l1).text.find("--activation-offload-fraction") == std::string::npos);
    CHECK(layout_label(lh).find("act-offload(core_attn,attn_proj x0.5)") != std::string::npos);
    CHECK(layout_json(lh)["activation_offload_fraction"] == 0.5);
}

TEST_CASE("an offload fraction needs the module offload, a runtime of core_v0.19, and a value above 0: exit 2 naming the key") {
    json no_modules = llama70b_gb200("megatron-core-2026", {{"tp", 1}, {"pp", 2}, {"activation_offload_fraction", 0.5}});
    CHECK_THROWS_WITH_AS(parse_scenario(no_modules, data_dir()), doctest::Contains("/layout/activation_offload_fraction"), InputError);
    json zero = llama70b_gb200("megatron-core-2026", {{"tp", 1}, {"pp", 2}, {"activation_offload_modules", {"core_attn"}},
                                                      {"activation_offload_fraction", 0}});
    CHECK_THROWS_WITH_AS(parse_scenario(zero, data_dir()), doctest::Contains("above 0"), InputError);
    json above = zero;
    above["layout"]["activation_offload_fraction"] = 1.5;
    CHECK_THROWS_AS(parse_scenario(above, data_dir()), InputError);
    // Megatron-Core 0.16-0.18 (the model zoo's and Megatron-Bridge 26.02's) has none.
    json older = llama70b_gb200("megatron-core-2025", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"},
                                                      {"activation_offload_modules", {"core_attn"}}, {"activation_offload_fraction", 0.5}});
    const auto e = runtime_error(older);
    REQUIRE(e);
    CHECK(std::string(e->what()).find("/layout/activation_offload_fraction") != std::string::npos);
    json newer = older;
    newer["training"]["framework"] = "megatron-core-2026";
    CHECK_FALSE(runtime_error(newer));
    // The CLI: exit 2, the key named.
    const std::string path = "/tmp/sextant-offload-fraction-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << older.dump();
    const test::Output o = test::run_sextant("simulate " + path);
    std::remove(path.c_str());
    CHECK(o.code == 2);
    CHECK(o.out.find("/layout/activation_offload_fraction") != std::string::npos);
}

TEST_CASE("the planner offers whole-layer offload only at pp 1 without recompute, module offload beside both where the runtime ships it") {
    for (const char* framework : {"nemo-2025", "megatron-core-2025"}) {
        CAPTURE(framework);
        const Scenario s = parse_scenario(llama70b_gb200(framework, json::object()), data_dir());
        SearchOptions o;
        o.framework = load_runtime_profile(framework, "").features;
        std::size_t layers_offloaded = 0, layers_beside = 0, modules_offloaded = 0, modules_beside = 0;
        for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) {
            const bool beside = c.pp > 1 || c.recompute != Recompute::None;
            if (c.offload_layers > 0) ++layers_offloaded, layers_beside += beside ? 1 : 0;
            if (c.offload_modules != 0) {
                ++modules_offloaded, modules_beside += beside ? 1 : 0;
                CHECK(c.offload_layers == 0);
                CHECK(c.offload_modules == (kOffloadCoreAttn | kOffloadAttnProj));  // a dense model's set
            }
        }
        CHECK(layers_offloaded > 0);
        CHECK(layers_beside == 0);
        if (o.framework.activation_offload_modules) CHECK(modules_beside > 0);
        else CHECK(modules_offloaded == 0);
    }
}

TEST_CASE("the planner tries half of the module offload's groups where the runtime ships the fraction, and keeps a layout's own") {
    for (const char* framework : {"megatron-core-2025", "megatron-core-2026"}) {
        CAPTURE(framework);
        const Scenario s = parse_scenario(llama70b_gb200(framework, json::object()), data_dir());
        SearchOptions o;
        o.framework = load_runtime_profile(framework, "").features;
        std::size_t whole = 0, half = 0, stray = 0;
        for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) {
            if (c.offload_modules == 0) {
                stray += c.offload_share != 0 ? 1 : 0;  // a share only where modules move
                continue;
            }
            (c.offload_share == 0 ? whole : half) += 1;
            if (c.offload_share == 1) CHECK(to_layout(s, LayoutSpec{}, c).offload_fraction == 0.5);
        }
        CHECK(stray == 0);
        CHECK(whole > 0);
        if (o.framework.activation_offload_fraction) CHECK(half == whole);  // every module set at 1 and at 0.5
        else CHECK(half == 0);
    }
    // A layout that names its fraction is searched at it alone.
    LayoutSpec fixed;
    fixed.activation_offload_modules = kOffloadCoreAttn;
    fixed.activation_offload_fraction = 0.3;
    const Scenario s = parse_scenario(llama70b_gb200("megatron-core-2026", json::object()), data_dir());
    SearchOptions o;
    o.framework = load_runtime_profile("megatron-core-2026", "").features;
    const auto candidates = enumerate_candidates(s, fixed, o);
    REQUIRE(!candidates.empty());
    for (const Candidate& c : candidates) CHECK(to_layout(s, fixed, c).offload_fraction == 0.3);
}

TEST_CASE("the Megatron export sets the modules Megatron offloads") {
    const Scenario s = parse_scenario(
        llama70b_gb200("megatron-core-2026", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"},
                                              {"activation_offload_modules", {"attn_proj", "core_attn"}}}),
        data_dir());
    const Emitted e = emit_plan(EmitFormat::Megatron, s, resolve_layout(s, s.layout));
    CHECK(e.text.find("--fine-grained-activation-offloading") != std::string::npos);
    CHECK(e.text.find("--offload-modules core_attn attn_proj") != std::string::npos);  // Megatron's order
    CHECK(e.text.find("--cpu-offloading") == std::string::npos);
}

TEST_CASE("simulate refuses whole-layer offload beside pipeline parallelism with exit 2, naming the key") {
    const std::string path = "/tmp/sextant-offload-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << llama70b_gb200("nemo-2025", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"}, {"activation_offload_layers", 10}}).dump();
    const test::Output o = test::run_sextant("simulate " + path);
    std::remove(path.c_str());
    CHECK(o.code == 2);
    CHECK(o.out.find("/layout/activation_offload_layers") != std::string::npos);
    CHECK(o.out.find("no pipeline-parallel support") != std::string::npos);
}

TEST_CASE("memory and simulate say when offloaded states outgrow the host's DRAM, and --require-fit refuses it with exit 2") {
    json doc = llama70b_gb200("nemo-2025", {{"tp", 4}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 1}, {"recompute", "none"},
                                            {"activation_offload_layers", 20}, {"optimizer_offload", true}});
    doc["cluster"]["host"] = {{"memory_gib_per_gpu", 10}};
    const std::string path = "/tmp/sextant-host-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << doc.dump();
    const test::Output memory = test::run_sextant("memory " + path);
    const test::Output refused = test::run_sextant("simulate --require-fit " + path);
    const std::string page = path + ".html";
    const test::Output report = test::run_sextant("report " + path + " -o " + page);
    std::ifstream in(page);
    const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(page.c_str());
    std::remove(path.c_str());
    CHECK(report.code == 0);
    CHECK(html.find("fits by") != std::string::npos);  // HBM
    CHECK(html.find("per GPU of its 10.00 GiB: does not fit") != std::string::npos);
    CHECK(memory.code == 0);
    CHECK(memory.out.find("host memory") != std::string::npos);
    CHECK(memory.out.find("of 10.00 GiB: DOES NOT FIT") != std::string::npos);
    CHECK(refused.code == 2);
    CHECK(refused.out.find("does not fit in host memory") != std::string::npos);
}
