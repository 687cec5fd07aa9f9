// The cuBLASLt descriptors of every GEMM recipe build on the host (no GPU needed), and the scale
// tensors have the sizes cuBLASLt reads.
#include <doctest/doctest.h>

#include "gemm_bench.hpp"

using namespace sextant::measure;

TEST_CASE("every recipe's matmul descriptor and layouts build without a device") {
    for (const GemmRecipe& r : gemm_recipes()) {
        CAPTURE(r.name);
        const GemmDescriptors d({std::string(r.name), 4096, 4096, 4096, "test"});
        CHECK(d.operation() != nullptr);
        CHECK(d.a() != nullptr);
        CHECK(d.c() != nullptr);
        CHECK(&d.recipe() == find_gemm_recipe(r.name));
    }
    CHECK_THROWS_AS(GemmDescriptors({"int8", 64, 64, 64, "test"}), GemmUnsupported);
}

TEST_CASE("the recipes: FP8 scalings on Hopper, MX/NV block formats on Blackwell") {
    CHECK(find_gemm_recipe("fp8_blockwise")->a_scale == ScaleMode::Vec128);        // 1 x 128 activation tiles
    CHECK(find_gemm_recipe("fp8_blockwise")->b_scale == ScaleMode::Block128x128);  // 128 x 128 weight blocks
    CHECK(find_gemm_recipe("fp8_rowwise")->b_scale == ScaleMode::OuterVector);
    CHECK(!find_gemm_recipe("fp8_blockwise")->block_scaled);
    CHECK(find_gemm_recipe("mxfp8")->block_scaled);
    CHECK(find_gemm_recipe("nvfp4")->operands == ElementType::Fp4E2m1);
}

TEST_CASE("scale tensor sizes: FP32 vectors and blocks, MX/NV scales padded to 128 x 4 tiles") {
    CHECK(scale_tensor_bytes(ScaleMode::None, 4096, 4096) == 0);
    CHECK(scale_tensor_bytes(ScaleMode::Scalar, 4096, 4096) == 4);
    CHECK(scale_tensor_bytes(ScaleMode::OuterVector, 4096, 4096) == 4096 * 4);
    CHECK(scale_tensor_bytes(ScaleMode::Vec128, 4096, 7168) == 4096 * 56 * 4);
    CHECK(scale_tensor_bytes(ScaleMode::Block128x128, 4096, 7168) == 32 * 56 * 4);
    CHECK(scale_tensor_bytes(ScaleMode::Vec32Ue8m0, 4096, 4096) == 4096 * 128);  // one E8M0 per 32
    CHECK(scale_tensor_bytes(ScaleMode::Vec16Ue4m3, 4096, 4096) == 4096 * 256);  // one E4M3 per 16
    // Ragged sizes pad up: 100 rows to 128, 100 / 32 -> 4 blocks (already a multiple of 4), 100 / 16 -> 7 -> 8.
    CHECK(scale_tensor_bytes(ScaleMode::Vec32Ue8m0, 100, 100) == 128 * 4);
    CHECK(scale_tensor_bytes(ScaleMode::Vec16Ue4m3, 100, 100) == 128 * 8);
}
