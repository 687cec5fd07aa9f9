#include "spec/layout_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace sextant {

namespace {
constexpr FieldDef kLayoutFields[] = {
    {"tp", FieldType::Integer, "tensor-parallel degree", "", "1", 1, 1 << 24},
    {"pp", FieldType::Integer, "pipeline-parallel stages", "", "1", 1, 1 << 24},
    {"dp", FieldType::Integer, "data-parallel degree", "", "gpus/(tp*pp*cp)", 1, 1 << 24},
    {"cp", FieldType::Integer, "context-parallel degree", "", "1", 1, 1 << 24},
    {"ep", FieldType::Integer, "expert-parallel degree (divides dp*cp)", "", "1", 1, 1 << 24},
    {"vp", FieldType::Integer, "virtual pipeline chunks per stage (interleaved 1F1B)", "", "1", 1, 1 << 24},
    {"microbatch", FieldType::Integer, "sequences per microbatch", "sequences", "1", 1, 1 << 30},
    {"zero_stage", FieldType::Integer, "ZeRO stage (FSDP = 3)", "", "0", 0, 3},
    {"sequence_parallel", FieldType::Boolean, "Megatron sequence parallelism", "", "tp > 1"},
    {"optimizer_offload", FieldType::Boolean, "optimizer state and step on the host CPU (ZeRO-Offload)", "", "false"},
    {"recompute", FieldType::String, "activation recomputation", "", "none", -1e300, 1e300,
     "none|selective|full"},
    {"schedule", FieldType::String, "pipeline schedule", "", "1f1b (interleaved when vp > 1)",
     -1e300, 1e300, "gpipe|1f1b|interleaved"},
    {"stage_layers", FieldType::Array, "explicit layers per pipeline stage"},
    {"rank_order", FieldType::String, "parallel dimensions, fastest-varying first", "",
     "tp-cp-ep-dp-pp"},
};

Recompute parse_recompute(const std::string& s) {
    if (s == "selective") return Recompute::Selective;
    if (s == "full") return Recompute::Full;
    return Recompute::None;
}

Schedule parse_schedule(const std::string& s) {
    if (s == "gpipe") return Schedule::GPipe;
    if (s == "interleaved") return Schedule::Interleaved;
    return Schedule::OneFOneB;
}

std::array<ParallelDim, 5> parse_rank_order(const std::string& text, const std::string& path) {
    const std::string rule =
        "must name tp, cp, ep, dp and pp once each, fastest first, joined by '-' (e.g. "
        "tp-cp-ep-dp-pp)";
    std::array<ParallelDim, 5> order{};
    std::array<bool, 5> seen{};
    std::size_t count = 0, start = 0;
    while (start <= text.size()) {
        std::size_t dash = text.find('-', start);
        if (dash == std::string::npos) dash = text.size();
        std::string token = text.substr(start, dash - start);
        start = dash + 1;
        const std::vector<std::string> names = {"tp", "cp", "ep", "dp", "pp"};
        std::size_t index = names.size();
        for (std::size_t i = 0; i < names.size(); ++i)
            if (names[i] == token) index = i;
        if (index == names.size() || seen[index] || count >= 5)
            throw InputError(path, "\"" + text + "\"", rule);
        seen[index] = true;
        order[count++] = static_cast<ParallelDim>(index);
    }
    if (count != 5) throw InputError(path, "\"" + text + "\"", rule);
    return order;
}
}  // namespace

std::span<const FieldDef> layout_fields() { return kLayoutFields; }

LayoutSpec fixed_spec(const Layout& l) {
    LayoutSpec k;
    k.tp = l.tp;
    k.pp = l.pp;
    k.dp = l.dp;
    k.cp = l.cp;
    k.ep = l.ep;
    k.vp = l.vp;
    k.microbatch = l.microbatch;
    k.zero_stage = l.zero_stage;
    k.sequence_parallel = l.sequence_parallel;
    k.optimizer_offload = l.optimizer_offload;
    k.recompute = l.recompute;
    k.schedule = l.schedule;
    k.rank_order = l.rank_order;
    if (!l.stage_layers.empty()) k.stage_layers = l.stage_layers;
    return k;
}

LayoutSpec parse_layout(const json& object, const std::string& path) {
    ObjectReader r(object, path, kLayoutFields);
    LayoutSpec l;
    l.tp = r.integer("tp");
    l.pp = r.integer("pp");
    l.dp = r.integer("dp");
    l.cp = r.integer("cp");
    l.ep = r.integer("ep");
    l.vp = r.integer("vp");
    l.microbatch = r.integer("microbatch");
    l.zero_stage = r.integer("zero_stage");
    l.sequence_parallel = r.boolean("sequence_parallel");
    l.optimizer_offload = r.boolean("optimizer_offload");
    if (auto s = r.string("recompute")) l.recompute = parse_recompute(*s);
    if (auto s = r.string("schedule")) l.schedule = parse_schedule(*s);
    if (auto s = r.string("rank_order")) l.rank_order = parse_rank_order(*s, r.path_of("rank_order"));
    if (const json* split = r.raw("stage_layers")) {
        std::vector<std::int64_t> layers;
        for (std::size_t i = 0; i < split->size(); ++i) {
            const json& v = (*split)[i];
            if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
                throw InputError(r.path_of("stage_layers") + "/" + std::to_string(i), value_text(v),
                                 "must be a positive integer (layers of that stage)");
            layers.push_back(v.get<std::int64_t>());
        }
        l.stage_layers = std::move(layers);
    }
    return l;
}

std::vector<std::int64_t> default_stage_split(std::int64_t layers, std::int64_t pp) {
    if (pp < 1 || layers < pp) return {};
    if (layers % pp == 0) return std::vector<std::int64_t>(static_cast<std::size_t>(pp), layers / pp);
    if (pp == 2) return {layers / 2, layers - layers / 2};
    const std::int64_t middle = (layers + pp - 1) / pp;
    const std::int64_t rest = layers - (pp - 2) * middle;
    const std::int64_t first = rest / 2, last = rest - first;
    if (first < 1 || last > middle) return {};
    std::vector<std::int64_t> split(static_cast<std::size_t>(pp), middle);
    split.front() = first;
    split.back() = last;
    return split;
}

std::string recompute_name(Recompute r) {
    switch (r) {
        case Recompute::None: return "none";
        case Recompute::Selective: return "selective";
        case Recompute::Full: return "full";
    }
    return "none";
}

std::string schedule_name(Schedule s) {
    switch (s) {
        case Schedule::GPipe: return "gpipe";
        case Schedule::OneFOneB: return "1f1b";
        case Schedule::Interleaved: return "interleaved";
    }
    return "1f1b";
}

std::string dim_name(ParallelDim d) {
    switch (d) {
        case ParallelDim::TP: return "tp";
        case ParallelDim::CP: return "cp";
        case ParallelDim::EP: return "ep";
        case ParallelDim::DP: return "dp";
        case ParallelDim::PP: return "pp";
    }
    return "?";
}

std::string rank_order_text(const std::array<ParallelDim, 5>& order) {
    std::string s;
    for (std::size_t i = 0; i < order.size(); ++i) s += (i ? "-" : "") + dim_name(order[i]);
    return s;
}

}  // namespace sextant
