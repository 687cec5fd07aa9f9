#include "spec/training_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
constexpr FieldDef kTrainingFields[] = {
    {"seq_len", FieldType::Integer, "tokens per sequence", "tokens", "", 1, 1 << 27},
    {"global_batch", FieldType::Integer, "sequences per optimizer step", "sequences", "", 1, 1 << 30},
    {"precision", FieldType::String, "low-precision recipe of the transformer GEMMs", "", "bf16", -1e300, 1e300,
     kPrecisionChoices},
    {"training_mode", FieldType::String, "pretrain, or lora: frozen base weights with trained low-rank adapters", "",
     "pretrain", -1e300, 1e300, "pretrain|lora"},
    {"lora", FieldType::Object, "LoRA adapters, see /training/lora"},
    {"framework", FieldType::String, "training runtime generation (see calibration/runtime/)"},
    {"train_tokens", FieldType::Number, "token budget of the whole run", "tokens", "0", 0},
    {"optimizer", FieldType::Object, "optimizer, see /training/optimizer"},
};

constexpr FieldDef kOptimizerFields[] = {
    {"name", FieldType::String, "optimizer (muon: momentum orthogonalised by Newton-Schulz, AdamW for embeddings and norms)",
     "", "adamw", -1e300, 1e300, "adamw|adam|muon"},
    {"master_weights", FieldType::Boolean, "fp32 master copy of the weights", "", "true"},
    {"grad_dtype", FieldType::String, "gradient accumulation dtype", "", "the runtime profile's", -1e300, 1e300,
     "fp32|bf16|fp16"},
    {"state_dtype", FieldType::String, "Adam moment dtype", "", "fp32", -1e300, 1e300,
     "fp32|bf16"},
};

constexpr FieldDef kLoraFields[] = {
    {"rank", FieldType::Integer, "adapter rank r", "", "16", 1, 1 << 16},
};

// Reads `key` from the training object or the top level; both present must agree.
const json* merged(const json& training, const json& top, const char* key, const std::string& path) {
    const json* a = training.is_object() && training.contains(key) && !training[key].is_null()
                        ? &training[key] : nullptr;
    const json* b = top.contains(key) && !top[key].is_null() ? &top[key] : nullptr;
    if (a && b && *a != *b)
        throw InputError(path + "/" + key, value_text(*a),
                         "disagrees with top-level " + std::string(key) + " = " + value_text(*b));
    return a ? a : b;
}
}  // namespace

std::span<const FieldDef> training_fields() { return kTrainingFields; }
std::span<const FieldDef> optimizer_fields() { return kOptimizerFields; }
std::span<const FieldDef> lora_fields() { return kLoraFields; }

std::string optimizer_name(OptimizerKind kind) { return kind == OptimizerKind::Muon ? "muon" : "adamw"; }

TrainingSpec parse_training(const json& training, const json& top, const std::string& path) {
    json combined = json::object();
    for (const char* key : {"seq_len", "global_batch", "precision", "framework", "training_mode"})
        if (const json* v = merged(training, top, key, path)) combined[key] = *v;
    if (training.is_object()) {
        for (auto it = training.begin(); it != training.end(); ++it)
            if (!combined.contains(it.key())) combined[it.key()] = it.value();
    } else if (!training.is_null()) {
        throw InputError(path, value_text(training), "must be a JSON object");
    }

    ObjectReader r(combined, path, kTrainingFields);
    TrainingSpec t;
    t.seq_len = r.require_integer("seq_len");
    t.global_batch = r.require_integer("global_batch");
    if (const auto p = r.string("precision")) t.precision = precision_recipe(*p, r.path_of("precision"));
    t.mode = r.string("training_mode").value_or("pretrain") == "lora" ? TrainingMode::Lora : TrainingMode::Pretrain;
    if (const json* lora = r.raw("lora")) {
        ObjectReader lr(*lora, r.path_of("lora"), kLoraFields);
        t.lora.rank = lr.integer("rank").value_or(t.lora.rank);
    }
    t.framework = r.string("framework").value_or("");
    t.train_tokens = r.number("train_tokens").value_or(0);
    if (const json* o = r.raw("optimizer")) {
        ObjectReader orr(*o, r.path_of("optimizer"), kOptimizerFields);
        t.optimizer.kind = orr.string("name").value_or("adamw") == "muon" ? OptimizerKind::Muon : OptimizerKind::AdamW;
        t.optimizer.master_weights = orr.boolean("master_weights").value_or(true);
        if (const auto grad = orr.string("grad_dtype")) t.optimizer.grad_dtype = parse_precision(*grad);
        t.optimizer.state_dtype = parse_precision(orr.string("state_dtype").value_or("fp32"));
    }
    return t;
}

}  // namespace sextant
