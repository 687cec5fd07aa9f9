#include "memory/stage_params.hpp"

#include "model/params.hpp"

namespace sextant {

namespace {
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> stage_layer_ranges(const Layout& l) {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    std::int64_t first = 0;
    for (auto n : l.stage_layers) {
        ranges.emplace_back(first, first + n);
        first += n;
    }
    return ranges;
}

StageParams layer_params_per_gpu(const ModelSpec& m, const Layout& l, std::int64_t layer) {
    return layer_params_of_kind(m, l, m.layer_is_moe(layer));
}

StageParams layer_params_of_kind(const ModelSpec& m, const Layout& l, bool moe) {
    const double tp = d(l.tp);
    StageParams p;
    // Norms are replicated across TP ranks; everything else is split by Megatron's TP.
    p.dense = attention_params_per_layer(m) / tp + 2.0 * norm_params(m);
    if (!moe) {
        p.dense += mlp_params(m, m.ffn_hidden) / tp;
        return p;
    }
    p.dense += d(m.hidden) * d(m.moe.experts);  // router, replicated
    p.dense += d(m.moe.shared_experts) * mlp_params(m, m.moe.shared_ffn_hidden) / tp;
    p.expert = d(m.moe.experts) / d(l.ep) * routed_expert_params(m) / d(l.etp);
    return p;
}

double adapter_params(const Scenario& s, const Layout& l, std::int64_t layers) {
    if (s.training.mode != TrainingMode::Lora) return 0.0;
    return d(layers) * lora_params_per_layer(s.model, s.training.lora.rank) / d(l.tp);
}

StageParams stage_params(const ModelSpec& m, const Layout& l, std::int64_t stage) {
    LayerParams layers(m, l);
    return stage_params(m, l, stage, layers);
}

StageParams stage_params(const ModelSpec& m, const Layout& l, std::int64_t stage, LayerParams& layer_params) {
    std::int64_t begin = 0;
    for (std::int64_t k = 0; k < stage; ++k) begin += l.stage_layers[static_cast<std::size_t>(k)];
    const std::pair<std::int64_t, std::int64_t> range{begin, begin + l.stage_layers[static_cast<std::size_t>(stage)]};
    StageParams p;
    for (std::int64_t layer = range.first; layer < range.second; ++layer) {
        const StageParams& lp = layer_params(layer);
        p.dense += lp.dense;
        p.expert += lp.expert;
    }
    const double tp = d(l.tp), h = d(m.hidden), vocab_shard = d(m.vocab) * h / tp;
    const bool first = stage == 0, last = stage == l.pp - 1;
    if (first) {
        p.dense += vocab_shard;
        if (m.position == PositionKind::Learned) p.dense += d(m.max_positions) * h;
    }
    if (last) {
        // With pp > 1 a tied output layer still needs the embedding on the last stage: Megatron
        // keeps a copy there and all-reduces its gradient with the first stage.
        if (!m.tied_embeddings || l.pp > 1) p.dense += vocab_shard;
        p.dense += norm_params(m);
        // Each MTP module: a layer of the last layer's kind, a 2h -> h projection and norms; it
        // shares the embedding and output head already counted.
        for (std::int64_t k = 0; k < m.mtp_layers; ++k) {
            const StageParams& lp = layer_params(m.layers - 1);
            p.dense += lp.dense + 2.0 * h * h / tp + 3.0 * norm_params(m);
            p.expert += lp.expert;
        }
    }
    return p;
}

}  // namespace sextant
