#include "memory/memory_model.hpp"

#include <algorithm>
#include <optional>

#include "memory/activations.hpp"
#include "memory/stage_params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }

struct ModelStates {
    double weights = 0, gradients = 0, optimizer = 0;
    double host = 0;  // an offloaded optimizer's states and the fp32 gradient copy it steps on
};

// Mixed-precision AdamW per parameter: 16-bit weights, gradients in the runtime's dtype (fp32 in
// Megatron), and an fp32 master copy plus two moments; ZeRO shards optimizer state (1), then
// gradients (2), then weights (3) over the `shards` data-parallel ranks holding replicas (under
// HSDP the ranks of one shard group: the states are replicated across the groups). Offload
// keeps the optimizer state on the host.
ModelStates model_states(const TrainingSpec& t, const RuntimeTraits& traits, const Layout& l, double params, double shards,
                         bool trained = true) {
    const int zero = l.zero_stage;
    const double weight_bytes = 2.0;
    const double grad_bytes = precision_bytes(traits.grad_dtype);
    // AdamW keeps two moments, Muon one momentum buffer.
    const double moments = t.optimizer.kind == OptimizerKind::Muon ? 1.0 : 2.0;
    const double optimizer_bytes = (t.optimizer.master_weights ? 4.0 : 0.0) + moments * precision_bytes(t.optimizer.state_dtype);
    ModelStates m;
    m.weights = params * weight_bytes / (zero >= 3 ? shards : 1.0);
    if (!trained) return m;  // frozen (LoRA's base weights): no gradient, no optimizer state
    m.gradients = params * grad_bytes / (zero >= 2 ? shards : 1.0);
    const double optimizer = params * optimizer_bytes / (zero >= 1 ? shards : 1.0);
    m.optimizer = l.optimizer_offload ? 0.0 : optimizer;
    // ZeRO-Offload (Ren et al. 2021) and Megatron's --optimizer-cpu-offload keep the states and
    // an fp32 copy of the gradient shard in host memory.
    if (l.optimizer_offload) m.host = optimizer + params * 4.0 / (zero >= 1 ? shards : 1.0);
    return m;
}

// The largest transient a stage allocates beside its stored activations.
double temporary_bytes(const Scenario& s, const Layout& l, const RuntimeTraits& traits, std::int64_t stage,
                       const std::pair<std::int64_t, std::int64_t>& layers) {
    const double tokens = d(l.microbatch) * d(s.training.seq_len) / d(l.cp);
    double largest = 0;
    if (stage_holds_output(l, stage)) {
        // The loss kernel's fp32 transients over the vocab-parallel logits (cross_entropy_bytes).
        largest = std::max(largest, cross_entropy_bytes(traits.cross_entropy).peak * tokens * d(s.model.vocab) / d(l.tp));
    }
    // A layer recomputed whole, or all but its saved ops (torchtitan's per-op policy), rebuilds
    // its working set in the backward.
    const bool rebuilds = l.recompute == Recompute::Full ||
                          (l.recompute == Recompute::Selective && traits.selective != SelectiveCheckpoint::Modules);
    if (rebuilds) largest = std::max(largest, layer_working_set_bytes(s, l, traits, layers.first));
    if (l.zero_stage >= 3) largest = std::max(largest, zero3_buffer_bytes(s.model, l, traits, layers.first));
    return largest;
}
}  // namespace

// ZeRO-3's gathered parameters (16-bit) and unsharded gradients (the gradient dtype) while a
// layer computes. FSDP gathers whole blocks: the current one and the prefetched next one (FSDP1's
// limit_all_gathers allows two in flight; FSDP2 prefetches one block each way), and one block's
// gradient before its reduce-scatter. DeepSpeed gathers module by module, a module and the one
// prefetched after it (zero3_gathered_peak), and reduces gradients in buckets of
// reduce_bucket_size elements (a module's gradient arrives whole).
double zero3_buffer_bytes(const ModelSpec& m, const Layout& l, const RuntimeTraits& traits, std::int64_t layer) {
    const Zero3Traits& z = traits.zero3;
    const double block = layer_params_per_gpu(m, l, layer).total();
    double gradients = block;
    if (z.max_live_params > 0) gradients = std::min(block, std::max(largest_module_params(m, l, layer), z.reduce_bucket_params));
    return zero3_gathered_peak(m, l, layer, z.max_live_params) * 2.0 + gradients * precision_bytes(traits.grad_dtype);
}

MemoryReport estimate_memory(const Scenario& s, const Layout& l) { return estimate_memory(s, l, runtime_traits(s)); }

namespace {
// Every stage's memory in pipeline order, each handed to `visit`, which returns false to stop
// (the planner's screen stops at the first stage over its limit: most layouts end there).
// A stage in the middle of the pipeline with the same kinds of layers as the one before holds
// the same states, activations per microbatch and buffers: only its microbatches in flight
// differ (the screen's cost no longer grows with pp times the layers).
template <class Visit>
void each_stage(const Scenario& s, const Layout& l, const RuntimeTraits& traits, Visit&& visit) {
    const std::int64_t microbatches = l.microbatches(s.training.global_batch);
    const double dense_shards = d(l.dense_shards());
    const double expert_shards = d(l.expert_shards());
    LayerParams layer_params(s.model, l);
    // A layer's stored activations, like its parameters, depend only on its kind: what it keeps
    // on the GPU, and what the fine-grained offload moves to the host.
    std::optional<std::pair<double, double>> activations_of_kind[kLayerKinds];
    const auto kept_and_offloaded = [&](std::int64_t layer) {
        std::optional<std::pair<double, double>>& kind = activations_of_kind[s.model.block_kind(layer)];
        if (!kind) {
            const double moved = offloaded_module_bytes(s, l, traits, layer);
            kind = std::pair{layer_activation_bytes(s, l, traits, layer) - moved, moved};
        }
        return *kind;
    };
    const auto activation_bytes = [&](std::int64_t layer) { return kept_and_offloaded(layer).first; };
    // microbatches_in_flight's schedule and shape, looked up once for every stage.
    const ScheduleDef& def = l.schedule_def();
    const PipelineShape shape = pipeline_shape(l, microbatches, traits);
    const bool dual = def.placement == Placement::Dual;
    std::pair<std::int64_t, std::int64_t> previous_range{0, 0};
    bool previous_middle = false;
    double per_microbatch = 0, offload_buffer = 0, offloaded_per_microbatch = 0, host_states = 0;
    StageMemory m;
    for (std::int64_t stage = 0; stage < l.pp; ++stage) {
        const auto range = layer_params.stage_range(stage);
        const bool middle = middle_stage(def, l, stage);
        const bool same = !dual && stage >= 2 && middle && previous_middle && same_layer_kinds(s.model, previous_range, range);
        previous_range = range;
        previous_middle = middle;
        m.stage = stage;
        if (!same) {
            m = StageMemory{};
            m.stage = stage;
            m.layers = range.second - range.first;
            const StageParams params = stage_params(s.model, l, stage, layer_params);
            const bool base_trained = s.training.mode != TrainingMode::Lora;
            const ModelStates dense = model_states(s.training, traits, l, params.dense, dense_shards, base_trained);
            const ModelStates expert = model_states(s.training, traits, l, params.expert, expert_shards, base_trained);
            const ModelStates adapters = model_states(s.training, traits, l, adapter_params(s, l, m.layers), dense_shards);
            m.weights = Bytes(dense.weights + expert.weights + adapters.weights);
            m.gradients = Bytes(dense.gradients + expert.gradients + adapters.gradients);
            m.optimizer = Bytes(dense.optimizer + expert.optimizer + adapters.optimizer);
            host_states = dense.host + expert.host + adapters.host;

            // Offloaded layers (the stage's first) keep their activations in host memory; a
            // double buffer of the largest layer stays on the GPU for the moves. Offloaded module
            // inputs likewise keep a double buffer of the largest layer's.
            per_microbatch = 0;
            offload_buffer = 0;
            offloaded_per_microbatch = 0;
            const std::int64_t kept = std::min(range.second, range.first + l.activation_offload_layers);
            for (std::int64_t layer = range.first; layer < kept; ++layer) {
                offload_buffer = std::max(offload_buffer, 2.0 * activation_bytes(layer));
                offloaded_per_microbatch += activation_bytes(layer);
            }
            double unmoved = 0;  // what an offload fraction below 1 keeps on the GPU after all
            if (l.offload_modules != 0) {
                for (std::int64_t layer = range.first; layer < range.second;) {
                    const std::int64_t run_end = s.model.moe_run_end(layer, range.second);
                    const double moved = kept_and_offloaded(layer).second;
                    offload_buffer = std::max(offload_buffer, 2.0 * moved);
                    offloaded_per_microbatch += moved * d(run_end - layer);
                    layer = run_end;
                }
                if (l.offload_fraction < 1) {
                    // Each model chunk keeps its later groups (offloaded_chunk_bytes), in the
                    // chunks the simulator splits the stage into (chunk_layers).
                    double moved = 0;
                    std::int64_t first = range.first;
                    const bool embedding = chunk_has_embedding(def, l.pp, stage, 0, l.vp);
                    for (const std::int64_t n : chunk_layers(range.second - range.first, l.vp, embedding, stage_holds_output(l, stage))) {
                        moved += offloaded_chunk_bytes(s, l, traits, first, n);
                        first += n;
                    }
                    unmoved = offloaded_per_microbatch - moved;
                    offloaded_per_microbatch = moved;
                }
            }
            // Layer by layer in order (the sum's rounding is the order's), but a run of one kind
            // of layer (a dense model's whole stage) looks its bytes up once.
            for (std::int64_t layer = kept; layer < range.second;) {
                const std::int64_t run_end = s.model.moe_run_end(layer, range.second);
                const double bytes = activation_bytes(layer);
                for (; layer < run_end; ++layer) per_microbatch += bytes;
            }
            per_microbatch += unmoved;
            if (stage == 0 && traits.dropout) {
                // The embedding's dropout mask (1 byte per element); its backward needs nothing else.
                const double tokens = d(l.microbatch) * d(s.training.seq_len) / d(l.cp);
                per_microbatch += tokens * d(s.model.hidden) / (l.sequence_parallel ? d(l.tp) : 1.0);
            }
            m.buffers = Bytes(temporary_bytes(s, l, traits, stage, range));
            m.context = Bytes(s.memory.context_gib * kGiB);
        }
        const double in_flight = def.in_flight(shape, stage);
        m.activations = Bytes(per_microbatch * in_flight + offload_buffer);
        m.host = Bytes(offloaded_per_microbatch * in_flight + host_states);
        const Bytes tensors = m.weights + m.gradients + m.optimizer + m.activations + m.buffers;
        m.fragmentation = tensors * s.memory.fragmentation;
        if (!visit(m)) return;
    }
}

Bytes hbm_capacity(const Scenario& s) { return Bytes(s.cluster.gpu.hbm_gib * kGiB); }
Bytes host_capacity(const Scenario& s) { return Bytes(s.cluster.host.memory_gib_per_gpu * kGiB); }
}  // namespace

MemoryReport estimate_memory(const Scenario& s, const Layout& l, const RuntimeTraits& traits) {
    if (shards_like_zero1(l, traits)) return estimate_memory(s, effective_sharding(l, traits), traits);
    MemoryReport report;
    report.capacity = hbm_capacity(s);
    report.host_capacity = host_capacity(s);
    report.stages.reserve(static_cast<std::size_t>(l.pp));
    each_stage(s, l, traits, [&](const StageMemory& m) {
        if (m.total() > report.peak) {
            report.peak = m.total();
            report.peak_stage = m.stage;
        }
        report.host_peak = std::max(report.host_peak, m.host);
        report.stages.push_back(m);
        return true;
    });
    return report;
}

std::optional<MemoryReport> memory_within(const Scenario& s, const Layout& l, const RuntimeTraits& traits, double margin) {
    if (shards_like_zero1(l, traits)) return memory_within(s, effective_sharding_scratch(l, traits), traits, margin);
    MemoryReport report;
    report.capacity = hbm_capacity(s);
    report.host_capacity = host_capacity(s);
    const double limit = offered_memory_bytes(report.capacity.value(), margin);
    bool within = true;
    each_stage(s, l, traits, [&](const StageMemory& m) {
        if (m.total().value() > limit) return within = false;
        if (m.total() > report.peak) {
            report.peak = m.total();
            report.peak_stage = m.stage;
        }
        report.host_peak = std::max(report.host_peak, m.host);
        return report.fits_host() || (within = false);
    });
    if (!within || !report.fits()) return std::nullopt;
    return report;
}

}  // namespace sextant
