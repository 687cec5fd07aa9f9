#pragma once
// What sextant-calibrate measures: a fixed grid plus, with --scenario, exactly the GEMM and
// attention shapes that the scenario's layers run at its TP split. Pure host code, so --dry-run
// can print it on a machine without a GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "profile/busbw.hpp"

namespace sextant {
struct Scenario;
}

namespace sextant::measure {

struct GemmShape {
    std::string recipe = "bf16";  // a recipe of gemm_recipes.hpp, named as training.precision names it
    std::int64_t m = 0, n = 0, k = 0;
    std::string origin;  // "grid" or the layer, pass and TP degree it comes from
};

// Fused attention over [batch, heads, seq, head_dim]: grouped-query attention has fewer key-value
// heads than query heads; multi-head latent attention a value head smaller than the query-key one
// (DeepSeek-V3: 192 and 128).
struct AttentionShape {
    std::int64_t batch = 1, seq = 0, heads = 1, kv_heads = 1, head_dim = 0, head_dim_v = 0;
    bool causal = true;
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
    bool fp8 = false;           // FP8 tensor cores (Hopper and later): fp8, fp8_rowwise, fp8_blockwise
    bool block_scaled = false;  // MX/NV block-scaled tensor cores (Blackwell): mxfp8, nvfp4
    bool quick = false;
    std::size_t max_bytes = std::size_t(4) << 30;
};

MeasurePlan default_plan(const PlanOptions& options);
// Adds every GEMM of the scenario's layers (forward, input and weight gradients; each layer kind,
// dense and MoE; the logits) and its attention, at the layout's TP degree (or each of 1, 2, 4, 8
// that divides the heads when the layout leaves TP open), in the scenario's precision recipe.
void add_scenario_shapes(MeasurePlan& plan, const Scenario& scenario);
std::string describe(const MeasurePlan& plan);

}  // namespace sextant::measure
