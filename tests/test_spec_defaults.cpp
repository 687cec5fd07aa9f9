// One statement of each default: every table entry with a typed default fills its member with it
// when the key is absent (the minimal object parsed), and the struct's own initialiser agrees
// with the table (a default-constructed struct), so that code building a struct by hand and a
// parsed scenario see the same defaults. Every enum name table round-trips.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "spec/field_binding.hpp"
#include "core/error.hpp"
#include "spec/presets.hpp"
#include "spec/reliability_spec.hpp"
#include "spec/runtime_profile.hpp"
#include "spec/scenario.hpp"

using namespace sextant;

namespace {
// The bound, typed-default fields of `fields` whose member in `parsed` or in T{} is not the
// table's default, or whose default the field itself refuses (type, range, choices), or that
// bind another struct's member.
template <class T>
std::vector<std::string> mismatches(std::span<const FieldDef> fields, const T& parsed, int& checked) {
    const T fresh{};
    std::vector<std::string> wrong;
    for (const FieldDef& f : fields) {
        if (f.binding.owner == nullptr) continue;
        if (f.binding.owner != &kFieldOwner<T>) {
            wrong.emplace_back(f.name);
            continue;
        }
        if (!f.fallback.typed()) continue;
        const json value = default_value(f.fallback);
        const json object = {{std::string(f.name), value}};
        try {
            ObjectReader check(object, "", fields);
        } catch (const InputError&) {
            wrong.emplace_back(f.name);
        }
        if (f.binding.read(&parsed) != value || f.binding.read(&fresh) != value) wrong.emplace_back(f.name);
        ++checked;
    }
    return wrong;
}

template <class T>
int check_defaults(std::span<const FieldDef> fields, const T& parsed, const std::string& table) {
    int checked = 0;
    std::string wrong;
    for (const auto& name : mismatches(fields, parsed, checked)) wrong += table + "/" + name + " ";
    CHECK(wrong == "");
    return checked;
}

json tiny_model() { return {{"layers", 2}, {"hidden", 64}, {"heads", 4}, {"vocab", 100}, {"ffn_hidden", 256}}; }

GpuSpec tiny_gpu() {
    return parse_gpu({{"name", "X"}, {"bf16_tflops", 100}, {"hbm_gib", 80}, {"hbm_tbps", 3}, {"nvlink_gbps", 450}}, "/gpu");
}

std::string_view field_default_text(std::span<const FieldDef> fields, std::string_view name) {
    for (const FieldDef& f : fields)
        if (f.name == name) return f.fallback.text;
    FAIL("no field " << name);
    return "";
}
}  // namespace

TEST_CASE("every table's typed defaults fill the parsed struct and agree with the struct's initialisers") {
    SUBCASE("/model and its parts") {
        json m = tiny_model();
        m["moe"] = {{"experts", 8}, {"top_k", 2}};
        m["attention"] = {{"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}};
        m["sliding_window"] = {{"tokens", 128}};
        const ModelSpec spec = parse_model(m, "/model");
        // mtp_layers, qkv_bias, activation_clamp, hybrid_override_pattern, attention_output_gate,
        // mtp_pattern, source
        CHECK(check_defaults(model_fields(), spec, "/model") == 7);
        CHECK(spec.name == field_default_text(model_fields(), "name"));
        CHECK(check_defaults(moe_fields(), spec.moe, "/model/moe") == 7);
        CHECK(check_defaults(mla_fields(), spec.mla, "/model/attention") == 1);
        CHECK(check_defaults(sliding_window_fields(), spec.window, "/model/sliding_window") == 1);
        json hybrid = tiny_model();
        hybrid["hidden"] = 512;  // 2 x 512 / 64 = 16 SSM heads, over the 8 default groups
        hybrid["hybrid_override_pattern"] = "M-";
        hybrid["mamba"] = json::object();
        const ModelSpec mamba = parse_model(hybrid, "/model");
        CHECK(check_defaults(mamba_fields(), mamba.mamba, "/model/mamba") == 5);  // all but heads (a rule)
        CHECK(mamba.mamba.heads == 2 * mamba.hidden / mamba.mamba.head_dim);
        json linear = tiny_model();
        linear["gated_delta_net"] = json::object();
        const ModelSpec gdn = parse_model(linear, "/model");
        CHECK(check_defaults(gated_delta_net_fields(), *gdn.gdn, "/model/gated_delta_net") == 7);
        // The family default the table names is the one the parser applies.
        CHECK(field_default_text(model_fields(), "arch") == "llama");
        CHECK(spec.norm == NormKind::RmsNorm);
        CHECK(spec.mlp == MlpKind::SwiGlu);
    }
    SUBCASE("GPU datasheets") {
        const GpuSpec g = tiny_gpu();
        CHECK(check_defaults(gpu_fields(), g, "topologies/gpus") == 9);
        CHECK(g.fp16_tflops == g.bf16_tflops);  // the rule "bf16_tflops"
    }
    SUBCASE("/cluster, /cluster/storage, /cluster/host") {
        const ClusterSpec c = parse_cluster_fields({{"gpus", 16}, {"nic_gbps_per_gpu", 400}, {"storage", {{"write_gbps", 10}}}, {"host", json::object()}}, "/cluster", tiny_gpu());
        CHECK(check_defaults(cluster_fields(), c, "/cluster") == 10);
        CHECK(check_defaults(storage_fields(), c.storage, "/cluster/storage") == 0);
        CHECK(check_defaults(host_fields(), c.host, "/cluster/host") == 2);
        CHECK(c.nvlink_domain_gpus == c.gpus_per_node);
        CHECK(c.storage.read_gbps == c.storage.write_gbps);
    }
    SUBCASE("/training, /training/optimizer, /training/lora") {
        const TrainingSpec t =
            parse_training({{"seq_len", 8}, {"global_batch", 2}, {"optimizer", json::object()}, {"lora", json::object()}}, json::object(), "/training");
        CHECK(check_defaults(training_fields(), t, "/training") == 3);
        CHECK(check_defaults(optimizer_fields(), t.optimizer, "/training/optimizer") == 2);
        CHECK(check_defaults(lora_fields(), t.lora, "/training/lora") == 1);
        CHECK(field_default_text(training_fields(), "precision") == TrainingSpec{}.precision.name);
        CHECK(t.precision.name == TrainingSpec{}.precision.name);
        CHECK(field_default_text(optimizer_fields(), "name") == optimizer_name(OptimizerSpec{}.kind));
    }
    SUBCASE("/layout (resolved) and /memory") {
        const json doc = {{"model", tiny_model()},
                          {"cluster", {{"gpu", "H100-SXM5-80GB"}, {"gpus", 1}}},
                          {"seq_len", 64},
                          {"global_batch", 4},
                          {"memory", json::object()}};
        const Scenario s = parse_scenario(doc, data_dir());
        CHECK(check_defaults(memory_fields(), s.memory, "/memory") == 3);
        // A layout that fixes nothing resolves to the table's defaults; Layout{}'s initialisers too.
        const LayoutSpec resolved = fixed_spec(resolve_layout(s, s.layout));
        const LayoutSpec fresh = fixed_spec(Layout{});
        int checked = 0;
        for (const FieldDef& f : layout_fields()) {
            if (!f.fallback.typed() || f.binding.owner == nullptr) continue;
            INFO("/layout/" << f.name);
            CHECK(f.binding.read(&resolved) == default_value(f.fallback));
            CHECK(f.binding.read(&fresh) == default_value(f.fallback));
            ++checked;
        }
        CHECK(checked == 12);
        // zero_stage has no typed default: the framework generation's (runtime zero_stage), which
        // is the runtime table's typed default for a scenario that names no framework.
        CHECK(resolve_layout(s, s.layout).zero_stage == Layout{}.zero_stage);
        CHECK(Layout{}.zero_stage == RuntimeProfile{}.zero_stage);
        CHECK(rank_order_text(Layout{}.rank_order) == field_default_text(layout_fields(), "rank_order"));
        // Parsed, an empty layout leaves every knob open.
        const LayoutSpec open = parse_layout(json::object(), "/layout");
        for (const FieldDef& f : layout_fields())
            if (f.binding.owner != nullptr) CHECK(f.binding.read(&open).is_null());
    }
}

TEST_CASE("/reliability's tables: typed defaults fill the spec and agree with its initialisers") {
    using namespace sextant::reliability;
    const ReliabilitySpec spec = parse_reliability(
        {{"restart", json::object()},
         {"checkpoint", json::object()},
         {"maintenance", json::object()},
         {"failures", json::array({{{"component", "gpu"}, {"rate_per_1000_node_days", 1}}})}},
        "/reliability");
    CHECK(check_defaults(reliability_fields(), spec, "/reliability") == 4);
    CHECK(check_defaults(restart_fields(), spec.restart, "/reliability/restart") == 5);
    CHECK(check_defaults(checkpoint_fields(), spec.checkpoint, "/reliability/checkpoint") == 4);
    CHECK(check_defaults(maintenance_fields(), spec.maintenance, "/reliability/maintenance") == 3);
    REQUIRE(spec.failures.size() == 1);
    CHECK(check_defaults(failure_fields(), spec.failures[0], "/reliability/failures/*") == 3);
    // The rules the failure table names: the name is the component's, a GPU failure needs a spare.
    CHECK(spec.failures[0].name == "gpu");
    CHECK(spec.failures[0].needs_spare);
    // Without /reliability the default preset is read.
    CHECK(parse_reliability(json(), "/reliability").preset == field_default_text(reliability_fields(), "preset"));
    CHECK(gap_name(GapKind::Weibull) == "weibull");
    CHECK(enum_from_name<GapKind>("fixed") == GapKind::Fixed);
}

TEST_CASE("calibration/runtime's table: typed defaults fill the profile and agree with its initialisers") {
    const RuntimeProfile p = parse_runtime_profile({{"features", json::object()}}, "empty", "/calibration/runtime/empty");
    CHECK(check_defaults(runtime_profile_fields(), p, "calibration/runtime") == 42);
    // The features table is the second table of the file; its struct is FrameworkFeatures.
    const FrameworkFeatures fresh{};
    CHECK(p.features.sequence_parallel == fresh.sequence_parallel);
    CHECK(p.features.activation_offload == fresh.activation_offload);
    CHECK(p.features.ep_a2a_overlap == fresh.ep_a2a_overlap);
    CHECK(p.features.async_tp == fresh.async_tp);
    CHECK(p.features.zero_stages == fresh.zero_stages);
    CHECK(p.features.schedules == fresh.schedules);
}

TEST_CASE("a table entry that disagrees with its member is caught") {
    // /memory's table as if one default had been changed in the table alone (0.05 written 0.06),
    // one outside its own range, and one bound to another struct's member.
    constexpr FieldDef wrong_default[] = {
        {"fragmentation", FieldType::Number, "", "", default_number(0.06), 0, 1, "", bind<&MemorySettings::fragmentation>()},
        {"context_gib", FieldType::Number, "", "", default_number(1.5), 2, 1024, "", bind<&MemorySettings::context_gib>()},
        {"safety_margin", FieldType::Number, "", "", default_number(0.10), 0, 0.5, "", bind<&HostSpec::link_gbps>()},
    };
    int checked = 0;
    CHECK(mismatches<MemorySettings>(wrong_default, MemorySettings{}, checked) ==
          std::vector<std::string>{"fragmentation", "context_gib", "safety_margin"});
    // The parser applies the table's default, not the initialiser: parsed, the wrong table's
    // member is 0.06.
    MemorySettings parsed;
    const json empty = json::object();
    read_fields(ObjectReader(empty, "/memory", wrong_default), parsed);
    CHECK(parsed.fragmentation == 0.06);
}

TEST_CASE("each enum's one name table is what the parser accepts and the printer writes") {
    const auto round_trip = [](auto names, auto tag) {
        using E = decltype(tag);
        for (std::size_t i = 0; i < names.size(); ++i) {
            const auto e = enum_from_name<E>(names[i]);
            REQUIRE(e.has_value());
            CHECK(static_cast<std::size_t>(*e) == i);
            CHECK(name_of(*e) == names[i]);
        }
        CHECK_FALSE(enum_from_name<E>("no-such-name").has_value());
    };
    round_trip(enum_names(Recompute{}), Recompute{});
    round_trip(enum_names(ParallelDim{}), ParallelDim{});
    round_trip(enum_names(NormKind{}), NormKind{});
    round_trip(enum_names(MlpKind{}), MlpKind{});
    round_trip(enum_names(PositionKind{}), PositionKind{});
    round_trip(enum_names(FabricKind{}), FabricKind{});
    round_trip(enum_names(Precision{}), Precision{});
    round_trip(enum_names(TrainingMode{}), TrainingMode{});
    round_trip(enum_names(OptimizerKind{}), OptimizerKind{});
    round_trip(enum_names(AttentionKernel{}), AttentionKernel{});
    round_trip(enum_names(SelectiveCheckpoint{}), SelectiveCheckpoint{});
    round_trip(enum_names(CrossEntropyKernel{}), CrossEntropyKernel{});
    round_trip(enum_names(reliability::GapKind{}), reliability::GapKind{});
    // The last enumerator has a name (a table one short would read past its end).
    CHECK(name_of(MlpKind::Relu) == "relu");
    CHECK(name_of(Precision::Fp4) == "fp4");
    CHECK(name_of(FabricKind::Ethernet) == "ethernet");
    CHECK(name_of(AttentionKernel::CudnnFused) == "cudnn-fused");
    CHECK(name_of(SelectiveCheckpoint::Layers) == "layers");
    CHECK(name_of(CrossEntropyKernel::PyTorch) == "pytorch");
    CHECK(name_of(reliability::GapKind::Fixed) == "fixed");
    CHECK(recompute_name(Recompute::Full) == "full");
    // A misspelled enum value is refused with the table's names.
    json m = tiny_model();
    m["mlp"] = "swiglu2";
    try {
        parse_model(m, "/model");
        FAIL("expected an InputError");
    } catch (const InputError& e) {
        CHECK(e.path() == "/model/mlp");
        CHECK(std::string(e.what()).find("gelu|swiglu|geglu|squared_relu|relu") != std::string::npos);
    }
}
