#pragma once
// The public facade of the spec stage: a scenario file in, validated specs out.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "spec/cluster_spec.hpp"
#include "spec/fault_spec.hpp"
#include "spec/layout_spec.hpp"
#include "spec/model_spec.hpp"
#include "spec/reliability_spec.hpp"
#include "spec/training_spec.hpp"

namespace sextant {

// Allowances for what no formula predicts exactly: the CUDA context, library workspaces and
// the caching allocator's fragmentation.
struct MemorySettings {
    double context_gib = 1.5;        // CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers
    double fragmentation = 0.05;     // fraction of allocated tensors lost to fragmentation
    // The share of HBM a plan must leave free (the planner offers no layout above it; reports
    // draw its line; `fits` still uses all of HBM). What the memory model cannot see: the caching
    // allocator's reserved-over-allocated gap at the step's peak, NCCL buffers of communicators
    // built lazily, MoE routing beyond the planned imbalance, and the model's own error (measured
    // peaks held within 3%: Korthikanti et al. Figs. 1 and 7; torchtitan's Llama 3.1 8B peaks of
    // 82.4 and 67.0 GiB predicted 84.0 and 67.4). 10% is the budget PyTorch serving leaves by
    // default (vLLM's gpu_memory_utilization = 0.9): 8 GiB of an 80 GB H100.
    double safety_margin = 0.10;
};

struct Scenario {
    std::string name;
    ModelSpec model;
    ClusterSpec cluster;
    TrainingSpec training;
    LayoutSpec layout;
    MemorySettings memory;
    std::vector<Straggler> stragglers;
    std::vector<DegradedLink> degraded_links;
    reliability::ReliabilitySpec reliability;  // absent: every default and the default failure preset
    // The `calibration` part as a profile document (a preset or file read, or the inline object);
    // null: the GPU's shipped profile. The profile's own reader (src/profile/, below spec/ in the
    // data flow) checks it in check_scenario_parts, before any command runs.
    json calibration;
    std::filesystem::path base_dir;
    // JSON pointers where seq_len and global_batch were written, for error messages.
    std::string seq_len_path = "/seq_len";
    std::string global_batch_path = "/global_batch";
};

Scenario load_scenario(const std::filesystem::path& file);
// Replaces one part of a scenario (calibration, reliability, stragglers, degraded_links) with
// `value`, read and checked as the file's own would be at /key; what a command that sets a part
// after loading (simulate --calibration) and the scenario's parser both call.
void set_scenario_part(Scenario& scenario, std::string_view key, const json& value);
// The scenario at another GPU count and global batch (plan --gpus, the planner's sweeps), checked
// as the file's own values are: whole nodes, within the work limits, every straggler and degraded
// link still a GPU of the cluster. Errors name `gpus_path` (a flag, or /cluster/gpus). The layout
// rules that involve the count are the planner's search constraints.
Scenario with_gpus_and_batch(const Scenario& scenario, std::int64_t gpus, std::int64_t global_batch, const std::string& gpus_path);
Scenario parse_scenario(const json& document, const std::filesystem::path& base_dir);

// A GPU datasheet by name (topologies/gpus/), or an InputError at `path` with suggestions.
GpuSpec load_gpu(const std::string& name, const std::string& path);

// Every rule whose knobs `spec` fixes (dp counts as fixed when tp, pp and cp are): the scenario's
// errors. A rule that involves an open knob is left to the planner, which searches only layouts
// that pass it (a scenario with no layout and a batch smaller than the GPU count still plans).
void check_fixed_knobs(const Scenario& scenario, const LayoutSpec& spec);

// Fills what the layout leaves open with the framework defaults (dp from the GPU count, vp 1,
// microbatch 1, the framework generation's ZeRO stage, sequence parallel when tp > 1, no
// recompute) and checks every rule; when the defaults break one, the error says which knobs were
// open.
Layout resolve_layout(const Scenario& scenario, const LayoutSpec& spec);

// Every cross-field rule of a complete layout; throws InputError naming the JSON path and rule.
void validate_layout(const Scenario& scenario, const Layout& layout);
// Megatron's TransformerConfig.__post_init__ checks of --overlap-moe-expert-parallel-comm, each
// applied as far as its knobs are known: the rule broken, or empty.
std::string_view ep_overlap_rule(const ModelSpec& model, std::optional<MoeDispatcher> dispatcher, std::optional<std::int64_t> ep, std::optional<std::int64_t> pp, std::optional<std::int64_t> vp,
                            std::optional<Recompute> recompute, std::optional<std::uint8_t> modules);
// Megatron-Core's checks of --offload-modules (TransformerConfig.__post_init__, d98e8a64dd), as
// far as the knobs are known: the rule broken, or empty. Modules that hold nothing under a full
// recompute are refused too: the layer keeps only its input.
std::string_view offload_modules_rule(const ModelSpec& model, std::uint8_t offload, std::optional<std::int64_t> offload_layers,
                                      std::optional<Recompute> recompute, std::optional<std::uint8_t> recompute_modules);
// What PyTorch's async TP needs (layout.async_tp), as far as the knobs are known: the rule broken, or empty.
std::string_view async_tp_rule(std::optional<std::int64_t> tp, std::optional<bool> sequence_parallel);

std::span<const FieldDef> scenario_fields();
std::span<const FieldDef> memory_fields();

}  // namespace sextant
