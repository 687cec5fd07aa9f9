// Hybrid models (Megatron-Core's hybrid_override_pattern): Mamba-2 mixers, attention, MLP and
// MoE layers, each a block of its own. Parameter counts against the published totals, the Mamba
// mixer's parameters, scan FLOPs and saved activations against closed forms, and the invariant
// that a pattern of attention and MLP blocks is the transformer it spells.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "model_errors.hpp"
#include "core/error.hpp"
#include "cost/layer_costs.hpp"
#include "memory/activations.hpp"
#include "memory/stage_params.hpp"
#include "model/layer_gemms.hpp"
#include "model/params.hpp"
#include "planner/emit.hpp"
#include "planner/search_space.hpp"
#include "spec/runtime_profile.hpp"
#include "sim/simulate.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
json preset_json(const char* name) { return load_preset("models", name, "/model"); }
ModelSpec preset(const char* name) { return parse_model(preset_json(name), "/model"); }

Scenario scenario(const json& model, std::int64_t gpus, const json& layout, const char* precision = "bf16") {
    const json doc = {{"model", model},
                      {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}}},
                      {"training", {{"seq_len", 4096}, {"global_batch", 64}, {"precision", precision}, {"framework", "nemo-2026"}}},
                      {"layout", layout}};
    return parse_scenario(doc, data_dir());
}

// The same transformer spelled as a hybrid model: each layer's attention and MLP (or MoE) as two
// layers of one block each ("*-" or "*E" per layer), the stage split doubled.
json as_hybrid(json model) {
    const std::int64_t layers = model["layers"].get<std::int64_t>();
    std::string pattern;
    for (std::int64_t i = 0; i < layers; ++i) pattern += model.contains("moe") ? "*E" : "*-";
    model["layers"] = 2 * layers;
    model["hybrid_override_pattern"] = pattern;
    return model;
}

// Every part of two steps' breakdowns alike but the exposed gradient reduction: its overlap
// leaves one bucket a layer exposed (exposed_bucketed), and a hybrid layer is half a transformer
// layer, so its tail is half as long.
void same_but_buckets(const StepResult& x, const StepResult& y) {
    const auto a = x.breakdown.items(), b = y.breakdown.items();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        CAPTURE(a[i].first);
        if (a[i].first == "dp") CHECK(b[i].second == doctest::Approx(a[i].second / 2).epsilon(1e-9));
        else CHECK(b[i].second == doctest::Approx(a[i].second).epsilon(1e-9));
    }
}

std::string input_error(const json& model) { return test::model_input_error(model); }
}  // namespace

TEST_CASE("hybrid presets match the published parameter totals and layer compositions") {
    // NVIDIA's Nemotron 3 Nano 30B-A3B model card: 31.6e9 total, 3.2e9 active (3.6e9 with
    // embeddings); 23 Mamba-2, 6 attention and 23 MoE layers (Megatron-Bridge v0.3.0 provider).
    const ModelSpec nano = preset("nemotron-3-nano-30b-a3b");
    const ParamCounts n = count_params(nano);
    CHECK(n.total() == doctest::Approx(31.6e9).epsilon(0.002));
    CHECK(n.active(nano) == doctest::Approx(3.6e9).epsilon(0.01));
    CHECK(n.active(nano) - n.embedding == doctest::Approx(3.2e9).epsilon(0.01));
    CHECK(nano.mixer_layer_count(Mixer::Mamba) == 23);
    CHECK(nano.mixer_layer_count(Mixer::Attention) == 6);
    CHECK(nano.moe_layer_count() == 23);
    // NVIDIA's Nemotron-H blog and NGC card: the 56B base model has 54 Mamba-2, 54 MLP and 10
    // self-attention layers and 56B parameters; the 8B, 24, 24 and 4.
    for (const auto& [name, total, mamba, attention] : {std::tuple{"nemotron-h-56b", 56e9, 54, 10}, std::tuple{"nemotron-h-8b", 8e9, 24, 4}}) {
        CAPTURE(name);
        const ModelSpec m = preset(name);
        CHECK(count_params(m).total() == doctest::Approx(total).epsilon(0.015));
        CHECK(m.mixer_layer_count(Mixer::Mamba) == mamba);
        CHECK(m.mixer_layer_count(Mixer::Attention) == attention);
        std::int64_t mlp = 0;
        for (std::int64_t l = 0; l < m.layers; ++l) mlp += m.layer_ffn(l) == Ffn::Dense ? 1 : 0;
        CHECK(mlp == mamba);
    }
}

TEST_CASE("a Mamba-2 mixer's parameters, scan FLOPs and GEMMs follow Megatron-Core's MambaMixer") {
    const ModelSpec m = preset("nemotron-3-nano-30b-a3b");
    // d_inner 64 x 64 = 4096; in_proj 2688 -> 2 x 4096 + 2 x 8 x 128 + 64 = 10,304; conv1d over
    // 4096 + 2048 channels, kernel 4 plus bias; dt bias, A_log, D per head; gated norm 4096;
    // out_proj 4096 -> 2688.
    CHECK(mamba_params(m) == 2688.0 * 10304 + 6144.0 * 5 + 3 * 64 + 4096 + 4096.0 * 2688);
    CHECK(layer_params(m, 0) == mamba_params(m) + 2688);  // one norm in front of the mixer
    // SSD, chunk 128: per group 2 Q N, per head 2 Q P + 4 N P.
    CHECK(ssd_scan_flops_per_token(m) == 2.0 * 8 * 128 * 128 + 2.0 * 64 * (128 * 64 + 2 * 128 * 64));
    const std::vector<LayerGemm> gemms = layer_gemms(m, 0, 8192, 4, 8);
    REQUIRE(gemms.size() == 2);
    CHECK(gemms[0].n == 10304 / 4);
    CHECK(gemms[0].k == 2688);
    CHECK(gemms[1].n == 2688);
    CHECK(gemms[1].k == 4096 / 4);
    // A TP rank holds 1/tp of the mixer and the whole norm.
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 16, {{"tp", 2}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    CHECK(layer_params_per_gpu(m, l, 0).dense == doctest::Approx(mamba_params(m) / 2 + 2688).epsilon(1e-15));
    CHECK(layer_params_per_gpu(m, l, 0).expert == 0);
}

TEST_CASE("model FLOPs of a hybrid step count attention only in attention layers and the SSD scan in Mamba layers") {
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 16, {{"tp", 2}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"microbatch", 1}});
    const ModelSpec& m = s.model;
    const ParamCounts p = count_params(m);
    const double tokens = 64.0 * 4096, h = 2688, vocab = 131072;
    const double dense = p.active(m) - p.embedding - p.output + vocab * h;
    const double expected = tokens * (6 * dense + 12 * 32 * 128 * 6 * 4096.0 + 23 * 3 * ssd_scan_flops_per_token(m));
    CHECK(model_flops_per_step(s) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a Mamba layer keeps in_proj's output, the scan output and out_proj's input for its backward") {
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 8, {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"microbatch", 1},
                                                                             {"sequence_parallel", false}, {"recompute", "none"}});
    const Layout l = resolve_layout(s, s.layout);
    const RuntimeTraits t = runtime_traits(s);
    REQUIRE(t.saved_input_bytes == 2.0);
    // Per token: the layer input and norm output (2 h each), [z, x, B, C, dt] (2 x 10,304), the
    // scan output and out_proj's input (2 x 4096 each), the norm's fp32 deviation per group.
    const double per_token = 2 * 2688 + 2 * 2688 + 2 * 10304 + 2 * 4096 + 2 * 4096 + 4 * 8;
    CHECK(layer_activation_bytes(s, l, t, 0) == doctest::Approx(4096 * per_token).epsilon(1e-12));
}

TEST_CASE("under context parallelism a Mamba layer waits on its all-to-alls, while attention's ring may overlap") {
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 16,
                                {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"cp", 2}, {"ep", 8}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const CostContext c = ctx.costs();
    const LayoutGroups g = analyse_groups(c.network, l, s.model);
    const LayerCost mamba = layer_cost(c, l, g, 0), attention = layer_cost(c, l, g, 5), moe = layer_cost(c, l, g, 1);
    REQUIRE(s.model.hybrid_pattern[5] == '*');
    CHECK(mamba.forward.cp > 0);
    CHECK(mamba.forward.cp_waited == mamba.forward.cp);
    CHECK(mamba.backward.cp_waited == mamba.backward.cp);
    CHECK(attention.forward.cp > 0);
    CHECK(attention.forward.cp_waited == 0);
    CHECK(moe.forward.cp == 0);  // an MoE layer holds no mixer
    CHECK(moe.forward.ep > 0);
    CHECK(mamba.forward.ep == 0);
    CHECK(mamba.forward.attention > 0);  // the scan's batched products
    CHECK(moe.forward.attention == 0);
}

TEST_CASE("a Mamba layer's all-to-alls over a CP group across nodes go through the NICs") {
    // TP 8 x CP 2 on 16 H100s: each CP group joins two nodes.
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 16,
                                {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 2}, {"ep", 8}, {"expert_tp", 1}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const CostContext c = ctx.costs();
    const LayoutGroups g = analyse_groups(c.network, l, s.model);
    REQUIRE(g.cp.domains == 2);
    CHECK(g.cp.all_to_all_seconds_per_byte > 0);  // analysed for its all-to-alls, not only its ring
    const LayerCost mamba = layer_cost(c, l, g, 0);
    // Six all-to-alls each way (z, x, B, C, dt, y) of 2,048 tokens a rank, 16 bits, / tp 8: half
    // of each crosses to the other node through a 400 Gb/s NIC, 50 GB/s at line rate.
    const MambaSpec& ms = s.model.mamba;
    const double widths = 3.0 * static_cast<double>(ms.inner()) + 2.0 * static_cast<double>(ms.groups * ms.state) + static_cast<double>(ms.heads);
    CHECK(mamba.forward.cp >= 2048.0 * widths / 8 * 2 / 2 / 50e9);
}

TEST_CASE("TP above the key/value heads gathers each rank's QKV output over TP (Nemotron 3 Nano's recipe: TP 4, 2 KV heads)") {
    const json layout = {{"tp", 4}, {"pp", 1}, {"dp", 4}, {"ep", 8}, {"microbatch", 1}, {"sequence_parallel", true}};
    json wider = preset_json("nemotron-3-nano-30b-a3b");
    wider["kv_heads"] = 4;
    const Scenario below = scenario(preset_json("nemotron-3-nano-30b-a3b"), 16, layout), divided = scenario(wider, 16, layout);
    const Layout l = resolve_layout(below, below.layout);
    const StepContext a(below), b(divided);
    const LayoutGroups ga = analyse_groups(a.costs().network, l, below.model), gb = analyse_groups(b.costs().network, l, divided.model);
    const LayerCost x = layer_cost(a.costs(), l, ga, 5), y = layer_cost(b.costs(), l, gb, 5);
    // The microbatch's 4096 tokens of q (32 x 128) and k, v (2 x 128 each), 16 bits, gathered
    // forward and reduce-scattered backward; the layers' other TP traffic is the same.
    const double bytes = 4096.0 * (32 + 2 * 2) * 128 * 2;
    const NetworkModel& net = a.costs().network;
    CHECK(x.forward.tp - y.forward.tp == doctest::Approx(net.cost(CollectiveOp::AllGather, Bytes(bytes), ga.tp).time.value()).epsilon(1e-9));
    CHECK(x.backward.tp - y.backward.tp == doctest::Approx(net.cost(CollectiveOp::ReduceScatter, Bytes(bytes), ga.tp).time.value()).epsilon(1e-9));
}

TEST_CASE("a hybrid pattern of attention and MLP blocks prices and fits like the transformer it spells") {
    SUBCASE("dense") {
        const json dense = {{"name", "d"}, {"layers", 8}, {"hidden", 4096}, {"ffn_hidden", 14336}, {"heads", 32}, {"kv_heads", 8}, {"vocab", 128256}};
        const json layout = {{"tp", 2}, {"pp", 2}, {"dp", 4}, {"microbatch", 1}, {"sequence_parallel", true}, {"recompute", "selective"}};
        const Scenario a = scenario(dense, 16, layout), b = scenario(as_hybrid(dense), 16, layout);
        CHECK(count_params(a.model).total() == count_params(b.model).total());
        const Layout la = resolve_layout(a, a.layout), lb = resolve_layout(b, b.layout);
        CHECK(lb.stage_layers == std::vector<std::int64_t>{8, 8});
        const StepResult x = estimate(StepContext(a), la), y = estimate(StepContext(b), lb);
        same_but_buckets(x, y);
        CHECK(y.mfu * y.step_time_s == doctest::Approx(x.mfu * x.step_time_s).epsilon(1e-9));  // the same model FLOPs
        CHECK(y.memory.peak.value() == doctest::Approx(x.memory.peak.value()).epsilon(1e-9));
    }
    SUBCASE("MoE") {
        json moe = preset_json("qwen3-30b-a3b");
        moe["layers"] = 8;
        const json layout = {{"tp", 1}, {"pp", 1}, {"dp", 16}, {"ep", 8}, {"microbatch", 1}};
        const Scenario a = scenario(moe, 16, layout), b = scenario(as_hybrid(moe), 16, layout);
        CHECK(count_params(a.model).total() == count_params(b.model).total());
        CHECK(count_params(a.model).active(a.model) == count_params(b.model).active(b.model));
        const StepResult x = estimate(StepContext(a), resolve_layout(a, a.layout)), y = estimate(StepContext(b), resolve_layout(b, b.layout));
        // The host's issue time of each MoE layer is covered by its attention's GPU time in both.
        same_but_buckets(x, y);
        CHECK(y.memory.peak.value() == doctest::Approx(x.memory.peak.value()).epsilon(1e-9));
    }
}

TEST_CASE("a latent MoE's experts and dispatch work in the latent width, and a hybrid MTP module is its pattern's blocks (Nemotron 3 Super)") {
    const ModelSpec m = preset("nemotron-3-super-120b-a12b");
    // Experts of 1024 -> 2688 -> 1024 (ungated), the latent projections 4096 <-> 1024.
    CHECK(routed_expert_params(m) == 2.0 * 1024 * 2688);
    CHECK(latent_projection_params(m) == 2.0 * 4096 * 1024);
    CHECK(moe_layer_params(m) == 4096.0 * 512 + 512 * 2.0 * 1024 * 2688 + 2.0 * 4096 * 5376 + 2.0 * 4096 * 1024);
    // One MTP module: two norms, the 2h -> h projection, an attention and a MoE block with their
    // norms, the final norm, and a copy of the embedding and output head.
    const std::int64_t attention = static_cast<std::int64_t>(m.hybrid_pattern.find('*'));
    const std::int64_t moe = static_cast<std::int64_t>(m.hybrid_pattern.find('E'));
    CHECK(count_params(m).mtp == doctest::Approx(3 * 4096.0 + 2.0 * 4096 * 4096 + layer_params(m, attention) + layer_params(m, moe) +
                                                 2.0 * 131072 * 4096).epsilon(1e-12));
    const std::vector<LayerGemm> gemms = layer_gemms(m, moe, 8192, 1, 8);
    const auto find = [&](const std::string& name) {
        const auto it = std::find_if(gemms.begin(), gemms.end(), [&](const LayerGemm& g) { return g.name == name; });
        REQUIRE(it != gemms.end());
        return *it;
    };
    CHECK(find("latent down").n == 1024);
    CHECK(find("latent down").k == 4096);
    CHECK(find("expert up").k == 1024);
    CHECK(find("expert down").n == 1024);
    CHECK(find("expert up").count == 512 / 8);
    // The dispatcher carries 1024-wide tokens: the same model with experts on the hidden state
    // moves four times the bytes, so its all-to-all costs more; the last stage runs the MTP module.
    const json layout = {{"tp", 1}, {"pp", 2}, {"dp", 8}, {"ep", 8}, {"microbatch", 1}};
    json wide = preset_json("nemotron-3-super-120b-a12b");
    wide["moe"]["latent"] = 0;
    const Scenario a = scenario(preset_json("nemotron-3-super-120b-a12b"), 16, layout), b = scenario(wide, 16, layout);
    const Layout l = resolve_layout(a, a.layout);
    const StepContext ca(a), cb(b);
    const LayoutGroups ga = analyse_groups(ca.costs().network, l, a.model), gb = analyse_groups(cb.costs().network, l, b.model);
    CHECK(layer_cost(ca.costs(), l, ga, moe).forward.ep < layer_cost(cb.costs(), l, gb, moe).forward.ep);
    LayerParams lp(a.model, l);
    const StageParams last = stage_params(a.model, l, 1, lp), first = stage_params(a.model, l, 0, lp);
    // Each stage holds 20 of the 40 MoE layers; the last one the MTP module's MoE block besides.
    CHECK(last.expert == doctest::Approx(first.expert * 21 / 20).epsilon(1e-12));
    const Emitted e = emit_plan(EmitFormat::Megatron, a, l);
    for (const auto& [name, value] : e.args)
        if (name == "--hybrid-layer-pattern") CHECK(value.value_or("").ends_with("/*E"));
}

TEST_CASE("Megatron's export of a hybrid model cuts its pattern into the pipeline's virtual stages") {
    // Nemotron-H 8B's 52 layers over pp 2 x vp 2: stages of 26, chunks of 13, in Megatron's order
    // (chunk 0 of every stage, then chunk 1).
    const Scenario s = scenario(preset_json("nemotron-h-8b"), 16, {{"tp", 2}, {"pp", 2}, {"vp", 2}, {"dp", 4}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    const Emitted e = emit_plan(EmitFormat::Megatron, s, l);
    std::string pattern;
    bool layout_flag = false;
    for (const auto& [name, value] : e.args) {
        if (name == "--hybrid-layer-pattern") pattern = value.value_or("");
        layout_flag |= name == "--pipeline-model-parallel-layout" || name == "--num-virtual-stages-per-pipeline-rank";
    }
    CHECK_FALSE(layout_flag);
    const std::string& p = s.model.hybrid_pattern;
    CHECK(pattern == p.substr(0, 13) + "|" + p.substr(13, 13) + "|" + p.substr(26, 13) + "|" + p.substr(39, 13));
}

TEST_CASE("hybrid models: each rule of the pattern and of the Mamba split is an input error naming its field") {
    json m = preset_json("nemotron-h-8b");
    const auto with = [&](const char* key, const json& value) {
        json copy = m;
        copy[key] = value;
        return input_error(copy);
    };
    CHECK(with("layers", 50).find("/model/hybrid_override_pattern") != std::string::npos);
    CHECK(with("hybrid_override_pattern", std::string(51, 'M') + "G").find("gated delta net") != std::string::npos);
    CHECK(with("hybrid_override_pattern", std::string(51, 'M') + "|").find("stage_layers") != std::string::npos);
    CHECK(with("hybrid_override_pattern", std::string(51, 'M') + "E").find("/model/moe") != std::string::npos);
    CHECK(with("mtp_layers", 1).find("/model/mtp_pattern") != std::string::npos);
    CHECK(with("mtp_pattern", "*-").find("/model/mtp_layers") != std::string::npos);
    json mtp = m;
    mtp["mtp_layers"] = 1;
    mtp["mtp_pattern"] = "*E";  // the 8B has no MoE layer
    CHECK(input_error(mtp).find("'E' is not one of them") != std::string::npos);
    CHECK(with("mamba", {{"heads", 100}}).find("/model/mamba/groups") != std::string::npos);
    json transformer = preset_json("llama3-8b");
    transformer["mamba"] = json::object();
    CHECK(input_error(transformer).find("/model/mamba") != std::string::npos);
    // TP must divide the SSM heads and groups (8): Megatron-Core's MambaMixer asserts both.
    json narrow = preset_json("nemotron-h-56b");
    narrow["kv_heads"] = 16;  // so that the key/value heads' own rule passes at tp 16
    const json layout16 = {{"tp", 16}, {"pp", 1}, {"dp", 1}, {"microbatch", 1}};
    CHECK_THROWS_WITH_AS(scenario(narrow, 16, layout16), doctest::Contains("Mamba groups (8)"), InputError);
    // CP must divide a TP rank's SSM heads: 128 heads over tp 8 leaves 16; cp 32 does not divide them.
    json wide = preset_json("nemotron-h-8b");
    const json cp32 = {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 32}, {"microbatch", 1}};
    CHECK_THROWS_WITH_AS(scenario(wide, 256, cp32), doctest::Contains("Mamba heads"), InputError);
    // Megatron-Core's MambaModel has no merged forward-backward schedule for the MoE all-to-all.
    const json overlap = {{"tp", 1}, {"pp", 1}, {"dp", 16}, {"ep", 8}, {"microbatch", 1}, {"ep_a2a_overlap", true}};
    CHECK_THROWS_WITH_AS(scenario(preset_json("nemotron-3-nano-30b-a3b"), 16, overlap), doctest::Contains("hybrid models"), InputError);
}

TEST_CASE("the CLI simulates the hybrid scenario and refuses a broken pattern with exit code 2 and its path") {
    const test::Output ok = test::run_sextant("simulate " + test::source_path("scenarios/nemotron-3-nano-h100.json"));
    CHECK(ok.code == 0);
    CHECK(ok.out.find("Nemotron 3 Nano 30B-A3B on 64 x H100-SXM5-80GB") != std::string::npos);
    CHECK(ok.out.find("each Mamba layer's SSD scan") != std::string::npos);  // what its MFU counts
    // The same scenario with a gated delta net layer (G) in the pattern.
    json doc = load_json_file(test::source_path("scenarios/nemotron-3-nano-h100.json"), "/");
    json model = preset_json("nemotron-3-nano-30b-a3b");
    std::string pattern = model["hybrid_override_pattern"].get<std::string>();
    pattern[0] = 'G';
    model["hybrid_override_pattern"] = pattern;
    doc["model"] = model;
    const std::string file = std::string(SEXTANT_BINARY) + "-hybrid-g.json";  // beside the binary, in the build tree
    std::ofstream(file) << doc.dump();
    const test::Output bad = test::run_sextant("simulate " + file);
    CHECK(bad.code == 2);
    CHECK(bad.out.find("/model/hybrid_override_pattern") != std::string::npos);
    CHECK(bad.out.find("gated delta net") != std::string::npos);
    std::remove(file.c_str());
}

TEST_CASE("the planner searches only the layouts Megatron-Core can run a hybrid model at") {
    // Nemotron 3 Nano: 64 SSM heads in 8 groups, 2 KV heads, 128 experts; nemo-2026 offers the EP
    // all-to-all overlap and TP above the KV heads.
    const Scenario s = scenario(preset_json("nemotron-3-nano-30b-a3b"), 64, json::object());
    SearchOptions o;
    o.framework = load_runtime_profile("nemo-2026", "").features;
    REQUIRE(o.framework.ep_a2a_overlap);
    REQUIRE(o.framework.tp_beyond_kv_heads);
    std::set<std::int64_t> tps, cps;
    std::size_t broken = 0, overlapped = 0;
    for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) {
        broken += mixer_split_rule(s.model, c.tp, c.cp).empty() ? 0 : 1;
        overlapped += c.ep_a2a_overlap ? 1 : 0;  // MambaModel has no merged schedule
        tps.insert(c.tp);
        cps.insert(c.cp);
    }
    CHECK(broken == 0);
    CHECK(overlapped == 0);
    CHECK(tps.count(4) == 1);   // above the 2 KV heads, where the framework splits them
    CHECK(tps.count(16) == 0);  // the 8 SSM groups do not divide over it
    CHECK(cps.count(2) == 1);
    // A generation without the split keeps TP within the KV heads.
    o.framework = load_runtime_profile("nemo-2025", "").features;
    std::int16_t widest = 0;
    for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) widest = std::max(widest, c.tp);
    CHECK(widest == 2);
}
