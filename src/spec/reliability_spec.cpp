#include "spec/reliability_spec.hpp"

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "spec/field_binding.hpp"
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
     "", default_string(kDefaultFailurePreset)},
    {"failures", FieldType::Array, "failure processes, see /reliability/failures/*; replace the preset's"},
    {"rate_multiplier", FieldType::Number, "scales every failure rate", "", default_number(1), 0, kAny, "",
     bind<&ReliabilitySpec::rate_multiplier>()},
    {"detection_s", FieldType::Number, "failure to job known down (RSC health checks run every 5 min)",
     "s", default_number(150), 0, kLongestS, "", bind<&ReliabilitySpec::detection_s>()},
    {"restart", FieldType::Object, "rescheduling, spares, start, load; see /reliability/restart"},
    {"checkpoint", FieldType::Object, "save policy; see /reliability/checkpoint"},
    {"maintenance", FieldType::Object, "planned maintenance; see /reliability/maintenance"},
    {"step_time_s", FieldType::Number, "seconds per optimizer step", "s", "sextant simulate of the layout", 1e-9, kAny, "",
     bind<&ReliabilitySpec::step_time_s>()},
    {"train_tokens", FieldType::Number, "token budget of the run", "tokens", "/training/train_tokens", 1, kAny, "",
     bind<&ReliabilitySpec::train_tokens>()},
    {"trials", FieldType::Integer, "Monte Carlo trials", "", default_integer(1000), 1, 1e8, "", bind<&ReliabilitySpec::trials>()},
    {"seed", FieldType::Integer, "seed of the trials", "", default_integer(1), 0, 9.007e15, "", bind<&ReliabilitySpec::seed>()},
};

constexpr FieldDef kFailureFields[] = {
    {"component", FieldType::String, "what fails", "", required(), -kAny, kAny,
     "gpu|host|nic|switch|software|storage|other", bind<&FailureSpec::component>()},
    {"name", FieldType::String, "display name", "", "component", -kAny, kAny, "", bind<&FailureSpec::name>()},
    {"rate_per_1000_node_days", FieldType::Number, "interruptions per 1,000 node-days", "1/(1000 node-days)",
     "", 1e-9},
    {"mtbf_node_h", FieldType::Number, "mean time between failures of one node (instead of a rate)",
     "h", "", 1e-9},
    {"distribution", FieldType::String, "inter-arrival times of the job's interruptions", "",
     default_string("exponential"), -kAny, kAny, "", bind<&FailureSpec::gap>()},
    {"shape", FieldType::Number, "Weibull shape (below 1: clustered failures)", "", default_number(1), 0.05, 20, "",
     bind<&FailureSpec::shape>()},
    {"needs_spare", FieldType::Boolean, "recovery replaces the node", "", "gpu, host, nic: true", -kAny, kAny, "",
     bind<&FailureSpec::needs_spare>()},
    {"source", FieldType::String, "where the rate comes from", "", default_string(""), -kAny, kAny, "", bind<&FailureSpec::source>()},
};

constexpr FieldDef kRestartFields[] = {
    {"reschedule_s", FieldType::Number, "tear down and reschedule the job, swap in a spare", "s", default_number(120), 0, kLongestS, "",
     bind<&RestartSpec::reschedule_s>()},
    {"process_start_s", FieldType::Number, "start processes, build communicators", "s", default_number(300), 0, kLongestS, "",
     bind<&RestartSpec::process_start_s>()},
    {"load_s", FieldType::Number, "read the checkpoint back", "s", "checkpoint size / read bandwidth", 0, kLongestS, "",
     bind<&RestartSpec::load_s>()},
    {"hot_spares", FieldType::Integer, "spare nodes ready to join (0: wait for the repair)", "nodes", default_integer(16), 0, 1e6, "",
     bind<&RestartSpec::hot_spares>()},
    {"replacement_h", FieldType::Number, "repair of a failed node until it is a spare again", "h", default_number(24), 0, kLongestH, "",
     bind<&RestartSpec::replacement_h>()},
    {"read_efficiency", FieldType::Number, "fraction of the storage read bandwidth a load reaches", "", default_number(1.0), 0.001, 1,
     "", bind<&RestartSpec::read_efficiency>()},
};

constexpr FieldDef kCheckpointFields[] = {
    {"interval_s", FieldType::Number, "training time between saves", "s", default_number(3600), 1, kLongestS, "",
     bind<&CheckpointSpec::interval_s>()},
    {"async", FieldType::Boolean, "write in the background after a short snapshot stall", "", default_bool(false), -kAny, kAny, "",
     bind<&CheckpointSpec::async>()},
    {"stall_s", FieldType::Number, "training blocked per save", "s", "write time (async: snapshot time)", 0, kLongestS, "",
     bind<&CheckpointSpec::stall_s>()},
    {"write_s", FieldType::Number, "time to write one checkpoint to storage", "s",
     "size / (write bandwidth x write_efficiency)", 0, kLongestS, "", bind<&CheckpointSpec::write_s>()},
    {"write_efficiency", FieldType::Number, "fraction of the storage write bandwidth a save reaches "
     "(Megatron 1T: 40%, Narayanan et al. 5.10)", "", default_number(0.4), 0.001, 1, "", bind<&CheckpointSpec::write_efficiency>()},
    {"snapshot_gbps", FieldType::Number, "device-to-host copy per GPU of an async save", "GB/s", default_number(25), 0.001,
     kFastestSnapshotGbps, "", bind<&CheckpointSpec::snapshot_gbps>()},
};

// Planned stops come at fixed gaps or as a Poisson process (no Weibull shape is offered).
constexpr FieldDef kMaintenanceFields[] = {
    {"interval_h", FieldType::Number, "time between planned maintenance stops (0: none)", "h", default_number(0), 0, kLongestH, "",
     bind<&MaintenanceSpec::interval_h>()},
    {"distribution", FieldType::String, "gaps between stops", "", default_string("fixed"), -kAny, kAny, "fixed|exponential",
     bind<&MaintenanceSpec::gap>()},
    {"duration_s", FieldType::Number, "job stopped per maintenance, before the restart", "s", default_number(600), 0, kLongestS, "",
     bind<&MaintenanceSpec::duration_s>()},
};

constexpr FieldDef kPresetFields[] = {
    {"name", FieldType::String, "preset name"},
    {"description", FieldType::String, "what was observed"},
    {"source", FieldType::String, "publication"},
    {"observed", FieldType::Object, "the observation behind the rates (nodes, days, interruptions)"},
    {"failures", FieldType::Array, "failure processes, as /reliability/failures"},
    {"maintenance", FieldType::Object, "planned maintenance, as /reliability/maintenance"},
};

FailureSpec parse_failure(const json& object, const std::string& path) {
    ObjectReader r(object, path, kFailureFields);
    FailureSpec f;
    read_fields(r, f);
    if (!r.has("name")) f.name = f.component;
    const bool has_rate = r.has("rate_per_1000_node_days");
    const bool has_mtbf = r.has("mtbf_node_h");
    if (has_rate == has_mtbf)
        throw InputError(path, "", "give exactly one of rate_per_1000_node_days and mtbf_node_h");
    f.rate_per_1000_node_days = has_rate ? *r.number("rate_per_1000_node_days")
                                         : 1000.0 * 24.0 / *r.number("mtbf_node_h");
    if (r.has("shape") && f.gap != GapKind::Weibull)
        throw InputError(r.path_of("shape"), value_text(*r.raw("shape")),
                         "only a weibull distribution takes a shape");
    if (!r.has("needs_spare")) f.needs_spare = f.component == "gpu" || f.component == "host" || f.component == "nic";
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
    MaintenanceSpec m;
    read_fields(ObjectReader(object, path, kMaintenanceFields), m);
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
    RestartSpec s;
    read_fields(ObjectReader(object, path, kRestartFields), s);
    return s;
}

CheckpointSpec parse_checkpoint(const json& object, const std::string& path) {
    CheckpointSpec c;
    read_fields(ObjectReader(object, path, kCheckpointFields), c);
    return c;
}
}  // namespace

std::span<const FieldDef> reliability_fields() { return kReliabilityFields; }
std::span<const FieldDef> failure_fields() { return kFailureFields; }
std::span<const FieldDef> restart_fields() { return kRestartFields; }
std::span<const FieldDef> checkpoint_fields() { return kCheckpointFields; }
std::span<const FieldDef> maintenance_fields() { return kMaintenanceFields; }
std::span<const FieldDef> failure_preset_fields() { return kPresetFields; }

std::string gap_name(GapKind gap) { return std::string(name_of(gap)); }

ReliabilitySpec parse_reliability(const json& object, const std::string& path) {
    static const json empty = json::object();
    const json& doc = object.is_null() ? empty : object;
    ObjectReader r(doc, path, kReliabilityFields);
    ReliabilitySpec s;
    const bool inline_failures = r.has("failures");
    if (r.has("preset") || !inline_failures)
        read_preset(s, r.string_or_default("preset"),
                    r.has("preset") ? r.path_of("preset") : path);
    if (inline_failures) {
        s.failures = parse_failures(*r.raw("failures"), r.path_of("failures"));
        if (!r.has("preset")) s.preset.clear();
    }
    read_fields(r, s);
    if (const json* v = r.raw("restart")) s.restart = parse_restart(*v, r.path_of("restart"));
    if (const json* v = r.raw("checkpoint")) s.checkpoint = parse_checkpoint(*v, r.path_of("checkpoint"));
    if (const json* v = r.raw("maintenance")) s.maintenance = parse_maintenance(*v, r.path_of("maintenance"));
    return s;
}

}  // namespace sextant::reliability
