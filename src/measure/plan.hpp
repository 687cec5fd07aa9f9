#pragma once
// What sextant-calibrate measures: a fixed grid plus, with --scenario, the GEMM shapes that the
// scenario's model produces under the tensor-parallel degrees a planner would try. Pure host code,
// so --dry-run can print it on a machine without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/busbw.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {
struct Scenario;
}

namespace sextant::measure {

struct GemmShape {
    Precision precision = Precision::Bf16;
    std::int64_t m = 0, n = 0, k = 0;
    std::string origin;  // "grid" or the layer and TP degree it comes from
};

struct AttentionShape {
    std::int64_t batch, seq, heads, kv_heads, head_dim;
    bool causal;
};

struct MeasurePlan {
    std::vector<GemmShape> gemm;
    std::vector<AttentionShape> attention;
    std::vector<std::size_t> memory_bytes;
    std::vector<NcclTestOp> collectives;
    std::size_t min_bytes = 8, max_bytes = std::size_t(4) << 30;  // doubling, as nccl-tests -f 2
    int warmup = 20, reps = 50;
};

struct PlanOptions {
    bool fp8 = false;  // the GPU has FP8 tensor cores (Hopper and later)
    bool quick = false;
    std::size_t max_bytes = std::size_t(4) << 30;
};

MeasurePlan default_plan(const PlanOptions& options);
// Adds the GEMMs of one transformer layer (QKV, attention output, MLP up/gate, MLP down, logits)
// at micro-batch tokens seq_len * microbatch for TP = 1, 2, 4, 8, and the scenario's attention.
void add_scenario_shapes(MeasurePlan& plan, const Scenario& scenario);
std::string describe(const MeasurePlan& plan);

}  // namespace sextant::measure
