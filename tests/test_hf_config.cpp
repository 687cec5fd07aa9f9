// Hugging Face config.json files of today's models (tests/data/hf/, origins in its README) read
// into parameter counts checked against the published totals, and the configs Sextant cannot
// model refused with the JSON path that names what it does not model.
//
// Tolerances: a published total rounded to k significant figures is held to half a unit in its
// last place (30.5e9: 0.2%); where the publisher counts something Sextant does not (a vision
// tower, a padded vocabulary, the per-layer norms beyond Sextant's two), the test says what and
// how much. Sextant counts two RMSNorms per layer; Gemma 2 and 3 have four, and Qwen3 and
// Gemma 3 add query/key norms (2 x head_dim): at most 4e-5 of any model here.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/params.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
std::filesystem::path data_file(const std::string& name) {
    return std::filesystem::path(SEXTANT_SOURCE_DIR) / "tests/data/hf" / name;
}
json config(const std::string& name) { return load_json_file(data_file(name), "/model"); }
ModelSpec read(const std::string& name) { return parse_hf_config(config(name), "/model"); }
double non_embedding(const ParamCounts& c) { return c.total() - c.embedding - c.output; }
double d(std::int64_t v) { return static_cast<double>(v); }

void expect_error(const json& cfg, const std::string& path, const std::string& fragment) {
    try {
        parse_hf_config(cfg, "/model");
        FAIL("expected an InputError at " << path);
    } catch (const InputError& e) {
        CHECK(e.path() == path);
        CHECK_MESSAGE(std::string(e.what()).find(fragment) != std::string::npos, e.what());
    }
}
}  // namespace

TEST_CASE("Qwen3-MoE: 128 experts in every layer, 30B-A3B and 235B-A22B match Qwen's totals") {
    // Qwen's model cards: 30.5B total, 3.3B activated, 29.9B non-embedding; 235B, 22B, 234B.
    const ModelSpec small = read("qwen3-30b-a3b.json");
    CHECK(small.position == PositionKind::Rotary);  // rope_scaling null: plain RoPE
    CHECK(small.moe.experts == 128);
    CHECK(small.moe.top_k == 8);
    CHECK(small.moe.expert_ffn_hidden == 768);
    CHECK(small.moe_layer_count() == 48);
    CHECK(small.head_dim == 128);  // not hidden / heads = 64
    const ParamCounts c = count_params(small);
    CHECK(c.total() == doctest::Approx(30.5e9).epsilon(0.002));
    CHECK(c.active(small) == doctest::Approx(3.3e9).epsilon(0.02));  // 3.35e9: at the edge of "3.3B"
    CHECK(non_embedding(c) == doctest::Approx(29.9e9).epsilon(0.002));

    const ModelSpec big = read("qwen3-235b-a22b.json");
    const ParamCounts b = count_params(big);
    CHECK(b.total() == doctest::Approx(235e9).epsilon(0.0025));
    CHECK(b.active(big) == doctest::Approx(22e9).epsilon(0.023));
    CHECK(non_embedding(b) == doctest::Approx(234e9).epsilon(0.0025));
}

TEST_CASE("Qwen3 dense: head_dim 128 beside hidden / heads = 80, 32B and 8B match Qwen's totals") {
    // Qwen3-32B: 32.8B, 31.2B non-embedding; Qwen3-8B: 8.2B, 6.95B non-embedding (model cards).
    const ModelSpec m32 = read("qwen3-32b.json");
    CHECK(m32.head_dim == 128);
    CHECK(!m32.is_moe());
    CHECK(!m32.qkv_bias);
    const ParamCounts c32 = count_params(m32);
    CHECK(c32.total() == doctest::Approx(32.8e9).epsilon(0.0016));
    CHECK(non_embedding(c32) == doctest::Approx(31.2e9).epsilon(0.0016));
    const ParamCounts c8 = count_params(read("qwen3-8b.json"));
    CHECK(c8.total() == doctest::Approx(8.2e9).epsilon(0.006));
    CHECK(non_embedding(c8) == doctest::Approx(6.95e9).epsilon(0.0008));
}

TEST_CASE("Qwen2-57B-A14B: 64 experts, one shared expert of 20480, QKV biases") {
    // The name's totals, rounded to whole billions: 57B (0.9%) and 14B active (3.6%).
    const ModelSpec m = read("qwen2-57b-a14b.json");
    CHECK(m.moe.experts == 64);
    CHECK(m.moe.shared_experts == 1);
    CHECK(m.moe.shared_ffn_hidden == 20480);
    CHECK(m.qkv_bias);
    const ParamCounts c = count_params(m);
    CHECK(c.total() == doctest::Approx(57e9).epsilon(0.009));
    CHECK(c.active(m) == doctest::Approx(14e9).epsilon(0.036));
}

TEST_CASE("gpt-oss: biased experts and attention, 128-token windows on alternate layers") {
    // OpenAI's model card: 116.83B total (114.71B MLP, 0.96B attention, 1.16B embedding and
    // unembedding), 5.13B active; 20.91B and 3.61B. Its active count takes the unembedding but
    // not the embedding (a table lookup); Sextant's active count takes both.
    const ModelSpec m = read("gpt-oss-120b.json");
    CHECK(m.linear_bias);
    CHECK(m.position == PositionKind::Yarn);  // rope_scaling.rope_type "yarn"
    CHECK(m.activation_clamp == 7.0);           // swiglu_limit
    CHECK(m.moe.experts == 128);
    CHECK(m.moe.top_k == 4);
    CHECK(m.window.tokens == 128);
    CHECK(m.window.local == 1);
    CHECK(m.window.global == 1);
    CHECK(!m.window.chunked);
    CHECK(m.layer_is_windowed(0));
    CHECK(!m.layer_is_windowed(1));
    const ParamCounts c = count_params(m);
    CHECK(c.total() == doctest::Approx(116.83e9).epsilon(0.0005));
    CHECK(c.moe_experts + c.moe_shared == doctest::Approx(114.71e9).epsilon(0.0005));
    CHECK(c.attention == doctest::Approx(0.96e9).epsilon(0.006));
    CHECK(c.active(m) - c.embedding == doctest::Approx(5.13e9).epsilon(0.001));

    const ModelSpec s = read("gpt-oss-20b.json");
    const ParamCounts cs = count_params(s);
    CHECK(cs.total() == doctest::Approx(20.91e9).epsilon(0.0005));
    CHECK(cs.active(s) - cs.embedding == doctest::Approx(3.61e9).epsilon(0.002));
}

TEST_CASE("Gemma 2: tied embeddings by default, GeGLU, 4096-token windows on alternate layers") {
    // Gemma 2 report (Gemma Team 2024), Table 1: 8,324,201,984 and 26,047,480,320 non-embedding
    // parameters. The two extra norms per layer Sextant does not count are 3.6e-5 and 1.6e-5.
    const ModelSpec m = read("gemma-2-9b.json");  // the file has no tie_word_embeddings: Gemma2Config's default is true
    CHECK(m.tied_embeddings);
    CHECK(m.mlp == MlpKind::GeGlu);
    CHECK(m.head_dim == 256);
    CHECK(m.window.tokens == 4096);
    CHECK(m.window.local == 1);
    CHECK(m.window.global == 1);
    const ParamCounts c = count_params(m);
    CHECK(c.output == 0);
    CHECK(c.embedding == d(256000) * d(3584));
    CHECK(non_embedding(c) == doctest::Approx(8324201984.0).epsilon(5e-5));
    CHECK(non_embedding(count_params(read("gemma-2-27b.json"))) == doctest::Approx(26047480320.0).epsilon(5e-5));
}

TEST_CASE("Gemma 3 27B: the language model under text_config, 1024-token windows on 5 of 6 layers") {
    // Gemma 3 report (Gemma Team 2025), Table 1, 27B: 25,600M non-embedding parameters, 1,416M
    // embedding parameters (which take the 1152 x 5376 vision projector, 6.2M, besides the
    // 262,208 x 5376 token embedding), 417M in the vision encoder Sextant does not model.
    const ModelSpec m = read("gemma-3-27b-it.json");
    CHECK(m.tied_embeddings);
    CHECK(m.mlp == MlpKind::GeGlu);
    CHECK(m.vocab == 262208);  // Gemma3TextConfig's default: the file leaves it out
    CHECK(m.window.tokens == 1024);
    CHECK(m.window.local == 5);
    CHECK(m.window.global == 1);
    CHECK(m.layer_is_windowed(60));
    CHECK(!m.layer_is_windowed(5));
    CHECK(m.source.find("text_config") != std::string::npos);
    CHECK(m.source.find("vision_config (not modelled") != std::string::npos);
    const ParamCounts c = count_params(m);
    CHECK(non_embedding(c) == doctest::Approx(25600e6).epsilon(5e-5));
    CHECK(c.embedding + 1152.0 * 5376.0 == doctest::Approx(1416e6).epsilon(3.5e-4));
    CHECK(c.output == 0);
}

TEST_CASE("Llama 4: routed plus shared experts, dense layers of intermediate_size_mlp, chunked attention") {
    // Meta's model cards: Scout 109B total, 17B active; Maverick 400B, 17B. The totals take the
    // vision encoder and projector, 0.87e9 by its vision_config (34 layers of 1408, adapter and
    // projector), which Sextant leaves out; each is rounded to 1B.
    const double vision = 0.872e9;
    const ModelSpec scout = read("llama-4-scout-17b-16e-instruct.json");
    CHECK(scout.moe.experts == 16);
    CHECK(scout.moe.top_k == 1);
    CHECK(scout.moe.shared_experts == 1);
    CHECK(scout.moe_layer_count() == 48);
    CHECK(scout.window.chunked);
    CHECK(scout.window.tokens == 8192);
    CHECK(scout.window.local == 3);  // every fourth layer is NoPE with full attention
    CHECK(scout.window.global == 1);
    CHECK(!scout.tied_embeddings);
    CHECK(scout.source.find("vision_config") != std::string::npos);
    const ParamCounts s = count_params(scout);
    CHECK(s.total() + vision == doctest::Approx(109e9).epsilon(0.005));
    CHECK(s.active(scout) == doctest::Approx(17e9).epsilon(0.03));

    const ModelSpec maverick = read("llama-4-maverick-17b-128e-instruct.json");
    CHECK(maverick.moe.experts == 128);
    CHECK(maverick.moe.first_dense_layers == 1);  // layers 1, 3, 5, ... (interleave_moe_layer_step 2)
    CHECK(maverick.moe.layer_frequency == 2);
    CHECK(maverick.moe_layer_count() == 24);
    CHECK(maverick.ffn_hidden == 16384);
    CHECK(maverick.moe.expert_ffn_hidden == 8192);
    const ParamCounts v = count_params(maverick);
    CHECK(v.total() + vision == doctest::Approx(400e9).epsilon(0.005));
    CHECK(v.active(maverick) == doctest::Approx(17e9).epsilon(0.03));
}

TEST_CASE("DeepSeek-V3 and Kimi K2: multi-head latent attention, shared experts, dense first layers") {
    const ModelSpec ds = read("deepseek-v3.json");
    CHECK(ds.attention == AttentionKind::MultiLatent);
    CHECK(ds.moe.first_dense_layers == 3);
    CHECK(ds.mtp_layers == 1);
    const ParamCounts c = count_params(ds);
    CHECK(c.total() == doctest::Approx(671e9).epsilon(0.002));
    CHECK(c.active(ds) == doctest::Approx(37e9).epsilon(0.02));
    CHECK(c.total() + c.mtp == doctest::Approx(685e9).epsilon(0.003));

    // Moonshot: 1T total and 32B activated (model card), 1.04T in the K2 report. The config
    // gives 1.026e12 and 32.9e9: within 1.5% of the report's total and 3% of the card's 32B.
    const ModelSpec k2 = read("kimi-k2-instruct.json");
    CHECK(k2.moe.experts == 384);
    CHECK(k2.moe.first_dense_layers == 1);
    CHECK(k2.mtp_layers == 0);
    CHECK(k2.heads == 64);
    const ParamCounts k = count_params(k2);
    CHECK(k.total() == doctest::Approx(1.04e12).epsilon(0.015));
    CHECK(k.active(k2) == doctest::Approx(32e9).epsilon(0.03));
}

TEST_CASE("Mixtral 8x7B from its config.json: 46.7B total, 12.9B active") {
    const ModelSpec m = read("mixtral-8x7b-v0.1.json");
    CHECK(m.window.tokens == 0);  // "sliding_window": null
    const ParamCounts c = count_params(m);
    CHECK(c.total() == doctest::Approx(46.7e9).epsilon(0.002));
    CHECK(c.active(m) == doctest::Approx(12.9e9).epsilon(0.004));
}

TEST_CASE("a Qwen-VL config: the text_config language model is Qwen3-30B-A3B's, the vision tower is named as left out") {
    const ModelSpec vl = read("qwen3-vl-30b-a3b-instruct.json");
    const ModelSpec text = read("qwen3-30b-a3b.json");
    CHECK(!vl.tied_embeddings);  // tie_word_embeddings sits beside text_config, not in it
    CHECK(count_params(vl).total() == count_params(text).total());
    CHECK(count_params(vl).active(vl) == count_params(text).active(text));
    CHECK(vl.source.find("model_type qwen3_vl_moe") != std::string::npos);
    CHECK(vl.source.find("vision_config (not modelled") != std::string::npos);
    // The same config in transformers' older flat layout (Qwen2.5-VL's): text keys at the top.
    json flat = config("qwen3-vl-30b-a3b-instruct.json")["text_config"];
    flat["model_type"] = "qwen2_5_vl";
    flat.erase("decoder_sparse_step");
    flat.erase("moe_intermediate_size");
    flat.erase("mlp_only_layers");
    flat.erase("num_experts");
    flat.erase("num_experts_per_tok");
    flat["vision_config"] = {{"depth", 32}};
    const ModelSpec qwen25 = parse_hf_config(flat, "/model");
    CHECK(qwen25.qkv_bias);  // Qwen2's q, k and v projections always have biases
    CHECK(qwen25.source.find("vision_config (not modelled") != std::string::npos);
}

TEST_CASE("chunked attention: a query sees the keys of its own aligned block") {
    ModelSpec m = read("llama-4-scout-17b-16e-instruct.json");
    const double c = 8192;
    // Up to one block the layer is causal; then n blocks of C (C + 1) / 2 keys plus the rest.
    CHECK(m.mean_causal_keys(0, 8192) == doctest::Approx((c + 1) / 2));
    CHECK(m.mean_causal_keys(0, 4096) == doctest::Approx(4097.0 / 2));
    CHECK(m.mean_causal_keys(0, 20480) == doctest::Approx((2 * c * (c + 1) / 2 + 4096.0 * 4097 / 2) / 20480));
    CHECK(m.mean_causal_keys(3, 20480) == doctest::Approx(20481.0 / 2));  // the NoPE layer is full
    // A band of the same width sees more: W - W(W - 1) / 2s.
    m.window.chunked = false;
    CHECK(m.mean_causal_keys(0, 20480) == doctest::Approx(c - c * (c - 1) / (2 * 20480)));
    // Sextant's own format says the same with "chunked": true.
    const json own = {{"layers", 48}, {"hidden", 5120}, {"heads", 40}, {"vocab", 202048}, {"ffn_hidden", 16384},
                      {"sliding_window", {{"tokens", 8192}, {"layers", {{"local", 3}, {"global", 1}}}, {"chunked", true}}}};
    const ModelSpec parsed = parse_model(own, "/model");
    CHECK(parsed.window.chunked);
    CHECK(parsed.mean_causal_keys(0, 20480) == doctest::Approx((2 * c * (c + 1) / 2 + 4096.0 * 4097 / 2) / 20480));
}

TEST_CASE("a scenario can name a multimodal config.json as its model") {
    json s = {{"model", data_file("gemma-3-27b-it.json").string()},
              {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 16}, {"gpus_per_node", 8}, {"nic_gbps_per_gpu", 400}}},
              {"seq_len", 4096},
              {"global_batch", 32},
              {"layout", {{"tp", 8}, {"pp", 1}, {"dp", 2}}}};
    const Scenario parsed = parse_scenario(s, data_dir());
    CHECK(parsed.model.layers == 62);
    CHECK(parsed.model.window.local == 5);
}

TEST_CASE("configs Sextant does not model are input errors that name the key") {
    const json qwen_moe = config("qwen3-30b-a3b.json");
    json bad = qwen_moe;
    bad["model_type"] = "glm4_moe";  // an unknown architecture with MoE keys: never a dense read
    expect_error(bad, "/model/model_type", "is not a model_type Sextant reads");
    bad["model_type"] = "jamba";  // Mamba mixers in attention periods: a hybrid Sextant has no reader for
    bad["attn_layer_period"] = 8;
    expect_error(bad, "/model/model_type", "is not a model_type Sextant reads");

    bad = config("qwen3-32b.json");
    bad["model_type"] = "llama";
    bad["num_local_experts"] = 8;  // experts the llama reader does not place
    expect_error(bad, "/model/num_local_experts", "is not part of model_type llama");

    // A hybrid's mixer keys under a family Sextant reads are refused, not read as a dense model.
    const json qwen3 = config("qwen3-8b.json");
    json hybrid = qwen3;
    hybrid["hybrid_override_pattern"] = "M*M-M*M-";
    expect_error(hybrid, "/model/hybrid_override_pattern", "is not part of model_type qwen3");
    hybrid = qwen3;
    hybrid["linear_num_value_heads"] = 32;
    expect_error(hybrid, "/model/linear_num_value_heads", "is not part of model_type qwen3");

    bad = qwen_moe;
    bad["mlp_only_layers"] = {0, 5};  // dense layers 0 and 5: not every n-th after the first k
    expect_error(bad, "/model/mlp_only_layers", "pattern Sextant cannot express");
    bad["mlp_only_layers"] = {0};  // one leading dense layer is expressible
    CHECK(parse_hf_config(bad, "/model").moe.first_dense_layers == 1);
    bad["mlp_only_layers"] = {48};
    expect_error(bad, "/model/mlp_only_layers/0", "must be at most 47");

    bad = qwen_moe;
    bad["num_experts_per_tok"] = 200;
    expect_error(bad, "/model/num_experts_per_tok", "must not exceed num_experts (128)");
    bad = qwen_moe;
    bad.erase("moe_intermediate_size");
    expect_error(bad, "/model/moe_intermediate_size", "is required");

    bad = qwen_moe;
    bad["use_sliding_window"] = true;
    bad["sliding_window"] = 4096;
    bad["max_window_layers"] = 28;  // windows on layers 28..47 only: full layers first
    expect_error(bad, "/model/max_window_layers", "layer pattern Sextant cannot express");
    bad["max_window_layers"] = 0;  // every layer windowed
    CHECK(parse_hf_config(bad, "/model").window.tokens == 4096);

    bad = config("gpt-oss-20b.json");
    bad["layer_types"][0] = "full_attention";  // full, full, sliding, full, ...
    expect_error(bad, "/model/layer_types", "layer pattern Sextant cannot express");
    bad["layer_types"][0] = "linear_attention";
    expect_error(bad, "/model/layer_types/0", "other attention kinds are not modelled");
    bad["layer_types"][0] = "chunked_attention";
    expect_error(bad, "/model/layer_types", "mixes sliding and chunked");
    bad = config("gpt-oss-20b.json");
    bad["attention_bias"] = false;
    expect_error(bad, "/model/attention_bias", "expert biases without attention biases");
    bad = config("gpt-oss-20b.json");
    bad["swiglu_limit"] = -7.0;
    expect_error(bad, "/model/swiglu_limit", "must be a number, 0 or more");
    bad["swiglu_limit"] = "7";
    expect_error(bad, "/model/swiglu_limit", "must be a number, 0 or more");

    bad = config("gemma-3-27b-it.json");
    bad["text_config"]["hidden_activation"] = "relu";
    expect_error(bad, "/model/text_config/hidden_activation", "not a gated-MLP activation");
    bad = config("gemma-3-27b-it.json");
    bad["text_config"]["n_routed_experts"] = 64;
    expect_error(bad, "/model/text_config/n_routed_experts", "is not part of model_type gemma3_text");
    bad = config("gemma-3-27b-it.json");
    bad["text_config"] = "gemma";
    expect_error(bad, "/model/text_config", "must be a JSON object");
    json flat = config("gemma-3-27b-it.json")["text_config"];
    flat["model_type"] = "gemma3";  // the wrapper's type on a flat file: transformers would ignore these keys
    expect_error(flat, "/model/text_config", "is required for model_type gemma3");

    bad = config("llama-4-maverick-17b-128e-instruct.json");
    bad["text_config"]["moe_layers"] = {1, 2, 5};
    expect_error(bad, "/model/text_config/moe_layers", "pattern Sextant cannot express");
    bad = config("llama-4-maverick-17b-128e-instruct.json");
    bad["text_config"]["no_rope_layers"] = {1, 1, 0};
    expect_error(bad, "/model/text_config/no_rope_layers", "one entry per layer (48)");

    bad = config("deepseek-v3.json");
    bad["moe_layer_freq"] = 2;  // layers 4, 6, 8, ...: expressible (the first MoE layer is 4)
    CHECK(parse_hf_config(bad, "/model").moe.first_dense_layers == 4);
    bad["attention_bias"] = true;
    expect_error(bad, "/model/attention_bias", "biases in DeepSeek's attention are not modelled");
}

TEST_CASE("the CLI refuses a config.json it cannot model with exit code 2 and the key") {
    const auto dir = std::filesystem::temp_directory_path() / "sextant-hf-cli-test";
    std::filesystem::create_directories(dir);
    json model = config("qwen3-30b-a3b.json");
    model["model_type"] = "glm4_moe";
    std::ofstream(dir / "model.json") << model.dump();
    const json scenario = {{"model", (dir / "model.json").string()},
                           {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"gpus_per_node", 8}}},
                           {"seq_len", 4096},
                           {"global_batch", 8},
                           {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 8}}}};
    std::ofstream(dir / "scenario.json") << scenario.dump();
    const std::string err = (dir / "stderr.txt").string();
    const int status = std::system((std::string(SEXTANT_BINARY) + " check " + (dir / "scenario.json").string() + " >/dev/null 2>" + err).c_str());
    CHECK(WEXITSTATUS(status) == 2);
    std::ifstream in(err);
    const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(message.find("/model/model_type") != std::string::npos);
    CHECK(message.find("glm4_moe") != std::string::npos);
}

TEST_CASE("Nemotron-H and Nemotron 3 configs read to their Megatron-Bridge providers and published totals") {
    // NVIDIA-Nemotron-3-Nano-30B-A3B: 31.6e9 total, 3.2e9 active without the embedding (model
    // card); the preset is Megatron-Bridge's Nemotron3NanoProvider.
    for (const auto& [file, preset, total] : {std::tuple{"nemotron-3-nano-30b-a3b.json", "nemotron-3-nano-30b-a3b", 31.6e9},
                                              std::tuple{"nemotron-h-56b-base-8k.json", "nemotron-h-56b", 56e9}}) {
        CAPTURE(file);
        const ModelSpec hf = read(file);
        const ModelSpec m = parse_model(load_preset("models", preset, "/model"), "/model");
        CHECK(hf.hybrid_pattern == m.hybrid_pattern);
        CHECK(hf.position == PositionKind::None);
        CHECK(hf.mlp == MlpKind::SquaredRelu);
        CHECK(hf.head_dim == 128);  // the 56B file names it attention_head_dim
        CHECK(hf.mamba.inner() == m.mamba.inner());
        CHECK(hf.mamba.conv_channels() == m.mamba.conv_channels());
        CHECK(count_params(hf).total() == doctest::Approx(count_params(m).total()).epsilon(1e-12));
        CHECK(count_params(hf).active(hf) == doctest::Approx(count_params(m).active(m)).epsilon(1e-12));
        CHECK(count_params(hf).total() == doctest::Approx(total).epsilon(total == 56e9 ? 0.01 : 0.002));
    }
    const ModelSpec nano = read("nemotron-3-nano-30b-a3b.json");
    CHECK(count_params(nano).active(nano) - count_params(nano).embedding == doctest::Approx(3.2e9).epsilon(0.01));
    CHECK(nano.moe.shared_experts == 1);
    CHECK(nano.moe.shared_ffn_hidden == 3712);

    // The same pattern as transformers' newer block names.
    json named = config("nemotron-3-nano-30b-a3b.json");
    const std::string pattern = named["hybrid_override_pattern"].get<std::string>();
    named.erase("hybrid_override_pattern");
    named["layers_block_type"] = json::array();
    for (char c : pattern) named["layers_block_type"].push_back(c == 'M' ? "mamba" : c == '*' ? "attention" : c == '-' ? "mlp" : "moe");
    CHECK(parse_hf_config(named, "/model").hybrid_pattern == pattern);
    named["layers_block_type"][3] = "gdn";
    expect_error(named, "/model/layers_block_type/3", "must be mamba, attention, mlp or moe");

    // Nemotron 3 Super: latent MoE (512 experts working in a 1024-wide latent space) and one MTP
    // module of an attention and a MoE block. NVIDIA publishes 120B total and 12B active (the
    // name's two figures); Sextant counts 120.67e9 and 12.2e9 without the input embedding (MTP
    // apart, as for DeepSeek-V3). The config reads to the preset parameter for parameter.
    const ModelSpec super_hf = read("nemotron-3-super-120b-a12b-fp8.json");
    const ModelSpec super_preset = parse_model(load_preset("models", "nemotron-3-super-120b-a12b", "/model"), "/model");
    const ParamCounts sc = count_params(super_hf);
    CHECK(sc.total() == doctest::Approx(120e9).epsilon(0.01));
    CHECK(sc.active(super_hf) - sc.embedding == doctest::Approx(12e9).epsilon(0.025));
    CHECK(sc.total() == doctest::Approx(count_params(super_preset).total()).epsilon(1e-12));
    CHECK(sc.mtp == doctest::Approx(count_params(super_preset).mtp).epsilon(1e-12));
    CHECK(super_hf.moe.latent == 1024);
    CHECK(super_hf.mtp_layers == 1);
    CHECK(super_hf.mtp_pattern == "*E");
    json super_config = config("nemotron-3-super-120b-a12b-fp8.json");
    super_config["mtp_hybrid_override_pattern"] = "*-";  // a block the main pattern lacks
    expect_error(super_config, "/model/mtp_hybrid_override_pattern", "only blocks the main pattern has");
    super_config.erase("mtp_hybrid_override_pattern");
    expect_error(super_config, "/model/mtp_hybrid_override_pattern", "is required where num_nextn_predict_layers is set");
    // Under another family the latent width is a key its reader does not take.
    json latent = config("qwen3-30b-a3b.json");
    latent["moe_latent_size"] = 1024;
    expect_error(latent, "/model/moe_latent_size", "is not part of model_type qwen3_moe");

    // The Hub's 56B file holds Python's Infinity (time_step_limit), which is not JSON: the error
    // says so and what to write instead.
    CHECK_THROWS_WITH_AS(parse_json_text(R"({"time_step_limit": [0.0, Infinity]})", "/model", "config.json"),
                         doctest::Contains("Infinity is Python's, not JSON"), InputError);
    CHECK_THROWS_WITH_AS(parse_json_text(R"({"x": NaN})", "/model", "config.json"), doctest::Contains("NaN is Python's"), InputError);

    json bad = config("nemotron-h-56b-base-8k.json");
    bad["hybrid_override_pattern"] = std::string(117, 'M') + "G";
    expect_error(bad, "/model/hybrid_override_pattern", "character 117");
    bad = config("nemotron-h-56b-base-8k.json");
    bad["num_hidden_layers"] = 100;
    expect_error(bad, "/model/hybrid_override_pattern", "num_hidden_layers 100");
    bad = config("nemotron-h-56b-base-8k.json");
    bad["mlp_hidden_act"] = "silu";
    expect_error(bad, "/model/mlp_hidden_act", "ungated MLP activation");
    bad = config("nemotron-h-56b-base-8k.json");
    bad["mamba_proj_bias"] = true;
    expect_error(bad, "/model/mamba_proj_bias", "not modelled");
}
