// Parameter counts of the presets against the published totals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/params.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
ModelSpec preset(const char* name) { return parse_model(load_preset("models", name, "/model"), "/model"); }
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
