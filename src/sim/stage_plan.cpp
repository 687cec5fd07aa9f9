#include "sim/stage_plan.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <limits>
#include <unordered_map>
#include <boost/math/distributions/normal.hpp>

#include "core/hash_mix.hpp"
#include "memory/stage_params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
std::size_t at(Cost c) { return static_cast<std::size_t>(c); }

// What one phase of a layer adds to a task's parts: `parts` to each part, then `contention` to
// compute (the SM contention of the communication it hides), in that order.
struct Exposed {
    CostParts parts{};
    double contention = 0;

    // The two additions in order, whatever `into` held: bit for bit what adding each term where
    // it arose gives (the other parts receive +0.0, which changes no sum of +0.0-started parts).
    void add_to(CostParts& into) const {
        for (std::size_t i = 0; i < into.size(); ++i) into[i] += parts[i];
        into[at(Cost::Compute)] += contention;
    }
};

// Compute plus the exposed part of each communication; hidden communication slows compute by
// the runtime's SM-contention factor.
struct Exposure {
    const RuntimeProfile* runtime = nullptr;
    double slowdown = 1.0;
    double pairing = 0.0;  // share of a stage's tasks that run merged with a partner (ep_a2a_overlap)
    double tp_share = 0.0;  // of the TP collectives not hidden apart, the share the runtime overlaps

    // `partner` is the compute of the task a merged forward-backward pair runs beside this one.
    Exposed of(const PhaseCost& p, double recompute, double partner = 0.0) const {
        const auto& o = runtime->overlap;
        Exposed e;
        e.parts[at(Cost::Compute)] = (p.compute() - recompute) * slowdown;
        e.parts[at(Cost::Recompute)] = recompute * slowdown;
        // Async TP's pipelined share first; the runtime's overlap of the rest.
        const double tp_open = p.tp - p.tp_hidden;
        e.parts[at(Cost::TP)] = tp_open * (1 - tp_share);
        const double cp_open = p.cp - p.cp_waited;
        e.parts[at(Cost::CP)] = cp_open * (1 - o.cp) + p.cp_waited;
        const double ep_open = p.ep * (1 - o.ep);
        const double ep_paired = pairing * std::min(ep_open, partner * slowdown);
        e.parts[at(Cost::EP)] = ep_open - ep_paired;
        // ZeRO-3 prefetches the next layer's (or module's) parameters during this one's compute,
        // which hides them as far as it lasts; what was not prefetched waits.
        const double zero3_hidden = std::min(p.zero3 - p.zero3_waited, p.compute());
        e.parts[at(Cost::ZeRO)] = p.zero3 - zero3_hidden;
        const double hidden = p.tp_hidden + tp_open * tp_share + cp_open * o.cp + p.ep * o.ep + ep_paired + zero3_hidden;
        e.contention = runtime->sm_contention * hidden;
        return e;
    }
    void add(CostParts& parts, const PhaseCost& p, double recompute, double partner = 0.0) const {
        of(p, recompute, partner).add_to(parts);
    }
};

// Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm, the combined 1F1B
// of DeepSeek-V3's DualPipe idea) merges the forward of one microbatch with the backward of
// another in the steady state, so each one's dispatch and combine run under the other's
// compute. The warm-up forwards and cool-down backwards have no partner: of the m x vp forwards
// of a stage, Megatron's interleaved schedule runs (pp - stage - 1) x 2 + (vp - 1) x pp before
// the first backward (one with pp = 1).
double paired_share(const Layout& l, std::int64_t stage, std::int64_t microbatches) {
    if (!l.ep_overlapped()) return 0.0;
    const double tasks = static_cast<double>(microbatches * l.vp);
    const double warmup = l.pp == 1 ? 1.0 : static_cast<double>((l.pp - stage - 1) * 2 + (l.vp - 1) * l.pp);
    return std::clamp((tasks - warmup) / tasks, 0.0, 1.0);
}

// What a layer of one kind adds to a chunk of a stage (its forward and backward parts, its
// weight-gradient time and its parameters).
struct LayerTerms {
    Exposed forward, backward;
    double weight_grad = 0;
    StageParams params;
};

// A phase whose kernels the host issues more slowly than the GPU runs them takes the host's
// time: the difference waits for the host (LayerCost::host_forward / host_backward).
double wall(const Exposed& e) {
    double w = e.contention;
    for (double v : e.parts) w += v;
    return w;
}

// `cover`: GPU time queued ahead of the phase by layers the host issued at once (below).
void host_floor(Exposed& e, double host, double cover = 0.0) {
    if (host <= 0) return;
    const double w = wall(e) + cover;
    if (host > w) e.parts[at(Cost::Host)] += host - w;
}

// Each kind of layer's terms under a stage's exposure, worked out at the kind's first layer and
// kept while the exposure stays (every stage but a straggler's, or under the EP overlap's
// pairing): a chunk's layers then cost a few additions each, made in the order the terms arise.
class TermsByKind {
public:
    TermsByKind(const StepContext& ctx, const LayerKinds& costs, LayerParams& params)
        : ctx_(ctx), counts_(ctx.hybrid_kind_counts()), costs_(costs), params_(params) {}
    void expose(const Exposure& e) {
        if (ready_.any() && e.slowdown == exposure_.slowdown && e.pairing == exposure_.pairing) return;
        exposure_ = e;
        ready_.reset();
    }
    const LayerTerms& operator()(std::int64_t layer) {
        const std::size_t kind = ctx_.layer_kind(layer);
        if (!ready_[kind]) {
            const LayerCost& lc = costs_[kind];
            terms_[kind] = {exposure_.of(lc.forward, 0.0, lc.backward.compute()), exposure_.of(lc.backward, lc.recompute, lc.forward.compute()),
                            lc.backward.weight_grad * exposure_.slowdown, params_(layer)};
            // A hybrid model's MoE layer stands alone between Mamba and attention layers, which
            // Megatron-Bridge captures in CUDA graphs (its Nemotron-H configs' cuda_graph_scope
            // ["mamba", "attn"]) and the host launches at once. Backward, with no synchronisation
            // (the forward's token counts are kept), the host issues a MoE layer while the GPU
            // still runs the layers before it: the floor covers their wall time, on average over
            // the pattern. Forward, the host issues the MoE block only after the
            // synchronisation that waits for them (moe_host_floor), so they cover nothing.
            double cover_backward = 0;
            if (lc.host_backward > 0 && counts_[kind] > 0)
                for (std::size_t other = 0; other < kLayerKinds; ++other) {
                    if (other == kind || counts_[other] == 0) continue;
                    const LayerCost& oc = costs_[other];
                    const double per = static_cast<double>(counts_[other]) / static_cast<double>(counts_[kind]);
                    cover_backward += per * wall(exposure_.of(oc.backward, oc.recompute, oc.forward.compute()));
                }
            const double before_sync = lc.host_forward > 0 ? wall(exposure_.of(lc.forward_before_sync.phase(), 0.0, lc.backward.compute())) : 0.0;
            host_floor(terms_[kind].forward, lc.host_forward + before_sync);
            host_floor(terms_[kind].backward, lc.host_backward, cover_backward);
            ready_.set(kind);
        }
        return terms_[kind];
    }

private:
    const StepContext& ctx_;
    const std::array<std::int64_t, kLayerKinds>& counts_;  // a hybrid model's layers of each kind (0 otherwise)
    const LayerKinds& costs_;
    LayerParams& params_;
    Exposure exposure_;
    std::bitset<kLayerKinds> ready_;
    std::array<LayerTerms, kLayerKinds> terms_;
};

double sum(const CostParts& parts) {
    double s = 0;
    for (double v : parts) s += v;
    return s;
}

// Activation offload (Megatron --cpu-offloading-num-layers): the first layers of a stage move
// their saved activations to host memory during the forward and fetch them back for the
// backward, each overlapped with the chunk's own compute; what the compute cannot hide waits.
// The fine-grained offload (--offload-modules) moves its modules' inputs in every layer alike.
double offloaded_bytes(const StepContext& ctx, const Layout& l, std::int64_t first, std::int64_t layers, std::int64_t offload_end) {
    double bytes = 0;
    for (std::int64_t layer = first; layer < first + layers && layer < offload_end; ++layer)
        bytes += layer_activation_bytes(ctx.scenario(), l, ctx.traits(), layer);
    if (l.offload_modules != 0) bytes += offloaded_chunk_bytes(ctx.scenario(), l, ctx.traits(), first, layers);
    return bytes;
}

void add_offload(ChunkPlan& chunk, double bytes, const HostSpec& host) {
    if (bytes <= 0) return;
    const double move = bytes / (host.link_gbps * 1e9);
    chunk.forward_parts[at(Cost::Offload)] += std::max(0.0, move - sum(chunk.forward_parts));
    chunk.backward_parts[at(Cost::Offload)] += std::max(0.0, move - sum(chunk.backward_parts));
}

double degraded_factor(const StepContext& ctx, const Layout& l, std::int64_t stage) {
    double factor = 1.0;
    for (const auto& d : ctx.degraded_links())
        if (stage_of_gpu(l, d.gpu) == stage) factor = std::min(factor, d.bandwidth_factor);
    return factor;
}

// The step waits for its slowest GPU: with per-GPU speeds spread normally around the median
// (cluster rank_time_cv), the slowest of N runs 1 + cv z_N slower, z_N the expected maximum of N
// standard normals (Blom's approximation: the normal quantile at (N - 0.375) / (N + 0.25)).
// Named stragglers slower than that set their stage's pace instead.
// The last answer of a cost function of one argument: a layout's stages and chunks mostly reduce
// and gather the same parameter counts, so each distinct count costs one network query.
class LastValue {
public:
    template <class F>
    double operator()(double arg, F&& f) {
        if (!(arg == arg_)) {  // NaN at first: never equal
            value_ = f(arg);
            arg_ = arg;
        }
        return value_;
    }

private:
    double arg_ = std::numeric_limits<double>::quiet_NaN(), value_ = 0;
};

// The quantile is the costliest call of a layout's screen, and every layout of a plan has the
// same GPU count: the last one is kept per thread.
double fleet_slowdown(const StepContext& ctx, const Layout& l) {
    const double n = d(l.gpus());
    if (n < 2) return 1.0;
    thread_local double last_n = 0, last_z = 0;
    if (n != last_n) {
        last_z = boost::math::quantile(boost::math::normal(), (n - 0.375) / (n + 0.25));
        last_n = n;
    }
    return 1.0 + ctx.scenario().cluster.rank_time_cv * last_z;
}

// `fleet` is fleet_slowdown's, the same for every stage.
double straggler_slowdown(const StepContext& ctx, const Layout& l, std::int64_t stage, double fleet) {
    double slowdown = fleet;
    for (const auto& s : ctx.stragglers())
        for (std::int64_t g = s.first_gpu; g <= s.last_gpu; ++g)
            if (stage_of_gpu(l, g) == stage) slowdown = std::max(slowdown, s.slowdown);
    return slowdown;
}
}  // namespace

double bucket_share(std::int64_t layers) { return 1.0 / d(std::max<std::int64_t>(layers, 1)); }

double exposed_bucketed(double comm, double compute, std::int64_t layers) {
    const double share = bucket_share(layers);
    return comm * share + std::max(0.0, (comm - compute) * (1.0 - share));
}

double pair_overlap(const ChunkPlan& f, const ChunkPlan& b) {
    const auto compute = [](const CostParts& p) { return p[at(Cost::Compute)] + p[at(Cost::Recompute)]; };
    return std::min(f.forward_parts[at(Cost::EP)], compute(b.backward_parts)) + std::min(b.backward_parts[at(Cost::EP)], compute(f.forward_parts));
}

std::vector<StageTimes> stage_times(const StepPlan& plan, const Layout& l) {
    std::vector<StageTimes> out;
    stage_times(plan, l, out);
    return out;
}

void stage_times(const StepPlan& plan, const Layout& l, std::vector<StageTimes>& out) {
    const ScheduleDef& def = l.schedule_def();
    const PipelineShape& shape = plan.shape;
    out.clear();
    for (const StagePlan& sp : plan.stages) {
        StageTimes t;
        for (std::size_t c = 0; c < sp.chunks.size(); ++c) {
            const std::int64_t visits = chunk_visits(def, shape, static_cast<std::int64_t>(c));
            const double share = visits == plan.microbatches ? 1.0 : d(visits) / d(std::max<std::int64_t>(plan.microbatches, 1));
            const ChunkPlan& chunk = sp.chunks[c];
            t.forward += share * chunk.forward;
            t.backward += share * chunk.backward;
            t.weight += share * chunk.weight_grad;
            if (def.pairs_forward_backward) t.overlap += share * pair_overlap(chunk, sp.chunks[sp.chunks.size() - 1 - c]);
        }
        out.push_back(t);
    }
}

std::int64_t stage_of_gpu(const Layout& l, std::int64_t gpu) {
    return (gpu / dimension_stride(l, ParallelDim::PP)) % l.pp;
}

namespace {
// The knobs a layer's cost depends on (layer_cost reads tp, cp, ep, etp, pp, microbatch, ZeRO,
// optimizer offload, sequence parallelism and recompute; its groups add dp and the rank order),
// and the context that prices them. The planner's candidates differ mostly in knobs outside this
// (interleaving, the stage split, activation offload), so many share one entry.
struct LayerCostKey {
    std::uint64_t context = 0;
    std::array<std::int64_t, 9> sizes{};  // tp, cp, ep, etp, pp, dp, microbatch, zero stage, shard group
    std::array<ParallelDim, 5> order{};
    Recompute recompute = Recompute::None;
    std::uint8_t modules = 0;
    bool sequence_parallel = false, optimizer_offload = false, async_tp = false;
    std::optional<MoeDispatcher> dispatcher;
    bool operator==(const LayerCostKey&) const = default;
};

LayerCostKey layer_cost_key(const StepContext& ctx, const Layout& l) {
    return {ctx.id(), {l.tp, l.cp, l.ep, l.etp, l.pp, l.dp, l.microbatch, l.zero_stage, l.shard_dp()}, l.rank_order, l.recompute,
            l.recompute_modules, l.sequence_parallel, l.optimizer_offload, l.async_tp, l.moe_dispatcher};
}

std::size_t hash_of(const LayerCostKey& k) {
    HashMix h(k.context);
    for (auto v : k.sizes) h.add(static_cast<std::uint64_t>(v));
    for (auto d : k.order) h.add(static_cast<std::uint64_t>(d));
    h.add(static_cast<std::uint64_t>(k.recompute));
    h.add(k.modules);
    h.add(k.sequence_parallel ? 1 : 0);
    h.add(k.optimizer_offload ? 1 : 0);
    h.add(k.async_tp ? 1 : 0);
    h.add(k.dispatcher ? static_cast<std::uint64_t>(*k.dispatcher) + 1 : 0);
    return h.value();
}
}  // namespace

namespace {
LayoutCosts compute_layout_costs(const StepContext& ctx, const Layout& l) {
    const ModelSpec& m = ctx.scenario().model;
    const CostContext costs = ctx.costs();
    const LayoutGroups& groups = ctx.groups(l);
    std::array<bool, kLayerKinds> evaluated{};
    LayoutCosts c;
    c.groups = &groups;
    for (std::int64_t i = 0; i < m.layers; ++i) {
        const std::size_t kind = m.layer_kind(i);
        if (evaluated[kind]) continue;
        c.kinds[kind] = layer_cost(costs, l, groups, i);
        evaluated[kind] = true;
    }
    c.embed_forward = embedding_cost(costs, l, false);
    c.embed_backward = embedding_cost(costs, l, true);
    c.output_forward = output_cost(costs, l, false);
    c.output_backward = output_cost(costs, l, true);
    c.transfer = pp_transfer(costs, l, groups);
    c.grad_norm = grad_norm_all_reduce(costs, ctx.world_group());
    return c;
}

struct LayerCostKeyHash {
    std::size_t operator()(const LayerCostKey& k) const { return hash_of(k); }
};
}  // namespace

namespace {
thread_local std::size_t generations_turned = 0;
}  // namespace

std::size_t layout_cost_generations_turned() { return generations_turned; }

const LayoutCosts& layout_costs(const StepContext& ctx, const Layout& l) {
    // A per-thread cache: no lock and no sharing between threads (issue 18), and an entry holds
    // exactly what the cost functions returned, so a hit changes no bit of any plan. Layers of one
    // kind (dense or MoE MLP, full or windowed attention) cost the same: each kind is evaluated
    // once, at its first layer. Two generations of at most kGeneration entries each (about 8 MB):
    // the newer takes every entry computed or found in the older, and when full becomes the older,
    // dropping the previous older. Whatever a search revisits within kGeneration distinct keys is
    // therefore kept, however the keys hash: the planner repeats a shape's (tp, cp, pp) keys for
    // every stage split, up to 5,400 of them on DeepSeek-V3, and the direct-mapped 4,096 entries
    // this replaces lost 60% of them to collisions (483,000 misses for 195,000 keys, a quarter
    // of the screen).
    using Generation = std::unordered_map<LayerCostKey, LayoutCosts, LayerCostKeyHash>;
    constexpr std::size_t kGeneration = 8192;
    thread_local Generation newer, older;
    // The search varies interleaving and the schedule fastest, so a layout's key is most often
    // the one before's: that entry is compared first, without hashing. An entry stays where it
    // is until its generation is dropped, and a turnover forgets it.
    thread_local LayerCostKey last_key;
    thread_local const LayoutCosts* last = nullptr;
    const LayerCostKey key = layer_cost_key(ctx, l);
    if (last && key == last_key) return *last;
    last_key = key;
    if (const auto it = newer.find(key); it != newer.end()) return *(last = &it->second);
    auto found = older.extract(key);
    if (newer.size() >= kGeneration) {
        // The newer becomes the older; the dropped generation's bucket array is kept for the
        // next (clear() frees the entries, not the buckets), so a turnover allocates no table.
        older.swap(newer);
        newer.clear();
        ++generations_turned;
    }
    if (found) return *(last = &newer.insert(std::move(found)).position->second);
    return *(last = &newer.emplace(key, compute_layout_costs(ctx, l)).first->second);
}

StepPlan plan_step(const StepContext& ctx, const Layout& l) {
    StepPlan plan;
    plan_step(ctx, l, plan);
    return plan;
}

void plan_step(const StepContext& ctx, const Layout& l, StepPlan& plan) {
    if (shards_like_zero1(l, ctx.traits())) return plan_step(ctx, effective_sharding_scratch(l, ctx.traits()), plan);
    const Scenario& s = ctx.scenario();
    const ModelSpec& m = s.model;
    const CostContext costs = ctx.costs();
    const LayoutCosts& cached = layout_costs(ctx, l);
    const LayoutGroups& groups = *cached.groups;
    plan.microbatches = l.microbatches(s.training.global_batch);
    plan.shape = pipeline_shape(l, plan.microbatches, ctx.traits());
    plan.step_overhead = ctx.runtime().step_overhead_s + cached.grad_norm;
    plan.dp_overlap = ctx.runtime().overlap.dp_grad_reduce;
    plan.gather_overlap = ctx.runtime().overlap.dp_param_gather;

    const auto cost_of = [&](std::int64_t layer) -> const LayerCost& { return cached.kinds[ctx.layer_kind(layer)]; };
    const PhaseCost& embed_f = cached.embed_forward;
    const PhaseCost& embed_b = cached.embed_backward;
    const PhaseCost& out_f = cached.output_forward;
    const PhaseCost& out_b = cached.output_backward;
    const double transfer = cached.transfer;
    const double overhead = ctx.runtime().microbatch_overhead_us * 1e-6 / d(schedule_chunks(l.schedule_def(), l.vp));
    // Blocking point-to-point (no --overlap-p2p-communication): each chunk's send is part of its task.
    const bool blocking_p2p = !ctx.runtime().overlap.pp && l.pp > 1;

    thread_local std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // reused: no allocation a layout
    thread_local std::vector<std::int64_t> split;                            // a stage's layers per chunk
    stage_layer_ranges(l, ranges);
    const double fleet = fleet_slowdown(ctx, l);
    const bool lora = s.training.mode == TrainingMode::Lora;
    const ScheduleDef& schedule = l.schedule_def();
    const std::int64_t chunks = schedule_chunks(schedule, l.vp);
    LayerParams layer_params(m, l);
    TermsByKind terms(ctx, cached.kinds, layer_params);
    LastValue reduce_dense, reduce_expert, gather_dense, gather_expert;
    // Every field of every stage is set below; the stages' chunk vectors keep their capacity.
    plan.stages.resize(static_cast<std::size_t>(l.pp));
    const bool dual = schedule.placement == Placement::Dual;
    // What made the previous stage's plan besides its layers: a stage in the middle of the
    // pipeline with the same inputs and the same kinds of layers plans the same, so it is copied
    // (the screen's cost no longer grows with pp times the layers).
    double previous_slowdown = 0, previous_comm = 0, previous_pairing = 0;
    bool previous_middle = false;
    // Userbuffers (or a runtime's own share) overlap the TP collectives by the runtime's fraction;
    // on Transformer Engine's NCCL path only what layer_cost hid runs apart.
    const double tp_share = tp_overlap_share(ctx.runtime(), l, ctx.scenario().training.precision);
    for (std::int64_t stage = 0; stage < l.pp; ++stage) {
        const double slowdown = straggler_slowdown(ctx, l, stage, fleet);
        const double comm_factor = 1.0 / degraded_factor(ctx, l, stage);
        const double pairing = paired_share(l, stage, l.microbatches(s.training.global_batch));
        const auto [first, last] = ranges[static_cast<std::size_t>(stage)];
        const bool middle = middle_stage(schedule, l, stage);
        const bool same = !dual && stage >= 2 && stage + 1 < l.pp && middle && previous_middle && slowdown == previous_slowdown &&
                          comm_factor == previous_comm && pairing == previous_pairing &&
                          same_layer_kinds(m, ranges[static_cast<std::size_t>(stage - 1)], {first, last});
        previous_slowdown = slowdown;
        previous_comm = comm_factor;
        previous_pairing = pairing;
        previous_middle = middle;
        if (same) {
            plan.stages[static_cast<std::size_t>(stage)] = plan.stages[static_cast<std::size_t>(stage - 1)];
            continue;
        }
        StagePlan& sp = plan.stages[static_cast<std::size_t>(stage)];
        std::vector<ChunkPlan> reused = std::move(sp.chunks);
        reused.clear();
        sp = StagePlan{};
        sp.chunks = std::move(reused);
        sp.chunks.reserve(static_cast<std::size_t>(chunks));
        sp.slowdown = slowdown;
        const Exposure exposure{&ctx.runtime(), sp.slowdown, pairing, tp_share};
        terms.expose(exposure);
        const std::int64_t n = last - first;
        double dense_total = 0, expert_total = 0;
        std::int64_t layer = first;
        // The schedule's chunks: the stage's layers split in order (the chunk holding the
        // embedding or the loss short of any layer missing), or, under DualPipe, the whole
        // model stage each chunk mirrors.
        chunk_layers(n, chunks, chunk_has_embedding(schedule, l.pp, stage, 0, chunks), stage_holds_output(l, stage), split);
        for (std::int64_t c = 0; c < chunks; ++c) {
            ChunkPlan chunk;
            std::int64_t offload_end = first + l.activation_offload_layers;  // the stage's first layers
            if (dual) {
                const auto range = ranges[static_cast<std::size_t>(chunk_model_stage(schedule, l.pp, stage, c))];
                layer = range.first;
                chunk.layers = range.second - range.first;
                offload_end = range.first + l.activation_offload_layers;
            } else {
                chunk.layers = split[static_cast<std::size_t>(c)];
            }
            const std::int64_t chunk_first = layer;
            for (std::int64_t i = 0; i < chunk.layers; ++i, ++layer) {
                const LayerTerms& t = terms(layer);
                t.forward.add_to(chunk.forward_parts);
                t.backward.add_to(chunk.backward_parts);
                chunk.weight_grad += t.weight_grad;
                chunk.dense_params += t.params.dense;
                chunk.expert_params += t.params.expert;
            }
            const bool has_embedding = chunk_has_embedding(schedule, l.pp, stage, c, chunks);
            const bool has_output = chunk_has_output(schedule, l.pp, stage, c, chunks);
            if (has_embedding) {
                exposure.add(chunk.forward_parts, embed_f, 0.0);
                exposure.add(chunk.backward_parts, embed_b, 0.0);
            }
            if (has_output) {
                exposure.add(chunk.forward_parts, out_f, 0.0);
                exposure.add(chunk.backward_parts, out_b, 0.0);
                chunk.weight_grad += out_b.weight_grad * sp.slowdown;
                // Multi-token-prediction modules run one more layer of the last kind each (a
                // hybrid model's, the blocks of its MTP pattern).
                for (std::int64_t k = 0; k < m.mtp_layers; ++k)
                    m.for_each_mtp_block([&](std::int64_t block) {
                        const LayerCost& mtp = cost_of(block);
                        exposure.add(chunk.forward_parts, mtp.forward, 0.0);
                        exposure.add(chunk.backward_parts, mtp.backward, mtp.recompute);
                        chunk.weight_grad += mtp.backward.weight_grad * sp.slowdown;
                    });
            }
            chunk.forward_parts[at(Cost::Overhead)] += overhead;
            chunk.backward_parts[at(Cost::Overhead)] += overhead;
            add_offload(chunk, offloaded_bytes(ctx, l, chunk_first, chunk.layers, offload_end), s.cluster.host);
            if (blocking_p2p) {
                chunk.forward_parts[at(Cost::PP)] += has_output ? 0.0 : transfer * comm_factor;
                chunk.backward_parts[at(Cost::PP)] += has_embedding ? 0.0 : transfer * comm_factor;
            }
            chunk.forward = sum(chunk.forward_parts);
            chunk.backward = sum(chunk.backward_parts);
            if (lora) {  // only the adapters have gradients to reduce and an optimizer step
                chunk.dense_params = adapter_params(s, l, chunk.layers);
                chunk.expert_params = 0;
            }
            dense_total += chunk.dense_params;
            expert_total += chunk.expert_params;
            sp.chunks.push_back(chunk);
        }
        // Embedding and output layer parameters belong to the first and last chunks.
        const StageParams all = lora ? StageParams{adapter_params(s, l, n), 0.0} : stage_params(m, l, stage, layer_params);
        const double outside_layers = std::max(0.0, all.dense - dense_total);
        sp.chunks.front().dense_params += outside_layers;
        for (auto& chunk : sp.chunks) {
            // ZeRO-3 layers reduce-scatter their gradients inside their backward (layer_cost);
            // only the embedding and output layer are left for the stage's reduction.
            const bool sharded = l.zero_stage >= 3 && !lora;
            const double dense = sharded ? (&chunk == &sp.chunks.front() ? outside_layers : 0.0) : chunk.dense_params;
            const double expert = sharded ? 0.0 : chunk.expert_params;
            chunk.dp_reduce = comm_factor * (reduce_dense(dense, [&](double p) { return dp_reduce(costs, l, groups.dp_dense, p); }) +
                                             reduce_expert(expert, [&](double p) { return dp_reduce(costs, l, groups.dp_expert, p); }));
            // HSDP: the reduced shard is all-reduced across the replicas once per step (Megatron-Core's
            // distributed-optimizer instances, Megatron-FSDP and DeepSpeed MiCS at the last
            // microbatch); FSDP2 did it for the layers inside each backward (layer_cost).
            const bool layers_done = sharded && ctx.runtime().zero3.hsdp_all_reduce_every_microbatch;
            chunk.dp_reduce += comm_factor * (replica_reduce(costs, groups.dp_dense, groups.dp_replicas, layers_done ? dense : chunk.dense_params) +
                                              replica_reduce(costs, groups.dp_expert, groups.dp_expert_replicas, layers_done ? expert : chunk.expert_params));
        }
        // The layers' weights in the recipe's gathered bytes (FP8 where the runtime gathers FP8),
        // the embedding and output layer (and LoRA's adapters) in 16 bits.
        const double weight_bytes = lora ? 2.0 : gathered_weight_bytes(costs);
        sp.gather_bytes_dense = (all.dense - outside_layers) * weight_bytes + outside_layers * 2;
        sp.gather_bytes_expert = all.expert * weight_bytes;
        sp.param_gather = comm_factor * (gather_dense(sp.gather_bytes_dense, [&](double b) { return dp_gather(costs, l, groups.dp_dense, b); }) +
                                         gather_expert(sp.gather_bytes_expert, [&](double b) { return dp_gather(costs, l, groups.dp_expert, b); }));
        if (plan.gather_overlap) {
            // --overlap-param-gather: the first microbatch's forward consumes the buckets.
            double forward = 0;
            for (const auto& chunk : sp.chunks) forward += chunk.forward;
            sp.param_gather_wait = exposed_bucketed(sp.param_gather, forward, n);
        }
        const double shards = l.zero_stage >= 1 ? d(l.dense_shards()) : 1.0;
        const double expert_shards = l.zero_stage >= 1 ? d(l.expert_shards()) : 1.0;
        const double local = all.dense / shards + all.expert / expert_shards;
        const double host = l.optimizer_offload ? 1.0 : sp.slowdown;  // host work does not wait for a slow GPU
        sp.optimizer = (optimizer_time(costs, l, local) + grad_norm_time(costs, l, local)) * host +
                       newton_schulz_time(costs, l, local) * sp.slowdown;
        sp.send_forward = stage + 1 < l.pp && !blocking_p2p ? transfer * comm_factor : 0.0;
        sp.send_backward = stage > 0 && !blocking_p2p ? transfer * comm_factor : 0.0;
    }
}

}  // namespace sextant
