#pragma once
// Activation memory: what each layer keeps for its backward pass (Korthikanti et al. 2022,
// Table 2, generalised to GQA, SwiGLU, MoE, MLA, flash attention, sequence and context
// parallelism), and how many microbatches each pipeline stage holds at its peak.
#include <cstdint>

#include "spec/scenario.hpp"

namespace sextant {

struct RuntimeTraits {
    bool flash_attention = true;  // no s x s score matrices kept (FlashAttention, cuDNN SDPA)
    bool dropout = false;         // dropout masks kept (GPT-era recipes train with dropout 0.1)
};

// From the scenario's runtime profile (calibration/runtime/): whether attention is fused, and
// dropout where the recipe of an unfused-attention era GPT model used it.
RuntimeTraits runtime_traits(const Scenario& scenario);
RuntimeTraits runtime_traits(const Scenario& scenario, bool flash_attention);

// Bytes one layer keeps on one GPU for one microbatch, under the layout's TP/SP/CP and recompute.
double layer_activation_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits,
                              std::int64_t layer);

// Bytes of one layer's full working set for one microbatch (what full recompute rebuilds).
double layer_working_set_bytes(const Scenario& scenario, const Layout& layout, const RuntimeTraits& traits,
                               std::int64_t layer);

// Layer-microbatches a stage holds at its peak, counted in units of "all of this stage's layers
// for one microbatch": GPipe keeps every microbatch; 1F1B keeps pp - stage; interleaved 1F1B keeps
// its warm-up chunks, (1 + (pp-1)/(pp*vp)) x pp on the first stage.
double microbatches_in_flight(const Layout& layout, std::int64_t stage, std::int64_t microbatches);

}  // namespace sextant
