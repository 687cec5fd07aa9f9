#pragma once
// Bounded work: every input is priced before Sextant runs it, and work beyond what the machine
// class Sextant is built for (a 2-core, 24 GiB CI runner: about a minute and a few GiB) is
// refused as an input error naming the amount, the limit and the flag that raises it, instead
// of running for minutes and dying of std::bad_alloc. Each limit is stated once, here.
#include <cstdint>
#include <string>
#include <string_view>

namespace sextant {

enum class Work {
    InputBytes,      // bytes of one input file read whole (JSON, logs)
    ClusterGpus,     // GPUs of a simulated or planned cluster (its graph, routes and groups)
    SimTasks,        // tasks of one discrete-event step simulation
    TraceBytes,      // bytes of a Chrome trace held in memory and written
    RunEvents,       // events of the run-level Monte Carlo (trials x sweep points x events per run)
    PlanVariants,    // GPU counts x global batches of one plan sweep
    SweepPoints,     // points of one collective size sweep or layout sweep
};

// The flag that multiplies every limit (a machine bigger than the class, or patience).
inline constexpr std::string_view kWorkLimitFlag = "--work-limit";

// The largest amount of `kind` run without --work-limit.
double work_limit(Work kind);
// The unit an amount of `kind` is counted in ("GPUs", "tasks"), for messages.
std::string_view work_unit(Work kind);

// Every limit is multiplied by `factor` (>= 1); set once, by the command line.
void set_work_limit_factor(double factor);
double work_limit_factor();

// Refuses `amount` of `kind` (an estimate made before the work starts) beyond its limit: an
// InputError at `path` (a JSON pointer or a flag) with `value` as given, saying what the input
// asks for, the limit and the flag that raises it. Non-finite amounts are refused too.
void check_work(Work kind, double amount, const std::string& path, const std::string& value);

// JSON nesting deeper than this is refused when a file is read, before it is parsed: recursive
// descent (parsing, copying, printing a value in an error) would otherwise overflow the stack.
// Sextant's deepest file nests 6 levels; 64 leaves room for anything a person writes.
inline constexpr int kMaxJsonDepth = 64;

}  // namespace sextant
