// Parameter counts of the presets against the published totals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "model/params.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
ModelSpec preset(const char* name) { return parse_model(load_preset("models", name, "/model"), "/model"); }
// The same model as its Hugging Face config.json reads (tests/data/hf/, origins in its README).
ModelSpec hf_config(const char* file) {
    return parse_hf_config(load_json_file(std::filesystem::path(SEXTANT_SOURCE_DIR) / "tests/data/hf" / file, "/model"), "/model");
}
}  // namespace

TEST_CASE("Llama 3 parameter counts match Meta's published totals") {
    // Meta: 8.03e9, 70.55e9, 405.85e9 with a 128,256-token vocabulary and untied embeddings.
    CHECK(count_params(preset("llama3-8b")).total() == doctest::Approx(8.03e9).epsilon(0.001));
    CHECK(count_params(preset("llama3-70b")).total() == doctest::Approx(70.55e9).epsilon(0.001));
    CHECK(count_params(preset("llama3-405b")).total() == doctest::Approx(405.85e9).epsilon(0.0005));
}

TEST_CASE("GPT-3 175B follows Megatron's 12lh^2(1 + 13/12h + (V+s)/12lh) convention") {
    ModelSpec m = preset("gpt3-175b");
    const double l = 96, h = 12288, V = 51200, s = 2048;
    const double megatron = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
    // The closed form leaves out the final LayerNorm (2h parameters).
    CHECK(count_params(m).total() == doctest::Approx(megatron + 2 * h).epsilon(1e-12));
    CHECK(count_params(m).total() == doctest::Approx(174.6e9).epsilon(0.0005));
}

TEST_CASE("Mixtral 8x7B: 46.7e9 total, 12.9e9 active") {
    ModelSpec m = preset("mixtral-8x7b");
    ParamCounts c = count_params(m);
    CHECK(c.total() == doctest::Approx(46.7e9).epsilon(0.002));
    CHECK(c.active(m) == doctest::Approx(12.9e9).epsilon(0.004));
}

TEST_CASE("DeepSeek-V3: 671e9 main-model parameters, 37e9 active, 685e9 with the MTP module") {
    ModelSpec m = preset("deepseek-v3");
    ParamCounts c = count_params(m);
    CHECK(c.total() == doctest::Approx(671e9).epsilon(0.002));
    CHECK(c.active(m) == doctest::Approx(37e9).epsilon(0.02));
    CHECK(c.total() + c.mtp == doctest::Approx(685e9).epsilon(0.003));
}

TEST_CASE("A dense model's active parameters are all of them") {
    ModelSpec m = preset("llama3-8b");
    CHECK(count_params(m).active(m) == count_params(m).total());
}

TEST_CASE("the gpt-oss-120b, Qwen3-30B-A3B and Qwen3-235B-A22B presets: their model cards' totals, and their Hugging Face configs' shapes") {
    // OpenAI's model card: 116.83e9 total (attention sinks and router biases, a few million, not
    // counted); Qwen's: 30.5e9 and 235e9 total, 3.3e9 and 22e9 activated.
    struct Case {
        const char *name, *config;
        double total, tolerance;
    };
    for (const Case& k : {Case{"gpt-oss-120b", "gpt-oss-120b.json", 116.83e9, 0.0005}, Case{"qwen3-30b-a3b", "qwen3-30b-a3b.json", 30.5e9, 0.002},
                          Case{"qwen3-235b-a22b", "qwen3-235b-a22b.json", 235e9, 0.0025}}) {
        CAPTURE(k.name);
        const ModelSpec m = preset(k.name), hf = hf_config(k.config);
        CHECK(count_params(m).total() == doctest::Approx(k.total).epsilon(k.tolerance));
        CHECK(count_params(m).total() == doctest::Approx(count_params(hf).total()).epsilon(1e-12));
        CHECK(count_params(m).active(m) == doctest::Approx(count_params(hf).active(hf)).epsilon(1e-12));
        CHECK(m.layers == hf.layers);
        CHECK(m.head_dim == hf.head_dim);
        CHECK(m.kv_heads == hf.kv_heads);
        CHECK(m.position == hf.position);
        CHECK(m.linear_bias == hf.linear_bias);
        CHECK(m.activation_clamp == hf.activation_clamp);
        CHECK(m.window.tokens == hf.window.tokens);
        for (std::int64_t layer = 0; layer < m.layers; ++layer) {
            CHECK(m.layer_is_windowed(layer) == hf.layer_is_windowed(layer));
            CHECK(m.layer_is_moe(layer) == hf.layer_is_moe(layer));
        }
    }
}
