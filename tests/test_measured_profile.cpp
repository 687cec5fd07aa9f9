// The profiles sextant-calibrate measured on a GPU and that ship in calibration/: each reads back
// as what its provenance says, and its fitted compute factor is the fit that
// calibration/fit/README.md names, redone here from the shipped files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "profile/profile.hpp"
#include "spec/scenario.hpp"

using namespace sextant;
using sextant::test::run_sextant;
using sextant::test::source_path;

namespace {
json read_json(const std::string& relative) { return json::parse(std::ifstream(source_path(relative))); }

const json* point_at(const json& table, std::int64_t m, std::int64_t n, std::int64_t k) {
    for (const json& p : table)
        if (p["m"] == m && p["n"] == n && p["k"] == k) return &p;
    return nullptr;
}
}  // namespace

TEST_CASE("the measured H200 profile reads back as measured: cuDNN attention, GEMM at its measured points") {
    const json doc = read_json("calibration/H200-SXM-141GB.json");
    REQUIRE(doc["provenance"]["kind"] == "measured");
    // The logs the provenance names are in the repository, beside the comparison with PyTorch.
    const std::string logs = doc["provenance"]["logs"].get<std::string>();
    CHECK(std::filesystem::exists(source_path(logs.substr(0, logs.find(' ')) + "calibrate.log")));
    CHECK(std::filesystem::exists(source_path(logs.substr(0, logs.find(' ')) + "compare.md")));

    const GpuSpec gpu = load_gpu("H200-SXM-141GB", "/gpu");
    const CalibrationProfile profile = CalibrationProfile::for_gpu(gpu).with_factors({});
    CHECK(profile.attention_kernel() == AttentionKernel::CudnnFused);
    // Interpolation is exact at a measured point (inverse-distance weighting), so the profile
    // gives back the tool's 8192^3 BF16 figure; every figure sits under the datasheet peak.
    const json* square = point_at(doc["gemm"]["bf16"], 8192, 8192, 8192);
    REQUIRE(square != nullptr);
    CHECK(profile.gemm_tflops(Precision::Bf16, 8192, 8192, 8192) == doctest::Approx((*square)["tflops"].get<double>()));
    for (const json& p : doc["gemm"]["bf16"]) CHECK(p["tflops"].get<double>() < gpu.bf16_tflops);
    // The memory section is the largest buffer's (4 GiB), not an L2-resident one's.
    CHECK(doc["memory"]["source"].get<std::string>().find("4294967296 B") != std::string::npos);
    CHECK(doc["memory"]["copy_tbps"].get<double>() < gpu.hbm_tbps);
}

TEST_CASE("the H200 compute factor is the H100 fit set refitted against the H200's measured GEMM and attention") {
    // The fit runs ran on H100s, the same GH100 compute (132 SMs, 1,980 MHz, 700 W): their
    // profile with the H200's measured GEMM and attention tables, at compute factor 1, refits
    // to the factor the H200 profile ships (calibration/fit/README.md).
    const json h200 = read_json("calibration/H200-SXM-141GB.json");
    json composed = read_json("calibration/H100-SXM5-80GB.json");
    for (const char* section : {"gemm", "attention", "attention_kernel"}) composed[section] = h200[section];
    composed["factors"]["compute"] = 1.0;
    const auto dir = std::filesystem::temp_directory_path();
    const std::string in = (dir / "sextant-h100-with-h200-compute.json").string(), out = (dir / "sextant-h200-refit.json").string();
    std::ofstream(in) << composed.dump();
    const auto o = run_sextant("calibrate fit --runs " + source_path("calibration/fit/h100-megatron-core-2024.json") +
                               " --factors compute --calibration " + in + " --out " + out);
    CAPTURE(o.out);
    REQUIRE(o.code == 0);
    const json fitted = json::parse(std::ifstream(out));
    CHECK(std::abs(fitted["factors"]["compute"].get<double>() - h200["factors"]["compute"].get<double>()) < 0.0006);
    // The fit holds: both runs within 2% after it.
    CHECK(fitted["provenance"]["fit"]["rms_error_after_pct"].get<double>() < 2.0);
    std::filesystem::remove(in);
    std::filesystem::remove(out);
}
