#include "memory/stage_params.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/hash_mix.hpp"
#include "core/repeated_sum.hpp"
#include "model/params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

void stage_layer_ranges(const Layout& l, std::vector<std::pair<std::int64_t, std::int64_t>>& ranges) {
    ranges.clear();
    std::int64_t first = 0;
    for (auto n : l.stage_layers) {
        ranges.emplace_back(first, first + n);
        first += n;
    }
}

StageParams layer_params_per_gpu(const ModelSpec& m, const Layout& l, std::int64_t layer) {
    const double tp = d(l.tp);
    StageParams p;
    // Norms are replicated across TP ranks; everything else is split by Megatron's TP (a Mamba
    // mixer's projections, conv1d and per-head terms by heads and groups), but for a gated delta
    // net's gated norm, one value head's width that every head shares and every rank holds whole
    // (as layer_parameter_tensors counts it).
    const double whole = m.layer_mixer(layer) == Mixer::GatedDeltaNet ? d(m.gdn->value_head_dim) : 0.0;
    p.dense = (mixer_params(m, layer) - whole) / tp + whole + m.norms_per_layer() * norm_params(m);
    switch (m.layer_ffn(layer)) {
    case Ffn::None: return p;
    case Ffn::Dense: p.dense += mlp_params(m, m.ffn_hidden) / tp; return p;
    case Ffn::Moe: break;
    }
    p.dense += d(m.hidden) * d(m.moe.experts) + latent_projection_params(m);  // router and latent projections, replicated
    p.dense += d(m.moe.shared_experts) * mlp_params(m, m.moe.shared_ffn_hidden) / tp;
    p.expert = d(m.moe.experts) / d(l.ep) * routed_expert_params(m) / d(l.etp);
    return p;
}

namespace {
// A layer's linear modules in forward order on one GPU: attention input projection(s), output
// projection (a Mamba mixer's in_proj and out_proj), the MLP's first (gate and up fused) and
// second projections; a MoE layer's local experts count as one module each way.
std::vector<double> layer_modules(const ModelSpec& m, const Layout& l, std::int64_t layer) {
    const double h = d(m.hidden), tp = d(l.tp);
    std::vector<double> modules;
    const Mixer mixer = m.layer_mixer(layer);
    if (mixer == Mixer::Mamba) {
        modules.push_back(h * d(m.mamba.in_proj_out()) / tp);
        modules.push_back(d(m.mamba.inner()) * h / tp);
    } else if (mixer == Mixer::GatedDeltaNet) {
        modules.push_back(h * d(m.gdn->in_proj_out()) / tp);
        modules.push_back(d(m.gdn->value_dim()) * h / tp);
    } else if (mixer == Mixer::Attention && m.attention == AttentionKind::MultiLatent) {
        const auto& a = m.mla;
        const double heads = d(m.heads);
        modules.push_back(d(a.q_lora_rank > 0 ? a.q_lora_rank : m.hidden) * heads * d(a.qk_nope_head_dim + a.qk_rope_head_dim) / tp);
        modules.push_back(d(a.kv_lora_rank) * heads * d(a.qk_nope_head_dim + a.v_head_dim) / tp);
        modules.push_back(heads * d(a.v_head_dim) * h / tp);
    } else if (mixer == Mixer::Attention) {
        modules.push_back(h * d(m.qkv_out()) / tp);
        modules.push_back(h * d(m.heads) * d(m.head_dim) / tp);
    }
    const double gate = m.gated_mlp() ? 2.0 : 1.0;
    if (m.layer_ffn(layer) == Ffn::Moe) {
        const double local = d(m.moe.experts) / d(l.ep) / d(l.etp), width = d(m.expert_width());
        modules.push_back(local * width * d(m.moe.expert_ffn_hidden) * gate);
        modules.push_back(local * width * d(m.moe.expert_ffn_hidden));
    } else if (m.layer_ffn(layer) == Ffn::Dense) {
        modules.push_back(h * d(m.ffn_hidden) * gate / tp);
        modules.push_back(h * d(m.ffn_hidden) / tp);
    }
    return modules;
}
}  // namespace

std::vector<double> layer_parameter_tensors(const ModelSpec& m, const Layout& l, std::int64_t layer) {
    const double h = d(m.hidden), tp = d(l.tp);
    std::vector<double> t(static_cast<std::size_t>((m.norm == NormKind::LayerNorm ? 2 : 1) * m.norms_per_layer()), h);
    const Mixer mixer = m.layer_mixer(layer);
    if (mixer == Mixer::Mamba) {
        // in_proj, conv1d weight and bias, dt bias, A_log, D, the gated norm, out_proj.
        const MambaSpec& s = m.mamba;
        const double conv = d(s.conv_channels()) / tp;
        for (const double tensor : {h * d(s.in_proj_out()) / tp, conv * d(s.conv_kernel), conv, d(s.heads) / tp, d(s.heads) / tp,
                                    d(s.heads) / tp, d(s.inner()) / tp, d(s.inner()) * h / tp})
            t.push_back(tensor);
    } else if (mixer == Mixer::GatedDeltaNet) {
        // in_proj, conv1d weight, dt bias, A_log, the gated norm (one value head's width, whole on
        // every rank), out_proj.
        const GatedDeltaNetSpec& g = *m.gdn;
        for (const double tensor : {h * d(g.in_proj_out()) / tp, d(g.conv_channels()) * d(g.conv_kernel) / tp, d(g.value_heads) / tp,
                                    d(g.value_heads) / tp, d(g.value_head_dim), d(g.value_dim()) * h / tp})
            t.push_back(tensor);
    } else if (mixer == Mixer::Attention && m.attention == AttentionKind::MultiLatent) {
        t.insert(t.end(), 3, attention_params_per_layer(m) / 3 / tp);
    } else if (mixer == Mixer::Attention) {
        const double qkv = d(m.qkv_out()) / tp;
        t.push_back(h * qkv);
        if (m.qkv_bias || m.linear_bias) t.push_back(qkv);
        t.push_back(d(m.heads) * d(m.head_dim) * h / tp);
        if (m.linear_bias) t.push_back(h);
    }
    const double gate = m.gated_mlp() ? 2.0 : 1.0;
    const auto mlp = [&](double params, double copies) {
        // Gate and up projections fused in one weight (Megatron), then the down projection.
        t.insert(t.end(), static_cast<std::size_t>(copies), params * gate / (gate + 1));
        t.insert(t.end(), static_cast<std::size_t>(copies), params / (gate + 1));
    };
    if (m.layer_ffn(layer) == Ffn::None) return t;
    if (m.layer_ffn(layer) == Ffn::Dense) {
        const double ffn = d(m.ffn_hidden) / tp;
        t.push_back(h * ffn * gate);
        if (m.linear_bias) t.push_back(ffn * gate);
        t.push_back(h * ffn);
        if (m.linear_bias) t.push_back(h);
        return t;
    }
    t.push_back(h * d(m.moe.experts));  // router
    if (m.moe.latent > 0) t.insert(t.end(), 2, latent_projection_params(m) / 2);
    if (m.moe.shared_experts > 0) mlp(d(m.moe.shared_experts) * mlp_params(m, m.moe.shared_ffn_hidden) / tp, 1);
    // Each of the rank's experts/ep local experts, 1/etp of each (expert tensor parallelism).
    mlp(routed_expert_params(m) / d(l.etp), std::ceil(d(m.moe.experts) / d(l.ep)));
    return t;
}

double zero3_prefetched_share(const ModelSpec& m, const Layout& l, std::int64_t layer, double max_live) {
    if (max_live <= 0) return 1.0;
    const std::vector<double> modules = layer_modules(m, l, layer);
    double prefetched = 0, total = 0;
    for (std::size_t k = 0; k < modules.size(); ++k) {
        // The module before the first is the previous layer's last (layers repeat).
        const double before = modules[(k + modules.size() - 1) % modules.size()];
        if (before < max_live) prefetched += modules[k];
        total += modules[k];
    }
    return prefetched / total;
}

double largest_module_params(const ModelSpec& m, const Layout& l, std::int64_t layer) {
    const std::vector<double> modules = layer_modules(m, l, layer);
    return *std::max_element(modules.begin(), modules.end());
}

double zero3_gathered_peak(const ModelSpec& m, const Layout& l, std::int64_t layer, double max_live) {
    if (max_live <= 0) return 2.0 * layer_params_per_gpu(m, l, layer).total();
    const std::vector<double> modules = layer_modules(m, l, layer);
    double peak = 0;
    for (std::size_t k = 0; k < modules.size(); ++k)
        peak = std::max(peak, modules[k] + (modules[k] < max_live ? modules[(k + 1) % modules.size()] : 0.0));
    return peak;
}

double regathered_after_recompute(const ModelSpec& m, const Layout& l, std::int64_t layer, double max_reuse_distance) {
    const std::vector<double> modules = layer_modules(m, l, layer);
    double after = 0, regathered = 0;
    for (auto it = modules.rbegin(); it != modules.rend(); ++it) {
        if (2.0 * after > max_reuse_distance) regathered += *it;
        after += *it;
    }
    return regathered;
}

double adapter_params(const Scenario& s, const Layout& l, std::int64_t layers) {
    if (s.training.mode != TrainingMode::Lora) return 0.0;
    return d(layers) * lora_params_per_layer(s.model, s.training.lora.rank) / d(l.tp);
}

namespace {
// The parameters of model stage `stage`'s layers, with the embedding where the stage holds the
// start of the model and the output layer where it holds the end.
StageParams model_stage_params(const ModelSpec& m, const Layout& l, std::int64_t stage, bool first, bool last,
                               LayerParams& layer_params) {
    const auto range = layer_params.stage_range(stage);
    StageParams p;
    std::int64_t layer = range.first;
    if (layer < range.second) {
        // The stage's first run of one kind of layer (all of a dense model's) from zero, as the
        // loop below would sum it, without the loop: the screen asks this of every stage of
        // millions of layouts, from the memory model and the stage plan.
        thread_local RepeatedSum dense_sum, expert_sum;
        const std::int64_t run_end = m.moe_run_end(layer, range.second);
        const StageParams& lp = layer_params(layer);
        p.dense = dense_sum(lp.dense, static_cast<std::size_t>(run_end - layer));
        p.expert = expert_sum(lp.expert, static_cast<std::size_t>(run_end - layer));
        layer = run_end;
    }
    // The rest in order (the sums' rounding is the order's), each run of one kind looked up once.
    while (layer < range.second) {
        const std::int64_t run_end = m.moe_run_end(layer, range.second);
        const StageParams& lp = layer_params(layer);
        for (; layer < run_end; ++layer) {
            p.dense += lp.dense;
            p.expert += lp.expert;
        }
    }
    const double tp = d(l.tp), h = d(m.hidden), vocab_shard = d(m.vocab) * h / tp;
    if (first) {
        p.dense += vocab_shard;
        if (m.position == PositionKind::Learned) p.dense += d(m.max_positions) * h;
    }
    if (last) {
        // A tied output layer on another stage than the embedding still needs the embedding
        // there: Megatron keeps a copy and all-reduces its gradient with the first stage.
        if (!m.tied_embeddings || !first) p.dense += vocab_shard;
        p.dense += norm_params(m);
        // Each MTP module: a layer of the last layer's kind, a 2h -> h projection and norms; it
        // shares the embedding and output head already counted.
        for (std::int64_t k = 0; k < m.mtp_layers; ++k) {
            m.for_each_mtp_block([&](std::int64_t block) {
                const StageParams& lp = layer_params(block);
                p.dense += lp.dense;
                p.expert += lp.expert;
            });
            p.dense += 2.0 * h * h / tp + 3.0 * norm_params(m);
        }
    }
    return p;
}

}  // namespace

// Where the schedule places the embedding and the output layer (src/schedule/): the first and last
// stages, or the first stage for both (ZB-V); DualPipe's stages hold their mirror stage too.
StageParams stage_params(const ModelSpec& m, const Layout& l, std::int64_t stage) {
    LayerParams layers(m, l);
    return stage_params(m, l, stage, layers);
}

namespace {
// Which stages hold the embedding (bit 0) or the output layer (bit 1) under a schedule, a
// pipeline depth and a chunk count. The screen asks for every stage of every layout, from the
// memory model and the stage plan alike, and a search has few such triples: each is worked out
// from the schedule's placement once per thread and looked up after (issue 18).
constexpr std::uint8_t kEmbedding = 1, kOutput = 2;
struct StageEnds {
    const ScheduleDef* def = nullptr;
    std::int64_t pp = -1, chunks = -1;
    std::vector<std::uint8_t> ends;
};

std::uint8_t stage_ends(const ScheduleDef& def, std::int64_t pp, std::int64_t chunks, std::int64_t stage) {
    constexpr std::size_t kEntries = 64;
    thread_local std::array<StageEnds, kEntries> cache;
    // A layout asks for each of its stages in turn, from the memory model and the stage plan:
    // the entry used last is tried before the hash (its fields are compared, so an entry since
    // reused for another triple is not mistaken for it).
    thread_local const StageEnds* last = &cache[0];
    if (last->def == &def && last->pp == pp && last->chunks == chunks) return last->ends[static_cast<std::size_t>(stage)];
    HashMix h(reinterpret_cast<std::uintptr_t>(&def));
    h.add(static_cast<std::uint64_t>(pp));
    h.add(static_cast<std::uint64_t>(chunks));
    StageEnds& e = cache[h.value() % kEntries];
    if (e.def != &def || e.pp != pp || e.chunks != chunks) {
        e.ends.assign(static_cast<std::size_t>(pp), 0);
        for (std::int64_t s = 0; s < pp; ++s)
            for (std::int64_t c = 0; c < chunks; ++c) {
                if (chunk_has_embedding(def, pp, s, c, chunks)) e.ends[static_cast<std::size_t>(s)] |= kEmbedding;
                if (chunk_has_output(def, pp, s, c, chunks)) e.ends[static_cast<std::size_t>(s)] |= kOutput;
            }
        e.def = &def;
        e.pp = pp;
        e.chunks = chunks;
    }
    last = &e;
    return e.ends[static_cast<std::size_t>(stage)];
}

std::uint8_t stage_ends(const ScheduleDef& def, const Layout& l, std::int64_t stage) {
    return stage_ends(def, l.pp, schedule_chunks(def, l.vp), stage);
}
}  // namespace

StageParams stage_params(const ModelSpec& m, const Layout& l, std::int64_t stage, LayerParams& layers) {
    const ScheduleDef& def = l.schedule_def();
    if (def.placement == Placement::Dual) {
        const std::int64_t chunks = schedule_chunks(def, l.vp);
        StageParams p;
        for (std::int64_t c = 0; c < chunks; ++c) {
            const std::int64_t model_stage = chunk_model_stage(def, l.pp, stage, c);
            const StageParams q = model_stage_params(m, l, model_stage, model_stage == 0, model_stage == l.pp - 1, layers);
            p.dense += q.dense;
            p.expert += q.expert;
        }
        return p;
    }
    const std::uint8_t ends = stage_ends(def, l, stage);
    return model_stage_params(m, l, stage, (ends & kEmbedding) != 0, (ends & kOutput) != 0, layers);
}

bool stage_holds_output(const Layout& l, std::int64_t stage) { return (stage_ends(l.schedule_def(), l, stage) & kOutput) != 0; }

bool middle_stage(const ScheduleDef& def, const Layout& l, std::int64_t stage) { return stage_ends(def, l, stage) == 0; }

bool same_layer_kinds(const ModelSpec& m, std::pair<std::int64_t, std::int64_t> a, std::pair<std::int64_t, std::int64_t> b) {
    const std::int64_t n = a.second - a.first;
    if (n != b.second - b.first) return false;
    // A hybrid model's kinds are its pattern's characters.
    if (m.is_hybrid())
        return m.hybrid_pattern.compare(static_cast<std::size_t>(a.first), static_cast<std::size_t>(n), m.hybrid_pattern,
                                        static_cast<std::size_t>(b.first), static_cast<std::size_t>(n)) == 0;
    if (!m.is_moe() && m.window.tokens <= 0 && !m.has_gdn()) return true;  // one kind of layer
    if (m.window.tokens <= 0 && !m.has_gdn() && m.moe.layer_frequency == 1) {
        // Dense layers, then every layer MoE (DeepSeek-V3): a range's kinds are the length of its
        // dense prefix, so the loop below reduces to comparing the two (the screen asks this of
        // every middle stage of millions of layouts).
        const auto dense_prefix = [&](std::int64_t first) { return std::clamp<std::int64_t>(m.moe.first_dense_layers - first, 0, n); };
        return dense_prefix(a.first) == dense_prefix(b.first);
    }
    if (m.has_gdn()) {
        for (std::int64_t i = 0; i < n; ++i)
            if (m.layer_kind(a.first + i) != m.layer_kind(b.first + i)) return false;
        return true;
    }
    for (std::int64_t i = 0; i < n; ++i)
        if (m.layer_is_moe(a.first + i) != m.layer_is_moe(b.first + i) || m.layer_is_windowed(a.first + i) != m.layer_is_windowed(b.first + i))
            return false;
    return true;
}

}  // namespace sextant
