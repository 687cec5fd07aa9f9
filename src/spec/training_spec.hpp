#pragma once
// What one optimizer step trains on, in which precision, with which optimizer.
#include <cstdint>
#include <span>
#include <optional>
#include <string>
#include <string_view>

#include "spec/fields.hpp"
#include "spec/hardware_spec.hpp"
#include "spec/precision_recipe.hpp"

namespace sextant {

enum class OptimizerKind { AdamW, Muon };
inline constexpr std::string_view kOptimizerNames[] = {"adamw", "muon"};
constexpr std::span<const std::string_view> enum_names(OptimizerKind) { return kOptimizerNames; }

// Mixed-precision AdamW (two moments) or Muon (one momentum buffer, orthogonalised by
// Newton-Schulz iterations on every hidden weight matrix): 16-bit compute weights, optional fp32
// master copy.
struct OptimizerSpec {
    OptimizerKind kind = OptimizerKind::AdamW;
    bool master_weights = true;          // fp32 master copy beside the 16-bit weights
    std::optional<Precision> grad_dtype;      // unset: the runtime profile's (gradient_dtype())
    Precision state_dtype = Precision::Fp32;  // Adam moments
};

// Pre-training trains every weight; LoRA (Hu et al. 2021) freezes the base weights and trains
// rank-r adapters beside the attention projections (MLPerf Training's Llama 2 70B LoRA task).
enum class TrainingMode { Pretrain, Lora };
inline constexpr std::string_view kTrainingModeNames[] = {"pretrain", "lora"};
constexpr std::span<const std::string_view> enum_names(TrainingMode) { return kTrainingModeNames; }

struct LoraSpec {
    std::int64_t rank = 16;  // the table's default (training_spec.cpp), held equal by a test
};

struct TrainingSpec {
    std::int64_t seq_len = 0;
    std::int64_t global_batch = 0;  // sequences per optimizer step
    PrecisionRecipe precision = precision_recipes().front();  // bf16
    TrainingMode mode = TrainingMode::Pretrain;
    LoraSpec lora;
    OptimizerSpec optimizer;
    double train_tokens = 0;        // token budget of the whole run (0: not given)
    std::string framework;          // runtime generation, e.g. megatron-core-2024

    double tokens_per_step() const { return static_cast<double>(seq_len * global_batch); }
};

std::span<const FieldDef> training_fields();
std::span<const FieldDef> optimizer_fields();
std::span<const FieldDef> lora_fields();
std::string optimizer_name(OptimizerKind kind);

// The training object, merged with the published-runs top-level keys (seq_len, global_batch,
// precision, framework): a key given in both places must agree.
TrainingSpec parse_training(const json& training, const json& top_level, const std::string& path);

}  // namespace sextant
