#include <nlohmann/json.hpp>

#include "report/schema.hpp"

#include "spec/runtime_profile.hpp"
#include "profile/collective_sweeps.hpp"
#include "profile/profile.hpp"
#include "sim/step_context.hpp"
#include "spec/reliability_spec.hpp"
#include "spec/scenario.hpp"

namespace sextant {

std::vector<FieldTable> all_field_tables() {
    return {
        {"/", "a scenario (any published-runs entry is one)", scenario_fields()},
        {"/model", "decoder-only transformer (or hybrid Mamba) shape", model_fields()},
        {"/model/moe", "mixture of experts", moe_fields()},
        {"/model/attention", "multi-head latent attention", mla_fields()},
        {"/model/sliding_window", "banded (local) attention", sliding_window_fields()},
        {"/model/mamba", "Mamba-2 mixers of a hybrid model", mamba_fields()},
        {"/model/gated_delta_net", "gated delta net mixers of a transformer's linear-attention layers", gated_delta_net_fields()},
        {"/cluster", "GPUs and fabric (shorthand or full)", cluster_fields()},
        {"/cluster/storage", "checkpoint storage", storage_fields()},
        {"/cluster/host", "host link and memory, for optimizer offload", host_fields()},
        {"/training", "batch, precision, optimizer", training_fields()},
        {"/training/optimizer", "optimizer", optimizer_fields()},
        {"/training/lora", "LoRA adapters (training_mode lora)", lora_fields()},
        {"/layout", "parallel layout; null = chosen by the planner or framework default",
         layout_fields()},
        {"/memory", "memory allowances", memory_fields()},
        {"/stragglers/*", "a slow GPU or node", straggler_fields()},
        {"/degraded_links/*", "a NIC link below its rate", degraded_link_fields()},
        {"/reliability", "failures, checkpoints and restarts of the whole run",
         reliability::reliability_fields()},
        {"/reliability/failures/*", "one failure process, scaled by the node count",
         reliability::failure_fields()},
        {"/reliability/restart", "recovery after a failure", reliability::restart_fields()},
        {"/reliability/checkpoint", "save policy", reliability::checkpoint_fields()},
        {"/reliability/maintenance", "planned maintenance", reliability::maintenance_fields()},
        {"calibration/reliability/*.json", "failure-rate preset", reliability::failure_preset_fields()},
        {"topologies/gpus/*.json", "GPU datasheet preset", gpu_fields()},
        {"calibration/*.json", "calibration profile (sextant-calibration/1)", profile_fields()},
        {"calibration/*.json: comm", "collective model calibration", comm_calibration_fields()},
        {"calibration/*.json: collectives/*", "a measured sweep of one collective on one group", collective_sweep_fields()},
        {"calibration/*.json: collectives/*/points/*", "one size of a sweep", collective_sample_fields()},
        {"calibration/*.json: collectives/*/provenance", "where a sweep was measured", sweep_provenance_fields()},
        {"calibration/runtime/*.json", "runtime profile of a framework generation", runtime_profile_fields()},
    };
}

}  // namespace sextant
