// `sextant memory SCENARIO [--json]`: will this layout fit, and what fills the memory?
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "memory/memory_model.hpp"
#include "reliability/scenario_parts.hpp"
#include "report/report_model.hpp"
#include "core/table.hpp"

namespace sextant::cli {

namespace {
// Stages with identical contents print once, as a range ("1-14").
std::string stage_label(std::int64_t first, std::int64_t last) {
    return first == last ? std::to_string(first) : fmt::format("{}-{}", first, last);
}

bool same(const StageMemory& a, const StageMemory& b) {
    return a.layers == b.layers && a.total() == b.total() && a.weights == b.weights;
}

void print_text(const Scenario& s, const Layout& l, const MemoryReport& r) {
    std::cout << fmt::format("{}: {} on {} x {}, tp {} pp {} dp {} cp {} ep {} vp {}, microbatch {}, ZeRO {}{}, {}{}\n\n",
                             s.name.empty() ? "scenario" : s.name, s.model.name, s.cluster.gpus, s.cluster.gpu.name,
                             l.tp, l.pp, l.dp, l.cp, l.ep, l.vp, l.microbatch, l.zero_stage,
                             l.dp_replicas() > 1 ? fmt::format(" in shard groups of {} dp ranks", l.shard_dp()) : "",
                             l.sequence_parallel ? "sequence parallel, " : "", l.recompute == Recompute::None ? std::string("no recompute") : recompute_name(l.recompute) + " recompute");
    TextTable t({"stage", "layers", "weights", "gradients", "optimizer", "activations", "other", "total"});
    std::size_t i = 0;
    while (i < r.stages.size()) {
        std::size_t j = i;
        while (j + 1 < r.stages.size() && same(r.stages[j + 1], r.stages[i])) ++j;
        const StageMemory& m = r.stages[i];
        t.add_row({stage_label(m.stage, r.stages[j].stage), std::to_string(m.layers), format_bytes(m.weights.value()),
                   format_bytes(m.gradients.value()), format_bytes(m.optimizer.value()),
                   format_bytes(m.activations.value()), format_bytes(m.other().value()), format_bytes(m.total().value())});
        i = j + 1;
    }
    std::cout << t.render() << "\n";
    const double headroom = r.headroom().value();
    std::cout << fmt::format("peak {} on stage {} of {} HBM: {} by {}\n", format_bytes(r.peak.value()), r.peak_stage,
                             format_bytes(r.capacity.value()), r.fits() ? "fits" : "DOES NOT FIT",
                             format_bytes(headroom >= 0 ? headroom : -headroom));
    std::cout << "other = communication and temporary buffers + CUDA context "
              << fmt::format("({:.1f} GiB) + fragmentation ({:.0f}% of tensors)\n", s.memory.context_gib,
                             100 * s.memory.fragmentation);
}

void run(const std::string& file, bool as_json) {
    Scenario s = load_checked_scenario(file);
    Layout l = resolve_layout(s, s.layout);
    MemoryReport r = estimate_memory(s, l);
    if (!as_json) {
        print_text(s, l, r);
        return;
    }
    json doc;
    doc["stages"] = json::array();
    for (const auto& m : r.stages) doc["stages"].push_back(stage_memory_json(m));
    doc["peak_bytes"] = r.peak.value();
    doc["peak_stage"] = r.peak_stage;
    doc["capacity_bytes"] = r.capacity.value();
    doc["headroom_bytes"] = r.headroom().value();
    doc["fits"] = r.fits();
    std::cout << doc.dump(2) << "\n";
}
}  // namespace

void add_memory_command(CLI::App& app) {
    static std::string file;
    static bool as_json = false;
    auto* cmd = app.add_subcommand("memory", "Per-GPU memory of every pipeline stage: does the layout fit?");
    cmd->add_option("scenario", file, "scenario JSON file")->required();
    cmd->add_flag("--json", as_json, "one JSON document");
    cmd->callback([] { run(file, as_json); });
}

}  // namespace sextant::cli
