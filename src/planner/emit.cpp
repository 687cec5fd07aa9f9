#include "planner/emit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "memory/stage_params.hpp"
#include "planner/search_space.hpp"
#include "schedule/schedule.hpp"
#include "spec/runtime_profile.hpp"

namespace sextant {

namespace {
// The versions the settings are written for; tests/data/ holds each one's accepted flags or keys
// and cross-flag rules, transcribed from that commit's sources.
constexpr EmitTarget kMegatron = {"megatron", "Megatron-LM main @ d98e8a64dd (2026-08-22), megatron/training/arguments.py",
                                  "megatron-core-2024"};
constexpr EmitTarget kTorchtitan = {"torchtitan",
                                    "torchtitan main @ b5bcd76c66 (2026-08-21): Python config classes (torchtitan/config/configs.py)",
                                    "torchtitan-2024"};
constexpr EmitTarget kTorchtitanToml = {"torchtitan", "torchtitan v0.2.2 (2026-02-20), the last TOML release (torchtitan/config/job_config.py)",
                                        "torchtitan-2024"};
constexpr EmitTarget kDeepSpeed = {"deepspeed", "DeepSpeed master @ edaa722126 (2026-08-22), deepspeed/runtime/config.py",
                                   "megatron-deepspeed-2022"};
constexpr EmitTarget kMegatronBridge = {"megatron",
                                        "Megatron-Bridge v0.6.0 (51885cf13, 2026-08-19; Megatron-Core cd4afffa64): "
                                        "scripts/training/run_recipe.py ConfigContainer overrides",
                                        "nemo-2026"};

std::string num(std::int64_t v) { return std::to_string(v); }

void arg(Emitted& e, const std::string& flag, const std::string& value) { e.args.emplace_back(flag, value); }
void arg(Emitted& e, const std::string& flag, std::int64_t value) { e.args.emplace_back(flag, num(value)); }
void flag(Emitted& e, const std::string& name) { e.args.emplace_back(name, std::nullopt); }
// The plan's framework generation, whose defaults fill what the layout leaves open.
RuntimeProfile runtime(const Scenario& s) { return load_runtime_profile(s.training.framework, "/training/framework"); }
// The plan's MoE token dispatcher (moe_dispatcher: its own, else its framework generation's).
MoeDispatcher dispatcher(const Scenario& s, const Layout& l) { return moe_dispatcher(l, runtime(s)); }

// Megatron-Core's token dispatcher settings (TransformerConfig.moe_token_dispatcher_type, and
// moe_flex_dispatcher_backend for the flex dispatcher's DeepEP and HybridEP kernels).
struct DispatcherSetting {
    const char* type;
    const char* flex_backend;  // nullptr unless the type is flex
};
DispatcherSetting dispatcher_setting(MoeDispatcher d) {
    switch (d) {
        case MoeDispatcher::AllToAll: return {"alltoall", nullptr};
        case MoeDispatcher::AllGather: return {"allgather", nullptr};
        case MoeDispatcher::DeepEP: return {"flex", "deepep"};
        case MoeDispatcher::HybridEP: return {"flex", "hybridep"};
    }
    return {"alltoall", nullptr};
}

// Megatron-Core's DeepEP backend does not pad experts to capacity (transformer_config.py): a
// padded plan runs with HybridEP (`hybridep_setting`, in the target's spelling) or all-to-all.
void deepep_padding_note(MoeDispatcher d, const MoeSpec& moe, const char* hybridep_setting, Emitted& e) {
    if (d == MoeDispatcher::DeepEP && moe.pad_to_capacity)
        e.notes.push_back(std::string("Megatron's DeepEP backend does not pad experts to capacity (transformer_config.py): run the "
                                      "padded plan with ") + hybridep_setting + " or the alltoall dispatcher");
}

// torchtitan settings live under "section.key"; one setter for both generations.
void key(Emitted& e, const std::string& section, const std::string& name, const json& value) {
    e.settings[section][name] = value;
}

bool toml(const Emitted& e) { return e.format == EmitFormat::TorchtitanToml; }

// torchtitan's model registry names of the shapes it ships (torchtitan/models/*/__init__.py).
std::optional<std::pair<std::string, std::string>> torchtitan_flavor(const ModelSpec& m) {
    struct Known {
        const char* model;
        const char* flavor;
        std::int64_t layers, hidden;
    };
    static constexpr Known kKnown[] = {{"llama3", "8B", 32, 4096}, {"llama3", "70B", 80, 8192}, {"llama3", "405B", 126, 16384},
                                       {"deepseek_v3", "671B", 61, 7168}};
    for (const auto& k : kKnown)
        if (m.layers == k.layers && m.hidden == k.hidden && (m.is_moe() == (std::string(k.model) == "deepseek_v3")))
            return std::make_pair(std::string(k.model), std::string(k.flavor));
    return std::nullopt;
}

// ---- model features: what each framework says for them --------------------------------------
//
// One entry per feature of the model or the training precision. `applies` selects it; each
// framework's writer sets its flags or keys, or notes that the framework cannot express it
// (torchtitan and DeepSpeed build the model in code: their model features are notes or the
// model registry entry).
struct Feature {
    const char* name;
    bool (*applies)(const Scenario&);
    void (*megatron)(const Scenario&, const Layout&, Emitted&);
    void (*torchtitan)(const Scenario&, const Layout&, Emitted&);
    void (*deepspeed)(const Scenario&, const Layout&, Emitted&);
};

void nothing(const Scenario&, const Layout&, Emitted&) {}

// The layers of every virtual stage in the order the frameworks list them: chunk 0 of every
// pipeline rank, then chunk 1, and so on; with `v_shape`, a V schedule's second chunks from the
// last rank back (torchtitan's ZB-V). Each rank's chunks are the ones the plan was priced with
// (the simulator's chunk_layers: the chunk holding the embedding or the loss short of any layer
// the division leaves over).
std::vector<std::int64_t> virtual_stage_layers(const Layout& l, bool v_shape = false) {
    std::vector<std::vector<std::int64_t>> chunks(static_cast<std::size_t>(l.pp));
    for (std::int64_t p = 0; p < l.pp; ++p)
        chunks[static_cast<std::size_t>(p)] = chunk_layers(l.stage_layers[static_cast<std::size_t>(p)], l.vp,
                                                           chunk_has_embedding(l.schedule_def(), l.pp, p, 0, l.vp), stage_holds_output(l, p));
    std::vector<std::int64_t> out;
    for (std::int64_t v = 0; v < l.vp; ++v)
        for (std::int64_t k = 0; k < l.pp; ++k) {
            const std::int64_t p = v_shape && v == 1 ? l.pp - 1 - k : k;
            out.push_back(chunks[static_cast<std::size_t>(p)][static_cast<std::size_t>(v)]);
        }
    return out;
}

// A hybrid model's --hybrid-layer-pattern: its pattern cut with | into every virtual stage in the
// same order, which is how Megatron-LM takes a hybrid model's pipeline split and interleaving
// (arguments.py at d98e8a64dd refuses the layout and virtual-stage flags beside the pattern, and
// derives the virtual stages from the segment count).
// The decoder part of that pattern, cut with | into the plan's virtual stages where pp > 1.
std::string hybrid_main_pattern(const Scenario& s, const Layout& l) {
    if (l.pp == 1) return s.model.hybrid_pattern;
    std::string out;
    std::size_t at = 0;
    for (const std::int64_t n : virtual_stage_layers(l)) {
        out += (out.empty() ? "" : "|") + s.model.hybrid_pattern.substr(at, static_cast<std::size_t>(n));
        at += static_cast<std::size_t>(n);
    }
    return out;
}

std::string hybrid_layer_pattern(const Scenario& s, const Layout& l) {
    // Each MTP module's blocks after a '/' (its depth is the number of such parts).
    std::string mtp;
    for (std::int64_t k = 0; k < s.model.mtp_layers; ++k) mtp += "/" + s.model.mtp_pattern;
    return hybrid_main_pattern(s, l) + mtp;
}

const Feature kFeatures[] = {
    {"decoder shape", [](const Scenario&) { return true; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         const ModelSpec& m = s.model;
         arg(e, "--num-layers", m.layers);
         arg(e, "--hidden-size", m.hidden);
         arg(e, "--ffn-hidden-size", m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden);
         arg(e, "--num-attention-heads", m.heads);
         if (m.attention == AttentionKind::Standard && m.head_dim > 0 && m.head_dim * m.heads != m.hidden)
             arg(e, "--kv-channels", m.head_dim);
         arg(e, "--seq-length", s.training.seq_len);
         arg(e, "--max-position-embeddings", std::max(s.training.seq_len, m.max_positions));
         arg(e, "--tokenizer-type", "NullTokenizer");
         arg(e, "--vocab-size", m.vocab);
         e.notes.push_back(fmt::format("--tokenizer-type NullTokenizer --vocab-size {} stands for the model's tokenizer "
                                       "(e.g. HuggingFaceTokenizer with --tokenizer-model); Megatron pads the vocabulary to a "
                                       "multiple of 128 x tp (--make-vocab-size-divisible-by)", m.vocab));
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         const auto flavor = torchtitan_flavor(s.model);
         if (flavor) {
             key(e, "model", "name", flavor->first);
             key(e, "model", "flavor", flavor->second);
         } else {
             e.notes.push_back(fmt::format("torchtitan ships no model of this shape ({} layers, hidden {}, ffn {}, {} heads, {} KV "
                                           "heads, vocabulary {}): register one in its model registry",
                                           s.model.layers, s.model.hidden, s.model.ffn_hidden, s.model.heads, s.model.kv_heads,
                                           s.model.vocab));
         }
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         e.notes.push_back(fmt::format("DeepSpeed's config holds no model: build {} ({} layers, hidden {}) in code", s.model.name,
                                       s.model.layers, s.model.hidden));
     }},
    {"grouped-query attention",
     [](const Scenario& s) { return s.model.attention == AttentionKind::Standard && s.model.kv_heads != s.model.heads; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         flag(e, "--group-query-attention");
         arg(e, "--num-query-groups", s.model.kv_heads);
     },
     nothing, nothing},
    {"MLP activation", [](const Scenario& s) { return s.model.mlp != MlpKind::Gelu; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         // Megatron's default MLP is GELU; --swiglu and --squared-relu name the others it offers
         // on the command line. Gated GELU and plain ReLU are TransformerConfig fields
         // (gated_linear_unit, activation_func) that arguments.py leaves out of its flags.
         if (s.model.mlp == MlpKind::SwiGlu) flag(e, "--swiglu");
         else if (s.model.mlp == MlpKind::SquaredRelu) flag(e, "--squared-relu");
         else
             e.notes.push_back(std::string("Megatron has no flag for a ") + (s.model.mlp == MlpKind::GeGlu ? "gated GELU (GeGLU)" : "ReLU") +
                               " MLP: set TransformerConfig's gated_linear_unit and activation_func in the model provider");
     },
     nothing, nothing},
    {"sliding-window attention", [](const Scenario& s) { return s.model.window.tokens > 0; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         const ModelSpec& m = s.model;
         if (m.window.chunked) {
             e.notes.push_back(fmt::format("Megatron has no chunked attention (blocks of {} tokens): the export trains full "
                                           "attention where the plan priced chunks",
                                           m.window.tokens));
             return;
         }
         // TransformerConfig.window_size (left, right): a query sees `tokens` positions back and
         // none ahead. window_attn_skip_freq lists the layers, 1 windowed and 0 full.
         arg(e, "--window-size", fmt::format("({},0)", m.window.tokens));
         if (m.window.global == 0) return;
         std::string pattern = "[";
         for (std::int64_t i = 0; i < m.layers; ++i) pattern += std::string(i ? "," : "") + (m.layer_is_windowed(i) ? "1" : "0");
         arg(e, "--window-attn-skip-freq", pattern + "]");
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         e.notes.push_back(fmt::format("torchtitan's config has no sliding window: the {}-token window must be in the registered "
                                       "model",
                                       s.model.window.tokens));
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         e.notes.push_back(fmt::format("DeepSpeed builds attention in code: the {}-token window is the model's", s.model.window.tokens));
     }},
    {"normalization", [](const Scenario&) { return true; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         arg(e, "--normalization", s.model.norm == NormKind::RmsNorm ? "RMSNorm" : "LayerNorm");
     },
     nothing, nothing},
    {"positions", [](const Scenario&) { return true; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         // YaRN's scaling is no choice of this flag (Megatron-LM core_v0.15.0 arguments.py:
         // learned_absolute, rope, mrope, relative, none): it launches as rope.
         arg(e, "--position-embedding-type",
             s.model.rotary() ? "rope" : s.model.position == PositionKind::None ? "none" : "learned_absolute");
     },
     nothing, nothing},
    {"untied embeddings", [](const Scenario& s) { return !s.model.tied_embeddings; },
     [](const Scenario&, const Layout&, Emitted& e) { flag(e, "--untie-embeddings-and-output-weights"); }, nothing, nothing},
    {"no linear biases", [](const Scenario& s) { return !s.model.linear_bias; },
     [](const Scenario&, const Layout&, Emitted& e) { flag(e, "--disable-bias-linear"); }, nothing, nothing},
    {"QKV bias", [](const Scenario& s) { return s.model.qkv_bias && !s.model.linear_bias; },
     [](const Scenario&, const Layout&, Emitted& e) { flag(e, "--add-qkv-bias"); }, nothing, nothing},
    {"mixture of experts", [](const Scenario& s) { return s.model.is_moe(); },
     [](const Scenario& s, const Layout& l, Emitted& e) {
         const MoeSpec& moe = s.model.moe;
         arg(e, "--num-experts", moe.experts);
         arg(e, "--moe-router-topk", moe.top_k);
         arg(e, "--moe-ffn-hidden-size", moe.expert_ffn_hidden);
         if (moe.latent > 0) arg(e, "--moe-latent-size", moe.latent);
         if (moe.shared_experts > 0) arg(e, "--moe-shared-expert-intermediate-size", moe.shared_experts * moe.shared_ffn_hidden);
         if (moe.first_dense_layers > 0 || moe.layer_frequency != 1) {
             std::string pattern = "[";
             for (std::int64_t i = 0; i < s.model.layers; ++i) pattern += std::string(i ? "," : "") + (s.model.layer_is_moe(i) ? "1" : "0");
             arg(e, "--moe-layer-freq", pattern + "]");
         }
         arg(e, "--expert-model-parallel-size", l.ep);
         // Megatron's default expert TP is the dense tp; the plan's is its own knob.
         arg(e, "--expert-tensor-parallel-size", l.etp);
         const MoeDispatcher d = dispatcher(s, l);
         const DispatcherSetting setting = dispatcher_setting(d);
         arg(e, "--moe-token-dispatcher-type", setting.type);
         if (setting.flex_backend) arg(e, "--moe-flex-dispatcher-backend", setting.flex_backend);
         flag(e, "--moe-grouped-gemm");
         deepep_padding_note(d, moe, "--moe-flex-dispatcher-backend hybridep", e);
         if (moe.capacity_factor > 0) {
             arg(e, "--moe-expert-capacity-factor", fmt::format("{}", moe.capacity_factor));
             if (moe.pad_to_capacity) flag(e, "--moe-pad-expert-input-to-capacity");
         }
         if (l.ep_a2a_overlap) {
             // Megatron-Bridge's recipes pair it with the delayed weight-gradient GEMMs.
             flag(e, "--overlap-moe-expert-parallel-comm");
             flag(e, "--delay-wgrad-compute");
         }
     },
     [](const Scenario& s, const Layout& l, Emitted& e) {
         if (l.ep_a2a_overlap)
             e.notes.push_back("torchtitan has no merged forward-backward all-to-all overlap: the plan's ep_a2a_overlap is not set");
         if (s.model.moe.first_dense_layers > 0 || s.model.moe.shared_experts > 0 || s.model.moe.latent > 0)
             e.notes.push_back("torchtitan: the dense first layers, shared experts and latent projections are part of the registered "
                               "model, not the config");
         if (s.model.moe.capacity_factor > 0)
             e.notes.push_back(fmt::format("torchtitan's MoE routes dropless: the plan's capacity factor {} has no torchtitan setting",
                                           s.model.moe.capacity_factor));
         // torchtitan (b5bcd76c) picks the token exchange in its model registry, not its config
         // (torchtitan/models/deepseek_v3/__init__.py: moe_comm_backend "standard", "deepep", "hybridep").
         const MoeDispatcher d = dispatcher(s, l);
         if (d == MoeDispatcher::AllGather)
             e.notes.push_back("torchtitan has no all-gather token dispatcher: its expert parallelism exchanges tokens all-to-all");
         else if (d != MoeDispatcher::AllToAll)
             e.notes.push_back(fmt::format("torchtitan: the {} exchange is the model registry's moe_comm_backend=\"{}\", not a config key",
                                           name_of(d), name_of(d)));
     },
     [](const Scenario& s, const Layout& l, Emitted& e) {
         // DeepSpeed's MoE layer drops at capacity_factor 1.0 unless told otherwise (drop_tokens).
         const MoeSpec& moe = s.model.moe;
         const std::string capacity = moe.capacity_factor > 0 ? fmt::format("capacity_factor={}, drop_tokens=True", moe.capacity_factor)
                                                              : std::string("drop_tokens=False");
         e.notes.push_back(fmt::format("DeepSpeed builds MoE layers in code: deepspeed.moe.layer.MoE(num_experts={}, k={}, "
                                       "ep_size={}, {}); its config has no expert settings",
                                       moe.experts, moe.top_k, l.ep, capacity));
         if (moe.latent > 0)
             e.notes.push_back(fmt::format("DeepSpeed's MoE layer has no latent projections: the {}-wide experts and their projections "
                                           "are the model's code", moe.latent));
         if (const MoeDispatcher d = dispatcher(s, l); d != MoeDispatcher::AllToAll)
             e.notes.push_back(fmt::format("DeepSpeed's MoE layer exchanges tokens all-to-all (deepspeed/moe/sharded_moe.py _AllToAll): "
                                           "the plan's {} dispatcher has no DeepSpeed counterpart",
                                           name_of(d)));
         // Its gate dispatches an experts x capacity buffer (deepspeed/moe/sharded_moe.py, _sparse_encode).
         if (moe.capacity_factor > 0 && !moe.pad_to_capacity)
             e.notes.push_back("DeepSpeed's MoE layer always fills every expert's capacity (its dispatch buffer is experts x capacity): "
                               "it runs the plan as if pad_to_capacity were set");
     }},
    {"multi-latent attention", [](const Scenario& s) { return s.model.attention == AttentionKind::MultiLatent; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         const LatentAttention& a = s.model.mla;
         flag(e, "--multi-latent-attention");
         if (a.q_lora_rank > 0) arg(e, "--q-lora-rank", a.q_lora_rank);
         arg(e, "--kv-lora-rank", a.kv_lora_rank);
         arg(e, "--qk-head-dim", a.qk_nope_head_dim);
         arg(e, "--qk-pos-emb-head-dim", a.qk_rope_head_dim);
         arg(e, "--v-head-dim", a.v_head_dim);
     },
     nothing,
     [](const Scenario&, const Layout&, Emitted& e) { e.notes.push_back("DeepSpeed builds multi-latent attention in code"); }},
    {"hybrid Mamba model", [](const Scenario& s) { return s.model.is_hybrid(); },
     [](const Scenario& s, const Layout& l, Emitted& e) {
         // Megatron-LM trains hybrid models with pretrain_mamba.py (MambaModel). At the target
         // commit the pattern flag is --hybrid-layer-pattern (--hybrid-override-pattern, core_v0.16's
         // name, is its deprecated alias), and the pattern also carries the pipeline split. The
         // Mamba sizes are TransformerConfig's mamba_* fields.
         const ModelSpec& m = s.model;
         arg(e, "--hybrid-layer-pattern", hybrid_layer_pattern(s, l));
         if (m.hybrid_pattern.find('M') != std::string::npos) {
             arg(e, "--mamba-num-heads", m.mamba.heads);
             arg(e, "--mamba-head-dim", m.mamba.head_dim);
             arg(e, "--mamba-state-dim", m.mamba.state);
             arg(e, "--mamba-num-groups", m.mamba.groups);
         }
         e.notes.push_back("a hybrid model launches with Megatron-LM's pretrain_mamba.py, not pretrain_gpt.py; Megatron-Bridge 26.02 "
                           "(Megatron-Core 0.16) names the pattern --hybrid-override-pattern");
     },
     [](const Scenario&, const Layout&, Emitted& e) {
         e.notes.push_back("torchtitan has no Mamba-2 hybrid model: the export's settings need a registered model of this shape");
     },
     [](const Scenario&, const Layout&, Emitted& e) { e.notes.push_back("DeepSpeed builds the hybrid Mamba model in code"); }},
    {"gated delta net", [](const Scenario& s) { return s.model.has_gdn(); },
     [](const Scenario& s, const Layout&, Emitted& e) {
         // TransformerConfig's fields, which Megatron-LM's arguments.py turns into flags
         // (ArgumentGroupFactory), but for linear_attention_freq, declared apart. The target
         // commit names the variant gdn (gated_delta_net is its deprecated alias, Megatron-Bridge
         // 26.02's b0cc2706 name).
         const GatedDeltaNetSpec& g = *s.model.gdn;
         arg(e, "--experimental-attention-variant", "gdn");
         e.notes.push_back("Megatron-Bridge 26.02 (Megatron-Core b0cc2706) names the variant gated_delta_net, which later "
                           "Megatron-LM keeps as a deprecated alias of gdn");
         arg(e, "--linear-attention-freq", g.full_attention_interval);
         arg(e, "--linear-num-key-heads", g.key_heads);
         arg(e, "--linear-num-value-heads", g.value_heads);
         arg(e, "--linear-key-head-dim", g.key_head_dim);
         arg(e, "--linear-value-head-dim", g.value_head_dim);
         arg(e, "--linear-conv-kernel-dim", g.conv_kernel);
     },
     [](const Scenario&, const Layout&, Emitted& e) {
         e.notes.push_back("torchtitan has no gated delta net model: the export's settings need a registered model of this shape");
     },
     [](const Scenario&, const Layout&, Emitted& e) { e.notes.push_back("DeepSpeed builds the gated delta net layers in code"); }},
    {"attention output gate", [](const Scenario& s) { return s.model.attention_output_gate; },
     [](const Scenario&, const Layout&, Emitted& e) { flag(e, "--attention-output-gate"); },
     [](const Scenario&, const Layout&, Emitted& e) {
         e.notes.push_back("torchtitan's config has no attention output gate: it must be in the registered model");
     },
     [](const Scenario&, const Layout&, Emitted& e) { e.notes.push_back("DeepSpeed builds the attention output gate in code"); }},
    {"multi-token prediction", [](const Scenario& s) { return s.model.mtp_layers > 0; },
     [](const Scenario& s, const Layout&, Emitted& e) { arg(e, "--mtp-num-layers", s.model.mtp_layers); },
     [](const Scenario& s, const Layout&, Emitted& e) {
         e.notes.push_back(fmt::format("torchtitan's config has no multi-token prediction switch: the {} MTP module(s) must be in "
                                       "the registered model",
                                       s.model.mtp_layers));
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         e.notes.push_back(fmt::format("DeepSpeed builds the {} multi-token-prediction module(s) in code", s.model.mtp_layers));
     }},
    {"Muon", [](const Scenario& s) { return s.training.optimizer.kind == OptimizerKind::Muon; },
     [](const Scenario&, const Layout&, Emitted& e) {
         // With --use-distributed-optimizer this is distributed Muon (dist_muon is deprecated).
         arg(e, "--optimizer", "muon");
     },
     [](const Scenario&, const Layout& l, Emitted& e) {
         e.notes.push_back(std::string("torchtitan sets Muon per parameter group: optimizer.param_groups with a "
                                       "ParamGroupConfig(optimizer_name=\"DistMuon\") for the weight matrices and an AdamW "
                                       "catch-all") +
                           (l.tp > 1 ? "; its DistMuon refuses tensor parallelism" : ""));
     },
     [](const Scenario&, const Layout&, Emitted& e) {
         e.settings["optimizer"] = {{"type", "muon"}};
         e.notes.push_back("DeepSpeed's Muon needs param.use_muon set on every parameter in code (True for the weight matrices)");
     }},
    {"precision", [](const Scenario&) { return true; },
     [](const Scenario& s, const Layout&, Emitted& e) {
         // Transformer Engine's recipes (TransformerConfig.fp8_recipe, .fp4/.fp4_recipe).
         const std::string_view p = s.training.precision.name;
         if (p == "fp16") {
             flag(e, "--fp16");
             return;
         }
         flag(e, "--bf16");
         if (p == "nvfp4") {
             arg(e, "--fp4-format", "e2m1");
             arg(e, "--fp4-recipe", "nvfp4");
             return;
         }
         if (s.training.precision.operands != Precision::Fp8) return;
         arg(e, "--fp8-format", p == "mxfp8" ? "e4m3" : "hybrid");
         if (p == "fp8_rowwise")
             e.notes.push_back("Megatron has no row-wise FP8 recipe (torchao's): the closest it runs is blockwise (1x128 tiles)");
         arg(e, "--fp8-recipe", p == "mxfp8" ? "mxfp8" : p == "fp8" ? "tensorwise" : "blockwise");
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         const PrecisionRecipe& r = s.training.precision;
         key(e, "training", "mixed_precision_param", "bfloat16");
         if (r.name == "fp16")
             e.notes.push_back("torchtitan trains in bf16 or fp32 (training.mixed_precision_param): the plan's fp16 becomes bf16");
         if (!r.quantized()) return;
         // torchao's converters: Float8 (tensorwise or rowwise scaling), MXFP8 and, in current
         // torchtitan, NVFP4; 1x128 block scaling is not among them.
         if (r.name == "fp8_blockwise") {
             e.notes.push_back("torchtitan has no 1x128 block-scaled FP8 converter: the plan's fp8_blockwise is not set");
             return;
         }
         if (toml(e)) {
             if (r.name == "nvfp4") {
                 e.notes.push_back("torchtitan v0.2.2 has no NVFP4 converter: the plan's nvfp4 is not set");
                 return;
             }
             key(e, "model", "converters", json::array({r.name == "mxfp8" ? "mx" : "float8"}));
             if (r.name != "mxfp8") key(e, "float8", "recipe_name", r.name == "fp8_rowwise" ? "rowwise" : "tensorwise");
         } else {
             const char* converter = r.name == "mxfp8" ? "MXFP8LinearConverter" : r.name == "nvfp4" ? "NVFP4LinearConverter" : "Float8LinearConverter";
             key(e, "model", "converters", json::array({converter}));
             if (r.name == "fp8_rowwise")
                 e.notes.push_back("set the Float8LinearConverter's recipe_name to \"rowwise\" (its default is tensorwise)");
         }
     },
     [](const Scenario& s, const Layout&, Emitted& e) {
         if (s.training.precision.name == "fp16") e.settings["fp16"] = {{"enabled", true}};
         else e.settings["bf16"] = {{"enabled", true}};
         if (s.training.precision.quantized())
             e.notes.push_back("DeepSpeed's config has no " + std::string(s.training.precision.name) +
                               ": wrap the linear layers with Transformer Engine (te.Linear under te.autocast with the "
                               "recipe) in code; the config runs them in bf16");
     }},
    // PyTorch's async TP (layout.async_tp): torchtitan's switch, which needs torch.compile of the
    // model (torchtitan b5bcd76c configs.py CompileConfig; v0.2.2 under [parallelism]).
    {"async TP", [](const Scenario&) { return true; },
     [](const Scenario&, const Layout& l, Emitted& e) {
         if (l.async_tp)
             e.notes.push_back("Megatron has no PyTorch async TP: its own TP overlap is --tp-comm-overlap (Transformer Engine "
                               "userbuffers), which the plan did not price; the plan's async_tp is not set");
     },
     [](const Scenario&, const Layout& l, Emitted& e) {
         // compile.enable, which it needs, is set with every torchtitan export.
         if (l.async_tp) key(e, toml(e) ? "parallelism" : "compile", "enable_async_tensor_parallel", true);
     },
     [](const Scenario&, const Layout& l, Emitted& e) {
         if (l.async_tp) e.notes.push_back("DeepSpeed has no async TP: the plan's async_tp is not set");
     }},
};

void apply_features(const Scenario& s, const Layout& l, Emitted& e, EmitFormat f) {
    for (const Feature& feature : kFeatures) {
        if (!feature.applies(s)) continue;
        if (f == EmitFormat::Megatron) feature.megatron(s, l, e);
        else if (f == EmitFormat::DeepSpeed) feature.deepspeed(s, l, e);
        else feature.torchtitan(s, l, e);
    }
}

// ---- Megatron-LM --------------------------------------------------------------------------

// --pipeline-model-parallel-layout: every virtual stage in Megatron's order (all pipeline ranks
// of chunk 0, then of chunk 1, ...); E the embedding, t a layer, m an MTP module, L the loss.
std::string pipeline_layout(const Scenario& s, const Layout& l) {
    const std::vector<std::int64_t> stages = virtual_stage_layers(l);
    std::string out = "E";
    for (std::size_t i = 0; i < stages.size(); ++i) out += (i ? "|" : "") + std::string(static_cast<std::size_t>(stages[i]), 't');
    return out + std::string(static_cast<std::size_t>(s.model.mtp_layers), 'm') + "L";
}

// How Megatron-Core is told the plan's stages (pp > 1, not a hybrid model, whose split is its
// pattern): an even split as the virtual stages per rank; Megatron's uneven split (first and last
// stages given, the middle ones sharing the rest evenly) where it holds; else the layout that
// names every virtual stage (TransformerConfig.pipeline_model_parallel_layout).
struct PipelineSplit {
    std::int64_t vp = 1;                 // virtual stages per rank, where the split is not a layout
    std::int64_t first = 0, last = 0;    // Megatron's uneven split; 0 where even
    std::string layout;                  // every virtual stage; empty where the above say it
};
PipelineSplit pipeline_split(const Scenario& s, const Layout& l) {
    const auto& split = l.stage_layers;
    const std::int64_t middle = split[split.size() / 2];
    const bool even = std::all_of(split.begin(), split.end(), [&](std::int64_t n) { return n == split.front(); });
    const bool middles_equal = std::all_of(split.begin() + 1, split.end() - 1, [&](std::int64_t n) { return n == middle; });
    const auto divides = [&](std::int64_t n) { return n % l.vp == 0; };
    if (even && divides(split.front())) return {l.vp, 0, 0, ""};
    if (middles_equal && l.pp > 2 && divides(split.front()) && divides(split.back()) && divides(middle))
        return {l.vp, split.front(), split.back(), ""};
    return {1, 0, 0, pipeline_layout(s, l)};
}

// The schedule Megatron-Core runs for the plan's: it ships 1F1B and interleaved 1F1B.
void megatron_schedule_note(const Layout& l, Emitted& e) {
    if (l.pp > 1 && l.schedule != Schedule::OneFOneB && l.schedule != Schedule::Interleaved)
        e.notes.push_back(fmt::format("Megatron-Core ships no {} schedule: the export runs {}", schedule_name(l.schedule),
                                      l.vp > 1 ? "interleaved 1F1B" : "1F1B"));
}

void megatron_pipeline(const Scenario& s, const Layout& l, Emitted& e) {
    if (l.pp == 1) return;
    megatron_schedule_note(l, e);
    if (s.model.is_hybrid()) return;  // the split is in --hybrid-layer-pattern
    const PipelineSplit p = pipeline_split(s, l);
    if (!p.layout.empty()) {
        arg(e, "--pipeline-model-parallel-layout", p.layout);
        return;
    }
    if (p.vp > 1) arg(e, "--num-virtual-stages-per-pipeline-rank", p.vp);
    if (p.first > 0) {
        arg(e, "--decoder-first-pipeline-num-layers", p.first);
        arg(e, "--decoder-last-pipeline-num-layers", p.last);
    }
}

// --recompute-modules: the modules the plan priced, in Megatron's names (TransformerConfig's
// allowed set; its own default is core_attn alone). The export targets current Megatron, whose
// attention is flash attention (Transformer Engine): the default set is flash attention's.
std::vector<std::string> megatron_recompute_modules(const Scenario& s, const Layout& l, Emitted& e) {
    const std::uint8_t modules = active_recompute_modules(l.recompute, l.recompute_modules, true);
    const bool moe = s.model.is_moe(), mla = s.model.attention == AttentionKind::MultiLatent;
    std::vector<std::string> names;
    const auto add = [&](bool wanted, const char* name) {
        if (wanted) names.emplace_back(name);
    };
    add(modules & kRecomputeCoreAttn, "core_attn");
    add(modules & kRecomputeLayerNorm, "layernorm");
    add((modules & kRecomputeMlaUpProj) && mla, "mla_up_proj");
    add(modules & kRecomputeMlp, "mlp");
    add((modules & (kRecomputeMoeAct | kRecomputeAct)) && moe, "moe_act");
    add((modules & kRecomputeMoe) && moe, "moe");
    add((modules & kRecomputeSharedExperts) && moe && s.model.moe.shared_experts > 0, "shared_experts");
    if ((modules & kRecomputeAct) && (!moe || s.model.moe.first_dense_layers > 0 || s.model.moe.layer_frequency != 1))
        e.notes.push_back("Megatron recomputes a dense MLP's activation only with the whole MLP (recompute module mlp): "
                          "the plan's activation recompute of dense layers is not set, they keep their activation saved");
    return names;
}

void megatron_recompute(const Scenario& s, const Layout& l, Emitted& e) {
    if (l.recompute == Recompute::Selective) {
        arg(e, "--recompute-granularity", "selective");
        const std::vector<std::string> modules = megatron_recompute_modules(s, l, e);
        if (!modules.empty()) arg(e, "--recompute-modules", fmt::format("{}", fmt::join(modules, " ")));
    }
    if (l.recompute == Recompute::Full) {
        arg(e, "--recompute-granularity", "full");
        arg(e, "--recompute-method", "uniform");
        arg(e, "--recompute-num-layers", 1);
    }
    // Whole layers (a valid layout has pp 1, no recompute and fewer offloaded layers than
    // layers: TransformerConfig.__post_init__), or the modules' inputs in every layer.
    if (l.activation_offload_layers > 0) arg(e, "--cpu-offloading-num-layers", l.activation_offload_layers);
    if (l.offload_modules != 0) {
        flag(e, "--fine-grained-activation-offloading");
        arg(e, "--offload-modules", fmt::format("{}", fmt::join(offload_module_names(l.offload_modules), " ")));
        if (l.offload_fraction < 1) arg(e, "--activation-offload-fraction", fmt::format("{}", l.offload_fraction));
    }
}

// How Megatron-Core shards the plan's data parallelism: ZeRO-1/2 as the distributed optimizer,
// ZeRO-3 as torch FSDP2 where Megatron allows it (no pipeline or expert parallelism, untied
// embeddings, not fp16, no shard groups), else as Megatron-FSDP.
enum class DataParallelMode { Replicated, DistributedOptimizer, TorchFsdp2, MegatronFsdp };
DataParallelMode data_parallel_mode(const Scenario& s, const Layout& l) {
    if (l.zero_stage == 1 || l.zero_stage == 2) return DataParallelMode::DistributedOptimizer;
    if (l.zero_stage != 3) return DataParallelMode::Replicated;
    const bool fsdp2 = l.pp == 1 && l.ep == 1 && !s.model.tied_embeddings && s.training.precision.name != "fp16" && l.dp_replicas() == 1;
    return fsdp2 ? DataParallelMode::TorchFsdp2 : DataParallelMode::MegatronFsdp;
}

// The parameter all-gather overlaps the forward where the optimizer state is sharded by
// Megatron's own code (its distributed optimizer or Megatron-FSDP; FSDP2 gathers by itself) and
// there are data-parallel ranks to gather from.
bool overlaps_param_gather(const Scenario& s, const Layout& l) {
    const DataParallelMode mode = data_parallel_mode(s, l);
    return l.dp > 1 && (mode == DataParallelMode::DistributedOptimizer || mode == DataParallelMode::MegatronFsdp);
}

// The TP overlap the plan priced (tp_overlap): Transformer Engine's userbuffers, where the
// runtime has them and the layout and recipe allow them.
bool userbuffers_tp_overlap(const Scenario& s, const Layout& l) {
    return l.tp > 1 && tp_overlap(runtime(s), l, s.training.precision) == TpOverlap::Userbuffers;
}

void megatron_data_parallel(const Scenario& s, const Layout& l, Emitted& e) {
    // HSDP: the data-parallel ranks split into --num-distributed-optimizer-instances replicas, each
    // instance sharding over consecutive ranks (Megatron-LM d98e8a64 parallel_state.py); under
    // ZeRO-3 Megatron-FSDP replicates across them (--outer-dp-sharding-strategy no_shard, its
    // default, megatron/training/arguments.py), which torch FSDP2 under Megatron does not offer.
    const bool hsdp = l.dp_replicas() > 1;
    const DataParallelMode mode = data_parallel_mode(s, l);
    const bool fsdp2 = mode == DataParallelMode::TorchFsdp2;
    if (hsdp) arg(e, "--num-distributed-optimizer-instances", l.dp_replicas());
    if (mode == DataParallelMode::DistributedOptimizer) flag(e, "--use-distributed-optimizer");
    if (l.zero_stage == 2)
        e.notes.push_back("Megatron's distributed optimizer shards the optimizer state and reduce-scatters the gradients: the "
                          "planned ZeRO-2 runs as it");
    if (fsdp2) {
        // torch FSDP2: no pipeline or expert parallelism, no distributed optimizer, untied
        // embeddings, no gradient-accumulation fusion, a distributed checkpoint format.
        flag(e, "--use-torch-fsdp2");
        flag(e, "--no-gradient-accumulation-fusion");
        arg(e, "--ckpt-format", "torch_dist");
    } else if (mode == DataParallelMode::MegatronFsdp) {
        flag(e, "--use-megatron-fsdp");
        arg(e, "--data-parallel-sharding-strategy", "optim_grads_params");
        arg(e, "--ckpt-format", "fsdp_dtensor");
        e.notes.push_back("ZeRO-3 with pipeline or expert parallelism, tied embeddings, fp16 or shard groups runs as Megatron-FSDP "
                          "(--use-torch-fsdp2 refuses them)");
    }
    if (l.dp > 1) flag(e, "--overlap-grad-reduce");
    if (overlaps_param_gather(s, l)) flag(e, "--overlap-param-gather");
    if (l.optimizer_offload) {
        flag(e, "--optimizer-cpu-offload");
        arg(e, "--optimizer-offload-fraction", "1.0");
        flag(e, "--use-precision-aware-optimizer");
    }
}

void megatron_tp_overlap(const Scenario& s, const Layout& l, Emitted& e) {
    if (l.tp <= 1) return;
    if (userbuffers_tp_overlap(s, l)) flag(e, "--tp-comm-overlap");
    if (tp_overlap(runtime(s), l, s.training.precision) == TpOverlap::TeNcclBackward && l.sequence_parallel)
        e.notes.push_back("no --tp-comm-overlap: Transformer Engine's userbuffers carry no " + std::string(s.training.precision.name) +
                          " buffers, so the plan priced the TP collectives on its NCCL path (the backward's beside the other GEMM)");
}

Emitted megatron(const Scenario& s, const Layout& l) {
    Emitted e;
    e.format = EmitFormat::Megatron;
    apply_features(s, l, e, EmitFormat::Megatron);
    arg(e, "--micro-batch-size", l.microbatch);
    arg(e, "--global-batch-size", s.training.global_batch);
    arg(e, "--tensor-model-parallel-size", l.tp);
    arg(e, "--pipeline-model-parallel-size", l.pp);
    arg(e, "--context-parallel-size", l.cp);
    if (l.sequence_parallel && l.tp > 1) flag(e, "--sequence-parallel");
    megatron_tp_overlap(s, l, e);
    megatron_pipeline(s, l, e);
    const auto& pp_inside_dp = candidate_rank_orders()[1];
    if (l.rank_order == pp_inside_dp) flag(e, "--use-tp-pp-dp-mapping");
    else if (l.rank_order != Layout{}.rank_order)
        e.notes.push_back("rank order " + rank_order_text(l.rank_order) + " has no Megatron flag (it offers " +
                          rank_order_text(Layout{}.rank_order) + " and, with --use-tp-pp-dp-mapping, " + rank_order_text(pp_inside_dp) + ")");
    megatron_recompute(s, l, e);
    megatron_data_parallel(s, l, e);
    for (std::size_t i = 0; i < e.args.size(); ++i) {
        const auto& [name, value] = e.args[i];
        e.text += (i ? " \\\n  " : "  ") + name + (value ? " " + (value->find_first_of("[]()|*") != std::string::npos ? "\"" + *value + "\"" : *value) : "");
    }
    e.text += "\n";
    return e;
}

// ---- Megatron-Bridge ----------------------------------------------------------------------
//
// Overrides of the ConfigContainer (section.field=value) that Megatron-Bridge's
// scripts/training/run_recipe.py takes after the recipe it starts from. The recipe (or model
// provider) builds the model; the overrides set every knob of the plan, the ones it leaves off
// included (null, false), so that no recipe default the plan did not price survives: a recipe's
// VP, recompute or offload would otherwise stay beside the plan's. The decisions are the
// Megatron export's (pipeline_split, megatron_recompute_modules, dispatcher_setting,
// data_parallel_mode, tp_overlap): Bridge configures the same Megatron-Core.

void set(Emitted& e, const std::string& path, const json& value) {
    const auto dot = path.find('.');
    if (dot == std::string::npos) e.settings[path] = value;
    else e.settings[path.substr(0, dot)][path.substr(dot + 1)] = value;
}


// A value as an OmegaConf dot-list override reads it: true/false, null, numbers as written,
// lists as [a,b]; a string YAML would read as something else, or that holds its flow or block
// indicators (Megatron's pipeline layout: "Et|tt|L"), in double quotes.
std::string bridge_value(const json& v) {
    if (v.is_null()) return "null";
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    if (v.is_array()) {
        std::string out = "[";
        for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + bridge_value(v[i]);
        return out + "]";
    }
    if (!v.is_string()) return v.dump();
    const std::string text = v.get<std::string>();
    const bool plain = !text.empty() && text.find_first_of("|[]{}:#,&*!%@`'\" ()") == std::string::npos &&
                       text != "true" && text != "false" && text != "null";
    return plain ? text : json(text).dump();
}

// One shell word: single-quoted where the shell would read its characters.
std::string shell_word(const std::string& word) {
    if (word.find_first_of("|[]{}()*?&;<>$`\"' !#~") == std::string::npos) return word;
    std::string out = "'";
    for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The named mixed-precision recipe (src/megatron/bridge/training/mixed_precision.py) that runs
// the plan's precision, per-tensor FP8 with the runtime's scaling (current, or delayed where the
// generation prices it so); nullopt where Bridge names none (torchao's row-wise FP8).
std::optional<std::string> bridge_mixed_precision(const PrecisionRecipe& r, const RuntimeProfile& runtime) {
    const std::string_view p = r.name;
    if (p == "bf16") return "bf16_mixed";
    if (p == "fp16") return "fp16_mixed";
    if (p == "fp8") return runtime.fp8_delayed_scaling ? "bf16_with_fp8_delayed_scaling_mixed" : "bf16_with_fp8_current_scaling_mixed";
    if (p == "fp8_blockwise") return "bf16_with_fp8_subchannel_scaling_mixed";
    if (p == "mxfp8") return "bf16_with_mxfp8_mixed";
    if (p == "nvfp4") return "bf16_with_nvfp4_mixed";
    return std::nullopt;
}

// Megatron-Bridge v0.6.0's library recipes for the shapes Sextant ships presets of:
// run_recipe.py --model STEM loads STEM_pretrain_config (src/megatron/bridge/recipes/*/__init__.py).
std::optional<std::string_view> bridge_model_stem(const ModelSpec& m) {
    struct Known {
        std::string_view stem;
        std::int64_t layers, hidden, experts;
    };
    static constexpr Known kKnown[] = {
        {"llama3_8b", 32, 4096, 0},          {"llama3_70b", 80, 8192, 0},           {"llama31_405b", 126, 16384, 0},
        {"deepseek_v3", 61, 7168, 256},      {"qwen3_235b_a22b", 94, 4096, 128},    {"qwen3_30b_a3b", 48, 2048, 128},
        {"qwen3_next_80b_a3b", 48, 2048, 512}, {"gpt_oss_120b", 36, 2880, 128},     {"nemotron_3_nano", 52, 2688, 128},
        {"nemotron_3_super", 88, 4096, 512}, {"nemotronh_56b", 118, 8192, 0},       {"nemotronh_8b", 52, 4096, 0},
        {"gpt3_175b", 96, 12288, 0}};
    const std::int64_t experts = m.is_moe() ? m.moe.experts : 0;
    for (const Known& k : kKnown)
        if (m.layers == k.layers && m.hidden == k.hidden && experts == k.experts) return k.stem;
    return std::nullopt;
}

void bridge_pipeline(const Scenario& s, const Layout& l, Emitted& e) {
    PipelineSplit p;
    if (l.pp > 1 && !s.model.is_hybrid()) p = pipeline_split(s, l);
    else p.vp = l.vp;
    megatron_schedule_note(l, e);
    // A hybrid model's split is its layer pattern cut with | into every virtual stage (Megatron-Core
    // cd4afffa64 parse_hybrid_pattern); Bridge's hybrid provider takes it as hybrid_layer_pattern,
    // refuses it beside the deprecated hybrid_override_pattern a recipe may still set, and appends
    // the recipe's MTP pattern itself (models/hybrid/hybrid_provider.py finalize).
    if (l.pp > 1 && s.model.is_hybrid()) {
        set(e, "model.hybrid_layer_pattern", hybrid_main_pattern(s, l));
        set(e, "model.hybrid_override_pattern", json());
    }
    set(e, "model.virtual_pipeline_model_parallel_size", p.vp > 1 ? json(p.vp) : json());
    set(e, "model.num_layers_in_first_pipeline_stage", p.first > 0 ? json(p.first) : json());
    set(e, "model.num_layers_in_last_pipeline_stage", p.last > 0 ? json(p.last) : json());
    set(e, "model.pipeline_model_parallel_layout", p.layout.empty() ? json() : json(p.layout));
}

void bridge_moe(const Scenario& s, const Layout& l, Emitted& e) {
    if (!s.model.is_moe()) return;
    const MoeSpec& moe = s.model.moe;
    set(e, "model.expert_model_parallel_size", l.ep);
    set(e, "model.expert_tensor_parallel_size", l.etp);
    const MoeDispatcher d = dispatcher(s, l);
    const DispatcherSetting setting = dispatcher_setting(d);
    set(e, "model.moe_token_dispatcher_type", setting.type);
    if (setting.flex_backend) set(e, "model.moe_flex_dispatcher_backend", setting.flex_backend);
    set(e, "model.moe_grouped_gemm", true);
    set(e, "model.moe_expert_capacity_factor", moe.capacity_factor > 0 ? json(moe.capacity_factor) : json());
    set(e, "model.moe_pad_expert_input_to_capacity", moe.capacity_factor > 0 && moe.pad_to_capacity);
    deepep_padding_note(d, moe, "moe_flex_dispatcher_backend=hybridep", e);
    // Megatron-Bridge's recipes pair the all-to-all overlap with the delayed weight-gradient
    // GEMMs; both are the comm_overlap section's (bridge_overlaps).
    set(e, "comm_overlap.overlap_moe_expert_parallel_comm", l.ep_a2a_overlap);
    set(e, "comm_overlap.delay_wgrad_compute", l.ep_a2a_overlap);
    if (l.ep_a2a_overlap && s.model.mtp_layers > 1)
        e.notes.push_back(fmt::format("Megatron-Core runs the all-to-all overlap with at most one MTP layer (transformer_config.py): "
                                      "the model's {} need comm_overlap.overlap_moe_expert_parallel_comm=false",
                                      s.model.mtp_layers));
}

void bridge_recompute(const Scenario& s, const Layout& l, Emitted& e) {
    const bool selective = l.recompute == Recompute::Selective, full = l.recompute == Recompute::Full;
    set(e, "model.recompute_granularity", selective ? json("selective") : full ? json("full") : json());
    if (selective) set(e, "model.recompute_modules", megatron_recompute_modules(s, l, e));
    set(e, "model.recompute_method", full ? json("uniform") : json());
    set(e, "model.recompute_num_layers", full ? json(1) : json());
    set(e, "model.cpu_offloading", l.activation_offload_layers > 0);
    if (l.activation_offload_layers > 0) set(e, "model.cpu_offloading_num_layers", l.activation_offload_layers);
    set(e, "model.fine_grained_activation_offloading", l.offload_modules != 0);
    if (l.offload_modules != 0) {
        set(e, "model.offload_modules", offload_module_names(l.offload_modules));
        set(e, "model.activation_offload_fraction", l.offload_fraction);
    }
}

void bridge_data_parallel(const Scenario& s, const Layout& l, Emitted& e) {
    const DataParallelMode mode = data_parallel_mode(s, l);
    const bool megatron_fsdp = mode == DataParallelMode::MegatronFsdp;
    // Megatron-FSDP always runs the distributed optimizer: Bridge's validation switches it on
    // (config.py _validate_and_apply_megatron_fsdp_configs), so it is set as it will run.
    const bool distributed_optimizer = mode == DataParallelMode::DistributedOptimizer || megatron_fsdp;
    if (l.zero_stage == 2)
        e.notes.push_back("Megatron's distributed optimizer shards the optimizer state and reduce-scatters the gradients: the "
                          "planned ZeRO-2 runs as it");
    set(e, "ddp.use_distributed_optimizer", distributed_optimizer);
    set(e, "optimizer.use_distributed_optimizer", distributed_optimizer);
    // Either switch turns Megatron-FSDP on (ConfigContainer validation sets both); it saves in
    // its own checkpoint format and needs more than one CUDA connection.
    set(e, "ddp.use_megatron_fsdp", megatron_fsdp);
    set(e, "dist.use_megatron_fsdp", megatron_fsdp);
    set(e, "dist.use_torch_fsdp2", mode == DataParallelMode::TorchFsdp2);
    if (megatron_fsdp) {
        set(e, "ddp.data_parallel_sharding_strategy", "optim_grads_params");
        set(e, "checkpoint.ckpt_format", "fsdp_dtensor");
        e.notes.push_back("Megatron-FSDP refuses CUDA_DEVICE_MAX_CONNECTIONS=1: leave it unset (or above 1) in the launch environment");
    }
    set(e, "ddp.num_distributed_optimizer_instances", l.dp_replicas());
    set(e, "optimizer.optimizer_cpu_offload", l.optimizer_offload);
    if (l.optimizer_offload) {
        set(e, "optimizer.optimizer_offload_fraction", 1.0);
        set(e, "optimizer.use_precision_aware_optimizer", true);
    }
}

// The overlaps the plan priced. A recipe's comm_overlap section (CommOverlapConfig) owns them:
// its setup, after the overrides, rewrites the model's TP and all-to-all overlap and, with the
// distributed optimizer, DDP's gradient and parameter overlap from its own fields
// (src/megatron/bridge/training/comm_overlap.py), so they are set there, and DDP's beside them
// for the data parallelism setup leaves alone.
void bridge_overlaps(const Scenario& s, const Layout& l, Emitted& e) {
    set(e, "comm_overlap.tp_comm_overlap", userbuffers_tp_overlap(s, l));
    for (const char* section : {"comm_overlap", "ddp"}) {
        set(e, std::string(section) + ".overlap_grad_reduce", l.dp > 1);
        set(e, std::string(section) + ".overlap_param_gather", overlaps_param_gather(s, l));
    }
    e.notes.push_back("the comm_overlap.* overrides need the recipe's comm_overlap section (Megatron-Bridge v0.6.0's model recipes "
                      "set one); a recipe built on recipes/common.py has none (comm_overlap=None): there set model.tp_comm_overlap, "
                      "model.overlap_moe_expert_parallel_comm and model.delay_wgrad_compute to the same values instead");
}

Emitted megatron_bridge(const Scenario& s, const Layout& l) {
    Emitted e;
    e.format = EmitFormat::MegatronBridge;
    set(e, "train.global_batch_size", s.training.global_batch);
    set(e, "train.micro_batch_size", l.microbatch);
    set(e, "dataset.seq_length", s.training.seq_len);
    set(e, "model.tensor_model_parallel_size", l.tp);
    set(e, "model.pipeline_model_parallel_size", l.pp);
    set(e, "model.context_parallel_size", l.cp);
    set(e, "model.sequence_parallel", l.sequence_parallel && l.tp > 1);
    bridge_pipeline(s, l, e);
    bridge_moe(s, l, e);
    bridge_recompute(s, l, e);
    bridge_data_parallel(s, l, e);
    bridge_overlaps(s, l, e);
    const RuntimeProfile rt = runtime(s);
    if (const auto recipe = bridge_mixed_precision(s.training.precision, rt)) set(e, "mixed_precision", *recipe);
    else e.notes.push_back("Megatron-Bridge names no mixed-precision recipe for " + std::string(s.training.precision.name) +
                           ": the recipe's precision stays");
    if (s.training.precision.name == std::string_view("fp8") && !rt.fp8_delayed_scaling)
        e.notes.push_back("bf16_with_fp8_current_scaling_mixed keeps the first and the last transformer layer in BF16 "
                          "(mixed_precision.py), which the plan priced in FP8: set first_last_layers_bf16=False on the "
                          "recipe's MixedPrecisionConfig, as Megatron-Bridge's performance scripts do "
                          "(scripts/performance/utils/precision.py)");
    if (s.training.optimizer.kind == OptimizerKind::Muon) set(e, "optimizer.optimizer", "muon");
    const auto& pp_inside_dp = candidate_rank_orders()[1];
    // Megatron-FSDP keeps the default order (ConfigContainer validation).
    const bool mapped = l.rank_order == pp_inside_dp && data_parallel_mode(s, l) != DataParallelMode::MegatronFsdp;
    set(e, "dist.use_tp_pp_dp_mapping", mapped);
    if (l.rank_order == pp_inside_dp && !mapped)
        e.notes.push_back("Megatron-FSDP keeps Megatron's default rank order: the plan's " + rank_order_text(l.rank_order) +
                          " runs as " + rank_order_text(Layout{}.rank_order));
    if (l.rank_order != Layout{}.rank_order && l.rank_order != pp_inside_dp)
        e.notes.push_back("rank order " + rank_order_text(l.rank_order) + " has no Megatron-Bridge setting (it offers " +
                          rank_order_text(Layout{}.rank_order) + " and, with dist.use_tp_pp_dp_mapping, " + rank_order_text(pp_inside_dp) + ")");
    if (l.async_tp)
        e.notes.push_back("Megatron-Bridge has no PyTorch async TP: its TP overlap is comm_overlap.tp_comm_overlap (Transformer "
                          "Engine userbuffers); the plan's async_tp is not set");
    const auto stem = bridge_model_stem(s.model);
    if (stem)
        e.notes.push_back(fmt::format("the model is recipe {}_pretrain_config's (run_recipe.py --model {}): these overrides set the "
                                      "plan, not the architecture",
                                      *stem, *stem));
    else
        e.notes.push_back(fmt::format("Megatron-Bridge v0.6.0 ships no recipe of {} ({} layers, hidden {}, {} heads): start from a "
                                      "recipe whose model provider builds it (--recipe); these overrides set the plan, not the "
                                      "architecture",
                                      s.model.name, s.model.layers, s.model.hidden, s.model.heads));
    // One override per line, in section order, as the launcher reads them (OmegaConf dot-list
    // values: true/false, null, [a,b], numbers; a string with YAML's special characters quoted).
    e.text = "# Megatron-Bridge: python scripts/training/run_recipe.py " +
             (stem ? "--model " + std::string(*stem) : std::string("--recipe <the model's pretrain recipe>")) + " --mode pretrain \\\n";
    std::vector<std::string> lines;
    for (const auto& [section, value] : e.settings.items()) {
        if (!value.is_object()) {
            lines.push_back(section + "=" + bridge_value(value));
            continue;
        }
        for (const auto& [field, v] : value.items()) lines.push_back(section + "." + field + "=" + bridge_value(v));
    }
    for (std::size_t i = 0; i < lines.size(); ++i) e.text += "  " + shell_word(lines[i]) + (i + 1 < lines.size() ? " \\\n" : "\n");
    return e;
}

// ---- torchtitan ---------------------------------------------------------------------------

// The modules of each pipeline stage, in stage order. Looped schedules put stage v x pp + p on
// rank p as its chunk v; V-shaped ones (ZBVZeroBubble, DualPipeV: torchtitan's "v" style) put
// stage pp + i on rank pp - 1 - i as its chunk 1.
json module_fqns(const Layout& l) {
    const std::vector<std::int64_t> stages = virtual_stage_layers(l, l.schedule_def().placement == Placement::V);
    json out = json::array();
    std::int64_t layer = 0;
    for (std::size_t s = 0; s < stages.size(); ++s) {
        json part = json::array();
        if (s == 0) part.push_back("tok_embeddings");
        for (std::int64_t i = 0; i < stages[s]; ++i) part.push_back("layers." + num(layer++));
        if (s + 1 == stages.size()) {
            part.push_back("norm");
            part.push_back("output");
        }
        out.push_back(part);
    }
    return out;
}

Emitted torchtitan(const Scenario& s, const Layout& l, EmitFormat format) {
    Emitted e;
    e.format = format;
    const bool old = format == EmitFormat::TorchtitanToml;
    // torchtitan's DDP takes no other parallelism; with TP, PP or CP the data-parallel ranks are
    // FSDP's. Its FSDP shards weights and gradients too (ZeRO-2 when weights stay gathered after
    // forward, ZeRO-3 when they are freed).
    const bool alone = l.tp == 1 && l.pp == 1 && l.cp == 1 && l.ep == 1;
    const bool ddp = l.zero_stage == 0 && alone;
    // HSDP: dp_shard inside dp_replicate in torchtitan's device mesh (parallel_dims.py, b5bcd76c).
    key(e, "parallelism", "data_parallel_replicate_degree", ddp ? l.dp : l.dp_replicas());
    key(e, "parallelism", "data_parallel_shard_degree", ddp ? 1 : l.shard_dp());
    if (!ddp) key(e, "parallelism", "fsdp_reshard_after_forward", l.zero_stage == 3 ? "always" : "never");
    if (!ddp && l.zero_stage <= 1)
        e.notes.push_back(fmt::format("torchtitan has no ZeRO-{} with {}: its DDP takes no other parallelism, so the {} data-parallel "
                                      "ranks run FSDP without resharding after forward (ZeRO-2: weights and gradients sharded "
                                      "too, one gather and one reduce-scatter per step)",
                                      l.zero_stage, alone ? "expert parallelism" : "tensor, pipeline or context parallelism", l.dp));
    key(e, "parallelism", "tensor_parallel_degree", l.tp);
    if (!old) key(e, "parallelism", "enable_sequence_parallel", l.sequence_parallel || l.tp == 1);
    else if (!l.sequence_parallel && l.tp > 1)
        e.notes.push_back("torchtitan v0.2.2's tensor parallelism always shards the sequence in norms (sequence parallel)");
    key(e, "parallelism", "context_parallel_degree", l.cp);
    key(e, "parallelism", "expert_parallel_degree", l.ep);
    if (old && s.model.is_moe()) key(e, "parallelism", "expert_tensor_parallel_degree", l.tp);
    key(e, "parallelism", "pipeline_parallel_degree", l.pp);
    if (l.pp > 1) {
        if (const char* name = l.schedule_def().torchtitan) {
            key(e, "parallelism", "pipeline_parallel_schedule", name);
        } else {
            key(e, "parallelism", "pipeline_parallel_schedule", l.vp > 1 ? "Interleaved1F1B" : "1F1B");
            e.notes.push_back(fmt::format("torchtitan ships no {} schedule: the export runs {}", schedule_name(l.schedule),
                                          l.vp > 1 ? "Interleaved1F1B" : "1F1B"));
        }
        key(e, "parallelism", "module_fqns_per_model_part", module_fqns(l));
    }
    const std::int64_t microbatches = l.microbatches(s.training.global_batch);
    if (old) {
        // local_batch_size: sequences per data-parallel rank per step (microbatch x accumulation);
        // with PP they are split into pipeline microbatches of pipeline_parallel_microbatch_size.
        const std::int64_t local = l.pp > 1 ? l.microbatch * microbatches : l.microbatch;
        key(e, "training", "local_batch_size", local);
        key(e, "training", "global_batch_size", s.training.global_batch);
        key(e, "training", "seq_len", s.training.seq_len);
        if (l.pp > 1) key(e, "parallelism", "pipeline_parallel_microbatch_size", l.microbatch);
    } else {
        // Token counts: microbatch x seq per forward, num_pp_microbatches x dp x accumulation of them per step.
        key(e, "training", "num_tokens_per_microbatch_per_dp_rank", l.microbatch * s.training.seq_len);
        key(e, "training", "num_tokens_per_train_step", s.training.global_batch * s.training.seq_len);
        key(e, "training", "max_context_length", s.training.seq_len);
        if (l.pp > 1) key(e, "parallelism", "num_pp_microbatches", microbatches);
    }
    if (l.optimizer_offload) {
        key(e, "training", "enable_cpu_offload", true);
        e.notes.push_back("torchtitan's CPU offload moves parameters and gradients to the host too, not only the optimizer "
                          "state: expect more host traffic than planned");
    }
    if (old) {
        key(e, "activation_checkpoint", "mode", recompute_name(l.recompute));
        if (l.recompute == Recompute::Selective) key(e, "activation_checkpoint", "selective_ac_option", "op");
    } else {
        key(e, "activation_checkpoint", "class", l.recompute == Recompute::Full ? "FullAC" : l.recompute == Recompute::Selective ? "SelectiveAC" : "none");
    }
    // A compiled runtime's profile prices torch.compile's fused elementwise kernels (its
    // memory_traffic_factor), so its export compiles the model; an eager one's does not.
    key(e, "compile", "enable", runtime(s).torch_compile);
    if (l.activation_offload_layers > 0)
        e.notes.push_back(fmt::format("torchtitan has no activation offloading: the plan's {} offloaded layers per stage keep their "
                                      "activations on the GPU (choose a plan without it, or recompute them)",
                                      l.activation_offload_layers));
    if (l.offload_modules != 0)
        e.notes.push_back("torchtitan has no activation offloading: the plan's offloaded module inputs (" + offload_modules_text(l.offload_modules) +
                          ") stay on the GPU");
    if (l.rank_order != Layout{}.rank_order)
        e.notes.push_back("torchtitan builds its device mesh in its own order (pp, dp, cp, tp outermost to innermost): rank order " +
                          rank_order_text(l.rank_order) + " is not a setting");
    apply_features(s, l, e, format);

    // Render.
    const json& st = e.settings;
    if (old) {
        for (const auto& [section, keys] : st.items()) {
            e.text += "[" + section + "]\n";
            for (const auto& [k, v] : keys.items()) e.text += k + " = " + v.dump() + "\n";
            e.text += "\n";
        }
        return e;
    }
    const json m = st.contains("model") ? st["model"] : json::object();
    const bool named = m.contains("flavor");
    const std::string converter = m.contains("converters") ? m["converters"][0].get<std::string>() : "";
    const std::string converters = converter.empty() ? "" : ", converters=[" + converter + ".Config()]";
    e.text += "# torchtitan: apply to the Trainer.Config of a config_registry function\n";
    e.text += "from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig\n";
    if (!converters.empty()) e.text += "from torchtitan.components.quantization import " + converter + "\n";
    const std::string ac = st["activation_checkpoint"]["class"];
    if (ac != "none") e.text += "from torchtitan.distributed.activation_checkpoint import " + ac + "\n";
    if (named) e.text += "from torchtitan.models." + m["name"].get<std::string>() + " import model_registry\n";
    e.text += "\n";
    if (named) e.text += "config.model_spec = model_registry(\"" + m["flavor"].get<std::string>() + "\"" + converters + ")\n";
    else if (!converters.empty()) e.text += "# the registered model's spec takes converters=[" + converter + ".Config()]\n";
    // The Trainer.Config fields and their classes (torchtitan/trainer.py, configs.py at b5bcd76c).
    for (const auto& [section, cls] : {std::pair{"parallelism", "ParallelismConfig"}, std::pair{"training", "TrainingConfig"},
                                       std::pair{"compile", "CompileConfig"}}) {
        e.text += "config." + std::string(section) + " = " + std::string(cls) + "(\n";
        for (const auto& [k, v] : st[section].items()) {
            std::string value = v.is_boolean() ? (v.get<bool>() ? "True" : "False") : v.dump();
            e.text += "    " + k + "=" + value + ",\n";
        }
        e.text += ")\n";
    }
    if (ac != "none") e.text += "config.activation_checkpoint = " + ac + ".Config()\n";
    return e;
}

// ---- DeepSpeed ----------------------------------------------------------------------------

Emitted deepspeed(const Scenario& s, const Layout& l) {
    Emitted e;
    e.format = EmitFormat::DeepSpeed;
    json& cfg = e.settings;
    cfg["train_batch_size"] = s.training.global_batch;
    cfg["train_micro_batch_size_per_gpu"] = l.microbatch;
    cfg["gradient_accumulation_steps"] = l.microbatches(s.training.global_batch);
    cfg["zero_optimization"] = {{"stage", l.zero_stage}, {"overlap_comm", true}, {"contiguous_gradients", true}};
    if (l.optimizer_offload) cfg["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    // HSDP: DeepSpeed's MiCS shards ZeRO-3 inside groups of mics_shard_size ranks and all-reduces
    // across them at the accumulation boundary (deepspeed/runtime/zero/mics.py, config.py,
    // edaa7221); ZeRO++'s zero_hpz_partition_size keeps only a secondary copy of the weights in
    // the group, not the whole state. ZeRO-1/2 have no shard groups.
    if (l.dp_replicas() > 1 && l.zero_stage == 3) {
        cfg["zero_optimization"]["mics_shard_size"] = l.shard_dp();
        if (l.tp * l.cp > 1)
            e.notes.push_back("MiCS forms its shard groups over world ranks (mics_utils.py _generate_mics_config): with tensor or "
                              "context parallelism check that its groups are the plan's data-parallel shard groups");
    } else if (l.dp_replicas() > 1) {
        e.notes.push_back(fmt::format("DeepSpeed shards ZeRO-{} over every data-parallel rank: the plan's shard groups of {} "
                                      "(replicated {} times) have no DeepSpeed setting; MiCS (mics_shard_size) is ZeRO-3 only",
                                      l.zero_stage, l.shard_dp(), l.dp_replicas()));
    }
    if (l.tp > 1) cfg["tensor_parallel"] = {{"autotp_size", l.tp}};
    if (l.recompute != Recompute::None)
        cfg["activation_checkpointing"] = {{"partition_activations", l.tp > 1}, {"contiguous_memory_optimization", false}};
    if (l.pp > 1)
        e.notes.push_back(fmt::format("pipeline parallelism is set in code: PipelineModule(num_stages={}, partition_method="
                                      "\"uniform\")",
                                      l.pp));
    if (l.pp > 1 && l.zero_stage >= 2) e.notes.push_back("DeepSpeed's pipeline engine supports ZeRO stage 0 or 1 only");
    if (l.cp > 1)
        e.notes.push_back(fmt::format("context parallelism {}: DeepSpeed-Ulysses (sequence_parallel_size) splits heads, not the "
                                      "sequence ring the plan assumes",
                                      l.cp));
    if (l.vp > 1 || l.schedule != Schedule::OneFOneB)
        e.notes.push_back(fmt::format("DeepSpeed's pipeline engine runs 1F1B only: the plan's {} schedule{} becomes 1F1B", schedule_name(l.schedule),
                                      l.vp > 1 ? " and vp" : ""));
    if (l.recompute == Recompute::Selective) e.notes.push_back("DeepSpeed checkpoints whole layers: selective recompute becomes full");
    if (l.activation_offload_layers > 0)
        e.notes.push_back(fmt::format("DeepSpeed offloads only checkpointed layer inputs (activation_checkpointing.cpu_checkpointing): "
                                      "the plan's {} offloaded layers per stage are not set",
                                      l.activation_offload_layers));
    if (l.offload_modules != 0)
        e.notes.push_back("DeepSpeed offloads no module inputs: the plan's (" + offload_modules_text(l.offload_modules) + ") stay on the GPU");
    if (l.sequence_parallel && l.tp > 1) e.notes.push_back("DeepSpeed's AutoTP has no Megatron sequence parallelism");
    apply_features(s, l, e, EmitFormat::DeepSpeed);
    e.text = cfg.dump(2) + "\n";
    return e;
}
}  // namespace

EmitTarget emit_target(EmitFormat format) {
    switch (format) {
        case EmitFormat::Megatron: return kMegatron;
        case EmitFormat::Torchtitan: return kTorchtitan;
        case EmitFormat::TorchtitanToml: return kTorchtitanToml;
        case EmitFormat::DeepSpeed: return kDeepSpeed;
        case EmitFormat::MegatronBridge: return kMegatronBridge;
    }
    return kMegatron;
}

json Emitted::to_json() const {
    json doc = {{"format", emit_format_name(format)}, {"target", emit_target(format).version}};
    if (format == EmitFormat::Megatron) {
        json list = json::array();
        for (const auto& [name, value] : args) list.push_back(value ? json::array({name, *value}) : json::array({name}));
        doc["args"] = list;
    } else {
        doc["settings"] = settings;
    }
    doc["notes"] = notes;
    doc["text"] = text;
    return doc;
}

std::string emit_format_name(EmitFormat format) {
    switch (format) {
        case EmitFormat::Megatron: return "megatron";
        case EmitFormat::Torchtitan: return "torchtitan";
        case EmitFormat::TorchtitanToml: return "torchtitan-toml";
        case EmitFormat::DeepSpeed: return "deepspeed";
        case EmitFormat::MegatronBridge: return "megatron-bridge";
    }
    return "megatron";
}

EmitFormat parse_emit_format(const std::string& name) {
    constexpr EmitFormat kAll[] = {EmitFormat::Megatron, EmitFormat::MegatronBridge, EmitFormat::Torchtitan, EmitFormat::TorchtitanToml,
                                   EmitFormat::DeepSpeed};
    std::vector<std::string> names;
    for (EmitFormat f : kAll) {
        if (emit_format_name(f) == name) return f;
        names.push_back(emit_format_name(f));
    }
    throw InputError("--emit", "\"" + name + "\"", "must be one of " + fmt::format("{}", fmt::join(names, ", ")) + "; " + suggestion_text(name, names));
}

Emitted emit_plan(EmitFormat format, const Scenario& s, const Layout& l) {
    Layout layout = l;
    if (layout.stage_layers.empty()) layout.stage_layers = default_stage_split(s.model.layers, layout.pp);
    switch (format) {
        case EmitFormat::Megatron: return megatron(s, layout);
        case EmitFormat::Torchtitan:
        case EmitFormat::TorchtitanToml: return torchtitan(s, layout, format);
        case EmitFormat::DeepSpeed: return deepspeed(s, layout);
        case EmitFormat::MegatronBridge: return megatron_bridge(s, layout);
    }
    return megatron(s, layout);
}

}  // namespace sextant
