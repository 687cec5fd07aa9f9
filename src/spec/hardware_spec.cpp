#include "spec/hardware_spec.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.hpp"
#include "spec/field_binding.hpp"
#include "spec/presets.hpp"

namespace sextant {

namespace {
constexpr FieldDef kGpuFields[] = {
    {"name", FieldType::String, "GPU type", "", required(), -1e300, 1e300, "", bind<&GpuSpec::name>()},
    {"bf16_tflops", FieldType::Number, "dense BF16 tensor peak", "TFLOP/s", required(), 1, 1e300, "", bind<&GpuSpec::bf16_tflops>()},
    {"fp16_tflops", FieldType::Number, "dense FP16 tensor peak", "TFLOP/s", "bf16_tflops", 1, 1e300, "", bind<&GpuSpec::fp16_tflops>()},
    {"fp8_tflops", FieldType::Number, "dense FP8 tensor peak (0: none)", "TFLOP/s", default_number(0), 0, 1e300, "",
     bind<&GpuSpec::fp8_tflops>()},
    {"fp4_tflops", FieldType::Number, "dense FP4 (NVFP4) tensor peak (0: none)", "TFLOP/s", default_number(0), 0, 1e300, "",
     bind<&GpuSpec::fp4_tflops>()},
    {"tf32_tflops", FieldType::Number, "dense TF32 tensor peak", "TFLOP/s", default_number(0), 0, 1e300, "", bind<&GpuSpec::tf32_tflops>()},
    {"hbm_gib", FieldType::Number, "usable HBM capacity", "GiB", required(), 1, 1e300, "", bind<&GpuSpec::hbm_gib>()},
    {"hbm_tbps", FieldType::Number, "HBM bandwidth", "TB/s", required(), 0.01, 1e300, "", bind<&GpuSpec::hbm_tbps>()},
    {"nvlink_gbps", FieldType::Number, "NVLink bandwidth per GPU per direction", "GB/s", required(), 1, 1e300, "",
     bind<&GpuSpec::nvlink_gbps>()},
    {"nvlink_domain", FieldType::Integer, "GPUs in one NVLink domain", "", default_integer(8), 1, 1 << 24, "",
     bind<&GpuSpec::nvlink_domain>()},
    {"nvls", FieldType::Boolean, "NVLink SHARP available", "", default_bool(false), -1e300, 1e300, "", bind<&GpuSpec::nvls>()},
    {"tdp_w", FieldType::Number, "board power", "W", default_number(0), 0, 1e300, "", bind<&GpuSpec::tdp_w>()},
    {"platform_nic_gbps", FieldType::Number, "scale-out NIC line rate per GPU of the reference platform", "Gb/s", default_number(0), 0,
     1e300, "", bind<&GpuSpec::platform_nic_gbps>()},
    {"platform_host_link_gbps", FieldType::Number,
     "GPU-host bandwidth per direction on the reference platform (NVLink-C2C; 0: a PCIe host, /cluster/host's default)", "GB/s",
     default_number(0), 0, 1e300, "", bind<&GpuSpec::platform_host_link_gbps>()},
    {"source", FieldType::String, "where the figures come from", "", default_string(""), -1e300, 1e300, "", bind<&GpuSpec::source>()},
    {"aliases", FieldType::Array, "other names of this GPU (strings): NVIDIA's SKU and nvidia-smi names; a cluster's gpu may give any"},
};

// A GPU name reduced to what tells GPUs apart: lower case, no spaces, hyphens or underscores,
// no leading "nvidia".
std::string name_key(const std::string& name) {
    std::string key;
    for (const char c : name)
        if (c != ' ' && c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return key.starts_with("nvidia") ? key.substr(6) : key;
}
}  // namespace

std::span<const FieldDef> gpu_fields() { return kGpuFields; }

std::string gpu_preset_name(const std::string& name) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(data_dir() / "topologies" / "gpus" / (name + ".json"), ec)) return name;
    const std::string key = name_key(name);
    for (const std::string& preset : preset_names("topologies/gpus")) {
        if (name_key(preset) == key) return preset;
        const json doc = load_preset("topologies/gpus", preset, "topologies/gpus/" + preset + ".json");
        if (!doc.contains("aliases") || !doc["aliases"].is_array()) continue;
        for (const json& alias : doc["aliases"])
            if (alias.is_string() && name_key(alias.get<std::string>()) == key) return preset;
    }
    return name;
}

GpuSpec parse_gpu(const json& object, const std::string& path) {
    ObjectReader r(object, path, kGpuFields);
    GpuSpec g;
    read_fields(r, g);
    if (!r.has("fp16_tflops")) g.fp16_tflops = g.bf16_tflops;
    if (r.has("aliases"))
        for (std::size_t i = 0; i < object["aliases"].size(); ++i)
            if (!object["aliases"][i].is_string() || object["aliases"][i].get<std::string>().empty())
                throw InputError(path + "/aliases/" + std::to_string(i), value_text(object["aliases"][i]), "must be a non-empty string");
    return g;
}

double GpuSpec::peak_tflops(Precision p) const {
    switch (p) {
        case Precision::Bf16: return bf16_tflops;
        case Precision::Fp16: return fp16_tflops;
        case Precision::Fp8: return fp8_tflops > 0 ? fp8_tflops : bf16_tflops;
        case Precision::Fp4: return fp4_tflops > 0 ? fp4_tflops : peak_tflops(Precision::Fp8);
        case Precision::Tf32: return tf32_tflops;
        case Precision::Fp32: return tf32_tflops / 8.0;
    }
    return bf16_tflops;
}

Precision parse_precision(const std::string& text) {
    if (const auto p = enum_from_name<Precision>(text)) return *p;
    throw InputError("", text, "unknown precision");
}

std::string precision_name(Precision p) { return std::string(name_of(p)); }

double precision_bytes(Precision p) {
    switch (p) {
        case Precision::Fp4: return 0.5;
        case Precision::Fp8: return 1;
        case Precision::Bf16:
        case Precision::Fp16: return 2;
        case Precision::Tf32:
        case Precision::Fp32: return 4;
    }
    return 2;
}

}  // namespace sextant
