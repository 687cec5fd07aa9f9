#include "gemm_bench.hpp"

#include <algorithm>
#include <vector>

#include "device_buffers.hpp"
#include "kernels.hpp"
#include "timing.hpp"

namespace sextant::measure {

namespace {
constexpr std::size_t kWorkspaceBytes = std::size_t(64) << 20;

cudaDataType_t data_type(ElementType t) {
    switch (t) {
        case ElementType::Fp16: return CUDA_R_16F;
        case ElementType::Fp8E4m3: return CUDA_R_8F_E4M3;
        case ElementType::Fp4E2m1: return CUDA_R_4F_E2M1;
        case ElementType::Fp32: return CUDA_R_32F;
        case ElementType::Bf16: break;
    }
    return CUDA_R_16BF;
}

cublasLtMatmulMatrixScale_t scale_mode(ScaleMode mode) {
    switch (mode) {
        case ScaleMode::OuterVector: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        case ScaleMode::Vec128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        case ScaleMode::Block128x128: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        case ScaleMode::Vec32Ue8m0: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
        case ScaleMode::Vec16Ue4m3: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
        case ScaleMode::None:
        case ScaleMode::Scalar: break;
    }
    return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
}

void attribute(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t which, const void* value, std::size_t size) {
    const cublasStatus_t status = cublasLtMatmulDescSetAttribute(op, which, value, size);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE)
        throw GemmUnsupported("this cuBLASLt does not take matmul attribute " + std::to_string(int(which)));
    SEXTANT_CHECK(status);
}

// A scale tensor filled with 1: the speed of a scaled GEMM does not depend on the scales' values.
void* ones(DeviceBuffers& buffers, ScaleMode mode, std::int64_t rows, std::int64_t k, cudaStream_t stream) {
    const std::size_t bytes = scale_tensor_bytes(mode, rows, k);
    if (bytes == 0) return nullptr;
    void* p = buffers.allocate(bytes);
    if (mode == ScaleMode::Vec32Ue8m0) SEXTANT_CHECK(cudaMemsetAsync(p, 0x7F, bytes, stream));       // E8M0 2^0
    else if (mode == ScaleMode::Vec16Ue4m3) SEXTANT_CHECK(cudaMemsetAsync(p, 0x38, bytes, stream));  // E4M3 1.0
    else fill_float(p, bytes / 4, 1.0f, stream);
    return p;
}
}  // namespace

GemmDescriptors::GemmDescriptors(const GemmShape& shape) : recipe_(find_gemm_recipe(shape.recipe)) {
    if (!recipe_) throw GemmUnsupported("no GEMM recipe named " + shape.recipe);
    const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n), k = static_cast<std::uint64_t>(shape.k);
    const cudaDataType_t ab = data_type(recipe_->operands);
    // 16-bit recipes write their own type; the scaled formats write BF16, as training does.
    const cudaDataType_t cd = recipe_->operands == ElementType::Fp16 ? CUDA_R_16F : CUDA_R_16BF;
    SEXTANT_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
    attribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans);
    attribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof no_trans);
    if (recipe_->a_scale != ScaleMode::None) {
        const cublasLtMatmulMatrixScale_t a = scale_mode(recipe_->a_scale), b = scale_mode(recipe_->b_scale);
        attribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a, sizeof a);
        attribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b, sizeof b);
    }
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&a_, ab, k, m, static_cast<std::int64_t>(k)));
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&b_, ab, k, n, static_cast<std::int64_t>(k)));
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&c_, cd, m, n, static_cast<std::int64_t>(m)));
}

GemmDescriptors::~GemmDescriptors() {
    if (a_) cublasLtMatrixLayoutDestroy(a_);
    if (b_) cublasLtMatrixLayoutDestroy(b_);
    if (c_) cublasLtMatrixLayoutDestroy(c_);
    if (op_) cublasLtMatmulDescDestroy(op_);
}

void GemmDescriptors::set_scales(const void* a_scale, const void* b_scale) {
    if (a_scale) attribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale);
    if (b_scale) attribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale);
}

GemmResult measure_gemm(const GemmShape& shape, int warmup, int reps) {
    GemmDescriptors d(shape);
    const GemmRecipe& recipe = d.recipe();
    int device = 0, l2_bytes = 0, major = 0;
    SEXTANT_CHECK(cudaGetDevice(&device));
    SEXTANT_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (recipe.block_scaled && major < 10)
        throw GemmUnsupported("MX/NV block scaling needs Blackwell tensor cores (compute capability 10.0+; this is " +
                              std::to_string(major) + ".x)");
    const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n), k = static_cast<std::uint64_t>(shape.k);
    const std::size_t a_bytes = buffer_bytes(recipe.operands, m * k), b_bytes = buffer_bytes(recipe.operands, k * n);
    SEXTANT_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    std::size_t free_bytes = 0, total_bytes = 0;
    SEXTANT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t wanted = std::max<std::size_t>(2, 3 * std::size_t(l2_bytes) / (a_bytes + b_bytes) + 1);
    const std::size_t fit = std::max<std::size_t>(1, free_bytes / 2 / (a_bytes + b_bytes));
    const std::size_t sets = std::min({wanted, fit, std::size_t(16)});

    cudaStream_t stream;
    SEXTANT_CHECK(cudaStreamCreate(&stream));
    DeviceBuffers buffers;
    std::vector<void*> a(sets), b(sets);
    for (std::size_t i = 0; i < sets; ++i) {
        a[i] = buffers.allocate(a_bytes);
        b[i] = buffers.allocate(b_bytes);
        fill_random(a[i], m * k, recipe.operands, 2 * i + 1, stream);
        fill_random(b[i], k * n, recipe.operands, 2 * i + 2, stream);
    }
    void* out = buffers.allocate(m * n * 2);
    void* workspace = buffers.allocate(kWorkspaceBytes);
    d.set_scales(ones(buffers, recipe.a_scale, shape.m, shape.k, stream), ones(buffers, recipe.b_scale, shape.n, shape.k, stream));

    cublasLtHandle_t lt;
    SEXTANT_CHECK(cublasLtCreate(&lt));
    cublasLtMatmulPreference_t preference;
    SEXTANT_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    SEXTANT_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &kWorkspaceBytes, sizeof kWorkspaceBytes));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, d.operation(), d.a(), d.b(), d.c(), d.c(), preference, 1,
                                                                 &heuristic, &found);
    if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED) SEXTANT_CHECK(status);
    const bool supported = status == CUBLAS_STATUS_SUCCESS && found > 0;

    const float alpha = 1.0f, beta = 0.0f;
    const double us = !supported ? 0.0 : median_us(
        [&](int i) {
            const std::size_t set = static_cast<std::size_t>(i) % sets;
            SEXTANT_CHECK(cublasLtMatmul(lt, d.operation(), &alpha, a[set], d.a(), b[set], d.b(), &beta, out, d.c(), out, d.c(),
                                         &heuristic.algo, workspace, kWorkspaceBytes, stream));
        },
        stream, warmup, reps);

    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtDestroy(lt);
    cudaStreamDestroy(stream);
    if (!supported) throw GemmUnsupported("cuBLASLt has no algorithm for this shape and recipe");
    return {shape, us, 2.0 * double(m) * double(n) * double(k) / (us * 1e-6) / 1e12};
}

}  // namespace sextant::measure
