#include "planner/search_space.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <initializer_list>
#include <cstdint>
#include <numeric>

namespace sextant {

namespace {
// The few values of a knob a candidate's inner loops try, without a heap allocation: the screen
// expands every shape as it goes, so these lists are built for every candidate.
template <class T, std::size_t N>
class Few {
public:
    Few() = default;
    Few(std::initializer_list<T> values) {
        for (const T& v : values) push_back(v);
    }
    void push_back(const T& v) {
        assert(size_ < N);  // each list's bound is stated where it is declared
        values_[size_++] = v;
    }
    const T* begin() const { return values_.data(); }
    const T* end() const { return values_.data() + size_; }
    std::size_t size() const { return size_; }

private:
    std::array<T, N> values_{};
    std::size_t size_ = 0;
};

std::vector<std::int64_t> powers_of_two_up_to(std::int64_t limit) {
    std::vector<std::int64_t> out;
    for (std::int64_t v = 1; v <= limit; v *= 2) out.push_back(v);
    return out;
}

std::vector<std::int64_t> divisors_up_to(std::int64_t n, std::int64_t limit) {
    std::vector<std::int64_t> out;
    for (std::int64_t d = 1; d <= std::min(n, limit); ++d)
        if (n % d == 0) out.push_back(d);
    return out;
}

// Values of one knob: the fixed one, or the open range filtered by `ok`.
template <class Ok>
std::vector<std::int64_t> knob(const std::optional<std::int64_t>& fixed,
                               const std::vector<std::int64_t>& range, Ok ok) {
    if (fixed) return {*fixed};
    std::vector<std::int64_t> out;
    for (auto v : range)
        if (ok(v)) out.push_back(v);
    return out;
}

std::vector<std::int64_t> tp_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o) {
    const ModelSpec& m = s.model;
    // TP beyond two NVLink domains never pays: its all-reduces would cross the scale-out network
    // twice per layer. Within that bound TP across nodes stays a candidate.
    const std::int64_t limit = std::min<std::int64_t>(s.cluster.gpus, 2 * s.cluster.job_domain_gpus());
    return knob(f.tp, powers_of_two_up_to(limit), [&](std::int64_t t) {
        const bool kv_ok = m.attention != AttentionKind::Standard || m.kv_heads % t == 0 || (o.framework.tp_beyond_kv_heads && t % m.kv_heads == 0);
        bool ffn_ok = m.ffn_hidden == 0 || m.ffn_hidden % t == 0;
        return m.heads % t == 0 && kv_ok && ffn_ok && mixer_split_rule(m, t, 1).empty();
    });
}

std::vector<std::int64_t> cp_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o) {
    const std::int64_t seq = s.training.seq_len;
    return knob(f.cp, powers_of_two_up_to(64), [&](std::int64_t c) {
        return c == 1 || (o.framework.context_parallel && (!s.model.has_gdn() || o.framework.gdn_context_parallel) && seq % (2 * c) == 0 &&
                          seq / c >= o.min_tokens_per_cp_rank);
    });
}

// The stage splits of `pp` stages: the explicit one, or every (first, last) trim that divides.
std::vector<std::pair<std::int8_t, std::int8_t>> trims(const Scenario& s, const LayoutSpec& f,
                                                       std::int64_t pp, const SearchOptions& o) {
    if (f.stage_layers) return {{0, 0}};
    if (o.default_split_only) {
        // The default split as trims: its middle stages hold the most layers.
        const std::vector<std::int64_t> split = default_stage_split(s.model.layers, pp);
        if (split.empty()) return {};
        const std::int64_t middle = *std::max_element(split.begin(), split.end());
        const std::int64_t first = middle - split.front(), last = middle - split.back();
        if (first > INT8_MAX || last > INT8_MAX || trimmed_stage_split(s.model.layers, pp, first, last) != split) return {};
        return {{static_cast<std::int8_t>(first), static_cast<std::int8_t>(last)}};
    }
    std::vector<std::pair<std::int8_t, std::int8_t>> out;
    std::vector<std::vector<std::int64_t>> seen;  // trims that give the same split are one candidate
    const std::int64_t max_trim = pp >= 2 && o.framework.uneven_stages ? o.max_stage_trim : 0;
    for (std::int64_t first = 0; first <= max_trim; ++first)
        for (std::int64_t last = 0; last <= max_trim; ++last) {
            auto split = trimmed_stage_split(s.model.layers, pp, first, last);
            if (split.empty() || std::find(seen.begin(), seen.end(), split) != seen.end()) continue;
            seen.push_back(std::move(split));
            out.emplace_back(static_cast<std::int8_t>(first), static_cast<std::int8_t>(last));
        }
    return out;
}

std::vector<std::int64_t> pp_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, std::int64_t rest) {
    return knob(f.pp, divisors_up_to(rest, s.model.layers), [&](std::int64_t p) {
        if (f.stage_layers) return static_cast<std::int64_t>(f.stage_layers->size()) == p;
        return o.framework.uneven_stages || s.model.layers % p == 0;
    });
}

// Expert layers fold a stage's tp x cp x dp ranks into expert TP x EP x expert DP groups.
std::vector<std::int64_t> ep_values(const Scenario& s, const LayoutSpec& f, std::int64_t folded) {
    if (!s.model.is_moe()) return {1};
    return knob(f.ep, powers_of_two_up_to(s.model.moe.experts), [&](std::int64_t e) {
        return s.model.moe.experts % e == 0 && folded % e == 0;
    });
}

// Expert TP: Megatron's default (the dense TP) or none, the recipes' choice.
std::vector<std::int64_t> etp_values(const Scenario& s, const LayoutSpec& f, std::int64_t tp, std::int64_t ep, std::int64_t folded) {
    if (!s.model.is_moe()) return {1};
    std::vector<std::int64_t> range = {1};
    if (tp > 1) range.push_back(tp);
    return knob(f.expert_tp, range, [&](std::int64_t t) {
        return folded % (ep * t) == 0 && s.model.moe.expert_ffn_hidden % t == 0;
    });
}

// Selective recompute's module sets worth trying: the era's default, and what Megatron-Core's
// recipes use for MoE and MLA models when memory is short (moe_act, the whole MoE block,
// mla_up_proj), where the framework's selective recompute is Megatron's.
Few<std::uint8_t, 5> module_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, Recompute rc) {
    if (rc != Recompute::Selective || !o.framework.recompute_modules) return {0};
    if (f.recompute_modules) return {*f.recompute_modules};
    Few<std::uint8_t, 5> sets = {0};
    const bool moe = s.model.is_moe(), mla = s.model.attention == AttentionKind::MultiLatent;
    if (moe) {
        sets.push_back(kRecomputeLayerNorm | kRecomputeMoeAct);
        sets.push_back(kRecomputeLayerNorm | kRecomputeMoe);
    } else {
        sets.push_back(kRecomputeLayerNorm | kRecomputeMlp);
    }
    if (mla) {
        sets.push_back(kRecomputeMlaUpProj);
        sets.push_back(kRecomputeMlaUpProj | kRecomputeMoeAct | kRecomputeMlp);
    }
    return sets;
}

// Activation offload pays only over a host link near HBM speed (NVLink-C2C on Grace
// superchips) and where the framework offers it: none, a quarter, half or three quarters of
// the smallest stage's layers.
std::vector<std::int64_t> offload_layer_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o,
                                               const std::vector<std::int64_t>& split) {
    if (f.activation_offload_layers) return {*f.activation_offload_layers};
    if (!o.framework.activation_offload || s.cluster.host.link_gbps < 100) return {0};
    const std::int64_t fewest = *std::min_element(split.begin(), split.end());
    std::vector<std::int64_t> out = {0};
    for (std::int64_t q = 1; q <= 3; ++q)
        if (fewest * q / 4 > out.back()) out.push_back(fewest * q / 4);
    return out;
}

// Megatron-Core's fine-grained offload where the framework ships it, over a host link near HBM
// speed like whole layers: none, or the one set its sources use: a MoE model's expert inputs
// (expert_fc1 and moe_act, the MoE model zoo's GB200 Qwen3-235B recipe), a dense model's
// attention core and output projection inputs (core_attn and attn_proj, Megatron-LM's
// fine_grained_activation_offloading.md: offload the modules recompute would make costly).
Few<std::uint8_t, 2> offload_module_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o) {
    if (f.activation_offload_modules) return {*f.activation_offload_modules};
    if (!o.framework.activation_offload_modules || s.cluster.host.link_gbps < 100) return {0};
    return {0, static_cast<std::uint8_t>(s.model.is_moe() ? kOffloadExpertFc1 | kOffloadMoeAct : kOffloadCoreAttn | kOffloadAttnProj)};
}

// The share of the module offload's groups: the layout's, else all of them, or also the leading
// half where the framework offers the fraction (an index into kOffloadFractions; 0 = all).
Few<std::uint8_t, 2> offload_share_values(const LayoutSpec& f, const SearchOptions& o, std::uint8_t offload_modules) {
    if (offload_modules == 0 || f.activation_offload_fraction || !o.framework.activation_offload_fraction) return {0};
    return {0, 1};
}

// Megatron-Core's EP all-to-all overlap where the framework ships it and the layout allows it
// (ep_overlap_rule).
Few<bool, 2> ep_overlap_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, const Candidate& c) {
    const bool wanted = f.ep_a2a_overlap ? *f.ep_a2a_overlap : o.framework.ep_a2a_overlap;
    if (!wanted) return {false};  // the common case: no rule to evaluate
    const bool allowed = ep_overlap_rule(s.model, f.moe_dispatcher, c.ep, c.pp, c.vp, c.recompute, c.recompute_modules).empty();
    if (f.ep_a2a_overlap) return allowed ? Few<bool, 2>{true} : Few<bool, 2>{};
    return allowed ? Few<bool, 2>{false, true} : Few<bool, 2>{false};
}

// PyTorch's async TP where the framework has it and the layout allows it (async_tp_rule). Open,
// it is on wherever allowed: it only takes communication off the critical path (what it hides
// slows compute by the runtime's sm_contention, a fraction of what it saves), so the layout
// without it never wins and is not searched.
Few<bool, 1> async_tp_values(const LayoutSpec& f, const SearchOptions& o, const Candidate& c) {
    const bool allowed = async_tp_rule(c.tp, c.sequence_parallel).empty();
    if (f.async_tp) return !*f.async_tp ? Few<bool, 1>{false} : allowed ? Few<bool, 1>{true} : Few<bool, 1>{};
    return {o.framework.async_tp && allowed};
}

std::vector<std::int64_t> vp_values(const LayoutSpec& f, const std::vector<std::int64_t>& split,
                                    const SearchOptions& o) {
    const std::int64_t pp = static_cast<std::int64_t>(split.size());
    const std::int64_t fewest = *std::min_element(split.begin(), split.end());
    const std::int64_t most = *std::max_element(split.begin(), split.end());
    // Megatron takes any chunk size that divides the layers of a stage
    // (--num-layers-per-virtual-pipeline-stage), down to one layer per chunk.
    return knob(f.vp, divisors_up_to(most, std::min(fewest, o.max_vp)), [&](std::int64_t v) {
        if (f.schedule) return schedule_takes_vp(schedule_def(*f.schedule), v);
        for (const ScheduleDef& def : schedules())
            if (o.framework.ships(def.id) && schedule_takes_vp(def, v) && (v == 1 || pp >= 2)) return true;
        return false;
    });
}

// The schedules to try at vp: the scenario's, else every one the framework ships that takes vp,
// the microbatches and pp (GPipe only when fixed: it holds every microbatch for 1F1B's time).
std::vector<Schedule> schedule_values(const LayoutSpec& f, const SearchOptions& o, std::int64_t pp, std::int64_t vp, std::int64_t microbatches) {
    std::vector<Schedule> out;
    for (const ScheduleDef& def : schedules()) {
        if (f.schedule ? *f.schedule != def.id : (!o.framework.ships(def.id) || def.id == Schedule::GPipe)) continue;
        if (!f.schedule && !o.search_schedule && def.id != Schedule::OneFOneB && def.id != Schedule::Interleaved) continue;
        if (f.pp_warmup && def.id != Schedule::Interleaved) continue;
        if (!schedule_takes_vp(def, vp) || (def.groups_of_pp && microbatches % pp != 0)) continue;
        if (def.id != Schedule::OneFOneB && def.id != Schedule::GPipe && vp == 1 && pp < 2) continue;  // nothing to pipeline
        if (def.even_pp && pp % 2 != 0) continue;
        if (def.placement == Placement::Dual && microbatches % 2 != 0) continue;
        if (microbatches < def.min_microbatches_per_stage * pp) continue;
        out.push_back(def.id);
    }
    return out;
}

Few<bool, 2> sp_values(const LayoutSpec& f, const SearchOptions& o, std::int64_t tp) {
    if (f.sequence_parallel) return {*f.sequence_parallel};
    if (tp == 1 || !o.framework.sequence_parallel) return {false};
    return {true, false};
}

// Without data-parallel replicas ZeRO has nothing to shard: its stages differ only in whether
// the optimizer can be offloaded, so stage 0 (or the lowest offered) stands for all, with the
// lowest sharded stage beside it where the framework offloads.
std::vector<std::int64_t> zero_values(const LayoutSpec& f, const SearchOptions& o, std::int64_t replicas) {
    std::vector<std::int64_t> stages = knob(f.zero_stage, o.framework.zero_stages, [](std::int64_t) { return true; });
    if (f.zero_stage || replicas > 1 || stages.empty()) return stages;
    std::sort(stages.begin(), stages.end());
    std::vector<std::int64_t> kept = {stages.front()};
    const auto sharded = std::find_if(stages.begin(), stages.end(), [](std::int64_t z) { return z > 0; });
    if (kept.front() == 0 && o.framework.optimizer_offload && sharded != stages.end()) kept.push_back(*sharded);
    return kept;
}

// Offloading the optimizer only pays where ZeRO shards it, and only where the framework can.
Few<bool, 2> offload_values(const LayoutSpec& f, const SearchOptions& o, std::int64_t zero) {
    if (f.optimizer_offload) return {*f.optimizer_offload};
    if (zero == 0 || !o.framework.optimizer_offload) return {false};
    return {false, true};
}

Few<Recompute, 3> recompute_values(const LayoutSpec& f, const SearchOptions& o) {
    if (f.recompute) return {*f.recompute};
    if (!o.framework.selective_recompute) return {Recompute::None, Recompute::Full};
    return {Recompute::None, Recompute::Selective, Recompute::Full};
}

// HSDP shard groups at a ZeRO stage: the scenario's, else all of dp (0) and, where the framework
// shards in groups, the powers of two from 2 up to a node or NVLink domain that divide dp (at
// most the three largest: smaller groups only hold more and all-reduce more), each leaving a
// whole number of expert-data-parallel ranks per replica.
Few<std::int64_t, 4> shard_group_values(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, std::int64_t zero,
                                         std::int64_t dp, std::int64_t edp) {
    const auto fits = [&](std::int64_t shard) { return dp % shard == 0 && edp % (dp / shard) == 0; };
    if (f.shard_group) {
        if (*f.shard_group == dp) return {0};
        if (zero == 0 || !fits(*f.shard_group) || *f.shard_group > INT16_MAX) return {};  // a Candidate holds 16 bits
        return {*f.shard_group};
    }
    Few<std::int64_t, 4> out = {0};
    if (zero == 0 || !o.framework.hsdp) return out;
    const std::int64_t domain = std::max(s.cluster.gpus_per_node, s.cluster.job_domain_gpus());
    Few<std::int64_t, 64> groups;  // powers of two below dp, a 64-bit count
    for (std::int64_t shard = 2; shard <= domain && shard < dp; shard *= 2)
        if (fits(shard)) groups.push_back(shard);
    const std::size_t keep = std::min<std::size_t>(groups.size(), 3);
    for (const std::int64_t* g = groups.end() - keep; g != groups.end(); ++g) out.push_back(*g);
    return out;
}

std::vector<std::uint8_t> order_values(const LayoutSpec& f, const SearchOptions& o, std::int64_t pp,
                                       std::int64_t dp) {
    const auto& orders = candidate_rank_orders();
    if (f.rank_order) {
        for (std::size_t i = 0; i < orders.size(); ++i)
            if (orders[i] == *f.rank_order) return {static_cast<std::uint8_t>(i)};
        return {0};  // a custom order: carried by `fixed` into to_layout
    }
    if (!o.search_rank_order || pp == 1 || dp == 1) return {0};
    std::vector<std::uint8_t> out(orders.size());
    std::iota(out.begin(), out.end(), std::uint8_t{0});
    return out;
}
}  // namespace

const std::vector<std::array<ParallelDim, 5>>& candidate_rank_orders() {
    static const std::vector<std::array<ParallelDim, 5>> orders = {
        {ParallelDim::TP, ParallelDim::CP, ParallelDim::EP, ParallelDim::DP, ParallelDim::PP},
        {ParallelDim::TP, ParallelDim::CP, ParallelDim::EP, ParallelDim::PP, ParallelDim::DP},
    };
    return orders;
}

namespace {
// Every setting of the per-layout knobs (vp, microbatch, ZeRO, offload, SP, recompute, rank order) on top
// of a fixed shape (tp, cp, pp, stage split, ep). The knobs a layout's layer costs depend on
// (microbatch, ZeRO, shard group, optimizer offload, SP, recompute, rank order: the screen's
// per-thread cache key, sim/stage_plan.cpp) vary slowest, those they do not (interleaving,
// schedule, activation offload, EP overlap) fastest, so consecutive candidates share one cache
// entry: with the interleaving outermost, a DeepSeek-V3 shape cycled through more keys than the
// cache holds and a third of its screens priced layer costs anew (issue 18).
void add_knob_settings(std::vector<Candidate>& out, Candidate shape, const Scenario& s, const LayoutSpec& f,
                       const SearchOptions& o, const std::vector<std::int64_t>& split, std::int64_t dp) {
    // A stated gradient accumulation fixes the microbatch at each dp (whatever the search's cap).
    // 0: the stated accumulation leaves no whole microbatch at this dp.
    const std::int64_t stated =
        f.grad_accumulation ? accumulation_microbatch(s.training.global_batch, dp, *f.grad_accumulation).value_or(0) : 0;
    std::vector<std::int64_t> microbatches;
    if (!f.grad_accumulation)
        microbatches = knob(f.microbatch, divisors_up_to(s.training.global_batch / dp, o.max_microbatch), [](std::int64_t) { return true; });
    else if (stated > 0 && f.microbatch.value_or(stated) == stated)
        microbatches = {stated};
    const auto zero_stages = zero_values(f, o, dp * shape.cp);
    const auto orders = order_values(f, o, shape.pp, dp);
    const auto vps = vp_values(f, split, o);
    const auto offload_layer_counts = offload_layer_values(s, f, o, split);
    const auto offload_module_sets = offload_module_values(s, f, o);
    // The schedules depend on the microbatch (through the microbatch count) and vp alone: listed
    // once for each pair, not again under every setting of the knobs in between.
    std::vector<std::vector<std::vector<Schedule>>> schedules_at(microbatches.size());
    for (std::size_t i = 0; i < microbatches.size(); ++i)
        for (auto vp : vps) schedules_at[i].push_back(schedule_values(f, o, shape.pp, vp, s.training.global_batch / (dp * microbatches[i])));
    for (std::size_t mb_index = 0; mb_index < microbatches.size(); ++mb_index)
        for (auto zero : zero_stages)
            for (auto shard : shard_group_values(s, f, o, zero, dp, shape.tp * shape.cp * dp / (shape.ep * shape.etp)))
            for (bool offload : offload_values(f, o, zero))
                for (bool sp : sp_values(f, o, shape.tp))
                    for (Recompute rc : recompute_values(f, o))
                        for (std::uint8_t modules : module_values(s, f, o, rc))
                            for (auto order : orders)
                                for (std::size_t vp_index = 0; vp_index < vps.size(); ++vp_index)
                                for (Schedule schedule : schedules_at[mb_index][vp_index])
                                for (auto offload_layers : offload_layer_counts)
                                for (std::uint8_t offload_modules : offload_module_sets) {
                                        if (offload_layers > 0 && !activation_offload_rule(shape.pp, rc).empty())
                                            continue;  // Megatron's --cpu-offloading: pp 1, no recompute
                                        if (!offload_modules_rule(s.model, offload_modules, offload_layers, rc, modules).empty()) continue;
                                        const auto mb = microbatches[mb_index];
                                        Candidate c = shape;
                                        c.vp = static_cast<std::int16_t>(vps[vp_index]);
                                        c.schedule = schedule;
                                        c.microbatch = static_cast<std::int16_t>(mb);
                                        c.zero_stage = static_cast<std::int8_t>(zero);
                                        c.shard_group = static_cast<std::int16_t>(shard);
                                        c.optimizer_offload = offload;
                                        c.sequence_parallel = sp;
                                        c.recompute = rc;
                                        c.recompute_modules = modules;
                                        c.offload_layers = static_cast<std::int16_t>(offload_layers);
                                        c.offload_modules = offload_modules;
                                        c.rank_order = order;
                                        for (std::uint8_t share : offload_share_values(f, o, offload_modules)) {
                                            c.offload_share = share;
                                            for (bool overlap : ep_overlap_values(s, f, o, c)) {
                                                c.ep_a2a_overlap = overlap;
                                                for (bool async : async_tp_values(f, o, c)) {
                                                    c.async_tp = async;
                                                    out.push_back(c);
                                                }
                                            }
                                        }
                                    }
}
}  // namespace

namespace {
// Why a search found nothing: the rejection that got furthest through the knobs (tp, cp, pp,
// batch, split, ep, per-layout knobs); among equals the last, which the ascending loops make the
// widest model parallelism tried. Built only when it is the furthest so far.
class Rejections {
public:
    template <class Make>
    void note(int depth, Make make) {
        if (depth >= depth_) {
            depth_ = depth;
            error_ = make();
        }
    }
    const std::optional<InputError>& furthest() const { return error_; }

private:
    int depth_ = -1;
    std::optional<InputError> error_;
};

std::string num(std::int64_t v) { return std::to_string(v); }
}  // namespace

namespace {
// The stage split a shape's knob settings run on: the scenario's explicit one, else its trims'.
std::vector<std::int64_t> shape_split(const Scenario& s, const LayoutSpec& f, const Candidate& shape) {
    return f.stage_layers ? *f.stage_layers : trimmed_stage_split(s.model.layers, shape.pp, shape.first_trim, shape.last_trim);
}

// Walks every shape the rules allow, in candidate order, and calls `settings(shape, split, dp)`,
// which returns how many knob settings the shape has. Returns the rule and knob that stopped the
// search furthest along, for a search that finds no candidate.
template <class Settings>
std::optional<InputError> walk_shapes(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, Settings settings) {
    std::size_t total = 0;
    Rejections rejected;
    const std::int64_t gpus = s.cluster.gpus;
    const auto tps = tp_values(s, f, o);
    if (tps.empty())
        rejected.note(0, [&] {
            return InputError("/model/heads", num(s.model.heads),
                              "no tensor-parallel degree (a power of two up to 2 NVLink domains) divides the heads, key/value heads (" +
                                  num(s.model.kv_heads) + ") and ffn_hidden (" + num(s.model.ffn_hidden) + ")");
        });
    for (auto tp : tps) {
        for (auto cp : cp_values(s, f, o)) {
            if (const std::string rule = mixer_split_rule(s.model, tp, cp); !rule.empty()) {
                rejected.note(1, [&] { return InputError("/layout/cp", num(cp), rule + " at tp " + num(tp)); });
                continue;
            }
            if (gpus % (tp * cp) != 0) {
                rejected.note(1, [&] {
                    return InputError("/cluster/gpus", num(gpus), "is not a multiple of tp x cp (" + num(tp) + " x " + num(cp) + ")");
                });
                continue;
            }
            const auto pps = pp_values(s, f, o, gpus / (tp * cp));
            if (pps.empty())
                rejected.note(2, [&] {
                    return InputError("/layout/pp", f.pp ? num(*f.pp) : "open",
                                      "no pipeline depth splits the " + num(s.model.layers) + " layers over what tp " + num(tp) +
                                          " x cp " + num(cp) + " leave of " + num(gpus) + " GPUs" +
                                          (o.framework.uneven_stages ? "" : " evenly (the framework has no uneven stages)"));
                });
            for (auto pp : pps) {
                // A fixed pp need not divide what a searched tp and cp leave.
                if ((gpus / (tp * cp)) % pp != 0) {
                    rejected.note(3, [&] {
                        return InputError("/layout/pp", num(pp), "does not divide what tp " + num(tp) + " x cp " + num(cp) +
                                                                     " leave of /cluster/gpus (" + num(gpus) + ")");
                    });
                    continue;
                }
                const std::int64_t dp = gpus / (tp * cp * pp);
                if (f.dp && *f.dp != dp) {
                    rejected.note(4, [&] {
                        return InputError("/layout/dp", num(*f.dp), "no tp x cp x pp the search allows leaves this dp of " + num(gpus) + " GPUs");
                    });
                    continue;
                }
                if (s.training.global_batch % dp != 0) {
                    rejected.note(4, [&] {
                        return InputError(s.global_batch_path, num(s.training.global_batch),
                                          "must be a multiple of dp x microbatch for some layout: the widest model parallelism "
                                          "searched (tp " + num(tp) + " x cp " + num(cp) + " x pp " + num(pp) + ") still leaves dp " +
                                              num(dp) + "; fix tp/pp/cp in /layout, raise the batch or use fewer GPUs");
                    });
                    continue;
                }
                // A stated accumulation fixes the microbatch at this dp; a stated microbatch must be it.
                if (f.grad_accumulation) {
                    const std::string rule = grad_accumulation_rule(s.training.global_batch, dp, f.microbatch, *f.grad_accumulation);
                    if (!rule.empty()) {
                        rejected.note(4, [&] {
                            return InputError("/layout/grad_accumulation", num(*f.grad_accumulation),
                                              rule + " (tp " + num(tp) + " x cp " + num(cp) + " x pp " + num(pp) + " leave dp " + num(dp) + ")");
                        });
                        continue;
                    }
                }
                const auto splits = trims(s, f, pp, o);
                if (splits.empty())
                    rejected.note(5, [&] {
                        return InputError("/layout/pp", num(pp), "cannot split " + num(s.model.layers) + " layers over this many stages");
                    });
                for (auto [first, last] : splits) {
                    const std::int64_t folded = tp * cp * dp;
                    const auto eps = ep_values(s, f, folded);
                    if (eps.empty())
                        rejected.note(6, [&] {
                            return InputError("/layout/ep", f.ep ? num(*f.ep) : "open",
                                              "no expert-parallel degree divides both the experts (" + num(s.model.moe.experts) +
                                                  ") and tp x cp x dp (" + num(folded) + ")");
                        });
                    for (auto ep : eps)
                        for (auto etp : etp_values(s, f, tp, ep, folded)) {
                            Candidate shape;
                            shape.tp = static_cast<std::int16_t>(tp);
                            shape.pp = static_cast<std::int16_t>(pp);
                            shape.cp = static_cast<std::int16_t>(cp);
                            shape.ep = static_cast<std::int16_t>(ep);
                            shape.etp = static_cast<std::int16_t>(etp);
                            shape.first_trim = first;
                            shape.last_trim = last;
                            const std::size_t n = settings(shape, shape_split(s, f, shape), dp);
                            total += n;
                            if (n == 0)
                                rejected.note(7, [&] {
                                    return InputError("/layout", "tp " + num(tp) + " pp " + num(pp) + " dp " + num(dp),
                                                      "no setting of vp, microbatch, ZeRO, recompute and sequence parallelism passes "
                                                      "the rules with the knobs /layout fixes (microbatch dividing " +
                                                          num(s.training.global_batch / dp) +
                                                          " sequences per replica; interleaving needs microbatches in groups of pp; "
                                                          "ZeRO stages the framework offers)");
                                });
                        }
                }
            }
        }
    }
    if (total == 0) return rejected.furthest();
    return std::nullopt;
}
}  // namespace

std::vector<CandidateShape> enumerate_shapes(const Scenario& s, const LayoutSpec& f, const SearchOptions& o,
                                             std::optional<InputError>* why_none) {
    std::vector<CandidateShape> out;
    std::vector<Candidate> scratch;  // each shape's settings, counted (the largest shape's capacity)
    const auto why = walk_shapes(s, f, o, [&](const Candidate& shape, const std::vector<std::int64_t>& split, std::int64_t dp) {
        scratch.clear();
        add_knob_settings(scratch, shape, s, f, o, split, dp);
        if (!scratch.empty()) out.push_back({shape, scratch.size()});
        return scratch.size();
    });
    if (why_none && why) *why_none = why;
    return out;
}

void expand_shape(const Scenario& s, const LayoutSpec& f, const SearchOptions& o, const Candidate& shape, std::vector<Candidate>& out) {
    out.clear();
    add_knob_settings(out, shape, s, f, o, shape_split(s, f, shape), s.cluster.gpus / (shape.tp * shape.cp * shape.pp));
}

std::vector<Candidate> enumerate_candidates(const Scenario& s, const LayoutSpec& f, const SearchOptions& o,
                                            std::optional<InputError>* why_none) {
    std::vector<Candidate> out;
    const auto why = walk_shapes(s, f, o, [&](const Candidate& shape, const std::vector<std::int64_t>& split, std::int64_t dp) {
        const std::size_t before = out.size();
        add_knob_settings(out, shape, s, f, o, split, dp);
        return out.size() - before;
    });
    if (why_none && why) *why_none = why;
    return out;
}


Layout to_layout(const Scenario& s, const LayoutSpec& f, const Candidate& c) {
    Layout l;
    to_layout(s, f, c, l);
    return l;
}

void to_layout(const Scenario& s, const LayoutSpec& f, const Candidate& c, Layout& l) {
    l.tp = c.tp;
    l.pp = c.pp;
    l.cp = c.cp;
    l.ep = c.ep;
    l.etp = c.etp;
    l.vp = c.vp;
    l.dp = s.cluster.gpus / (l.tp * l.pp * l.cp);
    l.microbatch = c.microbatch;
    l.zero_stage = c.zero_stage;
    l.shard_group = c.shard_group;
    l.optimizer_offload = c.optimizer_offload;
    l.sequence_parallel = c.sequence_parallel;
    l.recompute = c.recompute;
    l.recompute_modules = c.recompute_modules;
    l.activation_offload_layers = c.offload_layers;
    l.offload_modules = c.offload_modules;
    l.offload_fraction = f.activation_offload_fraction.value_or(kOffloadFractions[c.offload_share]);
    l.ep_a2a_overlap = c.ep_a2a_overlap;
    l.async_tp = c.async_tp;
    l.moe_dispatcher = f.moe_dispatcher;  // not searched: the framework's unless the scenario names one
    l.schedule = c.schedule;
    l.pp_warmup = f.pp_warmup.value_or(0);
    l.rank_order = f.rank_order ? *f.rank_order : candidate_rank_orders()[c.rank_order];
    if (f.stage_layers) l.stage_layers = *f.stage_layers;
    else trimmed_stage_split(s.model.layers, l.pp, c.first_trim, c.last_trim, l.stage_layers);
}

std::vector<std::int64_t> trimmed_stage_split(std::int64_t layers, std::int64_t pp, std::int64_t first_trim,
                                              std::int64_t last_trim) {
    std::vector<std::int64_t> split;
    trimmed_stage_split(layers, pp, first_trim, last_trim, split);
    return split;
}

void trimmed_stage_split(std::int64_t layers, std::int64_t pp, std::int64_t first_trim, std::int64_t last_trim,
                         std::vector<std::int64_t>& split) {
    split.clear();
    if (pp == 1) {
        if (first_trim == 0 && last_trim == 0) split.push_back(layers);
        return;
    }
    const std::int64_t padded = layers + first_trim + last_trim;
    if (padded % pp != 0) return;
    const std::int64_t middle = padded / pp;
    if (middle - first_trim < 1 || middle - last_trim < 1) return;
    split.assign(static_cast<std::size_t>(pp), middle);
    split.front() -= first_trim;
    split.back() -= last_trim;
}

}  // namespace sextant
