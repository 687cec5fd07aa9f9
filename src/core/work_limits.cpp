#include "core/work_limits.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace sextant {

namespace {

struct Limit {
    double amount;
    std::string_view unit;
    std::string_view why;
};

// Each limit is what a 2-core machine does in well under a minute within a few GiB, measured on
// the shared 2-core development machine (Release build, 2026-11-27; README, "Bounded work and
// fuzzing"); the reason, quoted in the refusal, names what grows with the amount.
Limit limit_of(Work kind) {
    switch (kind) {
        // The largest shipped input is 356 KB (tests/validation/published-runs-2024-2026.json);
        // 64 MiB is 180x that: a 41 MiB scenario (1.5 million stragglers) checks in 3.5 s and
        // 0.85 GiB, so 64 MiB stays near 1.3 GiB.
        case Work::InputBytes: return {64.0 * 1024 * 1024, "bytes", "input files are read whole"};
        // A simulation builds the cluster graph and routes every group's flows over it: Llama 3 8B
        // on 2^20 GPUs simulates in 2.9 s and 0.6 GiB (2^24 took 34 s and died at 6.4 GiB); the
        // largest announced training clusters hold 2^17-2^18 GPUs.
        case Work::ClusterGpus: return {1048576, "GPUs", "the cluster graph and its routes grow with the GPUs"};
        // 3.1 million tasks (pp 8, 65,536 microbatches) simulate in 4.6 s and 1.1 GiB.
        case Work::SimTasks: return {4.0e6, "tasks", "the discrete-event simulation holds every task"};
        // A trace is built in memory (as JSON values, then text) before it is written: 65,536
        // microbatches took 39 s and 8 GiB; 1 GiB of text is a trace Perfetto still opens.
        case Work::TraceBytes: return {1024.0 * 1024 * 1024, "bytes", "the trace is built in memory before it is written"};
        // 20,000 trials x 14 runs of the 405B scenario (7e8 estimated events) take 14 s of CPU.
        case Work::RunEvents: return {1.0e9, "simulated events", "each trial draws every failure, save and restart of the run"};
        // Each variant enumerates and screens its own layout space.
        case Work::PlanVariants: return {256, "GPU count x batch variants", "each variant is a full layout search"};
        case Work::SweepPoints: return {4096, "points", "each point is a separate prediction"};
    }
    return {0, "", ""};
}

std::atomic<double> g_factor{1.0};

// Whole numbers as digits up to a trillion, beyond that in scientific notation.
std::string amount_text(double v) {
    if (!std::isfinite(v)) return "unbounded";
    return v < 1e12 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v);
}

}  // namespace

double work_limit(Work kind) { return limit_of(kind).amount * g_factor.load(); }
std::string_view work_unit(Work kind) { return limit_of(kind).unit; }

void set_work_limit_factor(double factor) { g_factor.store(factor); }
double work_limit_factor() { return g_factor.load(); }

void check_work(Work kind, double amount, const std::string& path, const std::string& value) {
    const Limit l = limit_of(kind);
    const double limit = work_limit(kind);
    if (std::isfinite(amount) && amount <= limit) return;
    throw InputError(path, value,
                     fmt::format("asks for {} {} and Sextant runs at most {} ({}; about a minute and a few GiB on a "
                                 "2-core machine); {} X multiplies every limit by X",
                                 amount_text(amount), l.unit, amount_text(limit), l.why, kWorkLimitFlag));
}

}  // namespace sextant
