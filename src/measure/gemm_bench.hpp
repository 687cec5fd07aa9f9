#pragma once
// Dense GEMM throughput through cuBLASLt, for every recipe of gemm_recipes.hpp.
#include <stdexcept>

#include <cublasLt.h>

#include "gemm_recipes.hpp"
#include "plan.hpp"

namespace sextant::measure {

// cuBLASLt has no kernel for this shape and recipe on this GPU (FP8 with a dimension that is
// not a multiple of 16; MX/NV block scaling before Blackwell): the shape is skipped, the run goes on.
struct GemmUnsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The cuBLASLt descriptors of one GEMM: the operation with its recipe's scale modes and the
// three matrix layouts. Row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T; FP8 and
// FP4 need the "TN" form, so A is stored k-major and transposed by cuBLASLt for every recipe.
// Host objects: building them needs no GPU; the scale pointers are set once the buffers exist.
class GemmDescriptors {
public:
    explicit GemmDescriptors(const GemmShape& shape);  // GemmUnsupported for an unknown recipe or attribute
    ~GemmDescriptors();
    GemmDescriptors(const GemmDescriptors&) = delete;
    GemmDescriptors& operator=(const GemmDescriptors&) = delete;

    void set_scales(const void* a_scale, const void* b_scale);
    const GemmRecipe& recipe() const { return *recipe_; }
    cublasLtMatmulDesc_t operation() const { return op_; }
    cublasLtMatrixLayout_t a() const { return a_; }
    cublasLtMatrixLayout_t b() const { return b_; }
    cublasLtMatrixLayout_t c() const { return c_; }

private:
    const GemmRecipe* recipe_ = nullptr;
    cublasLtMatmulDesc_t op_ = nullptr;
    cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

struct GemmResult {
    GemmShape shape;
    double time_us = 0;
    double tflops = 0;  // 2mnk / time
};

// Measures one shape on the current device. Operands are rotated through enough buffers that
// together exceed three times the L2 cache, so that no repetition finds its inputs cached.
GemmResult measure_gemm(const GemmShape& shape, int warmup, int reps);

}  // namespace sextant::measure
