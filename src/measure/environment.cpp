#include "environment.hpp"

#include <chrono>
#include <ctime>

#include <unistd.h>

#include "cuda_check.hpp"

namespace sextant::measure {

namespace {
std::string dotted(int version, int major_div, int minor_div, int minor_mod) {
    return std::to_string(version / major_div) + "." + std::to_string(version / minor_div % minor_mod);
}

std::string today() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}
}  // namespace

int cuda_device_count(std::string& why) {
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        why = cudaGetErrorString(status);
        return 0;
    }
    if (count == 0) why = "the driver reports no devices";
    return count;
}

int compute_capability_major() {
    int major = 0;
    SEXTANT_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    return major;
}

Provenance measured_provenance(const std::string& command) {
    Provenance p;
    p.kind = "measured";
    cudaDeviceProp prop{};
    SEXTANT_CHECK(cudaGetDeviceProperties(&prop, 0));
    p.gpu = prop.name;
    int driver = 0, runtime = 0;
    SEXTANT_CHECK(cudaDriverGetVersion(&driver));
    SEXTANT_CHECK(cudaRuntimeGetVersion(&runtime));
    p.driver = "CUDA driver API " + dotted(driver, 1000, 10, 100);
    p.cuda = dotted(runtime, 1000, 10, 100);
    p.cublas = std::to_string(cublasLtGetVersion());
    p.cudnn = std::to_string(cudnnGetVersion());
    int nccl = 0;
    SEXTANT_CHECK(ncclGetVersion(&nccl));
    p.nccl = std::to_string(nccl);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    p.hosts.push_back(host);
    p.date = today();
    p.command = command;
    return p;
}

}  // namespace sextant::measure
