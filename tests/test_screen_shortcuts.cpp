// The planner's screen takes three shortcuts (issue 18), each of which must give what the long
// way gives, bit for bit, or the plans would change with the speed work:
// - memory_within refuses a layout at its first stage over the offered limit and keeps only the
//   peak: it must refuse exactly the layouts whose estimate_memory peak is over
//   (1 - margin) x HBM (or over HBM), and report the same peak and peak stage for the others;
// - plan_step into a reused StepPlan (per-thread scratch, any earlier layout in it) must equal a
//   fresh plan;
// - StepContext analyses each group placement once, by content, for every layout that places a
//   group alike: its groups must equal the network model's analysis of that layout alone;
// - layout_costs keeps each layout's layer costs per thread in two generations of entries: what
//   it returns, after more keys than both generations hold, must equal the cost functions' own
//   answer for that layout;
// - the screen converts each candidate into one reused Layout: it must equal a fresh one.
#include <doctest/doctest.h>

#include <tuple>

#include "core/repeated_sum.hpp"
#include "cost/layer_costs.hpp"
#include "memory/memory_model.hpp"
#include "memory/stage_params.hpp"
#include "planner/explain.hpp"
#include "planner/search_space.hpp"
#include "sim/simulate.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"

using namespace sextant;

namespace {
Scenario open_scenario(const char* name) {
    Scenario s = load_scenario(data_dir() / "scenarios" / (std::string(name) + ".json"));
    s.layout = LayoutSpec{};
    return s;
}

// Every `stride`-th candidate layout of the scenario's search (its framework's knobs, as `plan`).
std::vector<Layout> sample_layouts(const Scenario& s, std::size_t stride) {
    SearchOptions o;
    o.framework = load_runtime_profile(s.training.framework, "/framework").features;
    const std::vector<Candidate> candidates = enumerate_candidates(s, s.layout, o);
    std::vector<Layout> out;
    for (std::size_t i = 0; i < candidates.size(); i += stride) out.push_back(to_layout(s, s.layout, candidates[i]));
    return out;
}

void check_stage(const StagePlan& a, const StagePlan& b) {
    REQUIRE(a.chunks.size() == b.chunks.size());
    for (std::size_t c = 0; c < a.chunks.size(); ++c) {
        const ChunkPlan& x = a.chunks[c];
        const ChunkPlan& y = b.chunks[c];
        CHECK(x.layers == y.layers);
        CHECK(x.forward == y.forward);
        CHECK(x.backward == y.backward);
        CHECK(x.forward_parts == y.forward_parts);
        CHECK(x.backward_parts == y.backward_parts);
        CHECK(x.weight_grad == y.weight_grad);
        CHECK(x.dense_params == y.dense_params);
        CHECK(x.expert_params == y.expert_params);
        CHECK(x.dp_reduce == y.dp_reduce);
    }
    CHECK(a.send_forward == b.send_forward);
    CHECK(a.send_backward == b.send_backward);
    CHECK(a.param_gather == b.param_gather);
    CHECK(a.param_gather_wait == b.param_gather_wait);
    CHECK(a.optimizer == b.optimizer);
    CHECK(a.slowdown == b.slowdown);
}

bool same_phase(const PhaseCost& a, const PhaseCost& b) {
    return a.gemm == b.gemm && a.attention == b.attention && a.memory == b.memory && a.tp == b.tp && a.cp == b.cp && a.ep == b.ep &&
           a.zero3 == b.zero3 && a.zero3_waited == b.zero3_waited && a.weight_grad == b.weight_grad;
}

bool same_layout(const Layout& a, const Layout& b) {
    return a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.cp == b.cp && a.ep == b.ep && a.vp == b.vp && a.etp == b.etp &&
           a.microbatch == b.microbatch && a.zero_stage == b.zero_stage && a.shard_group == b.shard_group &&
           a.sequence_parallel == b.sequence_parallel && a.optimizer_offload == b.optimizer_offload && a.recompute == b.recompute &&
           a.recompute_modules == b.recompute_modules && a.activation_offload_layers == b.activation_offload_layers &&
           a.ep_a2a_overlap == b.ep_a2a_overlap && a.schedule == b.schedule && a.pp_warmup == b.pp_warmup &&
           a.stage_layers == b.stage_layers && a.rank_order == b.rank_order;
}

bool same_shape(const GroupShape& a, const GroupShape& b) {
    return a.ranks == b.ranks && a.domains == b.domains && a.per_domain == b.per_domain && a.span == b.span &&
           a.ring_seconds_per_byte == b.ring_seconds_per_byte && a.all_to_all_seconds_per_byte == b.all_to_all_seconds_per_byte &&
           a.alone_ring_seconds_per_byte == b.alone_ring_seconds_per_byte &&
           a.alone_all_to_all_seconds_per_byte == b.alone_all_to_all_seconds_per_byte;
}
}  // namespace

TEST_CASE("the memory screen refuses exactly the layouts over the offered limit, with estimate_memory's peak") {
    for (const char* name : {"llama3-405b-h100", "deepseek-v3-h100"}) {
        const Scenario s = open_scenario(name);
        const RuntimeTraits traits = runtime_traits(s);
        std::size_t refused = 0, kept = 0;
        for (const Layout& l : sample_layouts(s, 97)) {
            const MemoryReport full = estimate_memory(s, l, traits);
            for (double margin : {0.0, 0.1, 0.3}) {
                CAPTURE(name);
                CAPTURE(margin);
                const std::optional<MemoryReport> screened = memory_within(s, l, traits, margin);
                const bool offered = full.fits() && full.peak.value() <= (1.0 - margin) * full.capacity.value();
                REQUIRE(screened.has_value() == offered);
                if (!screened) {
                    ++refused;
                    continue;
                }
                ++kept;
                CHECK(screened->peak.value() == full.peak.value());
                CHECK(screened->peak_stage == full.peak_stage);
                CHECK(screened->capacity.value() == full.capacity.value());
            }
        }
        // Both outcomes occur, so both branches were held to the full estimate.
        CHECK(refused > 0);
        CHECK(kept > 0);
    }
}

TEST_CASE("a stage plan made in reused scratch equals a fresh one") {
    for (const char* name : {"llama3-405b-h100", "deepseek-v3-h100"}) {
        const Scenario s = open_scenario(name);
        const StepContext ctx(s);
        const std::vector<Layout> layouts = sample_layouts(s, 4099);
        REQUIRE(layouts.size() > 3);
        // The scratch holds the previous layout's plan (other pp, vp, schedule) each time.
        StepPlan scratch;
        for (const Layout& l : layouts) {
            CAPTURE(name);
            CAPTURE(layout_label(l));
            plan_step(ctx, l, scratch);
            const StepPlan fresh = plan_step(ctx, l);
            REQUIRE(scratch.stages.size() == fresh.stages.size());
            CHECK(scratch.microbatches == fresh.microbatches);
            CHECK(scratch.step_overhead == fresh.step_overhead);
            for (std::size_t stage = 0; stage < fresh.stages.size(); ++stage) check_stage(scratch.stages[stage], fresh.stages[stage]);
        }
    }
}

TEST_CASE("groups from the shared placement analyses equal each layout's own analysis") {
    const Scenario s = open_scenario("deepseek-v3-h100");
    const StepContext ctx(s);
    const std::vector<Layout> layouts = sample_layouts(s, 20011);
    REQUIRE(layouts.size() > 3);
    // Routed in turn through one context: later layouts find placements analysed for earlier ones.
    for (const Layout& l : layouts) (void)ctx.groups(l);
    for (const Layout& l : layouts) {
        CAPTURE(layout_label(l));
        const LayoutGroups& shared = ctx.groups(l);
        const LayoutGroups own = analyse_groups(ctx.network(), l, s.model);
        CHECK(same_shape(shared.tp, own.tp));
        CHECK(same_shape(shared.cp, own.cp));
        CHECK(same_shape(shared.pp, own.pp));
        CHECK(same_shape(shared.ep, own.ep));
        CHECK(same_shape(shared.etp, own.etp));
        CHECK(same_shape(shared.dp_dense, own.dp_dense));
        CHECK(same_shape(shared.dp_expert, own.dp_expert));
        CHECK(same_shape(shared.dp_replicas, own.dp_replicas));
        CHECK(same_shape(shared.dp_expert_replicas, own.dp_expert_replicas));
    }
}

TEST_CASE("layout costs from the per-thread cache equal the cost functions' answer, after the cache turned over") {
    const Scenario s = open_scenario("deepseek-v3-h100");
    const StepContext ctx(s);
    const CostContext costs = ctx.costs();
    const std::vector<Layout> layouts = sample_layouts(s, 211);
    // Each layout is asked for twice, 20,000 other layouts apart: more keys than the two
    // generations hold in between, so later answers come from recomputed, promoted and fresh
    // entries alike.
    constexpr std::size_t kApart = 20000;
    REQUIRE(layouts.size() > kApart + 100);
    std::size_t checked = 0;
    const std::size_t turned_before = layout_cost_generations_turned();
    for (std::size_t i = 0; i < layouts.size(); ++i) {
        (void)layout_costs(ctx, layouts[i]);
        if (i < kApart || i % 50 != 0) continue;
        const Layout& l = layouts[i - kApart];
        CAPTURE(layout_label(l));
        const LayoutCosts& cached = layout_costs(ctx, l);
        const LayoutGroups& groups = ctx.groups(l);
        CHECK(cached.groups == &groups);
        for (std::int64_t layer : {std::int64_t{0}, s.model.layers - 1}) {  // a dense and a MoE layer
            const LayerCost own = layer_cost(costs, l, groups, layer);
            const LayerCost& kind = cached.kinds[s.model.layer_is_moe(layer) ? 1 : 0];
            CHECK(same_phase(kind.forward, own.forward));
            CHECK(same_phase(kind.backward, own.backward));
            CHECK(kind.recompute == own.recompute);
        }
        CHECK(same_phase(cached.embed_forward, embedding_cost(costs, l, false)));
        CHECK(same_phase(cached.embed_backward, embedding_cost(costs, l, true)));
        CHECK(same_phase(cached.output_forward, output_cost(costs, l, false)));
        CHECK(same_phase(cached.output_backward, output_cost(costs, l, true)));
        CHECK(cached.transfer == pp_transfer(costs, l, groups));
        ++checked;
    }
    CHECK(checked > 100);
    // The cache did turn over: at least twice, so that answers came from both generations and
    // from entries recomputed after their generation was dropped.
    CHECK(layout_cost_generations_turned() - turned_before >= 2);
}

TEST_CASE("a candidate converted into a reused layout equals a fresh conversion") {
    for (const char* name : {"llama3-405b-h100", "deepseek-v3-h100"}) {
        Scenario s = open_scenario(name);
        SearchOptions o;
        o.framework = load_runtime_profile(s.training.framework, "/framework").features;
        const std::vector<Candidate> candidates = enumerate_candidates(s, s.layout, o);
        // The reused layout held the previous candidate (other pp, stage split, knobs) each time.
        Layout reused;
        std::size_t splits = 0;
        for (std::size_t i = 0; i < candidates.size(); i += 1009) {
            CAPTURE(name);
            to_layout(s, s.layout, candidates[i], reused);
            const Layout fresh = to_layout(s, s.layout, candidates[i]);
            CHECK(same_layout(reused, fresh));
            if (i > 0 && candidates[i].pp != candidates[i - 1009].pp) ++splits;
        }
        CHECK(splits > 3);  // the stage split grew and shrank in the reused layout
    }
}

TEST_CASE("a repeated sum gives the bits of its loop, whichever terms it last kept") {
    RepeatedSum sums;
    // More terms than the sum keeps (four), asked in turn, so each is dropped and rebuilt.
    const double terms[] = {0.1, 1.0 / 3.0, 1.0, 7.3e9, 0.0, 2.5e-7, 0.1};
    bool rounding_differs = false;
    for (int round = 0; round < 3; ++round)
        for (double x : terms)
            for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{61}, std::size_t{1000}, std::size_t{3}}) {
                double loop = 0;
                for (std::size_t i = 0; i < k; ++i) loop += x;
                CHECK(sums(x, k) == loop);
                rounding_differs = rounding_differs || static_cast<double>(k) * x != loop;
            }
    CHECK(rounding_differs);  // the reason for the table: k x x is not the loop's sum
}

TEST_CASE("a stage's parameters equal its layers' summed one by one") {
    // Middle stages (the others add the embedding, output layer and MTP modules after the
    // layers), with the dense layers of DeepSeek-V3 moved to reach past the first stages so that
    // some stages hold dense layers and then MoE ones, and with MoE every other layer (runs of
    // one): the first run summed from the table, the rest one by one, as the loop does.
    int mixed = 0, checked = 0;
    for (const auto& [name, first_dense, frequency] : {std::tuple{"deepseek-v3-h100", 10, 1}, std::tuple{"deepseek-v3-h100", 10, 2},
                                                       std::tuple{"mixtral-8x7b-h100", 0, 1}, std::tuple{"llama3-70b-h100", 0, 1}}) {
        Scenario s = open_scenario(name);
        if (s.model.is_moe()) {
            s.model.moe.first_dense_layers = first_dense;
            s.model.moe.layer_frequency = frequency;
        }
        for (const Layout& l : sample_layouts(s, 997)) {
            std::int64_t first = 0;
            for (std::int64_t stage = 0; stage < l.pp; first += l.stage_layers[static_cast<std::size_t>(stage)], ++stage) {
                if (!middle_stage(l.schedule_def(), l, stage) || l.schedule_def().placement == Placement::Dual) continue;
                const std::int64_t end = first + l.stage_layers[static_cast<std::size_t>(stage)];
                StageParams loop;
                for (std::int64_t layer = first; layer < end; ++layer) {
                    const StageParams p = layer_params_per_gpu(s.model, l, layer);
                    loop.dense += p.dense;
                    loop.expert += p.expert;
                }
                const StageParams got = stage_params(s.model, l, stage);
                INFO(name, " ", layout_label(l), " stage ", stage);
                CHECK(got.dense == loop.dense);
                CHECK(got.expert == loop.expert);
                ++checked;
                mixed += s.model.layer_is_moe(first) != s.model.layer_is_moe(end - 1) ? 1 : 0;
            }
        }
    }
    CHECK(checked > 100);
    CHECK(mixed > 10);
}
