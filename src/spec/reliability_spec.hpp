#pragma once
// The scenario's `reliability` object: failure processes (or a failure-rate preset from
// reliability/), detection, restart, spares, checkpoint policy, planned maintenance, and the
// step time and token budget of the run. Every key is declared once in the tables below.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spec/fields.hpp"

namespace sextant::reliability {

// The distribution of the gaps between a process's events.
enum class GapKind { Exponential, Weibull, Fixed };
inline constexpr std::string_view kGapNames[] = {"exponential", "weibull", "fixed"};
constexpr std::span<const std::string_view> enum_names(GapKind) { return kGapNames; }

// The simulation draws every failure of the run: a budget of more than ten years of training is
// a typo, not a plan, and would keep it busy for hours.
constexpr double kLongestRunDays = 3650.0;

// A failure process as the user states it: a rate per node (scaled by the node count later).
struct FailureSpec {
    std::string component;          // gpu | host | nic | switch | software | storage | other
    std::string name;               // display name; defaults to the component
    double rate_per_1000_node_days = 0;
    GapKind gap = GapKind::Exponential;
    double shape = 1;
    bool needs_spare = false;
    std::string source;
};

struct RestartSpec {
    double reschedule_s = 120;
    double process_start_s = 300;
    std::optional<double> load_s;   // absent: checkpoint size / read bandwidth
    std::int64_t hot_spares = 16;   // nodes
    double replacement_h = 24;
    double read_efficiency = 1.0;
};

struct CheckpointSpec {
    double interval_s = 3600;
    bool async = false;
    std::optional<double> stall_s;  // absent: computed (write time, or snapshot time if async)
    std::optional<double> write_s;  // absent: checkpoint size / write bandwidth
    double write_efficiency = 0.4;
    double snapshot_gbps = 25;      // device -> host copy per GPU for async saves
};

struct MaintenanceSpec {
    double interval_h = 0;          // 0: none
    GapKind gap = GapKind::Fixed;
    double duration_s = 600;
};

struct ReliabilitySpec {
    std::string preset;             // failure-rate preset used ("" when failures are inline)
    std::string preset_source;
    std::vector<FailureSpec> failures;
    double rate_multiplier = 1.0;
    double detection_s = 150;
    RestartSpec restart;
    CheckpointSpec checkpoint;
    MaintenanceSpec maintenance;
    std::optional<double> step_time_s;
    std::optional<double> train_tokens;
    std::int64_t trials = 1000;
    std::uint64_t seed = 1;
};

inline constexpr const char* kDefaultFailurePreset = "llama3-405b-h100";

// Reads a scenario's `reliability` object (null when absent: all defaults and the default
// preset). `path` is the JSON pointer of the object, "/reliability".
ReliabilitySpec parse_reliability(const json& object, const std::string& path);

std::span<const FieldDef> reliability_fields();
std::span<const FieldDef> failure_fields();
std::span<const FieldDef> restart_fields();
std::span<const FieldDef> checkpoint_fields();
std::span<const FieldDef> maintenance_fields();
std::span<const FieldDef> failure_preset_fields();

std::string gap_name(GapKind gap);

}  // namespace sextant::reliability
