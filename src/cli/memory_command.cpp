// `sextant memory SCENARIO [--json]`: will this layout fit, and what fills the memory?
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "memory/memory_model.hpp"
#include "reliability/scenario_parts.hpp"
#include "report/output.hpp"
#include "report/report_model.hpp"
#include "core/table.hpp"

namespace sextant::cli {

namespace {
// What the layout keeps in host memory per GPU, against the host's DRAM where it is known.
std::string host_memory_line(const MemoryReport& r) {
    if (r.host_peak.value() <= 0) return "";
    if (r.host_capacity.value() <= 0)
        return fmt::format("host memory {} per GPU (offloaded activations and optimizer states); the host's DRAM is not known: "
                           "set cluster.host.memory_gib_per_gpu to check it\n",
                           format_bytes(r.host_peak.value()));
    const double left = (r.host_capacity - r.host_peak).value();
    return fmt::format("host memory {} per GPU (offloaded activations and optimizer states) of {}: {} by {}\n",
                       format_bytes(r.host_peak.value()), format_bytes(r.host_capacity.value()), r.fits_host() ? "fits" : "DOES NOT FIT",
                       format_bytes(left >= 0 ? left : -left));
}

// The memory verdict, which text and JSON render.
Output memory_output(const Scenario& s, const Layout& l, const MemoryReport& r) {
    Output out;
    out.heading = fmt::format("{}: {} on {} x {}, tp {} pp {} dp {} cp {} ep {} vp {}, microbatch {}, ZeRO {}{}, {}{}",
                              s.name.empty() ? "scenario" : s.name, s.model.name, s.cluster.gpus, s.cluster.gpu.name, l.tp, l.pp,
                              l.dp, l.cp, l.ep, l.vp, l.microbatch, l.zero_stage,
                              l.dp_replicas() > 1 ? fmt::format(" in shard groups of {} dp ranks", l.shard_dp()) : "",
                              l.sequence_parallel ? "sequence parallel, " : "",
                              l.recompute == Recompute::None ? std::string("no recompute") : recompute_name(l.recompute) + " recompute");
    out.blocks.emplace_back(stage_memory_table(r));
    const double headroom = r.headroom().value();
    out.add_facts({
        {"/peak_bytes", "", r.peak.value()},
        {"/peak_stage", "", r.peak_stage},
        {"/capacity_bytes", "", r.capacity.value()},
        {"/headroom_bytes", "", headroom},
        {"/host_peak_bytes", "", r.host_peak.value()},
        {"/host_capacity_bytes", "", r.host_capacity.value()},
        {"/fits", "", r.fits()},
    });
    out.note(fmt::format("peak {} on stage {} of {} HBM: {} by {}\n", format_bytes(r.peak.value()), r.peak_stage,
                         format_bytes(r.capacity.value()), r.fits_hbm() ? "fits" : "DOES NOT FIT",
                         format_bytes(headroom >= 0 ? headroom : -headroom)) +
             host_memory_line(r) +
             fmt::format("other = communication and temporary buffers + CUDA context ({:.1f} GiB) + fragmentation ({:.0f}% of "
                         "tensors)",
                         s.memory.context_gib, 100 * s.memory.fragmentation));
    return out;
}

void run(const std::string& file, bool as_json) {
    Scenario s = load_checked_scenario(file);
    Layout l = resolve_layout(s, s.layout);
    const Output out = memory_output(s, l, estimate_memory(s, l));
    std::cout << (as_json ? render_json(out).dump(2) + "\n" : render_text(out));
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
