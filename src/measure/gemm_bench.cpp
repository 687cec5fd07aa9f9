#include "gemm_bench.hpp"

#include <algorithm>
#include <vector>

#include <cuda_fp8.h>

#include "device_buffers.hpp"
#include "kernels.hpp"
#include "timing.hpp"

namespace sextant::measure {

namespace {
constexpr std::size_t kWorkspaceBytes = std::size_t(64) << 20;

struct Types {
    cudaDataType_t ab, cd;
    ElementType ab_element;
};

Types types_for(Precision p) {
    switch (p) {
        case Precision::Fp16: return {CUDA_R_16F, CUDA_R_16F, ElementType::Fp16};
        case Precision::Fp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, ElementType::Fp8E4m3};  // FP8 in, BF16 out
        default: return {CUDA_R_16BF, CUDA_R_16BF, ElementType::Bf16};
    }
}
}  // namespace

GemmResult measure_gemm(const GemmShape& shape, int warmup, int reps) {
    const Types t = types_for(shape.precision);
    const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n),
               k = static_cast<std::uint64_t>(shape.k);
    const std::size_t ab_bytes = (m * k + k * n) * element_bytes(t.ab_element);

    int device = 0, l2_bytes = 0;
    SEXTANT_CHECK(cudaGetDevice(&device));
    SEXTANT_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    std::size_t free_bytes = 0, total_bytes = 0;
    SEXTANT_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::size_t wanted = std::max<std::size_t>(2, 3 * std::size_t(l2_bytes) / ab_bytes + 1);
    const std::size_t fit = std::max<std::size_t>(1, free_bytes / 2 / ab_bytes);
    const std::size_t sets = std::min({wanted, fit, std::size_t(16)});

    cudaStream_t stream;
    SEXTANT_CHECK(cudaStreamCreate(&stream));
    DeviceBuffers buffers;
    std::vector<void*> a(sets), b(sets);
    for (std::size_t i = 0; i < sets; ++i) {
        a[i] = buffers.allocate(m * k * element_bytes(t.ab_element));
        b[i] = buffers.allocate(k * n * element_bytes(t.ab_element));
        fill_random(a[i], m * k, t.ab_element, 2 * i + 1, stream);
        fill_random(b[i], k * n, t.ab_element, 2 * i + 2, stream);
    }
    void* d = buffers.allocate(m * n * 2);
    void* workspace = buffers.allocate(kWorkspaceBytes);

    cublasLtHandle_t lt;
    SEXTANT_CHECK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    SEXTANT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T; FP8 needs the "TN" form,
    // so A is stored k-major and transposed by cuBLASLt for every precision alike.
    const cublasOperation_t trans = CUBLAS_OP_T, no_trans = CUBLAS_OP_N;
    SEXTANT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
    SEXTANT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &no_trans, sizeof no_trans));
    cublasLtMatrixLayout_t la, lb, lc;
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&la, t.ab, k, m, static_cast<std::int64_t>(k)));
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&lb, t.ab, k, n, static_cast<std::int64_t>(k)));
    SEXTANT_CHECK(cublasLtMatrixLayoutCreate(&lc, t.cd, m, n, static_cast<std::int64_t>(m)));
    cublasLtMatmulPreference_t preference;
    SEXTANT_CHECK(cublasLtMatmulPreferenceCreate(&preference));
    SEXTANT_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                       &kWorkspaceBytes, sizeof kWorkspaceBytes));
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, preference, 1, &heuristic, &found);
    if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED) SEXTANT_CHECK(status);
    const bool supported = status == CUBLAS_STATUS_SUCCESS && found > 0;

    const float alpha = 1.0f, beta = 0.0f;
    const double us = !supported ? 0.0 : median_us(
        [&](int i) {
            const std::size_t set = static_cast<std::size_t>(i) % sets;
            SEXTANT_CHECK(cublasLtMatmul(lt, op, &alpha, a[set], la, b[set], lb, &beta, d, lc, d, lc, &heuristic.algo,
                                         workspace, kWorkspaceBytes, stream));
        },
        stream, warmup, reps);

    cublasLtMatmulPreferenceDestroy(preference);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);
    cudaStreamDestroy(stream);
    if (!supported) throw GemmUnsupported("cuBLASLt has no algorithm for this shape and precision");
    return {shape, us, 2.0 * double(m) * double(n) * double(k) / (us * 1e-6) / 1e12};
}

}  // namespace sextant::measure
