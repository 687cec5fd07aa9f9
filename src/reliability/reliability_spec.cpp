#include "reliability/reliability_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "reliability/run_setup.hpp"
#include "spec/presets.hpp"

namespace sextant::reliability {

namespace {
constexpr double kAny = 1e300;
// No single cost, gap or repair lasts longer than the longest run a study takes (kLongestRunDays):
// larger values overflowed the run simulator's clock (a stall of 1e308 s never ended, a repair of
// 1e308 h was an internal error).
constexpr double kLongestS = kLongestRunDays * 86400.0;
constexpr double kLongestH = kLongestRunDays * 24.0;
// An async snapshot is a device-to-host copy: ten times NVLink-C2C's 900 GB/s bounds it.
constexpr double kFastestSnapshotGbps = 9000;

constexpr FieldDef kReliabilityFields[] = {
    {"preset", FieldType::String, "failure-rate preset in reliability/ (failures and maintenance)",
     "", kDefaultFailurePreset},
    {"failures", FieldType::Array, "failure processes, see /reliability/failures/*; replace the preset's"},
    {"rate_multiplier", FieldType::Number, "scales every failure rate", "", "1", 0},
    {"detection_s", FieldType::Number, "failure to job known down (RSC health checks run every 5 min)",
     "s", "150", 0, kLongestS},
    {"restart", FieldType::Object, "rescheduling, spares, start, load; see /reliability/restart"},
    {"checkpoint", FieldType::Object, "save policy; see /reliability/checkpoint"},
    {"maintenance", FieldType::Object, "planned maintenance; see /reliability/maintenance"},
    {"step_time_s", FieldType::Number, "seconds per optimizer step", "s", "sextant simulate of the layout", 1e-9},
    {"train_tokens", FieldType::Number, "token budget of the run", "tokens", "/training/train_tokens", 1},
    {"trials", FieldType::Integer, "Monte Carlo trials", "", "1000", 1, 1e8},
    {"seed", FieldType::Integer, "seed of the trials", "", "1", 0, 9.007e15},
};

constexpr FieldDef kFailureFields[] = {
    {"component", FieldType::String, "what fails", "", "", -kAny, kAny,
     "gpu|host|nic|switch|software|storage|other"},
    {"name", FieldType::String, "display name", "", "component"},
    {"rate_per_1000_node_days", FieldType::Number, "interruptions per 1,000 node-days", "1/(1000 node-days)",
     "", 1e-9},
    {"mtbf_node_h", FieldType::Number, "mean time between failures of one node (instead of a rate)",
     "h", "", 1e-9},
    {"distribution", FieldType::String, "inter-arrival times of the job's interruptions", "",
     "exponential", -kAny, kAny, "exponential|weibull|fixed"},
    {"shape", FieldType::Number, "Weibull shape (below 1: clustered failures)", "", "1", 0.05, 20},
    {"needs_spare", FieldType::Boolean, "recovery replaces the node", "", "gpu, host, nic: true"},
    {"source", FieldType::String, "where the rate comes from"},
};

constexpr FieldDef kRestartFields[] = {
    {"reschedule_s", FieldType::Number, "tear down and reschedule the job, swap in a spare", "s", "120", 0, kLongestS},
    {"process_start_s", FieldType::Number, "start processes, build communicators", "s", "300", 0, kLongestS},
    {"load_s", FieldType::Number, "read the checkpoint back", "s", "checkpoint size / read bandwidth", 0, kLongestS},
    {"hot_spares", FieldType::Integer, "spare nodes ready to join (0: wait for the repair)", "nodes", "16",
     0, 1e6},
    {"replacement_h", FieldType::Number, "repair of a failed node until it is a spare again", "h", "24", 0, kLongestH},
    {"read_efficiency", FieldType::Number, "fraction of the storage read bandwidth a load reaches", "",
     "1.0", 0.001, 1},
};

constexpr FieldDef kCheckpointFields[] = {
    {"interval_s", FieldType::Number, "training time between saves", "s", "3600", 1, kLongestS},
    {"async", FieldType::Boolean, "write in the background after a short snapshot stall", "", "false"},
    {"stall_s", FieldType::Number, "training blocked per save", "s", "write time (async: snapshot time)", 0, kLongestS},
    {"write_s", FieldType::Number, "time to write one checkpoint to storage", "s",
     "size / (write bandwidth x write_efficiency)", 0, kLongestS},
    {"write_efficiency", FieldType::Number, "fraction of the storage write bandwidth a save reaches "
     "(Megatron 1T: 40%, Narayanan et al. 5.10)", "", "0.4", 0.001, 1},
    {"snapshot_gbps", FieldType::Number, "device-to-host copy per GPU of an async save", "GB/s", "25", 0.001, kFastestSnapshotGbps},
};

constexpr FieldDef kMaintenanceFields[] = {
    {"interval_h", FieldType::Number, "time between planned maintenance stops (0: none)", "h", "0", 0, kLongestH},
    {"distribution", FieldType::String, "gaps between stops", "", "fixed", -kAny, kAny,
     "fixed|exponential"},
    {"duration_s", FieldType::Number, "job stopped per maintenance, before the restart", "s", "600", 0, kLongestS},
};

constexpr FieldDef kPresetFields[] = {
    {"name", FieldType::String, "preset name"},
    {"description", FieldType::String, "what was observed"},
    {"source", FieldType::String, "publication"},
    {"observed", FieldType::Object, "the observation behind the rates (nodes, days, interruptions)"},
    {"failures", FieldType::Array, "failure processes, as /reliability/failures"},
    {"maintenance", FieldType::Object, "planned maintenance, as /reliability/maintenance"},
};

GapKind parse_gap(const std::string& s) {
    if (s == "weibull") return GapKind::Weibull;
    if (s == "fixed") return GapKind::Fixed;
    return GapKind::Exponential;
}

FailureSpec parse_failure(const json& object, const std::string& path) {
    ObjectReader r(object, path, kFailureFields);
    FailureSpec f;
    f.component = r.require_string("component");
    f.name = r.string("name").value_or(f.component);
    const bool has_rate = r.has("rate_per_1000_node_days");
    const bool has_mtbf = r.has("mtbf_node_h");
    if (has_rate == has_mtbf)
        throw InputError(path, "", "give exactly one of rate_per_1000_node_days and mtbf_node_h");
    f.rate_per_1000_node_days = has_rate ? *r.number("rate_per_1000_node_days")
                                         : 1000.0 * 24.0 / *r.number("mtbf_node_h");
    f.gap = parse_gap(r.string("distribution").value_or("exponential"));
    f.shape = r.number("shape").value_or(1.0);
    if (r.has("shape") && f.gap != GapKind::Weibull)
        throw InputError(r.path_of("shape"), value_text(*r.raw("shape")),
                         "only a weibull distribution takes a shape");
    const bool hardware = f.component == "gpu" || f.component == "host" || f.component == "nic";
    f.needs_spare = r.boolean("needs_spare").value_or(hardware);
    f.source = r.string("source").value_or("");
    return f;
}

std::vector<FailureSpec> parse_failures(const json& array, const std::string& path) {
    if (!array.is_array()) throw InputError(path, value_text(array), "must be an array");
    std::vector<FailureSpec> out;
    for (std::size_t i = 0; i < array.size(); ++i)
        out.push_back(parse_failure(array[i], path + "/" + std::to_string(i)));
    return out;
}

MaintenanceSpec parse_maintenance(const json& object, const std::string& path) {
    ObjectReader r(object, path, kMaintenanceFields);
    MaintenanceSpec m;
    m.interval_h = r.number("interval_h").value_or(m.interval_h);
    m.gap = parse_gap(r.string("distribution").value_or("fixed"));
    m.duration_s = r.number("duration_s").value_or(m.duration_s);
    return m;
}

void read_preset(ReliabilitySpec& spec, const std::string& name, const std::string& path) {
    const std::string file = "reliability/" + name + ".json";
    json doc = load_preset("calibration/reliability", name, path);
    ObjectReader r(doc, file, kPresetFields);
    spec.preset = name;
    spec.preset_source = r.string("source").value_or("");
    if (const json* f = r.raw("failures")) spec.failures = parse_failures(*f, file + "/failures");
    if (const json* m = r.raw("maintenance")) spec.maintenance = parse_maintenance(*m, file + "/maintenance");
}

RestartSpec parse_restart(const json& object, const std::string& path) {
    ObjectReader r(object, path, kRestartFields);
    RestartSpec s;
    s.reschedule_s = r.number("reschedule_s").value_or(s.reschedule_s);
    s.process_start_s = r.number("process_start_s").value_or(s.process_start_s);
    s.load_s = r.number("load_s");
    s.hot_spares = r.integer("hot_spares").value_or(s.hot_spares);
    s.replacement_h = r.number("replacement_h").value_or(s.replacement_h);
    s.read_efficiency = r.number("read_efficiency").value_or(s.read_efficiency);
    return s;
}

CheckpointSpec parse_checkpoint(const json& object, const std::string& path) {
    ObjectReader r(object, path, kCheckpointFields);
    CheckpointSpec c;
    c.interval_s = r.number("interval_s").value_or(c.interval_s);
    c.async = r.boolean("async").value_or(c.async);
    c.stall_s = r.number("stall_s");
    c.write_s = r.number("write_s");
    c.write_efficiency = r.number("write_efficiency").value_or(c.write_efficiency);
    c.snapshot_gbps = r.number("snapshot_gbps").value_or(c.snapshot_gbps);
    return c;
}
}  // namespace

std::span<const FieldDef> reliability_fields() { return kReliabilityFields; }
std::span<const FieldDef> failure_fields() { return kFailureFields; }
std::span<const FieldDef> restart_fields() { return kRestartFields; }
std::span<const FieldDef> checkpoint_fields() { return kCheckpointFields; }
std::span<const FieldDef> maintenance_fields() { return kMaintenanceFields; }
std::span<const FieldDef> failure_preset_fields() { return kPresetFields; }

std::string gap_name(GapKind gap) {
    switch (gap) {
        case GapKind::Exponential: return "exponential";
        case GapKind::Weibull: return "weibull";
        case GapKind::Fixed: return "fixed";
    }
    return "";
}

ReliabilitySpec parse_reliability(const json& object, const std::string& path) {
    static const json empty = json::object();
    const json& doc = object.is_null() ? empty : object;
    ObjectReader r(doc, path, kReliabilityFields);
    ReliabilitySpec s;
    const bool inline_failures = r.has("failures");
    if (r.has("preset") || !inline_failures)
        read_preset(s, r.string("preset").value_or(kDefaultFailurePreset),
                    r.has("preset") ? r.path_of("preset") : path);
    if (inline_failures) {
        s.failures = parse_failures(*r.raw("failures"), r.path_of("failures"));
        if (!r.has("preset")) s.preset.clear();
    }
    s.rate_multiplier = r.number("rate_multiplier").value_or(s.rate_multiplier);
    s.detection_s = r.number("detection_s").value_or(s.detection_s);
    if (const json* v = r.raw("restart")) s.restart = parse_restart(*v, r.path_of("restart"));
    if (const json* v = r.raw("checkpoint")) s.checkpoint = parse_checkpoint(*v, r.path_of("checkpoint"));
    if (const json* v = r.raw("maintenance")) s.maintenance = parse_maintenance(*v, r.path_of("maintenance"));
    s.step_time_s = r.number("step_time_s");
    s.train_tokens = r.number("train_tokens");
    s.trials = r.integer("trials").value_or(s.trials);
    s.seed = static_cast<std::uint64_t>(r.integer("seed").value_or(1));
    return s;
}

}  // namespace sextant::reliability
