// What sextant-calibrate measures: the grid's recipes and attention kinds, and with --scenario
// exactly the forward and backward GEMMs and the attention of the scenario's layers at its TP.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plan.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using namespace sextant::measure;

namespace {
std::size_t count(const MeasurePlan& p, const std::string& recipe) {
    return static_cast<std::size_t>(std::count_if(p.gemm.begin(), p.gemm.end(), [&](const GemmShape& g) { return g.recipe == recipe; }));
}

bool has_gemm(const MeasurePlan& p, const std::string& recipe, std::int64_t m, std::int64_t n, std::int64_t k) {
    return std::any_of(p.gemm.begin(), p.gemm.end(),
                       [&](const GemmShape& g) { return g.recipe == recipe && g.m == m && g.n == n && g.k == k; });
}

bool has_attention(const MeasurePlan& p, const AttentionShape& a) {
    return std::any_of(p.attention.begin(), p.attention.end(), [&](const AttentionShape& x) {
        return x.batch == a.batch && x.seq == a.seq && x.heads == a.heads && x.kv_heads == a.kv_heads &&
               x.head_dim == a.head_dim && x.head_dim_v == a.head_dim_v && x.causal == a.causal;
    });
}

Scenario scenario(const char* name) { return load_scenario(std::string(SEXTANT_SOURCE_DIR) + "/scenarios/" + name + ".json"); }
}  // namespace

TEST_CASE("the grid: 16-bit everywhere, the FP8 scalings with FP8 tensor cores, MXFP8 and NVFP4 on Blackwell") {
    const MeasurePlan a100 = default_plan({false, false, false});
    CHECK(count(a100, "bf16") == 6 * 6 * 6 + 3);
    CHECK(count(a100, "fp8") == 0);
    const MeasurePlan h100 = default_plan({true, false, false});
    CHECK(count(h100, "fp8") == 6 * 6 * 6 + 3);
    CHECK(count(h100, "fp8_rowwise") == 3 * 3 * 3 + 3);
    CHECK(count(h100, "fp8_blockwise") == 3 * 3 * 3 + 3);
    CHECK(count(h100, "mxfp8") == 0);
    const MeasurePlan b200 = default_plan({true, true, false});
    CHECK(count(b200, "mxfp8") == 30);
    CHECK(count(b200, "nvfp4") == 30);
    CHECK(describe(b200).find("Blackwell") != std::string::npos);
}

TEST_CASE("the attention grid: multi-head, grouped-query and latent, causal and not, at every length") {
    const MeasurePlan p = default_plan({true, false, false});
    CHECK(p.attention.size() == 6 * 4 * 2);
    for (std::int64_t seq : {512, 4096, 16384})
        for (bool causal : {false, true}) {
            CHECK(has_attention(p, {16384 / seq, seq, 64, 8, 128, 128, causal}));   // GQA, 8 query heads per KV head
            CHECK(has_attention(p, {16384 / seq, seq, 16, 16, 192, 128, causal}));  // MLA
            CHECK(has_attention(p, {16384 / seq, seq, 32, 32, 64, 64, causal}));
        }
}

TEST_CASE("--scenario: every GEMM of Llama 3 70B's layer at its TP 8, forward and both gradients, and its attention") {
    MeasurePlan p;
    add_scenario_shapes(p, scenario("llama3-70b-h100"));
    const std::int64_t T = 8192, h = 8192;
    for (const auto& [n, k] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1280, h}, {h, 1024}, {7168, h}, {h, 3584}, {16032, h}}) {
        CAPTURE(n);
        CHECK(has_gemm(p, "bf16", T, n, k));  // forward
        CHECK(has_gemm(p, "bf16", T, k, n));  // input gradient
        CHECK(has_gemm(p, "bf16", k, n, T));  // weight gradient
    }
    // 5 GEMMs x 3 passes, less 3: with T = h = 8192 a column-parallel GEMM's weight gradient
    // (h, n, T) is its forward (T, n, h), measured once.
    CHECK(p.gemm.size() == 12);
    CHECK(!has_gemm(p, "bf16", T, 2560, h));  // TP 4's QKV: the layout fixes TP 8
    REQUIRE(p.attention.size() == 1);
    CHECK(has_attention(p, {1, 8192, 8, 1, 128, 128, true}));
    CHECK(describe(p).find("qkv input gradient (tp 8)") != std::string::npos);
}

TEST_CASE("--scenario: DeepSeek-V3's latent attention, router, experts at EP 64 and its 192/128 attention") {
    MeasurePlan p;
    add_scenario_shapes(p, scenario("deepseek-v3-h100"));
    const std::int64_t T = 4096, h = 7168;
    CHECK(has_gemm(p, "bf16", T, 1536, h));         // q down
    CHECK(has_gemm(p, "bf16", T, 128 * 192, 1536));  // q up
    CHECK(has_gemm(p, "bf16", T, 576, h));           // kv down
    CHECK(has_gemm(p, "bf16", T, 256, h));           // router
    CHECK(has_gemm(p, "bf16", 8192, 4096, h));       // each of 4 local experts: 4096 x 8 / 4 tokens
    CHECK(has_gemm(p, "bf16", h, 4096, 8192));       // its weight gradient
    CHECK(has_gemm(p, "bf16", T, 2 * 18432, h));     // the dense layers' MLP
    CHECK(has_attention(p, {1, 4096, 128, 128, 192, 128, true}));
}

TEST_CASE("--scenario in FP8: the layers' GEMMs in the recipe, the logits in BF16, TP open tries 1, 2, 4, 8") {
    nlohmann::json doc = load_preset("scenarios", "llama3-8b-h100", "/");
    doc["training"]["precision"] = "fp8";
    doc["layout"].erase("tp");
    doc["layout"]["dp"] = nullptr;
    const Scenario s = parse_scenario(doc, data_dir());
    MeasurePlan p;
    add_scenario_shapes(p, s);
    for (std::int64_t tp : {1, 2, 4, 8}) {
        CAPTURE(tp);
        CHECK(has_gemm(p, "fp8", 8192, (32 + 16) * 128 / tp, 4096));
        CHECK(has_gemm(p, "bf16", 8192, 128256 / tp, 4096));
    }
    CHECK(p.attention.size() == 4);
}
