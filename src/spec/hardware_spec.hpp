#pragma once
// A GPU's datasheet: peaks and capacities, with the source they come from. Measured efficiencies
// live in calibration profiles, not here.
#include <span>
#include <string>
#include <string_view>

#include "spec/fields.hpp"

namespace sextant {

enum class Precision { Fp32, Tf32, Fp16, Bf16, Fp8, Fp4 };
inline constexpr std::string_view kPrecisionNames[] = {"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
constexpr std::span<const std::string_view> enum_names(Precision) { return kPrecisionNames; }

// Which attention kernel a framework runs (runtime profile) or a calibration profile's attention
// points measured. `unfused`: two batched GEMMs around a softmax kernel that stores the s x s
// scores (Megatron-LM before flash attention); `fused`: a flash kernel whose sources do not name
// it; the named ones are Dao-AILab's FlashAttention-2 (also PyTorch SDPA's flash backend) and
// cuDNN's fused flash attention (Transformer Engine's FusedAttention). A profile's attention
// rates stand at face value only for the named kernel they measured.
enum class AttentionKernel { Unfused, Fused, FlashAttention2, CudnnFused };
inline constexpr std::string_view kAttentionKernelNames[] = {"unfused", "fused", "flash-attention-2", "cudnn-fused"};
constexpr std::span<const std::string_view> enum_names(AttentionKernel) { return kAttentionKernelNames; }

struct GpuSpec {
    std::string name;
    double bf16_tflops = 0;  // dense, no sparsity
    double fp16_tflops = 0;
    double fp8_tflops = 0;   // 0 where the GPU has no FP8 tensor cores
    double fp4_tflops = 0;   // 0 where the GPU has no FP4 (block-scaled) tensor cores
    double tf32_tflops = 0;
    double hbm_gib = 0;      // usable HBM as the driver reports it
    double hbm_tbps = 0;     // HBM bandwidth, TB/s
    double nvlink_gbps = 0;  // NVLink bandwidth per GPU per direction, GB/s
    int nvlink_domain = 8;   // GPUs reachable over NVLink/NVSwitch
    bool nvls = false;       // NVLink SHARP (in-switch reduction) available
    double tdp_w = 0;
    double platform_nic_gbps = 0;  // scale-out NIC per GPU of the GPU's reference platform (DGX, NVL72)
    double platform_host_link_gbps = 0;  // GPU-host GB/s per direction there (0: a PCIe host, HostSpec's default)
    std::string source;

    double peak_tflops(Precision p) const;
};

// The preset name (topologies/gpus/) a GPU goes by: `name` itself where a preset has it, else
// the preset one of whose names or aliases it matches ignoring case, spaces, hyphens, underscores
// and a leading "NVIDIA" (nvidia-smi's "NVIDIA H100 80GB HBM3", NVIDIA's "B200-SXM-180GB"); a
// name nothing matches is returned unchanged, for the caller's unknown-preset error.
std::string gpu_preset_name(const std::string& name);

GpuSpec parse_gpu(const json& object, const std::string& path);
std::span<const FieldDef> gpu_fields();

Precision parse_precision(const std::string& text);
std::string precision_name(Precision p);
double precision_bytes(Precision p);

}  // namespace sextant
