#include "spec/training_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/field_binding.hpp"

namespace sextant {

namespace {
constexpr FieldDef kTrainingFields[] = {
    {"seq_len", FieldType::Integer, "tokens per sequence", "tokens", required(), 1, 1 << 27, "", bind<&TrainingSpec::seq_len>()},
    {"global_batch", FieldType::Integer, "sequences per optimizer step", "sequences", required(), 1, 1 << 30, "",
     bind<&TrainingSpec::global_batch>()},
    {"precision", FieldType::String, "low-precision recipe of the transformer GEMMs", "", default_string("bf16"), -1e300, 1e300,
     kPrecisionChoices},
    {"training_mode", FieldType::String, "pretrain, or lora: frozen base weights with trained low-rank adapters", "",
     default_string("pretrain"), -1e300, 1e300, "", bind<&TrainingSpec::mode>()},
    {"lora", FieldType::Object, "LoRA adapters, see /training/lora"},
    {"framework", FieldType::String, "training runtime generation (see calibration/runtime/)", "", default_string(""), -1e300, 1e300,
     "", bind<&TrainingSpec::framework>()},
    {"train_tokens", FieldType::Number, "token budget of the whole run", "tokens", default_number(0), 0, 1e300, "",
     bind<&TrainingSpec::train_tokens>()},
    {"optimizer", FieldType::Object, "optimizer, see /training/optimizer; its name alone (\"muon\") stands for {\"name\": ...}"},
};

// "adam" is accepted for AdamW (the published runs' spelling).
constexpr FieldDef kOptimizerFields[] = {
    {"name", FieldType::String, "optimizer (muon: momentum orthogonalised by Newton-Schulz, AdamW for embeddings and norms)",
     "", default_string("adamw"), -1e300, 1e300, "adamw|adam|muon"},
    {"master_weights", FieldType::Boolean, "fp32 master copy of the weights", "", default_bool(true), -1e300, 1e300, "",
     bind<&OptimizerSpec::master_weights>()},
    {"grad_dtype", FieldType::String, "gradient accumulation dtype", "", "the runtime profile's", -1e300, 1e300,
     "fp32|bf16|fp16", bind<&OptimizerSpec::grad_dtype>()},
    {"state_dtype", FieldType::String, "Adam moment dtype", "", default_string("fp32"), -1e300, 1e300, "fp32|bf16",
     bind<&OptimizerSpec::state_dtype>()},
};

constexpr FieldDef kLoraFields[] = {
    {"rank", FieldType::Integer, "adapter rank r (MLPerf Training's Llama 2 70B LoRA reference: 16)", "", default_integer(16), 1,
     1 << 16, "", bind<&LoraSpec::rank>()},
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

std::string optimizer_name(OptimizerKind kind) { return std::string(name_of(kind)); }

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

    // An optimizer given by its name alone, as the published-runs files write Kimi K2's "muon".
    if (combined.contains("optimizer") && combined["optimizer"].is_string()) combined["optimizer"] = {{"name", combined["optimizer"]}};
    ObjectReader r(combined, path, kTrainingFields);
    TrainingSpec t;
    read_fields(r, t);
    t.precision = precision_recipe(r.string_or_default("precision"), r.path_of("precision"));
    if (const json* lora = r.raw("lora")) read_fields(ObjectReader(*lora, r.path_of("lora"), kLoraFields), t.lora);
    if (const json* o = r.raw("optimizer")) {
        ObjectReader orr(*o, r.path_of("optimizer"), kOptimizerFields);
        read_fields(orr, t.optimizer);
        t.optimizer.kind = orr.string_or_default("name") == "muon" ? OptimizerKind::Muon : OptimizerKind::AdamW;
    }
    return t;
}

}  // namespace sextant
