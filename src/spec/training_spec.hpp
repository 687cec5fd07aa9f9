#pragma once
// What one optimizer step trains on, in which precision, with which optimizer.
#include <cstdint>
#include <span>
#include <optional>
#include <string>

#include "spec/fields.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {

// Mixed-precision AdamW: bf16/fp16 compute weights, optional fp32 master copy, two moments.
struct OptimizerSpec {
    std::string name = "adamw";
    bool master_weights = true;          // fp32 master copy beside the 16-bit weights
    std::optional<Precision> grad_dtype;      // unset: the runtime profile's (gradient_dtype())
    Precision state_dtype = Precision::Fp32;  // Adam moments
};

struct TrainingSpec {
    std::int64_t seq_len = 0;
    std::int64_t global_batch = 0;  // sequences per optimizer step
    Precision precision = Precision::Bf16;
    OptimizerSpec optimizer;
    double train_tokens = 0;        // token budget of the whole run (0: not given)
    std::string framework;          // runtime generation, e.g. megatron-core-2024

    double tokens_per_step() const { return static_cast<double>(seq_len * global_batch); }
};

std::span<const FieldDef> training_fields();
std::span<const FieldDef> optimizer_fields();

// The training object, merged with the published-runs top-level keys (seq_len, global_batch,
// precision, framework): a key given in both places must agree.
TrainingSpec parse_training(const json& training, const json& top_level, const std::string& path);

}  // namespace sextant
