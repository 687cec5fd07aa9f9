#pragma once
// Turns a failed CUDA-library call into an exception naming the call, so that main() can report
// it and exit 1 instead of measuring garbage.
#include <stdexcept>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

namespace sextant::measure {

inline void check(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(call) + ": " + cudaGetErrorString(status));
}
inline void check(cublasStatus_t status, const char* call) {
    if (status != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + ": cuBLAS status " + std::to_string(int(status)));
}
inline void check(cudnnStatus_t status, const char* call) {
    if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + ": " + cudnnGetErrorString(status));
}
inline void check(ncclResult_t status, const char* call) {
    if (status != ncclSuccess) throw std::runtime_error(std::string(call) + ": " + ncclGetErrorString(status));
}

}  // namespace sextant::measure

#define SEXTANT_CHECK(call) ::sextant::measure::check((call), #call)
