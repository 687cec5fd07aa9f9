#pragma once
// Accuracy by group: the MAPE of a validation report's runs split by what they ran on (GPU type,
// precision recipe, dense or MoE, source, runtime generation), leaving out the runs a fit used.
#include <set>
#include <string>
#include <vector>

#include "validate/published_runs.hpp"

namespace sextant {

enum class GroupKey { Gpu, Precision, Moe, Source, Runtime };

struct GroupSummary {
    std::string group;  // the key values, joined by " / "
    std::size_t runs = 0;
    double mape_pct = 0;
    double mean_error_pct = 0;  // signed: + predicted slower than measured
    double max_abs_error_pct = 0;
};

// "gpu,precision" -> keys; an InputError at `flag` names an unknown one.
std::vector<GroupKey> parse_group_keys(const std::string& text, const std::string& flag);

// The ids of the runs of published-runs/1 files (a fit set's runs).
std::set<std::string> run_ids(const std::vector<std::string>& files);

// One row per group of `keys` (all runs together when `keys` is empty), over the runs of
// `report` (read from `file`) that were predicted and are not in `excluded`; groups sorted by name.
std::vector<GroupSummary> summarize(const ValidationReport& report, const std::string& file, const std::vector<GroupKey>& keys,
                                    const std::set<std::string>& excluded);

}  // namespace sextant
