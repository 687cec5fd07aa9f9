// Gated delta net mixers in a transformer's linear-attention layers (Qwen3-Next, Qwen3.5), as
// Megatron-Core builds them (experimental_attention_variant gated_delta_net). Parameter counts
// against the published totals, from the preset and from real config.json files; the mixer's
// parameters, GEMMs, delta-rule products, model FLOPs and saved activations against closed forms;
// Megatron-Core's split rules, the planner's candidates and the export.
#include <doctest/doctest.h>

#include <numeric>

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
#include "sim/simulate.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
json preset_json() { return load_preset("models", "qwen3-next-80b-a3b", "/model"); }
ModelSpec preset() { return parse_model(preset_json(), "/model"); }

Scenario scenario(const json& model, std::int64_t gpus, const json& layout, const char* framework = "nemo-2026") {
    const json doc = {{"model", model},
                      {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", gpus}}},
                      {"training", {{"seq_len", 4096}, {"global_batch", 64}, {"precision", "bf16"}, {"framework", framework}}},
                      {"layout", layout}};
    return parse_scenario(doc, data_dir());
}

std::string input_error(const json& model) { return test::model_input_error(model); }

ModelSpec hf(const json& config) { return parse_hf_config(config, "/model"); }
json hf_file(const char* name) { return load_json_file(test::source_path(std::string("tests/data/hf/") + name), "/model"); }

// Qwen3-Next 80B-A3B's config.json keys, with the values of Megatron-Bridge v0.3.0's
// Qwen3NextModelProvider80B_A3B and the Qwen3 vocabulary (151,936).
json qwen3_next_config() {
    return {{"model_type", "qwen3_next"},       {"hidden_size", 2048},          {"num_hidden_layers", 48},
            {"num_attention_heads", 16},        {"num_key_value_heads", 2},     {"head_dim", 256},
            {"intermediate_size", 5120},        {"vocab_size", 151936},         {"num_experts", 512},
            {"num_experts_per_tok", 10},        {"moe_intermediate_size", 512}, {"shared_expert_intermediate_size", 512},
            {"decoder_sparse_step", 1},         {"mlp_only_layers", json::array()}, {"full_attention_interval", 4},
            {"linear_num_key_heads", 16},       {"linear_num_value_heads", 32}, {"linear_key_head_dim", 128},
            {"linear_value_head_dim", 128},     {"linear_conv_kernel_dim", 4},  {"partial_rotary_factor", 0.25},
            {"tie_word_embeddings", false}};
}

// Seconds of a 16-bit GEMM as the cost model prices one (cost/layer_costs.cpp, Kernels::gemm).
double bf16_gemm(const CostContext& c, double m, double n, double k) {
    const auto i = [](double v) { return static_cast<std::int64_t>(std::max(1.0, v)); };
    return 2.0 * m * n * k / (c.profile.gemm_tflops(Precision::Bf16, i(m), i(n), i(k)) * c.runtime.compute_efficiency * 1e12);
}
}  // namespace

TEST_CASE("Qwen3-Next's preset matches the published total, with 36 gated delta net and 12 gated attention layers") {
    const ModelSpec m = preset();
    const ParamCounts p = count_params(m);
    // Qwen/Qwen3-Next-80B-A3B model card: 80e9 in total, 79e9 without the embeddings.
    CHECK(p.total() == doctest::Approx(80e9).epsilon(0.01));
    CHECK(p.total() - p.embedding - p.output == doctest::Approx(79e9).epsilon(0.01));
    CHECK(m.mixer_layer_count(Mixer::GatedDeltaNet) == 36);
    CHECK(m.mixer_layer_count(Mixer::Attention) == 12);
    CHECK(m.moe_layer_count() == 48);
    // Layer i is a gated delta net unless (i + 1) % 4 == 0 (Megatron's linear_attention_freq 4).
    for (std::int64_t l = 0; l < m.layers; ++l) CHECK(m.layer_is_linear_attention(l) == ((l + 1) % 4 != 0));
}

TEST_CASE("a gated delta net's parameters and GEMMs follow Megatron-Core's GatedDeltaNet, and the output gate widens the QKV GEMM") {
    const ModelSpec m = preset();
    // key_dim 16 x 128 = 2048, value_dim 32 x 128 = 4096: in_proj 2048 -> 2 x 2048 + 2 x 4096 + 2 x 32
    // = 12,352; conv1d over 2 x 2048 + 4096 channels, kernel 4, no bias; dt bias and A_log per value
    // head; the gated norm over one value head (128); out_proj 4096 -> 2048.
    CHECK(gdn_params(m) == 2048.0 * 12352 + 8192.0 * 4 + 2 * 32 + 128 + 4096.0 * 2048);
    // Gated attention: queries and their gate (2 x 16 x 256), 2 KV heads of 256, output 4096 -> 2048.
    CHECK(attention_params_per_layer(m) == 2048.0 * (2 * 4096 + 2 * 512) + 4096.0 * 2048);
    CHECK(layer_params(m, 0) == gdn_params(m) + moe_layer_params(m) + 2 * 2048);
    CHECK(layer_params(m, 3) == attention_params_per_layer(m) + moe_layer_params(m) + 2 * 2048);
    const std::vector<LayerGemm> linear = layer_gemms(m, 0, 4096, 2, 64), full = layer_gemms(m, 3, 4096, 2, 64);
    REQUIRE(linear.size() >= 2);
    CHECK(linear[0].name == "gdn in");
    CHECK(linear[0].n == 12352 / 2);
    CHECK(linear[0].k == 2048);
    CHECK(linear[1].n == 2048);
    CHECK(linear[1].k == 4096 / 2);
    CHECK(full[0].name == "qkv");
    CHECK(full[0].n == (2 * 4096 + 2 * 512) / 2);
    // A TP rank holds 1/tp of the mixer but its gated norm (one value head's 128, shared by every
    // head), the whole layer norms and router, and 1/tp of the shared expert.
    const Scenario s = scenario(preset_json(), 64, {{"tp", 2}, {"pp", 1}, {"dp", 32}, {"ep", 32}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    const StageParams rank = layer_params_per_gpu(s.model, l, 0);
    CHECK(rank.dense == doctest::Approx((gdn_params(m) - 128) / 2 + 128 + 2 * 2048 + 2048.0 * 512 + mlp_params(m, 512) / 2).epsilon(1e-15));
    // The same rank's parameters tensor by tensor (what ZeRO-3 gathers) add up to it.
    const std::vector<double> tensors = layer_parameter_tensors(s.model, l, 0);
    CHECK(std::accumulate(tensors.begin(), tensors.end(), 0.0) == doctest::Approx(rank.total()).epsilon(1e-12));
}

TEST_CASE("a gated delta net's delta rule runs as 16-bit batched GEMMs at its stacked shapes, its backward recomputing W, U and the states") {
    const Scenario s = scenario(preset_json(), 64, {{"tp", 2}, {"pp", 1}, {"dp", 32}, {"ep", 32}, {"microbatch", 1}});
    const Layout l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const CostContext c = ctx.costs();
    const LayoutGroups g = analyse_groups(c.network, l, s.model);
    const LayerCost linear = layer_cost(c, l, g, 0);
    // T = 4096 tokens, 32 / tp 2 = 16 value heads: rows = T x 16; chunk C = 64, dk = dv = 128.
    const double rows = 4096.0 * 16, C = 64, dk = 128, dv = 128;
    const double w_u = bf16_gemm(c, rows, dk, C) + bf16_gemm(c, rows, dv, C);
    const double state = bf16_gemm(c, rows, dv, dk) + bf16_gemm(c, dk * rows / C, dv, C);
    const double products = bf16_gemm(c, rows, C, dk) + bf16_gemm(c, rows / 3, C, C) + w_u + state + bf16_gemm(c, rows, dv, dk) +
                            bf16_gemm(c, rows, C, dk) + bf16_gemm(c, rows, dv, C);
    CHECK(linear.forward.attention == doctest::Approx(products).epsilon(1e-12));
    CHECK(linear.backward.attention == doctest::Approx(2 * products + w_u + state).epsilon(1e-12));
    CHECK(linear.forward.cp == 0);
    // The gated attention layer runs flash attention instead, and both layers dispatch to experts.
    const LayerCost full = layer_cost(c, l, g, 3);
    CHECK(full.forward.attention > 0);
    CHECK(full.forward.attention != doctest::Approx(products));
    CHECK(linear.forward.ep == doctest::Approx(full.forward.ep).epsilon(1e-12));
}

TEST_CASE("model FLOPs count attention in the gated attention layers and the delta rule as Megatron-LM does") {
    const Scenario s = scenario(preset_json(), 64, {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 64}, {"microbatch", 1}});
    const ModelSpec& m = s.model;
    const ParamCounts p = count_params(m);
    const double tokens = 64.0 * 4096, h = 2048, vocab = 151936;
    const double dense = p.active(m) - p.embedding - p.output + vocab * h;
    // Megatron-LM training.py: per gated delta net layer and token, 4 x 32 value heads x 128^2
    // multiply-adds forward (2 FLOPs each), three passes.
    CHECK(gdn_rule_flops_per_token(m) == 2.0 * 4 * 32 * 128 * 128);
    const double expected = tokens * (6 * dense + 12 * 16 * 256 * 12 * 4096.0 + 36 * 3 * 8.0 * 32 * 128 * 128);
    CHECK(model_flops_per_step(s) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("a gated delta net layer keeps the conv input, the normed and repeated queries and keys, the chunk's A and the gated norm's inputs") {
    const json layout = {{"tp", 1},  {"pp", 1},           {"dp", 64}, {"ep", 64}, {"microbatch", 1}, {"sequence_parallel", false},
                         {"recompute", "none"}};
    const Scenario s = scenario(preset_json(), 64, layout);
    const Layout l = resolve_layout(s, s.layout);
    const RuntimeTraits t = runtime_traits(s);
    REQUIRE(t.saved_input_bytes == 2.0);
    REQUIRE(t.flash_attention);
    // Both layers hold the same MoE block: the difference is the mixers'. Per token, 16-bit: the
    // gated delta net's conv input (8192), normed q and k (2 x 2048), q and k repeated to the 32
    // value heads (2 x 4096), v (4096), g, beta, the norm's deviation (4 + 2 + 4 B a head) and A
    // (64 a head), the scan output and the gate (2 x 4096), out_proj's input (4096).
    const double gdn = 2 * 8192 + 2 * 2 * 2048 + 2 * 2 * 4096 + 2 * 4096 + (4 + 2 + 4 + 2 * 64) * 32 + 2 * 2 * 4096 + 2 * 4096;
    // Gated attention: q, k, v (4096 + 2 x 512), out_proj's input (4096), the gate and the core
    // output beside it (2 x 4096), the fp32 log-sum-exp per head.
    const double attention = 2 * (4096 + 2 * 512) + 2 * 4096 + 2 * 2 * 4096 + 4 * 16;
    CHECK(layer_activation_bytes(s, l, t, 0) - layer_activation_bytes(s, l, t, 3) == doctest::Approx(4096 * (gdn - attention)).epsilon(1e-12));
}

TEST_CASE("Qwen3.5's config.json files match the published totals, and Qwen3-Next's keys read into the preset's model") {
    // Model names (total parameters; the published totals include the vision tower, which
    // Sextant does not count: under 1.5%).
    for (const auto& [file, total, linear, full] : {std::tuple{"qwen3.5-35b-a3b.json", 35e9, 30, 10},
                                                    std::tuple{"qwen3.5-122b-a10b.json", 122e9, 36, 12},
                                                    std::tuple{"qwen3.5-397b-a17b.json", 397e9, 45, 15},
                                                    std::tuple{"qwen3.5-27b.json", 27e9, 48, 16}}) {
        CAPTURE(file);
        const ModelSpec m = hf(hf_file(file));
        CHECK(count_params(m).total() == doctest::Approx(total).epsilon(0.015));
        CHECK(m.mixer_layer_count(Mixer::GatedDeltaNet) == linear);
        CHECK(m.mixer_layer_count(Mixer::Attention) == full);
        CHECK(m.attention_output_gate);
        CHECK(m.mtp_layers == 1);
    }
    CHECK_FALSE(hf(hf_file("qwen3.5-27b.json")).is_moe());
    // Qwen3-Next: the same model as the preset, part for part.
    const ModelSpec from_hf = hf(qwen3_next_config());
    const ModelSpec from_preset = preset();
    const ParamCounts a = count_params(from_hf), b = count_params(from_preset);
    CHECK(a.total() == b.total());
    CHECK(a.gdn == b.gdn);
    CHECK(a.attention == b.attention);
    CHECK(a.active(from_hf) == b.active(from_preset));
    CHECK(from_hf.gdn->full_attention_interval == 4);
    // A qwen3_next file that also names the gate (Qwen3.5's key) reads the same.
    json gated = qwen3_next_config();
    gated["attn_output_gate"] = true;
    CHECK(count_params(hf(gated)).total() == b.total());
    // layer_types without a period, or another attention kind, cannot be expressed.
    json config = qwen3_next_config();
    config["num_hidden_layers"] = 4;
    config["layer_types"] = {"linear_attention", "full_attention", "linear_attention", "linear_attention"};
    CHECK_THROWS_WITH_AS(hf(config), doctest::Contains("/model/layer_types"), InputError);
    config["layer_types"] = {"linear_attention", "sliding_attention", "linear_attention", "full_attention"};
    CHECK_THROWS_WITH_AS(hf(config), doctest::Contains("/model/layer_types/1"), InputError);
    config = qwen3_next_config();
    config["linear_num_value_heads"] = 24;
    CHECK_THROWS_WITH_AS(hf(config), doctest::Contains("/model/linear_num_value_heads"), InputError);
    // Another family's file with gated delta net keys is refused, not read as a dense model.
    json llama = {{"model_type", "llama"}, {"hidden_size", 2048}, {"num_hidden_layers", 4}, {"num_attention_heads", 16},
                  {"intermediate_size", 5120}, {"vocab_size", 1000}, {"linear_key_head_dim", 128}};
    CHECK_THROWS_WITH_AS(hf(llama), doctest::Contains("/model/linear_key_head_dim"), InputError);
}

TEST_CASE("gated delta nets: each rule is an input error naming its field, and TP and CP follow Megatron-Core's asserts") {
    const auto with = [](const char* key, const json& value) {
        json m = preset_json();
        m[key] = value;
        return input_error(m);
    };
    CHECK(with("gated_delta_net", {{"key_heads", 12}}).find("/model/gated_delta_net/value_heads") != std::string::npos);
    CHECK(with("gated_delta_net", {{"full_attention_interval", 1}}).find("/model/gated_delta_net/full_attention_interval") != std::string::npos);
    CHECK(with("sliding_window", {{"tokens", 4096}}).find("/model/sliding_window") != std::string::npos);
    std::string pattern;
    for (int i = 0; i < 24; ++i) pattern += "*E";
    CHECK(with("hybrid_override_pattern", pattern).find("/model/gated_delta_net") != std::string::npos);
    // TP must divide the key heads (16) and value heads; CP a TP rank's key and value heads.
    CHECK(mixer_split_rule(preset(), 32, 1).find("key heads (16)") != std::string::npos);
    CHECK(mixer_split_rule(preset(), 16, 1).empty());
    CHECK(mixer_split_rule(preset(), 2, 8).empty());
    CHECK(mixer_split_rule(preset(), 4, 8).find("a TP rank's gated delta net key heads (16 / tp 4)") != std::string::npos);
    json wide = preset_json();
    wide["heads"] = 32;
    wide["kv_heads"] = 32;
    CHECK_THROWS_WITH_AS(scenario(wide, 64, {{"tp", 32}, {"pp", 1}, {"dp", 2}, {"ep", 64}, {"microbatch", 1}}),
                         doctest::Contains("/layout/tp"), InputError);
    // Context parallelism is the runtime's: Megatron-Core b0cc2706 (nemo-2026) has none for the
    // gated delta net, Megatron-Core 0.18 (megatron-core-2026) has it.
    const json cp2 = {{"tp", 1}, {"pp", 1}, {"dp", 32}, {"cp", 2}, {"ep", 64}, {"microbatch", 1}};
    CHECK_THROWS_WITH_AS(StepContext(scenario(preset_json(), 64, cp2)), doctest::Contains("/layout/cp"), InputError);
    CHECK_NOTHROW(StepContext(scenario(preset_json(), 64, cp2, "megatron-core-2026")));
}

TEST_CASE("the planner searches only TP degrees the gated delta net's heads divide, and CP only where the runtime has it") {
    const Scenario s = scenario(preset_json(), 64, json::object());
    SearchOptions o;
    o.framework = load_runtime_profile("nemo-2026", "").features;
    std::set<std::int64_t> tps, cps;
    std::size_t count = 0;
    for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) {
        tps.insert(c.tp);
        cps.insert(c.cp);
        ++count;
    }
    CHECK(count > 0);
    CHECK(cps == std::set<std::int64_t>{1});
    for (const std::int64_t tp : tps) CHECK(16 % tp == 0);
    CHECK(tps.count(2) == 1);
    // Under megatron-core-2026 CP joins the search, where it divides a TP rank's key heads.
    o.framework = load_runtime_profile("megatron-core-2026", "").features;
    std::set<std::pair<std::int64_t, std::int64_t>> splits;
    for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) splits.emplace(c.tp, c.cp);
    CHECK(splits.count({2, 2}) == 1);
    CHECK(splits.count({1, 4}) == 1);
    for (const auto& [tp, cp] : splits) CHECK((16 / tp) % cp == 0);
}

TEST_CASE("gated delta net context parallelism: the in_proj output and the gated norm's output each cross the CP group by all-to-all, both ways, waited") {
    // TP 8 x CP 2 on 16 H100s: each CP group spans two nodes, so its all-to-alls cross the NICs.
    const json layout = {{"tp", 8}, {"pp", 1}, {"dp", 1}, {"cp", 2}, {"ep", 16}, {"expert_tp", 1}, {"microbatch", 1}};
    const Scenario s = scenario(preset_json(), 16, layout, "megatron-core-2026");
    const Layout l = resolve_layout(s, s.layout);
    const StepContext ctx(s);
    const CostContext c = ctx.costs();
    const LayoutGroups g = analyse_groups(c.network, l, s.model);
    REQUIRE(g.cp.ranks == 2);
    REQUIRE(g.cp.domains == 2);
    const LayerCost linear = layer_cost(c, l, g, 0), full = layer_cost(c, l, g, 3);
    // T = 4096 / cp 2 tokens of this rank; in_proj 2 x 2048 + 2 x 4096 + 2 x 32 = 12352 wide and
    // the norm's output 4096, each / tp 8, 16 bits.
    const double T = 2048, tp = 8;
    const auto a2a = [&](double width) { return c.network.cost(CollectiveOp::AllToAll, Bytes(T * width / tp * 2), g.cp).time.value(); };
    const double exchange = a2a(12352) + a2a(4096);
    CHECK(linear.forward.cp == doctest::Approx(exchange).epsilon(1e-12));
    CHECK(linear.backward.cp == doctest::Approx(exchange).epsilon(1e-12));
    CHECK(linear.forward.cp_waited == linear.forward.cp);
    CHECK(linear.backward.cp_waited == linear.backward.cp);
    // Across nodes the all-to-all is the NIC's: the CP group is analysed for it, and half of each
    // rank's bytes cross at the NIC's 50 GB/s at best.
    CHECK(g.cp.all_to_all_seconds_per_byte > 0);
    CHECK(a2a(12352) >= T * 12352 / tp * 2 / 2 / 50e9);
    // The gated attention layer keeps its K/V ring.
    CHECK(full.forward.cp > 0);
    CHECK(full.forward.cp_waited == 0);
}

TEST_CASE("Megatron's export names the gated delta net, its placement and sizes, and the output gate") {
    const Scenario s = scenario(preset_json(), 64, {{"tp", 1}, {"pp", 1}, {"dp", 64}, {"ep", 64}, {"microbatch", 1}});
    const Emitted e = emit_plan(EmitFormat::Megatron, s, resolve_layout(s, s.layout));
    std::map<std::string, std::string> args;
    for (const auto& [name, value] : e.args) args[name] = value.value_or("");
    CHECK(args["--experimental-attention-variant"] == "gdn");
    CHECK(args["--linear-attention-freq"] == "4");
    CHECK(args["--linear-num-key-heads"] == "16");
    CHECK(args["--linear-num-value-heads"] == "32");
    CHECK(args["--linear-key-head-dim"] == "128");
    CHECK(args["--linear-value-head-dim"] == "128");
    CHECK(args["--linear-conv-kernel-dim"] == "4");
    CHECK(args.count("--attention-output-gate") == 1);
}

TEST_CASE("the CLI simulates Qwen3-Next at Megatron-Bridge's H100 layout and says what its MFU counts") {
    const test::Output ok = test::run_sextant("simulate " + test::source_path("scenarios/qwen3-next-h100.json"));
    CHECK(ok.code == 0);
    CHECK(ok.out.find("Qwen3-Next-80B-A3B on 128 x H100-SXM5-80GB") != std::string::npos);
    CHECK(ok.out.find("gated delta net layer's delta rule") != std::string::npos);
    CHECK(ok.out.find("(fits)") != std::string::npos);
}
