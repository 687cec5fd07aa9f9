// `sextant calibrate show PROFILE`: how a profile was made, number by number (a measurement, a
// published figure with its source, a figure derived from published ones, or a fit with its fit
// set), and where it differs from the published profile of its GPU.
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/profile_report.hpp"
#include "collective/network_model.hpp"
#include "core/error.hpp"
#include "profile/profile.hpp"
#include "profile/profile_provenance.hpp"
#include "core/table.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

namespace sextant::cli {

namespace {
struct ShowArgs {
    std::string profile;
    std::string cluster;  // for the NIC line rate that NIC efficiency is relative to
    bool json = false;
};

// The comm lines of the constants that measured sweeps determine: fits, with their curves.
void apply_fitted_comm(std::vector<ProvenanceLine>& lines, const std::vector<FittedConstant>& fitted) {
    for (const FittedConstant& f : fitted)
        for (ProvenanceLine& line : lines)
            if (line.section == "comm " + f.name) {
                line.basis = "fit";
                line.versus_published = fmt::format("{:.4g} -> {:.4g}", f.published, f.fitted);
                line.value = fmt::format("{:.4g}", f.fitted);
                line.sources = {{"fit to the measured " + f.fit_set, 1}};
            }
}

void run(const ShowArgs& a) {
    const json doc = resolve_part(json(a.profile), "calibration", std::filesystem::current_path(), "PROFILE");
    const json resolved = resolve_inherited(doc, "calibration", "PROFILE");
    if (!resolved.contains("gpu") || !resolved["gpu"].is_string())
        throw InputError("PROFILE/gpu", "", "is required: the GPU type the profile describes");
    const std::string gpu_name = resolved["gpu"].get<std::string>();
    const GpuSpec gpu = load_gpu(gpu_name, "PROFILE/gpu");
    const CalibrationProfile profile = CalibrationProfile::from_json(resolved, "PROFILE", gpu);
    const json published = resolve_inherited(load_preset("calibration", gpu.name, "PROFILE/gpu"), "calibration", "PROFILE/gpu");
    std::vector<ProvenanceLine> lines = describe_profile(resolved, published, gpu);

    const MeasuredCollectives measured(profile.collective_sweeps());
    double nic_gbps = 0;
    if (!a.cluster.empty()) {
        const json c = resolve_part(json(a.cluster), "topologies", std::filesystem::current_path(), "--cluster");
        nic_gbps = parse_cluster(c, "--cluster", load_gpu).fabric.nic_gbps_per_gpu;
    }
    const FittedComm fitted = fitted_comm_calibration(profile.comm(), measured, gpu, nic_gbps);
    apply_fitted_comm(lines, fitted.constants);

    if (a.json) {
        json out = {{"profile", a.profile}, {"gpu", gpu_name}, {"summary", profile.source()}, {"sections", json::array()}};
        for (const ProvenanceLine& l : lines) {
            json sources = json::array();
            for (const auto& [source, count] : l.sources) sources.push_back({{"source", source}, {"numbers", count}});
            out["sections"].push_back({{"section", l.section}, {"basis", l.basis}, {"value", l.value}, {"sources", sources},
                                       {"versus_published", l.versus_published}});
        }
        out["collectives"] = sweeps_json(profile.collective_sweeps());
        out["fits"] = fits_json(measured);
        std::cout << out.dump(2) << "\n";
        return;
    }
    // Sources are numbered once and cited by number: many numbers share one.
    std::vector<std::string> sources;
    const auto cite = [&](const std::string& s) {
        auto it = std::find(sources.begin(), sources.end(), s);
        if (it == sources.end()) it = sources.insert(sources.end(), s);
        return static_cast<std::size_t>(it - sources.begin()) + 1;
    };
    TextTable t({"section", "basis", "value", "vs published " + gpu_name, "sources"});
    for (const ProvenanceLine& l : lines) {
        std::string cited;
        for (const auto& [source, count] : l.sources)
            cited += (cited.empty() ? "" : ", ") + fmt::format("[{}]", cite(source)) + (count > 1 ? fmt::format(" x{}", count) : "");
        t.add_row({l.section, l.basis, l.value, l.versus_published, cited});
    }
    std::cout << fmt::format("{}: {} calibration profile\n{}\n\n", a.profile, gpu_name, profile.source());
    std::cout << t.render() << "\n";
    for (std::size_t i = 0; i < sources.size(); ++i) std::cout << fmt::format("[{}] {}\n", i + 1, sources[i]);
    if (measured.empty()) return;
    std::cout << "\nMeasured collectives:\n" << sweeps_table(profile.collective_sweeps());
    std::cout << "\nFitted per op and span (alpha per ring step; bus bandwidth; rms error over the points):\n"
              << fits_table(measured);
    if (nic_gbps == 0)
        for (const auto& f : measured.fits())
            if (f.span == MeasuredSpan::Rail) {
                std::cout << "\n(the NIC efficiency these rail sweeps imply needs the NIC's line rate: add --cluster)\n";
                break;
            }
}
}  // namespace

void add_calibrate_show_command(CLI::App& calibrate) {
    static ShowArgs args;
    auto* cmd = calibrate.add_subcommand("show", "How a calibration profile was made, and where it differs from the published one");
    cmd->add_option("PROFILE", args.profile, "calibration/ preset name or profile file")->required();
    cmd->add_option("--cluster", args.cluster, "cluster whose NIC rate rail sweeps are read against (topologies/ preset or file)");
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
