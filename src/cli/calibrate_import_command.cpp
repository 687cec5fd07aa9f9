// `sextant calibrate import-nccl-tests LOG... --out PROFILE`: a cluster's own nccl-tests logs
// become the measured collectives of a calibration profile that starts from the GPU's published
// one (everything else stays published, and says so).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>
#include <sys/stat.h>

#include "cli/commands.hpp"
#include "cli/profile_report.hpp"
#include "collective/measured_collectives.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_file.hpp"
#include "profile/collective_sweeps.hpp"
#include "profile/nccl_tests_log.hpp"
#include "profile/profile.hpp"
#include "core/table.hpp"
#include "spec/presets.hpp"
#include "spec/scenario.hpp"

namespace sextant::cli {

namespace {
struct ImportArgs {
    std::vector<std::string> logs;
    std::string out, gpu;
    bool force = false, drop_wrong = false, json = false;
};

std::string utc(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return text;
}

// The log's modification time: when it was written, which for a log is when the run ended.
std::string modified(const std::string& file) {
    struct stat st {};
    return stat(file.c_str(), &st) == 0 ? utc(st.st_mtime) : "";
}

struct LogRuns {
    std::string file;
    std::vector<NcclTestsRun> runs;
};

// The GPU type of the runs: --gpu, else what every run's devices say (they must agree).
std::string gpu_type(const ImportArgs& a, const std::vector<LogRuns>& logs) {
    if (!a.gpu.empty()) {
        load_gpu(a.gpu, "--gpu");
        return a.gpu;
    }
    std::string type, seen_at;
    for (const LogRuns& log : logs)
        for (const NcclTestsRun& run : log.runs)
            for (const NcclTestsRank& rank : run.ranks) {
                const std::string where = log.file + ":" + std::to_string(run.first_line);
                const auto t = gpu_type_of_device(rank.device_name);
                if (!t)
                    throw InputError(where, "\"" + rank.device_name + "\"",
                                     "no Sextant GPU type is known for this device; name one with --gpu (topologies/gpus/)");
                if (!type.empty() && *t != type)
                    throw InputError(where, *t, "the logs ran on different GPU types (" + type + " at " + seen_at +
                                                    "); import each type into its own profile");
                if (type.empty()) seen_at = where;
                type = *t;
            }
    return type;
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : sep) + i;
    return out;
}

void run(const ImportArgs& a) {
    refuse_existing_unless_forced(a.out, "--out", a.force);
    std::vector<LogRuns> logs;
    for (const std::string& file : a.logs) logs.push_back({file, parse_nccl_tests_log(read_input_file(file, file), file)});
    const std::string gpu = gpu_type(a, logs);
    const GpuSpec spec = load_gpu(gpu, "--gpu");
    load_preset("calibration", spec.name, "--gpu");  // the published profile this one starts from

    std::vector<CollectiveSweep> sweeps;
    std::vector<std::string> notes, hosts;
    for (const LogRuns& log : logs) {
        ImportedSweeps imported = nccl_tests_sweeps(log.runs, log.file, a.drop_wrong ? WrongResults::Drop : WrongResults::Reject,
                                                    modified(log.file), "file modification time");
        for (auto& s : imported.sweeps) {
            for (const auto& h : s.provenance.hosts)
                if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
            sweeps.push_back(std::move(s));
        }
        notes.insert(notes.end(), imported.notes.begin(), imported.notes.end());
    }
    if (sweeps.empty()) throw InputError("LOG", join(a.logs), "no result survived the import (see the notes above)");

    const std::string now = utc(std::time(nullptr));
    nlohmann::ordered_json doc;
    doc["schema"] = "sextant-calibration/1";
    doc["preset"] = gpu;
    doc["gpu"] = gpu;
    doc["provenance"] = {
        {"kind", "mixed"},
        {"summary", fmt::format("collectives measured by nccl-tests on {} ({} sweeps from {} logs, imported {}); everything "
                                "else from the published profile calibration/{}.json",
                                join(hosts), sweeps.size(), a.logs.size(), now.substr(0, 10), gpu)},
        {"imported", {{"by", "sextant calibrate import-nccl-tests"}, {"date", now}, {"logs", a.logs}}}};
    doc["collectives"] = nlohmann::ordered_json::array();
    for (const CollectiveSweep& s : sweeps) doc["collectives"].push_back(nlohmann::ordered_json::parse(collective_sweep_json(s).dump()));
    const json plain = json::parse(doc.dump());
    const CalibrationProfile profile = CalibrationProfile::from_json(plain, "--out", spec);  // it must read back
    write_output_file(a.out, doc.dump(2) + "\n", "--out");

    const MeasuredCollectives measured(profile.collective_sweeps());
    if (a.json) {
        json out = {{"profile", a.out}, {"gpu", gpu}, {"sweeps", sweeps_json(profile.collective_sweeps())},
                    {"fits", fits_json(measured)}, {"notes", notes}};
        std::cout << out.dump(2) << "\n";
        return;
    }
    std::cout << sweeps_table(profile.collective_sweeps()) << "\n";
    for (const auto& n : notes) std::cout << "note: " << n << "\n";
    if (!notes.empty()) std::cout << "\n";
    std::cout << "Fitted per op and span (alpha per ring step; bus bandwidth; rms error over the points):\n"
              << fits_table(measured) << "\n";
    std::cout << fmt::format("wrote {}: {} (published profile calibration/{}.json with these {} sweeps)\n", a.out, gpu, gpu,
                             sweeps.size());
}
}  // namespace

void add_calibrate_import_command(CLI::App& calibrate) {
    static ImportArgs args;
    auto* cmd = calibrate.add_subcommand("import-nccl-tests", "Read nccl-tests logs into a profile's measured collectives");
    cmd->add_option("LOG", args.logs, "nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
                                      "alltoall_perf, sendrecv_perf, broadcast_perf, reduce_perf)")
        ->required();
    cmd->add_option("--out", args.out, "the profile to write")->required();
    cmd->add_option("--gpu", args.gpu, "GPU type (topologies/gpus/); default: from the logs' device names");
    cmd->add_flag("--force", args.force, "replace --out when it exists");
    cmd->add_flag("--drop-wrong", args.drop_wrong, "leave out results nccl-tests found wrong instead of refusing the log");
    cmd->add_flag("--json", args.json, "one JSON document");
    cmd->callback([] { run(args); });
}

}  // namespace sextant::cli
