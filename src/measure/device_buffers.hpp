#pragma once
// Owns the device allocations of one measurement, freed together when it ends (or throws).
#include <cstddef>
#include <vector>

#include "cuda_check.hpp"

namespace sextant::measure {

struct DeviceBuffers {
    std::vector<void*> pointers;
    DeviceBuffers() = default;
    DeviceBuffers(const DeviceBuffers&) = delete;
    DeviceBuffers& operator=(const DeviceBuffers&) = delete;
    void* allocate(std::size_t bytes) {
        void* p = nullptr;
        SEXTANT_CHECK(cudaMalloc(&p, bytes));
        pointers.push_back(p);
        return p;
    }
    ~DeviceBuffers() {
        for (void* p : pointers) cudaFree(p);
    }
};

}  // namespace sextant::measure
