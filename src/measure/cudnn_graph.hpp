#pragma once
// A small builder over cuDNN's backend (C) graph API: tensors, pointwise, reduction, matmul and
// reshape operations, finalized into an execution plan by cuDNN's heuristics. The tool carries no
// copy of cudnn-frontend, so the graph is spelled out descriptor by descriptor.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <cudnn.h>

namespace sextant::measure {

// One backend descriptor, destroyed with its owner.
class BackendDescriptor {
public:
    explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
    ~BackendDescriptor();
    BackendDescriptor(const BackendDescriptor&) = delete;
    BackendDescriptor& operator=(const BackendDescriptor&) = delete;

    template <class T>
    void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T& value) {
        set_raw(name, type, 1, &value);
    }
    template <class T>
    void set_all(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const std::vector<T>& values) {
        set_raw(name, type, static_cast<std::int64_t>(values.size()), values.data());
    }
    void set_raw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count, const void* values);
    void finalize(const char* what);
    cudnnBackendDescriptor_t get() const { return descriptor_; }

private:
    cudnnBackendDescriptor_t descriptor_ = nullptr;
};

using TensorId = std::int64_t;

struct TensorSpec {
    std::vector<std::int64_t> dims, strides;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    bool is_virtual = true;
    bool by_value = false;  // a host scalar passed in the variant pack
};

// Strides of a packed tensor whose last dimension varies fastest.
std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims);

class OperationGraph {
public:
    TensorId tensor(const TensorSpec& spec);
    // A virtual tensor shaped like `like`, of another type (float unless said).
    TensorId virtual_like(TensorId like, cudnnDataType_t type = CUDNN_DATA_FLOAT);
    TensorId virtual_tensor(const std::vector<std::int64_t>& dims, cudnnDataType_t type = CUDNN_DATA_FLOAT);

    // y = mode(x[, b[, t]]); `axis` for GEN_INDEX, `compute` for the math precision.
    void pointwise(cudnnPointwiseMode_t mode, TensorId x, TensorId b, TensorId t, TensorId y, std::int64_t axis = -1,
                   cudnnDataType_t compute = CUDNN_DATA_FLOAT);
    void reduction(cudnnReduceTensorOp_t op, TensorId x, TensorId y);
    void matmul(TensorId a, TensorId b, TensorId c);
    void reshape(TensorId x, TensorId y);

    // Finalizes the graph and the first engine configuration cuDNN's heuristics offer that
    // builds; throws std::runtime_error naming the step when none does.
    struct Plan {
        std::unique_ptr<BackendDescriptor> plan;
        std::int64_t workspace_bytes = 0;
        std::string engine;  // which heuristic choice built, for the log
    };
    Plan build(cudnnHandle_t handle);
    std::size_t operation_count() const { return operations_.size(); }

    static constexpr TensorId kNone = -1;

private:
    BackendDescriptor& descriptor_of(TensorId id) const;
    const TensorSpec& spec_of(TensorId id) const;

    std::vector<std::pair<TensorSpec, std::unique_ptr<BackendDescriptor>>> tensors_;
    std::vector<std::unique_ptr<BackendDescriptor>> op_parts_;  // pointwise/reduction/matmul descriptors
    std::vector<std::unique_ptr<BackendDescriptor>> operations_;
    std::unique_ptr<BackendDescriptor> graph_;
};

// The device (or, for by-value tensors, host) pointers of a plan's tensors and its workspace,
// built once so that timed runs launch without host work in between.
std::unique_ptr<BackendDescriptor> variant_pack(const std::vector<TensorId>& ids, const std::vector<void*>& pointers, void* workspace);
void execute(cudnnHandle_t handle, const OperationGraph::Plan& plan, const BackendDescriptor& pack);

}  // namespace sextant::measure
