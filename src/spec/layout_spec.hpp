#pragma once
// The parallel layout. LayoutSpec is what the user wrote (null = not fixed: the planner or the
// framework's default decides); Layout is a complete, concrete choice.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "spec/fields.hpp"

namespace sextant {

enum class Recompute { None, Selective, Full };
enum class Schedule { GPipe, OneFOneB, Interleaved };
enum class ParallelDim { TP, CP, EP, DP, PP };

struct LayoutSpec {
    std::optional<std::int64_t> tp, pp, dp, cp, ep, vp, microbatch, zero_stage;
    std::optional<bool> sequence_parallel;
    std::optional<bool> optimizer_offload;
    std::optional<Recompute> recompute;
    std::optional<Schedule> schedule;
    std::optional<std::vector<std::int64_t>> stage_layers;
    std::optional<std::array<ParallelDim, 5>> rank_order;  // fastest-varying first
};

struct Layout {
    std::int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vp = 1;
    std::int64_t microbatch = 1;
    int zero_stage = 0;
    bool sequence_parallel = false;
    bool optimizer_offload = false;  // optimizer state and step on the host (ZeRO-Offload)
    Recompute recompute = Recompute::None;
    Schedule schedule = Schedule::OneFOneB;
    std::vector<std::int64_t> stage_layers;  // layers held by each pipeline stage
    std::array<ParallelDim, 5> rank_order = {ParallelDim::TP, ParallelDim::CP, ParallelDim::EP,
                                             ParallelDim::DP, ParallelDim::PP};

    std::int64_t gpus() const { return tp * pp * dp * cp; }
    std::int64_t microbatches(std::int64_t global_batch) const {
        return global_batch / (dp * microbatch);
    }
};

// The spec that fixes every knob of `layout` (the layer split too).
LayoutSpec fixed_spec(const Layout& layout);

std::span<const FieldDef> layout_fields();
LayoutSpec parse_layout(const json& object, const std::string& path);

// The layer split frameworks use when layers do not divide by pp: the middle stages take
// ceil(L/pp) and the first and last stages, which also hold the embedding and the loss, share
// the rest (Llama 3 405B: 126 layers on 16 stages = 7, 8 x 14, 7). Empty when impossible.
std::vector<std::int64_t> default_stage_split(std::int64_t layers, std::int64_t pp);

std::string recompute_name(Recompute r);
std::string schedule_name(Schedule s);
std::string dim_name(ParallelDim d);
std::string rank_order_text(const std::array<ParallelDim, 5>& order);

}  // namespace sextant
