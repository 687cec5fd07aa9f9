// The GEMMs of a layer, as the cost model prices them and sextant-calibrate --scenario measures
// them: their FLOPs add up to 2 x tokens x the layer's weights / TP, and MLA and MoE layers have
// DeepSeek-V3's shapes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "model/layer_gemms.hpp"
#include "model/params.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
ModelSpec model(const char* name) { return parse_model(load_preset("models", name, "/model"), "/model"); }

double forward_flops(const std::vector<LayerGemm>& gemms) {
    double f = 0;
    for (const auto& g : gemms) f += 2.0 * double(g.m) * double(g.n) * double(g.k) * double(g.count);
    return f;
}

const LayerGemm& named(const std::vector<LayerGemm>& gemms, const std::string& name) {
    for (const auto& g : gemms)
        if (g.name == name) return g;
    FAIL("no GEMM named " << name);
    return gemms.front();
}
}  // namespace

TEST_CASE("a dense GQA layer's GEMMs move 2 x tokens x its weights / TP") {
    const ModelSpec m = model("llama3-70b");
    const std::int64_t T = 8192;
    for (std::int64_t tp : {1, 2, 8}) {
        CAPTURE(tp);
        const auto gemms = layer_gemms(m, 0, T, tp, 1);
        const double weights = attention_params_per_layer(m) + mlp_params(m, m.ffn_hidden);
        CHECK(forward_flops(gemms) == doctest::Approx(2.0 * T * weights / double(tp)));
    }
    const auto tp8 = layer_gemms(m, 0, T, 8, 1);
    CHECK(named(tp8, "qkv").n == (64 + 2 * 8) * 128 / 8);  // 64 query and 8 KV heads of 128, split over 8
    CHECK(named(tp8, "mlp up").n == 2 * 28672 / 8);         // SwiGLU gate and up
    CHECK(named(tp8, "mlp down").k == 28672 / 8);
    const LayerGemm logits = logits_gemm(m, T, 8);
    CHECK(logits.n == 128256 / 8);
    CHECK(logits.k == 8192);
}

TEST_CASE("DeepSeek-V3: latent attention projections and 4 local experts at EP 64") {
    const ModelSpec m = model("deepseek-v3");
    const std::int64_t T = 4096;
    const auto dense = layer_gemms(m, 0, T, 1, 64);
    CHECK(named(dense, "q down").n == 1536);
    CHECK(named(dense, "q up").n == 128 * 192);
    CHECK(named(dense, "kv down").n == 512 + 64);
    CHECK(named(dense, "kv up").n == 128 * (128 + 128));
    CHECK(named(dense, "attention output").k == 128 * 128);
    CHECK(named(dense, "mlp up").n == 2 * 18432);
    const auto moe = layer_gemms(m, 3, T, 1, 64);  // the first 3 layers are dense
    CHECK(named(moe, "router").n == 256);
    const LayerGemm& up = named(moe, "expert up");
    CHECK(up.count == 4);
    CHECK(up.m == 4096 * 8 / 4);  // top 8 of 256 experts, 4 of them on this GPU
    CHECK(up.n == 2 * 2048);
    CHECK(named(moe, "shared expert down").k == 2048);
}
