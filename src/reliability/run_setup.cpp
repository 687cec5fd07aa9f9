#include "reliability/run_setup.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace sextant::reliability {

namespace {
constexpr double kDay = 86400.0;

FailureProcess job_process(const FailureSpec& f, double nodes, double multiplier) {
    FailureProcess p;
    p.cause = f.name;
    p.gap = f.gap;
    p.shape = f.shape;
    p.needs_spare = f.needs_spare;
    const double per_day = f.rate_per_1000_node_days / 1000.0 * nodes * multiplier;
    p.mean_s = kDay / per_day;
    return p;
}

struct TokenBudget {
    double tokens;
    const char* path;
};

TokenBudget token_budget(const Scenario& s, const ReliabilitySpec& spec) {
    if (spec.train_tokens) return {*spec.train_tokens, "/reliability/train_tokens"};
    if (s.training.train_tokens > 0) return {s.training.train_tokens, "/training/train_tokens"};
    throw InputError("/training/train_tokens", "",
                     "is needed for a run-level study (the token budget of the run); or give "
                     "/reliability/train_tokens");
}

void check_run_length(const TokenBudget& budget, double days) {
    if (days > kLongestRunDays)
        throw InputError(budget.path, fmt::format("{:g}", budget.tokens),
                         fmt::format("is {:.3g} days of failure-free training; run-level studies go up to {:g} days "
                                     "(a budget from --train-tokens counts here too)",
                                     days, kLongestRunDays));
}
}  // namespace

RunModel derive_run_model(const RunSetup& base, const ReliabilitySpec& spec, const CheckpointTimes& times) {
    RunModel m;
    m.work_s = base.steps * base.step.seconds;
    for (const auto& f : spec.failures)
        if (spec.rate_multiplier > 0) m.failures.push_back(job_process(f, base.nodes, spec.rate_multiplier));
    m.recovery.detection_s = spec.detection_s;
    m.recovery.reschedule_s = spec.restart.reschedule_s;
    m.recovery.process_start_s = spec.restart.process_start_s;
    m.recovery.load_s = times.load_s;
    m.recovery.hot_spares = static_cast<int>(spec.restart.hot_spares);
    m.recovery.replacement_s = spec.restart.replacement_h * 3600.0;
    const CheckpointSpec& c = spec.checkpoint;
    m.checkpoint.interval_s = c.interval_s;
    m.checkpoint.async = c.async;
    m.checkpoint.write_s = c.async ? times.write_s : 0.0;
    m.checkpoint.stall_s = c.stall_s ? *c.stall_s : (c.async ? times.snapshot_s : times.write_s);
    m.maintenance.mean_gap_s = spec.maintenance.interval_h * 3600.0;
    m.maintenance.gap = spec.maintenance.gap;
    m.maintenance.duration_s = spec.maintenance.duration_s;
    return m;
}

RunSetup make_run_setup(const Scenario& s, const ReliabilitySpec& spec) {
    RunSetup r;
    r.spec = spec;
    r.step = step_time(s, spec);
    const TokenBudget budget = token_budget(s, spec);
    r.train_tokens = budget.tokens;
    r.steps = r.train_tokens / s.training.tokens_per_step();
    check_run_length(budget, r.steps * r.step.seconds / kDay);
    r.size = checkpoint_size(s);
    r.times = checkpoint_times(s, spec, r.size);
    r.nodes = static_cast<double>(s.cluster.nodes() > 0 ? s.cluster.nodes() : 1);
    r.model = derive_run_model(r, spec, r.times);
    return r;
}

RunSetup make_run_setup(const Scenario& s) {
    return make_run_setup(s, s.reliability);
}

}  // namespace sextant::reliability
