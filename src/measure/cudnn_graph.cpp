#include "cudnn_graph.hpp"

#include <stdexcept>

#include "cuda_check.hpp"

namespace sextant::measure {

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
    SEXTANT_CHECK(cudnnBackendCreateDescriptor(type, &descriptor_));
}

BackendDescriptor::~BackendDescriptor() {
    if (descriptor_) cudnnBackendDestroyDescriptor(descriptor_);
}

void BackendDescriptor::set_raw(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
                                const void* values) {
    const cudnnStatus_t status = cudnnBackendSetAttribute(descriptor_, name, type, count, values);
    if (status != CUDNN_STATUS_SUCCESS)
        throw std::runtime_error("cudnnBackendSetAttribute(" + std::to_string(int(name)) + "): " + cudnnGetErrorString(status));
}

void BackendDescriptor::finalize(const char* what) {
    const cudnnStatus_t status = cudnnBackendFinalize(descriptor_);
    if (status != CUDNN_STATUS_SUCCESS) throw std::runtime_error(std::string("cudnnBackendFinalize(") + what + "): " + cudnnGetErrorString(status));
}

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
    return strides;
}

namespace {
// A backend descriptor pointer, for attributes that take arrays of them.
cudnnBackendDescriptor_t raw(const BackendDescriptor& d) { return d.get(); }
}  // namespace

TensorId OperationGraph::tensor(const TensorSpec& spec) {
    const TensorId id = static_cast<TensorId>(tensors_.size());
    auto d = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const std::int64_t uid = id + 1, alignment = 16;
    d->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, spec.type);
    d->set_all(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, spec.dims);
    d->set_all(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, spec.strides);
    d->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid);
    d->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment);
    const bool is_virtual = spec.is_virtual, by_value = spec.by_value;
    d->set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual);
    if (by_value) d->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, by_value);
    d->finalize("tensor");
    tensors_.emplace_back(spec, std::move(d));
    return id;
}

TensorId OperationGraph::virtual_tensor(const std::vector<std::int64_t>& dims, cudnnDataType_t type) {
    return tensor({dims, packed_strides(dims), type, true, false});
}

TensorId OperationGraph::virtual_like(TensorId like, cudnnDataType_t type) {
    TensorSpec spec = spec_of(like);
    spec.type = type;
    spec.is_virtual = true;
    spec.by_value = false;
    return tensor(spec);
}

BackendDescriptor& OperationGraph::descriptor_of(TensorId id) const { return *tensors_.at(static_cast<std::size_t>(id)).second; }
const TensorSpec& OperationGraph::spec_of(TensorId id) const { return tensors_.at(static_cast<std::size_t>(id)).first; }

void OperationGraph::pointwise(cudnnPointwiseMode_t mode, TensorId x, TensorId b, TensorId t, TensorId y, std::int64_t axis,
                               cudnnDataType_t compute) {
    auto pw = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    pw->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
    pw->set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, compute);
    if (axis >= 0) pw->set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, axis);
    pw->finalize("pointwise");
    auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(*pw));
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(x)));
    if (b != kNone) op->set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(b)));
    if (t != kNone) op->set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(t)));
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(y)));
    const float one = 1.0f;
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, one);
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, one);
    op->finalize("pointwise operation");
    op_parts_.push_back(std::move(pw));
    operations_.push_back(std::move(op));
}

void OperationGraph::reduction(cudnnReduceTensorOp_t reduce, TensorId x, TensorId y) {
    auto r = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    r->set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, reduce);
    r->set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
    r->finalize("reduction");
    auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(*r));
    op->set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(x)));
    op->set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(y)));
    op->finalize("reduction operation");
    op_parts_.push_back(std::move(r));
    operations_.push_back(std::move(op));
}

void OperationGraph::matmul(TensorId a, TensorId b, TensorId c) {
    auto mm = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    mm->set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, CUDNN_DATA_FLOAT);
    mm->finalize("matmul");
    auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(a)));
    op->set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(b)));
    op->set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(c)));
    op->set(CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(*mm));
    op->finalize("matmul operation");
    op_parts_.push_back(std::move(mm));
    operations_.push_back(std::move(op));
}

void OperationGraph::reshape(TensorId x, TensorId y) {
    auto op = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(x)));
    op->set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw(descriptor_of(y)));
    op->finalize("reshape operation");
    operations_.push_back(std::move(op));
}

OperationGraph::Plan OperationGraph::build(cudnnHandle_t handle) {
    graph_ = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> ops;
    for (const auto& op : operations_) ops.push_back(op->get());
    graph_->set_all(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops);
    graph_->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
    graph_->finalize("operation graph");

    BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, graph_->get());
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, CUDNN_HEUR_MODE_A);
    heuristics.finalize("engine heuristics");
    std::int64_t count = 0;
    SEXTANT_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                           &count, nullptr));
    if (count == 0) throw std::runtime_error("cuDNN offers no engine for this attention graph");
    std::vector<std::unique_ptr<BackendDescriptor>> configs;
    std::vector<cudnnBackendDescriptor_t> raw_configs;
    for (std::int64_t i = 0; i < count; ++i) {
        configs.push_back(std::make_unique<BackendDescriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
        raw_configs.push_back(configs.back()->get());
    }
    std::int64_t returned = 0;
    SEXTANT_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                           &returned, raw_configs.data()));
    std::string failures;
    for (std::int64_t i = 0; i < returned; ++i) {
        auto plan = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle);
        plan->set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw_configs[static_cast<std::size_t>(i)]);
        if (cudnnBackendFinalize(plan->get()) != CUDNN_STATUS_SUCCESS) {
            failures += " " + std::to_string(i);
            continue;
        }
        Plan out;
        std::int64_t n = 0;
        SEXTANT_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                               &out.workspace_bytes));
        out.plan = std::move(plan);
        out.engine = "heuristic choice " + std::to_string(i) + " of " + std::to_string(returned);
        return out;
    }
    throw std::runtime_error("no engine configuration of the attention graph finalizes (tried" + failures + ")");
}

std::unique_ptr<BackendDescriptor> variant_pack(const std::vector<TensorId>& ids, const std::vector<void*>& pointers, void* workspace) {
    auto pack = std::make_unique<BackendDescriptor>(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    std::vector<std::int64_t> uids;
    for (TensorId id : ids) uids.push_back(id + 1);
    pack->set_all(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids);
    pack->set_all(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers);
    pack->set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, workspace);
    pack->finalize("variant pack");
    return pack;
}

void execute(cudnnHandle_t handle, const OperationGraph::Plan& plan, const BackendDescriptor& pack) {
    SEXTANT_CHECK(cudnnBackendExecute(handle, plan.plan->get(), pack.get()));
}

}  // namespace sextant::measure
