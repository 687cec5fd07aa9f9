// Activation offload as Megatron-Core runs it: --cpu-offloading of whole layers needs pp 1, no
// activation recomputation and fewer offloaded layers than the model has
// (TransformerConfig.__post_init__, core_r0.10.0 to d98e8a64dd); offload by module
// (--fine-grained-activation-offloading, core_v0.16.0, the MoE model zoo's dev builds) has none
// of these limits. Megatron-Bridge's recipes use the first (scripts/performance/utils/
// overrides.py: cpu_offloading, cpu_offloading_num_layers, v0.3.0), the model zoo the second.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "cli_run.hpp"
#include "core/error.hpp"
#include "planner/search_space.hpp"
#include "sim/step_context.hpp"
#include "spec/presets.hpp"
#include "spec/runtime_profile.hpp"

using namespace sextant;
using nlohmann::json;

namespace {
// Llama 3 70B on 64 GB200s (NVLink-C2C host link), FP8, under `framework`, with `layout`.
json llama70b_gb200(const std::string& framework, const json& layout) {
    return {{"name", "offload"},
            {"model", "llama3-70b"},
            {"cluster", {{"preset", "gb200-nvl72"}, {"gpus", 64}}},
            {"training", {{"seq_len", 8192}, {"global_batch", 128}, {"precision", "fp8"}, {"framework", framework}}},
            {"layout", layout}};
}

// The InputError the runtime's layout checks raise, or none.
std::optional<InputError> runtime_error(const json& doc) {
    const Scenario s = parse_scenario(doc, data_dir());
    try {
        check_layout_runtime(s, load_runtime_profile(s.training.framework, "/framework"));
    } catch (const InputError& e) {
        return e;
    }
    return std::nullopt;
}
}  // namespace

TEST_CASE("offloading whole layers needs pp 1, no recompute and fewer layers than the model has, offload by module does not") {
    const json pp2 = {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"}, {"activation_offload_layers", 10}};
    const json selective = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "selective"}, {"activation_offload_layers", 10}};
    const json every_layer = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "none"}, {"activation_offload_layers", 80}};
    const json allowed = {{"tp", 1}, {"pp", 1}, {"microbatch", 1}, {"zero_stage", 3}, {"recompute", "none"}, {"activation_offload_layers", 40}};
    for (const char* whole_layers : {"nemo-2025", "nemo-2026", "megatron-core-2024"}) {
        CAPTURE(whole_layers);
        const auto a = runtime_error(llama70b_gb200(whole_layers, pp2));
        REQUIRE(a);
        CHECK(a->path() == "/layout/activation_offload_layers");
        CHECK(std::string(a->what()).find("no pipeline-parallel support") != std::string::npos);
        const auto b = runtime_error(llama70b_gb200(whole_layers, selective));
        REQUIRE(b);
        CHECK(std::string(b->what()).find("does not work with activation recomputation") != std::string::npos);
        const auto c = runtime_error(llama70b_gb200(whole_layers, every_layer));
        REQUIRE(c);
        CHECK(std::string(c->what()).find("below the model's layers (80)") != std::string::npos);
        CHECK_FALSE(runtime_error(llama70b_gb200(whole_layers, allowed)));
    }
    for (const char* by_module : {"megatron-core-2025", "megatron-core-2026"}) {
        CAPTURE(by_module);
        CHECK_FALSE(runtime_error(llama70b_gb200(by_module, pp2)));
        CHECK_FALSE(runtime_error(llama70b_gb200(by_module, selective)));
    }
}

TEST_CASE("the planner offers whole-layer offload only at pp 1 without recompute, module offload beside both") {
    for (const char* framework : {"nemo-2025", "megatron-core-2025"}) {
        CAPTURE(framework);
        const Scenario s = parse_scenario(llama70b_gb200(framework, json::object()), data_dir());
        SearchOptions o;
        o.framework = load_runtime_profile(framework, "").features;
        std::size_t offloaded = 0, beside_pp_or_recompute = 0;
        for (const Candidate& c : enumerate_candidates(s, LayoutSpec{}, o)) {
            if (c.offload_layers == 0) continue;
            ++offloaded;
            beside_pp_or_recompute += c.pp > 1 || c.recompute != Recompute::None ? 1 : 0;
        }
        CHECK(offloaded > 0);
        if (o.framework.activation_offload_modules) CHECK(beside_pp_or_recompute > 0);
        else CHECK(beside_pp_or_recompute == 0);
    }
}

TEST_CASE("simulate refuses whole-layer offload beside pipeline parallelism with exit 2, naming the key") {
    const std::string path = "/tmp/sextant-offload-" + std::to_string(::getpid()) + ".json";
    std::ofstream(path) << llama70b_gb200("nemo-2025", {{"tp", 1}, {"pp", 2}, {"microbatch", 1}, {"recompute", "none"}, {"activation_offload_layers", 10}}).dump();
    const test::Output o = test::run_sextant("simulate " + path);
    std::remove(path.c_str());
    CHECK(o.code == 2);
    CHECK(o.out.find("/layout/activation_offload_layers") != std::string::npos);
    CHECK(o.out.find("no pipeline-parallel support") != std::string::npos);
}
