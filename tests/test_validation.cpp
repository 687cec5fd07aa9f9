// One test per validation rule: every bad scenario fails with an InputError naming the JSON path,
// the value and the rule, before anything runs; the CLI turns it into exit code 2.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "model/params.hpp"
#include "spec/hardware_spec.hpp"
#include "spec/presets.hpp"
#include "planner/search_space.hpp"
#include "spec/scenario.hpp"
#include "sim/step_context.hpp"

using namespace sextant;

namespace {
json base() {
    return {{"model", "llama3-70b"},
            {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 64}, {"gpus_per_node", 8}, {"nic_gbps_per_gpu", 400}}},
            {"seq_len", 4096},
            {"global_batch", 64},
            {"layout", {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"cp", 1}}}};
}

// Parses `doc` and returns the error; fails the test when parsing succeeds.
InputError error_of(const json& doc) {
    try {
        parse_scenario(doc, data_dir());
    } catch (const InputError& e) {
        return e;
    }
    FAIL("expected an InputError");
    return InputError("", "", "");
}

void expect_model_error(const json& hf_config, const std::string& path, const std::string& rule_fragment) {
    try {
        parse_hf_config(hf_config, "/model");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(e.path() == path);
        CHECK(std::string(e.what()).find(rule_fragment) != std::string::npos);
    }
}

void expect(const json& doc, const std::string& path, const std::string& rule_fragment) {
    const InputError e = error_of(doc);
    CHECK(e.path() == path);
    CHECK(std::string(e.what()).find(rule_fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("a valid scenario parses and resolves") {
    Scenario s = parse_scenario(base(), data_dir());
    CHECK(resolve_layout(s, s.layout).dp == 4);
}

TEST_CASE("rule: the parallel degrees multiply to the GPU count") {
    json d = base();
    d["layout"]["dp"] = 8;
    expect(d, "/layout", "multiply to /cluster/gpus (64)");
}

TEST_CASE("rule: tp divides the attention heads") {
    json d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1536}, {"heads", 12}, {"vocab", 1000}, {"ffn_hidden", 4096}};
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 8}};
    expect(d, "/layout/tp", "divide the attention heads (12)");
}

TEST_CASE("rule: tp divides the key/value heads, or they divide it where the framework gathers QKV") {
    json d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1536}, {"heads", 24}, {"kv_heads", 6}, {"vocab", 1000}, {"ffn_hidden", 4096}};
    d["layout"] = {{"tp", 4}, {"pp", 1}, {"dp", 16}};
    expect(d, "/layout/tp", "key/value heads (6) or be a multiple of them");
    // Llama 3 70B's 8 KV heads under tp 16: Megatron-Core 0.16+ (nemo-2026) gathers each rank's
    // QKV output and slices it; an older generation cannot run it.
    d = base();
    d["cluster"]["gpus"] = 128;
    d["layout"] = {{"tp", 16}, {"pp", 1}, {"dp", 8}};
    const Scenario s = parse_scenario(d, data_dir());
    CHECK_THROWS_WITH_AS(StepContext{s}, doctest::Contains("key/value heads (8) under megatron-core-2024"), InputError);
    d["framework"] = "nemo-2026";
    CHECK_NOTHROW(StepContext{parse_scenario(d, data_dir())});
}

TEST_CASE("rule: tp divides ffn_hidden") {
    json d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 8}, {"vocab", 1000}, {"ffn_hidden", 3004}};
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 8}};
    expect(d, "/layout/tp", "divide ffn_hidden (3004)");
}

TEST_CASE("rule: an impossible layer split is an error, uneven splits follow the framework") {
    json d = base();
    d["model"] = {{"layers", 5}, {"hidden", 1024}, {"heads", 8}, {"vocab", 1000}, {"ffn_hidden", 4096}};
    d["cluster"]["gpus"] = 32;
    d["layout"] = {{"tp", 8}, {"pp", 4}, {"dp", 1}, {"cp", 1}};
    d["global_batch"] = 8;
    // No stage split is given, so the split is open: the scenario loads, and the planner (which
    // may trim the first and last stages) and the framework default both find none.
    const Scenario s = parse_scenario(d, data_dir());
    try {
        resolve_layout(s, s.layout);
        FAIL("the default split of 5 layers over 4 stages does not exist");
    } catch (const InputError& e) {
        CHECK(e.path() == "/layout/pp");
        CHECK(std::string(e.what()).find("cannot split 5 layers") != std::string::npos);
    }
    SearchOptions o;
    std::optional<InputError> why;
    CHECK(enumerate_candidates(s, s.layout, o, &why).empty());
    REQUIRE(why);
    CHECK(why->path() == "/layout/pp");
    CHECK(std::string(why->what()).find("cannot split 5 layers") != std::string::npos);
    d["layout"]["pp"] = 8;  // fewer layers than stages: no split at all, the scenario's error
    d["layout"]["tp"] = 4;
    expect(d, "/layout/pp", "cannot split 5 layers");
    // Llama 3 405B: 126 layers on 16 stages = 7, 8 x 14, 7.
    CHECK(default_stage_split(126, 16) == std::vector<std::int64_t>{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7});
}

TEST_CASE("rule: an explicit stage split has one entry per stage, sums to the layers, a layer per chunk") {
    json d = base();
    d["layout"]["stage_layers"] = {40, 30};
    expect(d, "/layout/stage_layers", "add up to the model's layers (80)");
    d["layout"]["stage_layers"] = {80};
    expect(d, "/layout/stage_layers", "one entry per pipeline stage");
    d["layout"]["stage_layers"] = {41, 39};
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    // With interleaving, the last stage's last chunk may hold the loss alone (Megatron-Core's
    // pipeline layouts, "Et|(tt|)*30L"): vp - 1 layers suffice there, not fewer.
    d["layout"] = {{"tp", 8}, {"pp", 4}, {"dp", 2}, {"vp", 3}};
    d["global_batch"] = 64;
    d["layout"]["stage_layers"] = {3, 37, 38, 2};
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d["layout"]["stage_layers"] = {3, 38, 38, 1};
    expect(d, "/layout/stage_layers/3", "at least 2 layers");
    d["layout"]["stage_layers"] = {4, 2, 38, 36};
    expect(d, "/layout/stage_layers/1", "at least 3 layers");
}

TEST_CASE("a stage's chunks are even, with the shortage on the chunk holding the embedding or the loss") {
    CHECK(chunk_layers(8, 4, false, false) == std::vector<std::int64_t>{2, 2, 2, 2});
    CHECK(chunk_layers(7, 4, true, false) == std::vector<std::int64_t>{1, 2, 2, 2});   // "Et|tt|tt|tt"
    CHECK(chunk_layers(6, 4, false, true) == std::vector<std::int64_t>{2, 2, 2, 0});   // "tt|tt|tt|L"
    CHECK(chunk_layers(7, 4, false, false) == std::vector<std::int64_t>{2, 2, 2, 1});  // a middle stage: remainder first
    CHECK(chunk_layers(2, 3, true, false) == std::vector<std::int64_t>{0, 1, 1});      // PP32 x VP3, 94 layers + 2 slots
}

TEST_CASE("rule: interleaving needs pp >= 2 and the interleaved schedule") {
    json d = base();
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 8}, {"vp", 2}};
    expect(d, "/layout/vp", "needs pp >= 2");
    d = base();
    d["layout"]["schedule"] = "interleaved";
    CHECK_NOTHROW(parse_scenario(d, data_dir()));  // vp open: the planner searches vp >= 2
    d["layout"]["vp"] = 1;
    expect(d, "/layout/schedule", "needs vp >= 2");
    d = base();
    d["layout"]["vp"] = 2;
    d["layout"]["schedule"] = "1f1b";
    expect(d, "/layout/vp", "vp > 1 needs a schedule with chunks");
}

TEST_CASE("rule: each schedule's own shape (src/schedule/): ZB-V at vp 2, DualPipe on an even pp, a tuned warm-up only when interleaved") {
    json d = base();  // pp 2, global batch 64 over dp 4: 16 microbatches
    d["layout"]["schedule"] = "zb-v";
    d["layout"]["vp"] = 3;
    expect(d, "/layout/vp", "exactly 2 chunks per stage");
    d["layout"]["vp"] = 2;
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d["layout"]["schedule"] = "dualpipe-v";  // DualPipeV: the same V
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d["layout"]["vp"] = 4;
    expect(d, "/layout/vp", "exactly 2 chunks per stage");
    d["layout"]["schedule"] = "interleaved-zb";  // interleaved zero bubble: any vp >= 2
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d["layout"]["vp"] = 1;
    expect(d, "/layout/schedule", "needs vp >= 2");
    d = base();
    d["layout"] = {{"tp", 8}, {"pp", 3}, {"dp", 2}, {"schedule", "dualpipe"}};
    d["cluster"]["gpus"] = 48;
    expect(d, "/layout/pp", "pp must be even");
    d = base();
    d["layout"]["schedule"] = "dualpipe";
    d["layout"]["microbatch"] = 1;
    d["global_batch"] = 12;  // 3 microbatches per replica: fewer than 2 pp, and odd
    expect(d, "/global_batch", "at least 2 x pp");
    d = base();
    d["layout"]["schedule"] = "1f1b";
    d["layout"]["pp_warmup"] = 3;
    expect(d, "/layout/pp_warmup", "the interleaved schedule's");
    d = base();
    d["layout"]["schedule"] = "interleaved";
    d["layout"]["vp"] = 2;
    d["layout"]["pp_warmup"] = 2;  // under (vp - 1) pp + pp - 1 = 3
    expect(d, "/layout/pp_warmup", "must lie between");
    d["layout"]["pp_warmup"] = 3;
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d = base();
    d["layout"]["schedule"] = "zb-h2";
    expect(d, "/layout/schedule", "must be one of");
}

TEST_CASE("rule: a framework runs only the schedules it ships (calibration/runtime/*.json features.schedules)") {
    json d = base();
    d["layout"]["schedule"] = "zb-h1";
    d["framework"] = "megatron-core-2024";
    const Scenario s = parse_scenario(d, data_dir());
    try {
        const StepContext ctx(s);
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(e.path() == "/layout/schedule");
        CHECK(std::string(e.what()).find("megatron-core-2024 does not ship this pipeline schedule") != std::string::npos);
    }
    d["framework"] = "megatron-zero-bubble-2024";
    CHECK_NOTHROW(StepContext(parse_scenario(d, data_dir())));
}

TEST_CASE("rule: interleaving runs microbatches in groups of pp") {
    json d = base();
    d["layout"] = {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"vp", 2}, {"microbatch", 1}};
    d["global_batch"] = 12;  // 3 microbatches per DP rank
    expect(d, "/layout/vp", "multiple of pp (2)");
}

TEST_CASE("rule: the global batch is a multiple of dp x microbatch") {
    json d = base();
    d["global_batch"] = 6;
    expect(d, "/global_batch", "multiple of dp x microbatch");
    d = base();
    d.erase("global_batch");
    d["training"] = {{"global_batch", 10}, {"seq_len", 4096}};
    d.erase("seq_len");
    expect(d, "/training/global_batch", "multiple of dp x microbatch");
}

TEST_CASE("rule: a stated gradient accumulation is global_batch / (dp x microbatch), and with dp known fixes the microbatch") {
    json d = base();  // global batch 64 over dp 4: 16 sequences a replica
    d["layout"]["grad_accumulation"] = 4;
    Scenario s = parse_scenario(d, data_dir());
    CHECK(resolve_layout(s, s.layout).microbatch == 4);  // 64 / (4 x 4)
    CHECK(resolve_layout(s, s.layout).microbatches(64) == 4);
    d["layout"]["microbatch"] = 4;  // agrees
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
    d["layout"]["microbatch"] = 2;  // 64 / (4 x 2) = 8 microbatches, not 4: GBS, DP, MBS and GA contradict each other
    expect(d, "/layout/grad_accumulation", "must equal global_batch / (dp x microbatch) = 64 / (4 x 2) = 8");
    d["layout"].erase("microbatch");
    d["layout"]["grad_accumulation"] = 3;  // 16 sequences do not split into 3 microbatches
    expect(d, "/layout/grad_accumulation", "must divide global_batch / dp = 64 / 4 = 16");
    d["layout"]["grad_accumulation"] = 0;
    expect(d, "/layout/grad_accumulation", "positive integer");
    // With dp open the planner keeps the microbatch each dp needs: dp x microbatch x 4 = 64.
    d = base();
    d["layout"] = {{"grad_accumulation", 4}};
    s = parse_scenario(d, data_dir());
    SearchOptions o;
    o.search_rank_order = false;
    std::size_t n = 0;
    for (const Candidate& c : enumerate_candidates(s, s.layout, o)) {
        const std::int64_t dp = 64 / (c.tp * c.pp * c.cp);
        CHECK(dp * c.microbatch * 4 == 64);
        ++n;
    }
    CHECK(n > 0);
    // Where no dp leaves a whole microbatch, the search says why, naming the key.
    d["layout"] = {{"pp", 1}, {"cp", 1}, {"grad_accumulation", 3}};  // tp 1-8: dp 64-8, 1-8 sequences a replica
    s = parse_scenario(d, data_dir());
    std::optional<InputError> why;
    CHECK(enumerate_shapes(s, s.layout, o, &why).empty());
    REQUIRE(why);
    CHECK(why->path() == "/layout/grad_accumulation");
}

TEST_CASE("rule: ep divides the experts, needs a MoE model, and folds into tp x cp x dp with expert_tp") {
    json d = base();
    d["model"] = "mixtral-8x7b";
    d["layout"] = {{"tp", 1}, {"pp", 2}, {"dp", 32}, {"ep", 16}};
    expect(d, "/layout/ep", "divide the experts (8)");
    d["layout"] = {{"tp", 1}, {"pp", 16}, {"dp", 4}, {"cp", 1}, {"ep", 8}};
    expect(d, "/layout/ep", "must divide tp x cp x dp (4)");
    // MoE parallel folding: ep 8 over tp 8 x dp 4 = 32 ranks is valid with expert TP 1 ...
    d["layout"] = {{"tp", 8}, {"pp", 2}, {"dp", 4}, {"cp", 1}, {"ep", 8}};
    const Scenario s = parse_scenario(d, data_dir());
    CHECK(resolve_layout(s, s.layout).etp == 1);
    // ... and not with expert TP 8 (64 ranks), nor with expert TP on a dense model.
    d["layout"]["expert_tp"] = 8;
    expect(d, "/layout/expert_tp", "must divide tp x cp x dp (32)");
    d = base();
    d["layout"]["ep"] = 2;
    expect(d, "/layout/ep", "needs a MoE model");
    d = base();
    d["layout"]["expert_tp"] = 2;
    expect(d, "/layout/expert_tp", "needs a MoE model");
}

TEST_CASE("rule: recompute modules name known modules, need selective recompute and the model parts they name") {
    json d = base();
    d["layout"]["recompute"] = "selective";
    d["layout"]["recompute_modules"] = {"layernorm", "mlp_act"};
    expect(d, "/layout/recompute_modules/1", "did you mean");
    d["layout"]["recompute_modules"] = {"moe"};
    expect(d, "/layout/recompute_modules", "need a MoE model");
    d["layout"]["recompute_modules"] = {"mla_up_proj"};
    expect(d, "/layout/recompute_modules", "multi-head latent attention");
    d["layout"]["recompute"] = "full";
    d["layout"]["recompute_modules"] = {"layernorm"};
    expect(d, "/layout/recompute_modules", "needs recompute \"selective\"");
    d["layout"]["recompute"] = "selective";
    d["layout"]["stage_layers"] = {40, 40};
    d["layout"]["activation_offload_layers"] = 41;
    expect(d, "/layout/activation_offload_layers", "exceeds the layers of pipeline stage 0 (40)");
}

TEST_CASE("rule: cp splits the sequence into 2 x cp chunks") {
    json d = base();
    d["seq_len"] = 4100;
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 2}, {"cp", 4}};
    d["global_batch"] = 64;
    expect(d, "/layout/cp", "2 x cp chunks");
}

TEST_CASE("rule: the GPU type is known, with the closest names suggested") {
    json d = base();
    d["cluster"]["gpu"] = "H100-PCIe-80GB";  // no PCIe preset: its clocks, power and links differ
    expect(d, "/cluster/gpu", "did you mean 'H100-SXM5-80GB'");
}

TEST_CASE("every topology preset is a cluster of a GPU preset, its NIC the GPU platform's, its host link and DRAM stated with a source") {
    const auto presets = preset_names("topologies");
    CHECK(presets.size() >= 6);
    for (const std::string& name : presets) {
        CAPTURE(name);
        const json doc = load_preset("topologies", name, "");
        const ClusterSpec c = parse_cluster(doc, "/cluster", load_gpu);
        CHECK(gpu_preset_name(doc["gpu"].get<std::string>()) == doc["gpu"].get<std::string>());
        if (c.gpu.platform_nic_gbps > 0 && name != "llama3-24k-roce") CHECK(c.fabric.nic_gbps_per_gpu == c.gpu.platform_nic_gbps);
        REQUIRE(doc.contains("host"));
        CHECK(doc["host"].contains("source"));
        CHECK(c.host.link_gbps > 0);
        if (name != "llama3-24k-roce") CHECK(c.host.memory_gib_per_gpu > 0);  // Meta's Grand Teton hosts: not published
    }
}

TEST_CASE("a GPU goes by its preset name or any alias, as nvidia-smi and NVIDIA's tables write them") {
    const auto presets = preset_names("topologies/gpus");
    std::map<std::string, std::string> claimed;  // alias -> preset
    for (const std::string& preset : presets) {
        const json doc = load_preset("topologies/gpus", preset, "");
        CHECK(doc["name"] == preset);
        CHECK(gpu_preset_name(preset) == preset);
        if (!doc.contains("aliases")) continue;
        for (const json& alias : doc["aliases"]) {
            const std::string a = alias.get<std::string>();
            CHECK_MESSAGE(gpu_preset_name(a) == preset, a);
            CHECK_MESSAGE(claimed.emplace(a, preset).second, a);  // no alias names two GPUs
        }
    }
    // nvidia-smi's name, case, spaces and a vendor prefix aside; the scenario is the same one.
    CHECK(gpu_preset_name("NVIDIA H100 80GB HBM3") == "H100-SXM5-80GB");
    CHECK(gpu_preset_name("nvidia b200-sxm-180gb") == "B200");
    CHECK(gpu_preset_name("NVIDIA GB200") == "GB200");
    json d = base();
    d["cluster"]["gpu"] = "NVIDIA H100 80GB HBM3";
    const Scenario s = parse_scenario(d, data_dir());
    CHECK(s.cluster.gpu.name == "H100-SXM5-80GB");
    CHECK(s.cluster.gpu.hbm_gib == parse_scenario(base(), data_dir()).cluster.gpu.hbm_gib);
    // An alias list holds names.
    json gpu = load_preset("topologies/gpus", "B200", "");
    gpu["aliases"] = json::array({"B200-SXM", 7});
    try {
        parse_gpu(gpu, "/gpu");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(e.path() == "/gpu/aliases/1");
    }
}

TEST_CASE("rule: fp8 needs FP8 tensor cores") {
    json d = base();
    d["cluster"]["gpu"] = "A100-SXM4-80GB";
    d["precision"] = "fp8";
    expect(d, "/precision", "no FP8 tensor cores");
    d["cluster"]["gpu"] = "H100-SXM5-80GB";
    d["precision"] = "mxfp8";
    expect(d, "/precision", "no block-scaled (MX/NVFP4) tensor cores");
    d["precision"] = "fp4";
    expect(d, "/precision", "did you mean 'fp8'");
}

TEST_CASE("rule: model presets are known, with suggestions") {
    json d = base();
    d["model"] = "llama3-7b";
    expect(d, "/model", "did you mean 'llama3-70b'");
}

TEST_CASE("rule: the framework generation is known") {
    json d = base();
    d["framework"] = "megatron-core-2052";
    expect(d, "/framework", "unknown framework generation");
}

TEST_CASE("rule: unknown keys fail with the closest valid ones, at any depth") {
    json d = base();
    d["layout"]["tpp"] = 8;
    expect(d, "/layout/tpp", "did you mean 'tp'");
    d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 8}, {"vocab", 1000}, {"ffn_hidden", 4096},
                  {"moe", {{"experts", 8}, {"top_k", 2}, {"expertz", 1}}}};
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 8}};
    expect(d, "/model/moe/expertz", "did you mean 'experts'");
    d = base();
    d["globl_batch"] = 64;
    expect(d, "/globl_batch", "did you mean 'global_batch'");
}

TEST_CASE("rule: sizes are positive integers") {
    json d = base();
    d["seq_len"] = 0;
    expect(d, "/seq_len", "positive integer");
    d = base();
    d["layout"]["tp"] = -2;
    expect(d, "/layout/tp", "positive integer");
    d = base();
    d["cluster"]["gpus"] = 0;
    expect(d, "/cluster/gpus", "positive integer");
}

TEST_CASE("rule: sizes have upper bounds, and absurd ones are errors, not overflows") {
    json d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1e30}, {"heads", 8}, {"vocab", 1000}, {"ffn_hidden", 4096}};
    expect(d, "/model/hidden", "at most 1048576");
    d = base();
    d["global_batch"] = 4611686018427387904LL;
    expect(d, "/global_batch", "at most 1073741824");
    d = base();
    d["layout"]["microbatch"] = 1 << 30;  // dp x microbatch would pass the global batch
    expect(d, "/global_batch", "multiple of dp x microbatch (4 x 1073741824)");
    d = base();
    d["layout"] = {{"tp", 1 << 24}, {"pp", 1 << 24}, {"dp", 1 << 24}, {"cp", 1}};  // 2^72 GPUs, were it multiplied
    expect(d, "/layout", "> /cluster/gpus");
    d["layout"].erase("cp");  // cp open: the fixed degrees must still leave room for it
    expect(d, "/layout", "must divide /cluster/gpus (64)");
    d = base();
    d["layout"] = {{"tp", 1 << 24}, {"pp", 1 << 24}};  // dp left to fill the cluster
    expect(d, "/layout", "must divide /cluster/gpus (64)");
    d = base();
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 8}, {"microbatch", 1}};
    d["global_batch"] = 8 * 65537;
    expect(d, "/global_batch", "65537 microbatches per data-parallel replica");
    d["global_batch"] = 8 * 65536;
    CHECK_NOTHROW(parse_scenario(d, data_dir()));
}

TEST_CASE("rule: values have the declared type and choices") {
    json d = base();
    d["layout"]["tp"] = "8";
    expect(d, "/layout/tp", "must be an integer");
    d = base();
    d["layout"]["recompute"] = "selctive";
    expect(d, "/layout/recompute", "did you mean 'selective'");
    d = base();
    d["layout"]["rank_order"] = "tp-dp-pp";
    expect(d, "/layout/rank_order", "tp, cp, ep, dp and pp once each");
}

TEST_CASE("rule: a key given at the top level and in training must agree") {
    json d = base();
    d["training"] = {{"seq_len", 8192}};
    expect(d, "/training/seq_len", "disagrees with top-level seq_len");
}

TEST_CASE("rule: kv_heads divides heads, top_k does not exceed experts") {
    json d = base();
    d["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 8}, {"kv_heads", 3}, {"vocab", 1000}, {"ffn_hidden", 4096}};
    expect(d, "/model/kv_heads", "divide heads (8)");
    d["model"] = {{"layers", 4}, {"hidden", 1024}, {"heads", 8}, {"vocab", 1000}, {"ffn_hidden", 4096},
                  {"moe", {{"experts", 4}, {"top_k", 6}}}};
    expect(d, "/model/moe/top_k", "must not exceed experts (4)");
    d["model"]["moe"] = {{"experts", 4}, {"top_k", 2}, {"pad_to_capacity", true}};
    expect(d, "/model/moe/pad_to_capacity", "needs capacity_factor > 0");
    d["model"]["moe"] = {{"experts", 4}, {"top_k", 2}, {"capacity_factor", -1}};
    expect(d, "/model/moe/capacity_factor", "must be at least 0");
    d["model"]["moe"] = {{"experts", 4}, {"top_k", 2}, {"capacity_factor", 2.5}};
    expect(d, "/model/moe/capacity_factor", "must not exceed experts / top_k (2)");
    d["model"]["moe"] = {{"experts", 4}, {"top_k", 2}, {"load_imbalance", 3}};
    expect(d, "/model/moe/load_imbalance", "must not exceed experts / top_k (2)");
}

TEST_CASE("rule: files must exist and hold valid JSON") {
    json d = base();
    d["model"] = "no/such/model.json";
    expect(d, "/model", "file not found");
    const auto dir = std::filesystem::temp_directory_path() / "sextant-validation-test";
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "broken.json") << "{\"layers\": 4,";
    d["model"] = (dir / "broken.json").string();
    expect(d, "/model", "not valid JSON");
}

TEST_CASE("Hugging Face config.json: Llama, Mixtral, Qwen2 and DeepSeek-V3 field names") {
    const json llama = {{"model_type", "llama"}, {"hidden_size", 4096}, {"intermediate_size", 14336},
                        {"num_hidden_layers", 32}, {"num_attention_heads", 32}, {"num_key_value_heads", 8},
                        {"vocab_size", 128256}, {"tie_word_embeddings", false}};
    CHECK(count_params(parse_hf_config(llama, "/model")).total() == doctest::Approx(8.03e9).epsilon(0.001));
    json mixtral = llama;
    mixtral["model_type"] = "mixtral";
    mixtral["vocab_size"] = 32000;
    mixtral["num_local_experts"] = 8;
    mixtral["num_experts_per_tok"] = 2;
    ModelSpec mx = parse_hf_config(mixtral, "/model");
    CHECK(count_params(mx).total() == doctest::Approx(46.7e9).epsilon(0.002));
    CHECK(count_params(mx).active(mx) == doctest::Approx(12.9e9).epsilon(0.004));
    // Qwen2-7B: biases on the QKV projection only, tied embeddings off.
    const json qwen = {{"model_type", "qwen2"}, {"hidden_size", 3584}, {"intermediate_size", 18944},
                       {"num_hidden_layers", 28}, {"num_attention_heads", 28}, {"num_key_value_heads", 4},
                       {"vocab_size", 152064}, {"tie_word_embeddings", false}};
    CHECK(count_params(parse_hf_config(qwen, "/model")).total() == doctest::Approx(7.62e9).epsilon(0.002));
    const json deepseek = {{"model_type", "deepseek_v3"}, {"hidden_size", 7168}, {"intermediate_size", 18432},
                           {"moe_intermediate_size", 2048}, {"num_hidden_layers", 61}, {"num_attention_heads", 128},
                           {"num_key_value_heads", 128}, {"vocab_size", 129280}, {"n_routed_experts", 256},
                           {"n_shared_experts", 1}, {"num_experts_per_tok", 8}, {"first_k_dense_replace", 3},
                           {"moe_layer_freq", 1}, {"q_lora_rank", 1536}, {"kv_lora_rank", 512},
                           {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128},
                           {"num_nextn_predict_layers", 1}};
    CHECK(count_params(parse_hf_config(deepseek, "/model")).total() == doctest::Approx(671e9).epsilon(0.002));
    json bad = llama;
    bad["num_attention_heads"] = 0;
    CHECK_THROWS_AS(parse_hf_config(bad, "/model"), InputError);
    bad = llama;
    bad["tie_word_embeddings"] = "no";  // was nlohmann's type_error: an internal error
    expect_model_error(bad, "/model/tie_word_embeddings", "must be true or false");
    bad = llama;
    bad["model_type"] = 5;
    expect_model_error(bad, "/model/model_type", "must be a string");
    for (const json& value : {json(0), json(-8), json(2.5), json(1e30), json("8")}) {
        CAPTURE(value.dump());
        bad = llama;
        bad["num_key_value_heads"] = value;  // 0 used to divide by zero
        try {
            parse_hf_config(bad, "/model");
            FAIL("expected an InputError");
        } catch (const InputError& e) {
            CHECK(e.path() == "/model/num_key_value_heads");
            CHECK(std::string(e.what()).find("must be an integer from 1 to 16777216") != std::string::npos);
        }
    }
}

TEST_CASE("every published run, saved on its own, is a valid scenario") {
    const json runs = load_json_file(std::filesystem::path(SEXTANT_VALIDATION_DIR) / "published-runs.json", "");
    REQUIRE(runs["runs"].size() >= 27);
    for (const auto& run : runs["runs"]) {
        CAPTURE(run["id"].get<std::string>());
        CHECK_NOTHROW(parse_scenario(run, data_dir()));
    }
}

TEST_CASE("the CLI exits 2 with the rule on stderr for bad input, 0 for good") {
    const auto dir = std::filesystem::temp_directory_path() / "sextant-cli-test";
    std::filesystem::create_directories(dir);
    json bad = base();
    bad["layout"]["tpp"] = 3;
    std::ofstream(dir / "bad.json") << bad.dump();
    std::ofstream(dir / "good.json") << base().dump();
    const std::string binary = SEXTANT_BINARY;
    const std::string err = (dir / "stderr.txt").string();
    const int bad_status = std::system((binary + " check " + (dir / "bad.json").string() + " >/dev/null 2>" + err).c_str());
    CHECK(WEXITSTATUS(bad_status) == 2);
    std::ifstream in(err);
    const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(message.find("/layout/tpp: unknown key; did you mean 'tp'") != std::string::npos);
    const int good_status = std::system((binary + " memory " + (dir / "good.json").string() + " >/dev/null 2>&1").c_str());
    CHECK(WEXITSTATUS(good_status) == 0);
    const int usage_status = std::system((binary + " memory --no-such-flag >/dev/null 2>&1").c_str());
    CHECK(WEXITSTATUS(usage_status) == 2);
    const int top_status = std::system((binary + " plan " + (dir / "good.json").string() + " --top 0 >/dev/null 2>" + err).c_str());
    CHECK(WEXITSTATUS(top_status) == 2);
    std::ifstream top_in(err);
    const std::string top_message((std::istreambuf_iterator<char>(top_in)), std::istreambuf_iterator<char>());
    CHECK(top_message.find("--top: \"0\": must be a positive integer") != std::string::npos);
}

TEST_CASE("schema states the range every numeric key is checked against") {
    const auto range_of = [](std::span<const FieldDef> fields, std::string_view key) {
        for (const auto& f : fields)
            if (f.name == key) return range_text(f);
        FAIL("no such key");
        return std::string();
    };
    CHECK(range_of(layout_fields(), "tp") == "1..16777216");
    CHECK(range_of(layout_fields(), "zero_stage") == "0..3");
    CHECK(range_of(layout_fields(), "recompute").empty());
    CHECK(range_of(training_fields(), "train_tokens") == "0..");
    json d = base();
    d["layout"]["zero_stage"] = 4;
    expect(d, "/layout/zero_stage", "at most 3");
}
