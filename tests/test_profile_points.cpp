// The profile reader's point kinds: GEMM tables per precision recipe (bf16 ... nvfp4, each read
// against the peak of the tensor cores it runs on, with fallbacks between recipes), and attention
// points for grouped-query and latent (192/128) shapes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "profile/profile.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
CalibrationProfile profile(const char* gpu, const json& overrides) {
    json doc = {{"preset", gpu}, {"gpu", gpu}};
    doc.merge_patch(overrides);
    return CalibrationProfile::from_json(doc, "/calibration", load_gpu(gpu, "/gpu")).with_factors({});
}

std::string error_of(const char* gpu, const json& overrides) {
    try {
        profile(gpu, overrides);
    } catch (const InputError& e) {
        return e.path() + ": " + e.rule();
    }
    return "accepted";
}

json point(std::int64_t m, double tflops) { return {{"m", m}, {"n", m}, {"k", m}, {"tflops", tflops}}; }
}  // namespace

TEST_CASE("GEMM tables per recipe: exact at their points, falling back to their base format") {
    const CalibrationProfile p = profile("H100-SXM5-80GB", {{"gemm", {{"fp8_rowwise", {point(4096, 1500.0)}},
                                                                        {"mxfp8", {point(4096, 1400.0)}}}}});
    CHECK(p.gemm_tflops("fp8_rowwise", Precision::Fp8, 4096, 4096, 4096) == doctest::Approx(1500.0));
    // No block-wise table: tensor-wise FP8's.
    CHECK(p.gemm_tflops("fp8_blockwise", Precision::Fp8, 8192, 8192, 8192) == doctest::Approx(p.gemm_tflops(Precision::Fp8, 8192, 8192, 8192)));
    // The published tables are untouched.
    const CalibrationProfile published = profile("H100-SXM5-80GB", json::object());
    CHECK(p.gemm_tflops(Precision::Bf16, 8192, 8192, 8192) == doctest::Approx(published.gemm_tflops(Precision::Bf16, 8192, 8192, 8192)));
}

TEST_CASE("Blackwell's FP8 GEMMs: Transformer Engine's kernel-only B300 ratio to BF16 at each shape, and FP4 on that curve") {
    // docs/examples/gemm_profiling: a layer's GEMMs take 13.102 ms in BF16 and 6.812 in FP8 (current
    // scaling) on a B300; the B200 and GB200 profiles (GB300 and B300 inherit them) scale every
    // BF16 point by that ratio. No nvfp4 table is published: an FP4 GEMM is the FP8 one with its
    // tensor cores' share of the time (FP8's rate over FP8's peak) at FP4's peak, twice FP8's on
    // B200/GB200 and three times on B300/GB300; the MXFP8 and row-wise FP8 recipes read FP8's.
    for (const char* gpu : {"B200", "GB200", "GB300", "B300-SXM-270GB"}) {
        CAPTURE(gpu);
        const CalibrationProfile p = profile(gpu, json::object());
        const GpuSpec spec = load_gpu(gpu, "/gpu");
        for (const std::int64_t m : {4096, 8192}) {
            const double bf16 = p.gemm_tflops(Precision::Bf16, m, m, m), fp8 = p.gemm_tflops(Precision::Fp8, m, m, m);
            CHECK(fp8 / bf16 == doctest::Approx(13.102 / 6.812).epsilon(1e-3));
            const double share = fp8 / spec.fp8_tflops, fp4_time = 1.0 - share * (1.0 - spec.fp8_tflops / spec.fp4_tflops);
            CHECK(share < 1.0);
            CHECK(p.gemm_tflops(Precision::Fp4, m, m, m) == doctest::Approx(fp8 / fp4_time).epsilon(1e-9));
            CHECK(p.gemm_tflops("nvfp4", Precision::Fp4, m, m, m) == doctest::Approx(fp8 / fp4_time).epsilon(1e-9));
            // MXFP8 and row-wise FP8 have no table of their own: tensor-wise FP8's.
            CHECK(p.gemm_tflops("mxfp8", Precision::Fp8, m, m, m) == doctest::Approx(fp8));
            CHECK(p.gemm_tflops("fp8_rowwise", Precision::Fp8, m, m, m) == doctest::Approx(fp8));
        }
        // A measured nvfp4 table is what FP4 GEMMs read, as it stands at its point.
        const CalibrationProfile measured = profile(gpu, {{"gemm", {{"nvfp4", {point(4096, 7000.0)}}}}});
        CHECK(measured.gemm_tflops(Precision::Fp4, 4096, 4096, 4096) == doctest::Approx(7000.0));
    }
}

TEST_CASE("a remembered GEMM rate belongs to its profile: a later profile at the same address reads its own") {
    // Each query below is asked twice (the second a memo hit) and from profiles built one after
    // another, each freed before the next (so the allocator may hand out the same address):
    // every answer must be its own table's point.
    for (const double tflops : {500.0, 600.0, 700.0, 500.0}) {
        const CalibrationProfile p = profile("H100-SXM5-80GB", {{"gemm", {{"bf16", {point(4096, tflops)}}}}});
        for (int ask = 0; ask < 2; ++ask) {
            CHECK(p.gemm_tflops(Precision::Bf16, 4096, 4096, 4096) == doctest::Approx(tflops));
            CHECK(p.gemm_tflops("bf16", Precision::Bf16, 4096, 4096, 4096) == doctest::Approx(tflops));
        }
        // The same table under other factors: the compute factor scales the rate.
        const CalibrationProfile half = p.with_factors({.compute = 0.5});
        CHECK(half.gemm_tflops(Precision::Bf16, 4096, 4096, 4096) == doctest::Approx(tflops / 2));
        CHECK(p.gemm_tflops(Precision::Bf16, 4096, 4096, 4096) == doctest::Approx(tflops));
    }
}

TEST_CASE("GEMM tables are checked against the tensor cores they need") {
    CHECK(error_of("H100-SXM5-80GB", {{"gemm", {{"int8", {point(4096, 100.0)}}}}}).find("/calibration/gemm/int8: unknown GEMM precision") == 0);
    CHECK(error_of("A100-SXM4-80GB", {{"gemm", {{"fp8_rowwise", {point(4096, 100.0)}}}}}).find("has no fp8_rowwise tensor cores") != std::string::npos);
    // FP8 variants are bounded by the FP8 peak (1,979); NVFP4 needs FP4 tensor cores and is bounded
    // by their peak: twice FP8 on B200 (9,000), three times on B300 (13,500).
    CHECK(error_of("H100-SXM5-80GB", {{"gemm", {{"fp8_blockwise", {point(4096, 2100.0)}}}}}).find("exceeds the GPU's dense peak") != std::string::npos);
    CHECK(error_of("H100-SXM5-80GB", {{"gemm", {{"nvfp4", {point(4096, 2100.0)}}}}}).find("has no nvfp4 tensor cores") != std::string::npos);
    CHECK(error_of("B200", {{"gemm", {{"nvfp4", {point(4096, 8900.0)}}}}}) == "accepted");
    CHECK(error_of("B200", {{"gemm", {{"nvfp4", {point(4096, 9300.0)}}}}}).find("exceeds") != std::string::npos);
    CHECK(error_of("B300-SXM-270GB", {{"gemm", {{"nvfp4", {point(4096, 13400.0)}}}}}) == "accepted");
}

TEST_CASE("attention points of GQA and MLA shapes are read and interpolated by group and head sizes") {
    const json attention = json::array({
        {{"seq", 4096}, {"head_dim", 128}, {"causal", true}, {"fwd_tflops", 500.0}, {"bwd_tflops", 300.0}},
        {{"seq", 4096}, {"head_dim", 128}, {"heads", 64}, {"kv_heads", 8}, {"causal", true}, {"fwd_tflops", 560.0}, {"bwd_tflops", 340.0}},
        {{"seq", 4096}, {"head_dim", 192}, {"head_dim_v", 128}, {"causal", true}, {"fwd_tflops", 450.0}, {"bwd_tflops", 280.0}},
    });
    const CalibrationProfile p = profile("H100-SXM5-80GB", {{"attention", attention}});
    CHECK(p.attention_tflops(Precision::Bf16, {4096, 128, 128, 1, true, false}) == doctest::Approx(500.0));
    CHECK(p.attention_tflops(Precision::Bf16, 4096, 128, true, false) == doctest::Approx(500.0));
    CHECK(p.attention_tflops(Precision::Bf16, {4096, 128, 128, 8, true, false}) == doctest::Approx(560.0));
    CHECK(p.attention_tflops(Precision::Bf16, {4096, 128, 128, 8, true, true}) == doctest::Approx(340.0));
    CHECK(p.attention_tflops(Precision::Bf16, {4096, 192, 128, 1, true, false}) == doctest::Approx(450.0));
    // Between multi-head and 8 query heads per KV head, a weighted mean of the two.
    const double group4 = p.attention_tflops(Precision::Bf16, {4096, 128, 128, 4, true, false});
    CHECK(group4 > 500.0);
    CHECK(group4 < 560.0);
    json bad = attention;
    bad[1].erase("kv_heads");
    CHECK(error_of("H100-SXM5-80GB", {{"attention", bad}}).find("give heads and kv_heads together") != std::string::npos);
    bad = attention;
    bad[1]["kv_heads"] = 7;
    CHECK(error_of("H100-SXM5-80GB", {{"attention", bad}}).find("/calibration/attention/1/kv_heads: must divide heads") == 0);
}

TEST_CASE("H100 attention backward: the cuDNN series of FlashAttention-3's backward figure, causal rows at its ratio") {
    // Shah et al. 2024 (arXiv 2407.08608), attention backward on H100 SXM5, cuDNN, non-causal:
    // head dim 128 at 2k and 16k 465 and 516 TFLOP/s; head dim 64 at 16k 433. The paper has no
    // causal backward figure: causal rows take the non-causal backward/forward ratio.
    const CalibrationProfile p = profile("H100-SXM5-80GB", json::object());
    const auto bwd = [&](std::int64_t seq, std::int64_t head_dim, bool causal) {
        return p.attention_tflops(Precision::Bf16, {seq, head_dim, head_dim, 1, causal, true});
    };
    const auto fwd = [&](std::int64_t seq, std::int64_t head_dim, bool causal) {
        return p.attention_tflops(Precision::Bf16, {seq, head_dim, head_dim, 1, causal, false});
    };
    CHECK(bwd(2048, 128, false) == doctest::Approx(465.0));
    CHECK(bwd(16384, 128, false) == doctest::Approx(516.0));
    CHECK(bwd(16384, 64, false) == doctest::Approx(433.0));
    for (std::int64_t seq : {512, 4096, 16384})
        for (std::int64_t hd : {64, 128}) {
            CAPTURE(seq);
            CAPTURE(hd);
            CHECK(bwd(seq, hd, true) / fwd(seq, hd, true) == doctest::Approx(bwd(seq, hd, false) / fwd(seq, hd, false)).epsilon(0.002));
        }
}

TEST_CASE("attention past the profile's longest sequence runs at that length's rate, not a drift toward short points") {
    // H100's longest measured sequence is 16k (FlashAttention-3 paper figures, cuDNN): 131k and
    // 16k read the same rate, for either mask and either pass; inside the table nothing changes.
    const CalibrationProfile p = profile("H100-SXM5-80GB", json::object());
    for (const bool causal : {true, false})
        for (const bool backward : {false, true}) {
            CAPTURE(causal);
            CAPTURE(backward);
            const auto rate = [&](std::int64_t seq) { return p.attention_tflops(Precision::Bf16, {seq, 128, 128, 1, causal, backward}); };
            CHECK(rate(131072) == doctest::Approx(rate(16384)));
            CHECK(rate(32768) == doctest::Approx(rate(16384)));
        }
    CHECK(p.attention_tflops(Precision::Bf16, {16384, 128, 128, 1, true, false}) == doctest::Approx(539.0));
    CHECK(p.attention_tflops(Precision::Bf16, {8192, 128, 128, 1, false, true}) == doctest::Approx(518.0));
}
