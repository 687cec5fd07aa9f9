// The planner's search: valid candidates, fixed knobs respected, deterministic ranking for any
// thread or shard count, and the exporters. Most costs come from a small closed-form test double
// so that the expected winner is known; the last tests use Sextant's own cost models against
// searches and measured sweeps.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "spec/runtime_profile.hpp"
#include "planner/emit.hpp"
#include "planner/explain.hpp"
#include "planner/planner.hpp"
#include "planner/step_evaluator.hpp"
#include "spec/presets.hpp"

using namespace sextant;

namespace {
Scenario preset_scenario(const char* name) {
    return load_scenario(data_dir() / "scenarios" / (std::string(name) + ".json"));
}

// DeepSeek-V3 on 256 GB200s (NVL72, Grace's NVLink-C2C host link) in MXFP8 under Megatron-Core
// 2025: HSDP groups inside a rack, activation offload and the all-to-all overlap are open.
Scenario deepseek_on_gb200() {
    nlohmann::json d = nlohmann::json::parse(std::ifstream(data_dir() / "scenarios" / "deepseek-v3-h100.json"));
    d["cluster"] = {{"preset", "gb200-nvl72"}, {"gpus", 256}};
    d["training"]["global_batch"] = 2048;
    d["training"]["precision"] = "mxfp8";
    d["training"]["framework"] = "megatron-core-2025";
    d.erase("layout");
    return parse_scenario(d, data_dir());
}

// A toy cost model with a known optimum: compute shrinks with recompute none, the bubble is
// (p-1)/(v*m), TP costs 3% per doubling, and memory fits only with tp*pp >= 8.
class ToyEvaluator : public Evaluator {
public:
    explicit ToyEvaluator(const Scenario& s) : scenario_(s) {}
    PlanScore screen(const Layout& l) const override { return score(l); }
    PlanScore simulate(const Layout& l) const override { return score(l); }

private:
    PlanScore score(const Layout& l) const {
        PlanScore s;
        const double m = static_cast<double>(l.microbatches(scenario_.training.global_batch));
        const double compute = 64.0 / static_cast<double>(scenario_.cluster.gpus) * (l.recompute == Recompute::Full ? 1.33 : l.recompute == Recompute::Selective ? 1.02 : 1.0);
        const double bubble = compute * static_cast<double>(l.pp - 1) / (static_cast<double>(l.vp) * m);
        const double tp = compute * 0.03 * std::log2(static_cast<double>(l.tp));
        s.step_time_s = compute + bubble + tp + 0.001 * static_cast<double>(l.zero_stage);
        s.breakdown = {{"compute", compute}, {"bubble", bubble}, {"tp", tp}};
        s.mfu = 0.5 / s.step_time_s;
        s.tokens_per_s = scenario_.training.tokens_per_step() / s.step_time_s;
        s.capacity_bytes = 80e9;
        s.peak_memory_bytes = 640e9 / static_cast<double>(l.tp * l.pp) *
                              (l.recompute == Recompute::None ? 1.0 : 0.5);
        s.fits = s.peak_memory_bytes <= s.capacity_bytes;
        return s;
    }
    Scenario scenario_;
};

std::unique_ptr<Evaluator> toy(const Scenario& s) { return std::make_unique<ToyEvaluator>(s); }

// The input error `f` stops with; none where it returns.
std::optional<InputError> error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e;
    }
    return std::nullopt;
}

// The error resolve_layout refuses a scenario's layout with (its open knobs at their defaults);
// none where the layout resolves.
std::optional<InputError> resolve_error(const Scenario& s) { return error_of([&] { resolve_layout(s, s.layout); }); }
}  // namespace

TEST_CASE("every enumerated candidate passes the scenario validation rules") {
    for (const char* name : {"llama3-70b-h100", "mixtral-8x7b-h100", "gpt3-175b-a100"}) {
        Scenario s = preset_scenario(name);
        LayoutSpec open;
        auto candidates = enumerate_candidates(s, open, {});
        REQUIRE(candidates.size() > 100);
        for (std::size_t i = 0; i < candidates.size(); i += 97)
            CHECK_NOTHROW(validate_layout(s, to_layout(s, open, candidates[i])));
    }
}

TEST_CASE("knobs the scenario fixes stay fixed") {
    Scenario s = preset_scenario("llama3-70b-h100");
    LayoutSpec fixed;
    fixed.tp = 8;
    fixed.recompute = Recompute::Selective;
    for (const auto& c : enumerate_candidates(s, fixed, {})) {
        CHECK(c.tp == 8);
        CHECK(c.recompute == Recompute::Selective);
    }
}

TEST_CASE("interleaving takes every chunk count that divides a stage's layers, as Megatron does") {
    Scenario s = preset_scenario("gpt3-175b-a100");  // 96 layers
    LayoutSpec fixed;
    fixed.pp = 8;  // 12 layers per stage
    std::set<std::int64_t> vps;
    for (const auto& c : enumerate_candidates(s, fixed, {})) vps.insert(c.vp);
    CHECK(vps == std::set<std::int64_t>{1, 2, 3, 4, 6, 12});
}

TEST_CASE("optimizer offload is searched where the framework has it and ZeRO shards the state") {
    Scenario s = preset_scenario("llama3-70b-h100");
    SearchOptions o;
    o.framework = load_runtime_profile("torchtitan-2024", "").features;
    bool offloads = false;
    for (const auto& c : enumerate_candidates(s, LayoutSpec{}, o)) {
        if (c.optimizer_offload) CHECK(c.zero_stage >= 1);
        offloads = offloads || c.optimizer_offload;
    }
    CHECK(offloads);
    o.framework = load_runtime_profile("megatron-core-2024", "").features;
    for (const auto& c : enumerate_candidates(s, LayoutSpec{}, o)) CHECK_FALSE(c.optimizer_offload);
}

TEST_CASE("a search's shapes expand, one after another, to exactly its candidates") {
    // The planner holds shapes and expands each when it screens it; enumerate_candidates is the
    // same walk written out whole. Every field of every candidate, in order, for dense, MoE (EP
    // and expert TP), a hybrid with uneven stages and an MLA model on NVL72 (HSDP groups, activation
    // offload and the all-to-all overlap open), each under its own framework and under every knob.
    const auto fields = [](const Candidate& c) {
        return std::make_tuple(c.tp, c.pp, c.cp, c.ep, c.etp, c.vp, c.microbatch, c.offload_layers, c.shard_group, c.first_trim,
                               c.last_trim, c.zero_stage, c.optimizer_offload, c.sequence_parallel, c.ep_a2a_overlap,
                               static_cast<int>(c.recompute), c.recompute_modules, c.rank_order, static_cast<int>(c.schedule), c.async_tp);
    };
    for (const char* name : {"llama3-8b-h100", "mixtral-8x7b-h100", "nemotron-3-nano-h100", "deepseek-v3-h100 on GB200"}) {
        for (const bool any : {false, true}) {
            const bool nvl72 = std::string(name).ends_with("GB200");
            Scenario s = nvl72 ? deepseek_on_gb200() : preset_scenario(name);
            LayoutSpec open;
            if (nvl72) open.pp = 8;  // a slice of its 42.7 million
            SearchOptions o;
            if (!any) o.framework = load_runtime_profile(s.training.framework, "").features;
            CAPTURE(name);
            CAPTURE(any);
            const std::vector<Candidate> whole = enumerate_candidates(s, open, o);
            const std::vector<CandidateShape> shapes = enumerate_shapes(s, open, o);
            REQUIRE(whole.size() > 1000);
            std::vector<Candidate> expanded;
            std::size_t at = 0, differ = 0, outside = 0;
            for (const CandidateShape& shape : shapes) {
                expand_shape(s, open, o, shape.shape, expanded);
                REQUIRE(expanded.size() == shape.count);
                REQUIRE(shape.count > 0);
                REQUIRE(at + expanded.size() <= whole.size());
                for (const Candidate& c : expanded) {
                    differ += fields(c) == fields(whole[at++]) ? 0 : 1;
                    outside += std::make_tuple(c.tp, c.pp, c.cp, c.ep, c.etp, c.first_trim, c.last_trim) ==
                                       std::make_tuple(shape.shape.tp, shape.shape.pp, shape.shape.cp, shape.shape.ep, shape.shape.etp,
                                                       shape.shape.first_trim, shape.shape.last_trim)
                                   ? 0
                                   : 1;
                }
            }
            CHECK(at == whole.size());
            CHECK(differ == 0);   // the same candidates in the same order
            CHECK(outside == 0);  // each within its shape's degrees and split
            CHECK(shapes.size() < whole.size() / 10);  // what the planner keeps is a small fraction
            PlanOptions po;
            po.framework_features = !any;
            if (any) po.search = o;
            Scenario with = s;
            with.layout = open;
            CHECK(Planner(with, po, toy).candidate_count() == whole.size());
        }
    }
}

TEST_CASE("a search with no candidate names the same rule through its shapes") {
    Scenario s = preset_scenario("llama3-70b-h100");
    LayoutSpec fixed;
    fixed.dp = 3;  // no tp x cp x pp leaves 3 of 1,024 GPUs
    std::optional<InputError> whole, shapes;
    CHECK(enumerate_candidates(s, fixed, {}, &whole).empty());
    CHECK(enumerate_shapes(s, fixed, {}, &shapes).empty());
    REQUIRE(whole);
    REQUIRE(shapes);
    CHECK(whole->path() == shapes->path());
    CHECK(std::string(whole->what()) == std::string(shapes->what()));
}

TEST_CASE("Llama 3 405B on 16,384 GPUs opens at least 100,000 candidates") {
    Scenario s = preset_scenario("llama3-405b-h100");
    CHECK(enumerate_candidates(s, LayoutSpec{}, {}).size() >= 100000);
}

TEST_CASE("MoE candidates fold expert parallelism and expert TP into tp x cp x dp") {
    Scenario s = preset_scenario("mixtral-8x7b-h100");
    std::set<int> eps, etps;
    for (const auto& c : enumerate_candidates(s, LayoutSpec{}, {})) {
        const std::int64_t folded = s.cluster.gpus / c.pp;
        CHECK(folded % (c.ep * c.etp) == 0);
        CHECK(8 % c.ep == 0);
        CHECK((c.etp == 1 || c.etp == c.tp));
        eps.insert(c.ep);
        etps.insert(c.etp);
    }
    CHECK(eps.size() == 4);  // 1, 2, 4, 8
    CHECK(etps.size() >= 2);
}

TEST_CASE("the ranking is the same for 1, 2 and 3 threads and for 2 shards merged") {
    Scenario s = preset_scenario("llama3-70b-h100");
    s.layout = LayoutSpec{};
    auto run = [&](unsigned threads) {
        PlanOptions o;
        o.threads = threads;
        o.simulate_top = 20;
        Planner p(s, o, toy);
        return p.finish(p.screen({0, 1}));
    };
    auto one = run(1), two = run(2), three = run(3);
    REQUIRE(one.size() == 20);
    for (std::size_t i = 0; i < one.size(); ++i) {
        CHECK(layout_label(one[i].layout) == layout_label(two[i].layout));
        CHECK(layout_label(one[i].layout) == layout_label(three[i].layout));
    }
    PlanOptions o;
    o.simulate_top = 20;
    Planner p(s, o, toy);
    auto a = p.screen({0, 2}), b = p.screen({1, 2});
    a.insert(a.end(), b.begin(), b.end());
    auto sharded = p.finish(a);
    for (std::size_t i = 0; i < one.size(); ++i) CHECK(layout_label(one[i].layout) == layout_label(sharded[i].layout));
}

TEST_CASE("the toy model's known optimum wins and the explanation names the bubble") {
    // With the toy costs the best fitting layout has tp*pp = 8 at the smallest tp (tp 1, pp 8),
    // the most interleaving and microbatches, no recompute and ZeRO 0.
    Scenario s = preset_scenario("llama3-70b-h100");
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.simulate_top = 10;
    Planner p(s, o, toy);
    auto plans = p.finish(p.screen({0, 1}));
    REQUIRE(!plans.empty());
    const Layout& w = plans.front().layout;
    CHECK(w.recompute == Recompute::None);
    CHECK(w.zero_stage == 0);
    CHECK(w.microbatch == 1);
    CHECK(w.tp * w.pp >= 8);
    auto lines = explain_winner(plans);
    REQUIRE(!lines.empty());
    CHECK(lines.back().find("beats #") != std::string::npos);
}

TEST_CASE("GPU-count sweep: every variant is searched") {
    Scenario s = preset_scenario("llama3-8b-h100");
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.gpu_counts = {32, 64, 128};
    o.objective = Objective::TokensPerSecond;
    Planner p(s, o, toy);
    CHECK(p.variants().size() == 3);
    auto plans = p.finish(p.screen({0, 1}));
    REQUIRE(!plans.empty());
    CHECK(p.variants()[plans.front().variant].scenario.cluster.gpus == 128);
}

TEST_CASE("GPU-count sweep: every GPU count's best is simulated and is what planning that count alone finds") {
    Scenario s = preset_scenario("llama3-8b-h100");
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.gpu_counts = {32, 64, 128};
    o.simulate_top = 1;  // the overall best alone would leave two GPU counts unanswered
    o.objective = Objective::Mfu;
    const Planner sweep(s, o, toy);
    const std::vector<Plan> plans = sweep.finish(sweep.screen({0, 1}));
    const auto best = sweep.best_per_variant(plans);
    REQUIRE(best.size() == 3);
    // Two shards merge to the same set as one process.
    auto merged = sweep.screen({0, 2});
    const auto other = sweep.screen({1, 2});
    merged.insert(merged.end(), other.begin(), other.end());
    const std::vector<Plan> sharded = sweep.finish(merged);
    REQUIRE(sharded.size() == plans.size());
    for (std::size_t i = 0; i < plans.size(); ++i) CHECK(layout_label(sharded[i].layout) == layout_label(plans[i].layout));
    for (std::size_t v = 0; v < 3; ++v) {
        CAPTURE(o.gpu_counts[v]);
        REQUIRE(best[v] != nullptr);
        Scenario alone_scenario = s;
        alone_scenario.cluster.gpus = o.gpu_counts[v];
        PlanOptions alone_options;
        alone_options.objective = Objective::Mfu;
        const Planner alone(alone_scenario, alone_options, toy);
        const std::vector<Plan> alone_plans = alone.finish(alone.screen({0, 1}));
        REQUIRE(!alone_plans.empty());
        CHECK(layout_label(best[v]->layout) == layout_label(alone_plans.front().layout));
        CHECK(best[v]->simulated.mfu == doctest::Approx(alone_plans.front().simulated.mfu));
    }
}

TEST_CASE("a full search of a MoE scenario with Sextant's own cost models ranks fitting layouts") {
    // Expert, context and data parallelism together: every EP group and expert-replica group is
    // routed over the cluster graph (this once crashed on CP x EP layouts).
    Scenario s = preset_scenario("mixtral-8x7b-h100");
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.simulate_top = 3;
    o.threads = 2;
    Planner p(s, o, make_step_evaluator);
    const auto plans = p.finish(p.screen({0, 1}));
    REQUIRE(plans.size() == 3);
    for (const auto& plan : plans) {
        CHECK(plan.simulated.fits);
        CHECK_NOTHROW(validate_layout(s, plan.layout));
        CHECK(plan.simulated.step_time_s > 0);
    }
    CHECK(plans[0].simulated.tokens_per_s >= plans[1].simulated.tokens_per_s);
}

TEST_CASE("on one GPU, Llama 3 8B fits only with the optimizer offloaded, and the planner finds that") {
    json doc = {{"model", "llama3-8b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 1}}},
                {"training", {{"seq_len", 4096}, {"global_batch", 16}, {"precision", "bf16"}, {"framework", "torchtitan-2024"}}}};
    Scenario s = parse_scenario(doc, data_dir());
    PlanOptions o;
    o.simulate_top = 10;
    Planner with_offload(s, o, make_step_evaluator);
    const auto plans = with_offload.finish(with_offload.screen({0, 1}));
    REQUIRE(!plans.empty());
    CHECK(plans.front().layout.optimizer_offload);
    CHECK(plans.front().simulated.fits);
    // 8e9 parameters x (2 B weights + 4 B gradients + 12 B Adam state) = 144 GB: without offload
    // nothing fits on 80 GB, whatever else the planner does.
    s.training.framework = "megatron-core-2024";
    Planner without(s, o, make_step_evaluator);
    CHECK(without.candidate_count() > 0);
    CHECK(without.fitting_objectives().empty());
    CHECK_FALSE(with_offload.fitting_objectives().empty());
}

TEST_CASE("exports carry an offloaded optimizer in each framework's words") {
    Scenario s = preset_scenario("llama3-8b-h100");
    Layout l = resolve_layout(s, s.layout);
    l.zero_stage = 2;
    l.optimizer_offload = true;
    CHECK(emit_plan(EmitFormat::Megatron, s, l).text.find("--optimizer-cpu-offload") != std::string::npos);
    CHECK(emit_plan(EmitFormat::Torchtitan, s, l).settings["training"]["enable_cpu_offload"] == true);
    CHECK(emit_plan(EmitFormat::TorchtitanToml, s, l).text.find("enable_cpu_offload = true") != std::string::npos);
    const json cfg = json::parse(emit_plan(EmitFormat::DeepSpeed, s, l).text);
    CHECK(cfg["zero_optimization"]["offload_optimizer"]["device"] == "cpu");
}

TEST_CASE("without data-parallel replicas, ZeRO 0 (and the lowest sharded stage, for offload) stand for all stages") {
    Scenario s = preset_scenario("llama3-8b-h100");
    LayoutSpec fixed;
    fixed.tp = 8;
    fixed.pp = s.cluster.gpus / 8;  // dp = cp = 1
    SearchOptions o;
    o.framework = load_runtime_profile("torchtitan-2024", "").features;  // ZeRO 0, 2, 3
    std::set<int> stages;
    for (const auto& c : enumerate_candidates(s, fixed, o))
        if (c.cp == 1) stages.insert(c.zero_stage);
    CHECK(stages == std::set<int>{0, 2});
    o.framework = load_runtime_profile("megatron-core-2024", "").features;  // ZeRO 0, 1; no offload
    stages.clear();
    for (const auto& c : enumerate_candidates(s, fixed, o))
        if (c.cp == 1) stages.insert(c.zero_stage);
    CHECK(stages == std::set<int>{0});
}

TEST_CASE("a fixed pp that a searched tp x cp leaves no room for is skipped, not divided by zero") {
    Scenario s = preset_scenario("llama3-8b-h100");  // 64 GPUs
    LayoutSpec fixed;
    fixed.tp = 8;
    fixed.pp = 8;
    const auto candidates = enumerate_candidates(s, fixed, {});
    REQUIRE(!candidates.empty());
    for (const auto& c : candidates) CHECK(c.tp * c.pp * c.cp <= 64);
}

namespace {
// Per-GPU throughput of one Megatron-LM 2021 layout on 64 A100s (Narayanan et al. Sec. 5.4:
// microbatch 1, activation recomputation), as the planner's own evaluator simulates it.
double narayanan_sweep_tokens(const json& model, std::int64_t batch, std::int64_t tp, std::int64_t pp) {
    const json doc = {{"model", model},
                      {"cluster", {{"preset", "dgx-a100-superpod"}, {"gpus", 64}}},
                      {"seq_len", 2048},
                      {"global_batch", batch},
                      {"precision", "fp16"},
                      {"framework", "megatron-lm-2021"},
                      {"layout", {{"tp", tp}, {"pp", pp}, {"dp", 64 / (tp * pp)}, {"vp", 1}, {"microbatch", 1}, {"recompute", "full"}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const PlanScore score = make_step_evaluator(s)->simulate(resolve_layout(s, s.layout));
    REQUIRE(score.fits);
    return score.tokens_per_s;
}
}  // namespace

TEST_CASE("the cost model orders Narayanan et al.'s measured sweeps of TP, PP and DP (Figs. 13-15) as the paper does") {
    // These sweeps are why the planner prefers pipeline and data parallelism to wide TP for the
    // mid-size models of Table 1. Fig. 14 (5.9B, PP x DP) and Fig. 15 (TP x DP): throughput falls
    // at every step up in PP or TP, for batch 32, 128 and 512; at batch 512, PP 2 x DP 32 (~148
    // TFLOP/s) beats TP 2 x DP 32 (~128). Fig. 13 (162B, PP x TP): (8, 8) is the best of the five
    // at batch 32, and both extremes, (2, 32) and (32, 2), lose to it at batch 32 and 128.
    const json gpt_5_9b = {{"name", "gpt-5.9b"}, {"arch", "gpt"}, {"layers", 32}, {"hidden", 3840}, {"ffn_hidden", 15360},
                           {"heads", 32}, {"kv_heads", 32}, {"vocab", 51200}};
    const json gpt_162b = {{"name", "gpt-162b"}, {"arch", "gpt"}, {"layers", 32}, {"hidden", 20480}, {"ffn_hidden", 81920},
                           {"heads", 128}, {"kv_heads", 128}, {"vocab", 51200}};
    const std::int64_t widths[] = {2, 4, 8, 16, 32};
    for (std::int64_t batch : {32, 128, 512}) {
        CAPTURE(batch);
        for (std::size_t i = 1; i < std::size(widths); ++i) {
            CAPTURE(widths[i]);
            CHECK(narayanan_sweep_tokens(gpt_5_9b, batch, 1, widths[i]) < narayanan_sweep_tokens(gpt_5_9b, batch, 1, widths[i - 1]));
            CHECK(narayanan_sweep_tokens(gpt_5_9b, batch, widths[i], 1) < narayanan_sweep_tokens(gpt_5_9b, batch, widths[i - 1], 1));
        }
    }
    CHECK(narayanan_sweep_tokens(gpt_5_9b, 512, 1, 2) > narayanan_sweep_tokens(gpt_5_9b, 512, 2, 1));
    const auto fig13 = [&](std::int64_t batch, std::int64_t pp) { return narayanan_sweep_tokens(gpt_162b, batch, 64 / pp, pp); };
    for (std::int64_t pp : {2, 4, 16, 32}) {
        CAPTURE(pp);
        CHECK(fig13(32, pp) < fig13(32, 8));
    }
    for (std::int64_t batch : {32, 128}) {
        CHECK(fig13(batch, 2) < fig13(batch, 8));
        CHECK(fig13(batch, 32) < fig13(batch, 8));
    }
}

TEST_CASE("a scenario without a layout plans even when the batch is smaller than the GPU count") {
    // Issue 15: Llama 3 70B on 1,024 H100s, batch 512, no layout, once failed at load with
    // "/global_batch = 512: must be a multiple of dp x microbatch (1024 x 1)": the default dp
    // (all GPUs) was checked as if it were fixed. dp is open, so the rule constrains the search.
    json doc = {{"model", "llama3-70b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 1024}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 512}, {"precision", "bf16"}, {"framework", "megatron-core-2024"}}}};
    const Scenario s = parse_scenario(doc, data_dir());
    const auto candidates = enumerate_candidates(s, s.layout, {});
    REQUIRE(!candidates.empty());
    for (std::size_t i = 0; i < candidates.size(); i += 53) {
        const Layout l = to_layout(s, s.layout, candidates[i]);
        CHECK(512 % (l.dp * l.microbatch) == 0);
        CHECK_NOTHROW(validate_layout(s, l));
    }
    PlanOptions o;
    o.simulate_top = 5;
    Planner p(s, o, toy);
    CHECK_FALSE(p.finish(p.screen({0, 1})).empty());
    // simulate needs a concrete layout: the defaults do not run, and the error says which knobs
    // were open and how to get one.
    const auto defaults = resolve_error(s);
    REQUIRE_MESSAGE(defaults, "the default layout (dp 1024) cannot run a batch of 512");
    CHECK(defaults->path() == "/training/global_batch");
    CHECK(std::string(defaults->what()).find("leaves tp, pp, dp, cp, microbatch, zero_stage open") != std::string::npos);
    CHECK(std::string(defaults->what()).find("sextant plan") != std::string::npos);
    // A gradient accumulation fixes the microbatch once dp is known: it is not an open knob, and
    // the message names only the defaults that were taken (dp 1024 leaves half a sequence a
    // replica: 512 / (1024 x 1)).
    json with_accumulation = doc;
    with_accumulation["layout"] = {{"grad_accumulation", 1}};
    const auto accumulation = resolve_error(parse_scenario(with_accumulation, data_dir()));
    REQUIRE_MESSAGE(accumulation, "512 sequences cannot give each of 1024 replicas one accumulation step");
    CHECK(accumulation->path() == "/layout/grad_accumulation");
    const std::string what = accumulation->what();
    CHECK(what.find("leaves tp, pp, dp, cp, zero_stage open and their defaults (tp 1, pp 1, dp the rest of the GPUs, cp 1, "
                    "zero_stage 0, megatron-core-2024's)") != std::string::npos);
    CHECK(what.find("microbatch open") == std::string::npos);
    CHECK(what.find("microbatch 1") == std::string::npos);
}

TEST_CASE("an open ZeRO stage is the framework's, and the message says whose default broke a rule") {
    // HSDP groups of 4 of dp 8 shard nothing under Megatron-Core's 0, and run under NeMo's
    // distributed optimizer.
    json hsdp = {{"model", "llama3-8b"},
                 {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
                 {"training", {{"seq_len", 4096}, {"global_batch", 8}, {"framework", "megatron-core-2024"}}},
                 {"layout", {{"tp", 1}, {"pp", 1}, {"cp", 1}, {"dp", 8}, {"microbatch", 1}, {"shard_group", 4}}}};
    const auto megatron = resolve_error(parse_scenario(hsdp, data_dir()));
    REQUIRE_MESSAGE(megatron, "ZeRO stage 0 shards nothing");
    CHECK(megatron->path() == "/layout/shard_group");
    CHECK(std::string(megatron->what()).find("leaves zero_stage open and its default (zero_stage 0, megatron-core-2024's) does not run") !=
          std::string::npos);
    hsdp["training"]["framework"] = "nemo-2025";
    const Scenario nemo = parse_scenario(hsdp, data_dir());
    CHECK(resolve_layout(nemo, nemo.layout).zero_stage == 1);
}

TEST_CASE("every preset scenario with its layout removed has candidates that pass every rule") {
    for (const auto& name : preset_names("scenarios")) {
        CAPTURE(name);
        json doc = load_json_file(data_dir() / "scenarios" / (name + ".json"), "");
        doc.erase("layout");
        const Scenario s = parse_scenario(doc, data_dir());
        SearchOptions o;
        o.framework = load_runtime_profile(s.training.framework, "").features;
        const auto candidates = enumerate_candidates(s, s.layout, o);
        REQUIRE(!candidates.empty());
        for (std::size_t i = 0; i < candidates.size(); i += 997) CHECK_NOTHROW(validate_layout(s, to_layout(s, s.layout, candidates[i])));
    }
}

TEST_CASE("a scenario no layout can satisfy names the rule and the knob") {
    // tp 8 and cp 1 fixed, pp open: pp divides 128 and at most 80 layers, so dp is at least 2.
    json doc = {{"model", "llama3-70b"},
                {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 1024}}},
                {"training", {{"seq_len", 8192}, {"global_batch", 3}, {"precision", "bf16"}}},
                {"layout", {{"tp", 8}, {"cp", 1}}}};
    Scenario s = parse_scenario(doc, data_dir());  // nothing fixed breaks a rule
    auto e = error_of([&] { Planner p(s, {}, toy); });
    REQUIRE_MESSAGE(e, "3 sequences cannot be spread over a data-parallel degree of at least 2");
    CHECK(e->path() == "/training/global_batch");
    CHECK(std::string(e->what()).find("must be a multiple of dp x microbatch for some layout") != std::string::npos);
    // A fixed knob that no choice of the open ones can serve: ep 3 does not divide 8 experts.
    doc = {{"model", "mixtral-8x7b"},
           {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 64}}},
           {"training", {{"seq_len", 4096}, {"global_batch", 64}}},
           {"layout", {{"ep", 3}}}};
    e = error_of([&] { parse_scenario(doc, data_dir()); });
    REQUIRE_MESSAGE(e, "ep 3 does not divide 8 experts");
    CHECK(e->path() == "/layout/ep");
    // tp 8 x pp 4 x cp 1 on 64 GPUs fix dp at 2, which no microbatch can make divide a batch of 5: a
    // rule of fixed knobs only, so the scenario's error.
    doc = {{"model", "llama3-70b"},
           {"cluster", {{"preset", "dgx-h100-superpod"}, {"gpus", 64}}},
           {"training", {{"seq_len", 8192}, {"global_batch", 5}}},
           {"layout", {{"tp", 8}, {"pp", 4}, {"cp", 1}}}};
    e = error_of([&] { parse_scenario(doc, data_dir()); });
    REQUIRE_MESSAGE(e, "dp 2 is fixed by tp 8 x pp 4 on 64 GPUs and does not divide 5");
    CHECK(e->path() == "/training/global_batch");
    CHECK(std::string(e->what()).find("2 x any microbatch") != std::string::npos);
    // dp open, a gradient accumulation of 4 with a microbatch of 3: 64 sequences would need dp
    // x 12 to equal 64, which no dp does. The rule that fails is the accumulation's against the
    // microbatch, and the message says so, not that some vp, microbatch or ZeRO setting is missing.
    doc = {{"model", "llama3-8b"},
           {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 8}, {"nic_gbps_per_gpu", 400}}},
           {"training", {{"seq_len", 4096}, {"global_batch", 64}}},
           {"layout", {{"grad_accumulation", 4}, {"microbatch", 3}}}};
    s = parse_scenario(doc, data_dir());  // each of the two is valid alone at some dp
    e = error_of([&] { Planner p(s, {}, toy); });
    REQUIRE_MESSAGE(e, "no dp makes 64 = dp x 3 x 4");
    CHECK(e->path() == "/layout/grad_accumulation");
    CHECK(std::string(e->what()).find("must equal global_batch / (dp x microbatch) = 64 / (") != std::string::npos);
    CHECK(std::string(e->what()).find("x 3)") != std::string::npos);
}

TEST_CASE("layouts that leave less than the memory margin free are not offered") {
    // The toy's peak is 640 GB / (tp x pp) of 80 GB (half with recompute): tp x pp = 8 without
    // recompute fills HBM exactly, which fits but leaves no margin.
    Scenario s = preset_scenario("llama3-70b-h100");
    s.layout = LayoutSpec{};
    PlanOptions o;
    o.simulate_top = 200;
    o.memory_margin = 0;
    Planner all(s, o, toy);
    const auto every = all.finish(all.screen({0, 1}));
    const auto full = std::count_if(every.begin(), every.end(), [](const Plan& p) {
        return p.simulated.peak_memory_bytes > 0.9 * p.simulated.capacity_bytes;
    });
    CHECK(full > 0);
    o.memory_margin = 0.1;
    Planner safe(s, o, toy);
    const auto offered = safe.finish(safe.screen({0, 1}));
    REQUIRE(!offered.empty());
    for (const Plan& p : offered) CHECK(p.simulated.peak_memory_bytes <= 0.9 * p.simulated.capacity_bytes);
    CHECK(safe.fitting_objectives().size() < all.fitting_objectives().size());
}

TEST_CASE("the planner searches the pipeline schedules the framework ships, and exports name them where it has them") {
    Scenario s = preset_scenario("llama3-70b-h100");
    LayoutSpec fixed;
    fixed.tp = 8;
    fixed.pp = 4;
    const auto searched = [&](const SearchOptions& o) {
        std::set<Schedule> out;
        for (const auto& c : enumerate_candidates(s, fixed, o)) {
            out.insert(c.schedule);
            if (c.schedule == Schedule::ZeroBubbleV || c.schedule == Schedule::DualPipeV) CHECK(c.vp == 2);
            if (c.schedule == Schedule::InterleavedZeroBubble) CHECK(c.vp >= 2);
            if (c.schedule == Schedule::DualPipe || c.schedule == Schedule::ZeroBubbleH1) CHECK(c.vp == 1);
        }
        return out;
    };
    SearchOptions o;
    o.framework = load_runtime_profile("torchtitan-2024", "").features;
    CHECK(searched(o) == std::set<Schedule>{Schedule::OneFOneB, Schedule::Interleaved, Schedule::InterleavedZeroBubble});
    o.framework = load_runtime_profile("torchtitan-2025", "").features;
    CHECK(searched(o) == std::set<Schedule>{Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZeroBubbleV, Schedule::InterleavedZeroBubble,
                                            Schedule::DualPipeV});
    // Any framework: every schedule but GPipe (1F1B's time, all microbatches held).
    CHECK(searched(SearchOptions{}) == std::set<Schedule>{Schedule::OneFOneB, Schedule::Interleaved, Schedule::ZeroBubbleH1, Schedule::ZeroBubbleV,
                                                          Schedule::DualPipe, Schedule::InterleavedZeroBubble, Schedule::DualPipeV});
    o.search_schedule = false;  // validate: a run that names none ran the framework's default
    CHECK(searched(o) == std::set<Schedule>{Schedule::OneFOneB, Schedule::Interleaved});

    // Each torchtitan export names PyTorch's class (get_schedule_class's names).
    for (const auto& [schedule, vp, name] : {std::tuple{Schedule::InterleavedZeroBubble, std::int16_t{2}, "InterleavedZeroBubble"},
                                             std::tuple{Schedule::DualPipeV, std::int16_t{2}, "DualPipeV"}}) {
        Candidate k;
        k.tp = 8;
        k.pp = 4;
        k.vp = vp;
        k.schedule = schedule;
        const Layout layout = to_layout(s, fixed, k);
        CHECK_NOTHROW(validate_layout(s, layout));
        CHECK(emit_plan(EmitFormat::Torchtitan, s, layout).text.find(name) != std::string::npos);
    }

    Candidate c;
    c.tp = 8;
    c.pp = 4;
    c.vp = 2;
    c.schedule = Schedule::ZeroBubbleV;
    const Layout v = to_layout(s, fixed, c);
    CHECK_NOTHROW(validate_layout(s, v));
    CHECK(emit_plan(EmitFormat::Torchtitan, s, v).text.find("ZBVZeroBubble") != std::string::npos);
    const Emitted m = emit_plan(EmitFormat::Megatron, s, v);
    CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) { return n.find("Megatron-Core ships no zb-v") != std::string::npos; }));
    c.vp = 1;
    c.schedule = Schedule::DualPipe;
    const Emitted t = emit_plan(EmitFormat::Torchtitan, s, to_layout(s, fixed, c));
    CHECK(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) { return n.find("torchtitan ships no dualpipe") != std::string::npos; }));
}
