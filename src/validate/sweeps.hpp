#pragma once
// Planner quality against measured sweeps: where a published-runs file measures several layouts
// of one model on one machine (same model, GPU type, GPU count, precision and sequence length),
// does Sextant order the layouts as they were measured (Kendall's tau between measured and
// predicted throughput), and does the planner's top plan predict at least the throughput of every
// published layout? Runs Sextant cannot express yet (a GPU or precision it has no preset for) are
// left out with the reason, and a sweep left with fewer than two layouts is listed as skipped.
#include <filesystem>
#include <string>
#include <vector>

namespace sextant {

struct SweepMember {
    std::string id;
    std::string layout;               // the published layout (with the knobs Sextant chose)
    double measured_tokens_per_s = 0;
    double predicted_tokens_per_s = 0;
};

struct Sweep {
    std::string key;                  // model, GPU, GPUs, precision, sequence length
    std::vector<SweepMember> members; // distinct layouts Sextant can express
    std::vector<std::string> skipped; // "id: reason" for the runs left out
    double kendall_tau = 0;           // tau-b; meaningful with 2 or more members
    double planner_tokens_per_s = 0;  // the planner's top plan (at the first member's batch)
    std::string planner_layout;
    bool planner_at_least_all = false;  // at each member's batch, the top plan >= that layout
    bool rated() const { return members.size() >= 2; }
};

// Kendall's tau-b of two equally long series (ties in either count as neither concordant nor
// discordant, with the tie correction of tau-b); 0 when either series is constant.
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y);

// Every group of runs in `file` that measures two or more layouts of one model on one machine.
std::vector<Sweep> measured_sweeps(const std::filesystem::path& file);

}  // namespace sextant
