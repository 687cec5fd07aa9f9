#include "spec/hardware_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace sextant {

namespace {
constexpr FieldDef kGpuFields[] = {
    {"name", FieldType::String, "GPU type"},
    {"bf16_tflops", FieldType::Number, "dense BF16 tensor peak", "TFLOP/s", "", 1},
    {"fp16_tflops", FieldType::Number, "dense FP16 tensor peak", "TFLOP/s", "", 1},
    {"fp8_tflops", FieldType::Number, "dense FP8 tensor peak (0: none)", "TFLOP/s", "0", 0},
    {"fp4_tflops", FieldType::Number, "dense FP4 (NVFP4) tensor peak (0: none)", "TFLOP/s", "0", 0},
    {"tf32_tflops", FieldType::Number, "dense TF32 tensor peak", "TFLOP/s", "0", 0},
    {"hbm_gib", FieldType::Number, "usable HBM capacity", "GiB", "", 1},
    {"hbm_tbps", FieldType::Number, "HBM bandwidth", "TB/s", "", 0.01},
    {"nvlink_gbps", FieldType::Number, "NVLink bandwidth per GPU per direction", "GB/s", "", 1},
    {"nvlink_domain", FieldType::Integer, "GPUs in one NVLink domain", "", "8", 1, 1 << 24},
    {"nvls", FieldType::Boolean, "NVLink SHARP available", "", "false"},
    {"tdp_w", FieldType::Number, "board power", "W", "0", 0},
    {"platform_nic_gbps", FieldType::Number, "scale-out NIC line rate per GPU of the reference platform", "Gb/s", "0", 0},
    {"platform_host_link_gbps", FieldType::Number, "GPU-host bandwidth per direction on the reference platform (NVLink-C2C)",
     "GB/s", "0: PCIe, /cluster/host's default", 0},
    {"source", FieldType::String, "where the figures come from"},
};
}  // namespace

std::span<const FieldDef> gpu_fields() { return kGpuFields; }

GpuSpec parse_gpu(const json& object, const std::string& path) {
    ObjectReader r(object, path, kGpuFields);
    GpuSpec g;
    g.name = r.require_string("name");
    g.bf16_tflops = r.require_number("bf16_tflops");
    g.fp16_tflops = r.number("fp16_tflops").value_or(g.bf16_tflops);
    g.fp8_tflops = r.number("fp8_tflops").value_or(0);
    g.fp4_tflops = r.number("fp4_tflops").value_or(0);
    g.tf32_tflops = r.number("tf32_tflops").value_or(0);
    g.hbm_gib = r.require_number("hbm_gib");
    g.hbm_tbps = r.require_number("hbm_tbps");
    g.nvlink_gbps = r.require_number("nvlink_gbps");
    g.nvlink_domain = static_cast<int>(r.integer("nvlink_domain").value_or(8));
    g.nvls = r.boolean("nvls").value_or(false);
    g.tdp_w = r.number("tdp_w").value_or(0);
    g.platform_nic_gbps = r.number("platform_nic_gbps").value_or(0);
    g.platform_host_link_gbps = r.number("platform_host_link_gbps").value_or(0);
    g.source = r.string("source").value_or("");
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
    if (text == "bf16") return Precision::Bf16;
    if (text == "fp16") return Precision::Fp16;
    if (text == "fp8") return Precision::Fp8;
    if (text == "fp4") return Precision::Fp4;
    if (text == "tf32") return Precision::Tf32;
    if (text == "fp32") return Precision::Fp32;
    throw InputError("", text, "unknown precision");
}

std::string precision_name(Precision p) {
    switch (p) {
        case Precision::Bf16: return "bf16";
        case Precision::Fp16: return "fp16";
        case Precision::Fp8: return "fp8";
        case Precision::Fp4: return "fp4";
        case Precision::Tf32: return "tf32";
        case Precision::Fp32: return "fp32";
    }
    return "bf16";
}

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
