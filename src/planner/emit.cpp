#include "planner/emit.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "planner/search_space.hpp"

namespace sextant {

namespace {

Emitted megatron(const Scenario& s, const Layout& l) {
    const ModelSpec& m = s.model;
    Emitted e;
    std::vector<std::string> a;
    auto arg = [&](const std::string& name, auto value) { a.push_back(fmt::format("--{} {}", name, value)); };
    arg("num-layers", m.layers);
    arg("hidden-size", m.hidden);
    if (m.ffn_hidden > 0) arg("ffn-hidden-size", m.ffn_hidden);
    arg("num-attention-heads", m.heads);
    if (m.kv_heads != m.heads && m.attention == AttentionKind::Standard) {
        a.push_back("--group-query-attention");
        arg("num-query-groups", m.kv_heads);
    }
    arg("seq-length", s.training.seq_len);
    arg("micro-batch-size", l.microbatch);
    arg("global-batch-size", s.training.global_batch);
    arg("tensor-model-parallel-size", l.tp);
    arg("pipeline-model-parallel-size", l.pp);
    if (l.cp > 1) arg("context-parallel-size", l.cp);
    if (m.is_moe()) {
        arg("num-experts", m.moe.experts);
        arg("moe-router-topk", m.moe.top_k);
        if (l.ep > 1) arg("expert-model-parallel-size", l.ep);
    }
    if (l.vp > 1) arg("num-layers-per-virtual-pipeline-stage", l.stage_layers[l.stage_layers.size() / 2] / l.vp);
    if (l.pp > 1 && l.stage_layers.front() != l.stage_layers[l.stage_layers.size() / 2]) {
        arg("decoder-first-pipeline-num-layers", l.stage_layers.front());
        arg("decoder-last-pipeline-num-layers", l.stage_layers.back());
    }
    if (l.sequence_parallel && l.tp > 1) a.push_back("--sequence-parallel");
    const auto& pp_inside_dp = candidate_rank_orders()[1];
    if (l.rank_order == pp_inside_dp) a.push_back("--use-tp-pp-dp-mapping");
    else if (l.rank_order != Layout{}.rank_order)
        e.notes.push_back("rank order " + rank_order_text(l.rank_order) + " has no Megatron flag (it offers " +
                          rank_order_text(Layout{}.rank_order) + " and, with --use-tp-pp-dp-mapping, " + rank_order_text(pp_inside_dp) + ")");
    if (l.recompute == Recompute::Selective) a.push_back("--recompute-granularity selective");
    if (l.recompute == Recompute::Full)
        a.push_back("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
    if (l.zero_stage == 1 || l.zero_stage == 2) a.push_back("--use-distributed-optimizer");
    if (l.zero_stage == 2)
        e.notes.push_back("Megatron's distributed optimizer shards optimizer state and reduce-scatters "
                          "gradients; the planned ZeRO-2 maps to it");
    if (l.zero_stage == 3) a.push_back("--use-torch-fsdp2");
    if (l.optimizer_offload) a.push_back("--optimizer-cpu-offload --optimizer-offload-fraction 1.0");
    if (l.dp > 1) a.push_back("--overlap-grad-reduce");
    if (l.dp > 1 && l.zero_stage >= 1) a.push_back("--overlap-param-gather");
    switch (s.training.precision.operands) {
        case Precision::Fp16: a.push_back("--fp16"); break;
        case Precision::Fp8: a.push_back("--bf16 --fp8-format hybrid"); break;
        default: a.push_back("--bf16"); break;
    }
    for (std::size_t i = 0; i < a.size(); ++i) e.text += (i ? " \\\n  " : "  ") + a[i];
    e.text += "\n";
    return e;
}

Emitted torchtitan(const Scenario& s, const Layout& l) {
    Emitted e;
    const bool fsdp = l.zero_stage >= 2;
    const char* schedule = l.schedule == Schedule::GPipe ? "GPipe"
                           : l.schedule == Schedule::Interleaved ? "Interleaved1F1B" : "1F1B";
    e.text += "[parallelism]\n";
    e.text += fmt::format("data_parallel_replicate_degree = {}\n", fsdp ? 1 : l.dp);
    e.text += fmt::format("data_parallel_shard_degree = {}\n", fsdp ? l.dp : 1);
    e.text += fmt::format("fsdp_reshard_after_forward = \"{}\"\n", l.zero_stage == 3 ? "always" : "never");
    e.text += fmt::format("tensor_parallel_degree = {}\n", l.tp);
    e.text += fmt::format("context_parallel_degree = {}\n", l.cp);
    e.text += fmt::format("expert_parallel_degree = {}\n", l.ep);
    e.text += fmt::format("pipeline_parallel_degree = {}\n", l.pp);
    if (l.pp > 1) {
        e.text += fmt::format("pipeline_parallel_schedule = \"{}\"\n", schedule);
        e.text += fmt::format("pipeline_parallel_microbatch_size = {}\n", l.microbatch);
    }
    e.text += "\n[training]\n";
    e.text += fmt::format("local_batch_size = {}\n", s.training.global_batch / l.dp);
    e.text += fmt::format("global_batch_size = {}\n", s.training.global_batch);
    e.text += fmt::format("seq_len = {}\n", s.training.seq_len);
    e.text += fmt::format("mixed_precision_param = \"{}\"\n",
                          s.training.precision.operands == Precision::Fp16 ? "float16" : "bfloat16");
    if (l.optimizer_offload) e.text += "enable_cpu_offload = true\n";
    e.text += "\n[activation_checkpoint]\n";
    e.text += fmt::format("mode = \"{}\"\n", recompute_name(l.recompute));
    if (l.recompute == Recompute::Selective) e.text += "selective_ac_option = \"op\"\n";
    if (l.optimizer_offload)
        e.notes.push_back("torchtitan's CPU offload moves parameters and gradients to the host too, not only the "
                          "optimizer state: expect more host traffic than planned");
    if (l.zero_stage == 1)
        e.notes.push_back("torchtitan has no ZeRO-1: data parallel replicas keep full optimizer state "
                          "(set data_parallel_shard_degree for FSDP instead)");
    if (!l.sequence_parallel && l.tp > 1)
        e.notes.push_back("torchtitan's tensor parallelism always shards the sequence in norms");
    if (l.pp > 1 && l.stage_layers.front() != l.stage_layers[l.stage_layers.size() / 2])
        e.notes.push_back(fmt::format("uneven stages ({} layers first and {} last) need a custom "
                                      "pipeline split in torchtitan", l.stage_layers.front(), l.stage_layers.back()));
    return e;
}

Emitted deepspeed(const Scenario& s, const Layout& l) {
    Emitted e;
    json cfg;
    cfg["train_batch_size"] = s.training.global_batch;
    cfg["train_micro_batch_size_per_gpu"] = l.microbatch;
    cfg["gradient_accumulation_steps"] = l.microbatches(s.training.global_batch);
    if (s.training.precision.operands == Precision::Fp16) cfg["fp16"] = {{"enabled", true}};
    else cfg["bf16"] = {{"enabled", true}};
    cfg["zero_optimization"] = {{"stage", l.zero_stage}, {"overlap_comm", true}, {"contiguous_gradients", true}};
    if (l.optimizer_offload)
        cfg["zero_optimization"]["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
    if (l.tp > 1) cfg["tensor_parallel"] = {{"autotp_size", l.tp}};
    if (l.recompute != Recompute::None)
        cfg["activation_checkpointing"] = {{"partition_activations", l.tp > 1}, {"contiguous_memory_optimization", false}};
    e.text = cfg.dump(2) + "\n";
    if (l.pp > 1)
        e.notes.push_back(fmt::format("pipeline parallelism is set in code: PipelineModule(num_stages={})", l.pp));
    if (l.pp > 1 && l.zero_stage >= 2)
        e.notes.push_back("DeepSpeed's pipeline engine supports ZeRO stage 0 or 1 only");
    if (l.cp > 1) e.notes.push_back(fmt::format("context parallelism {}: use DeepSpeed-Ulysses (sequence_parallel_size)", l.cp));
    if (l.vp > 1) e.notes.push_back("DeepSpeed has no interleaved pipeline schedule");
    if (l.recompute == Recompute::Selective)
        e.notes.push_back("DeepSpeed checkpoints whole layers: selective recompute becomes full");
    return e;
}
}  // namespace

EmitFormat parse_emit_format(const std::string& name) {
    if (name == "megatron") return EmitFormat::Megatron;
    if (name == "torchtitan") return EmitFormat::Torchtitan;
    if (name == "deepspeed") return EmitFormat::DeepSpeed;
    throw InputError("--emit", "\"" + name + "\"",
                     "must be megatron, torchtitan or deepspeed; " +
                         suggestion_text(name, {"megatron", "torchtitan", "deepspeed"}));
}

Emitted emit_plan(EmitFormat format, const Scenario& s, const Layout& l) {
    switch (format) {
        case EmitFormat::Megatron: return megatron(s, l);
        case EmitFormat::Torchtitan: return torchtitan(s, l);
        case EmitFormat::DeepSpeed: return deepspeed(s, l);
    }
    return megatron(s, l);
}

}  // namespace sextant
