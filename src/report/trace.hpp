#pragma once
// Chrome trace-event JSON of a simulated step, written the way PyTorch's profiler writes its
// traces (Perfetto, chrome://tracing and speedscope read it):
//  - one process per pipeline stage, one thread per stream (compute, p2p, dp), in order;
//  - complete events ("X") with a category and args on every slice: stage, microbatch, chunk,
//    layers; communications add op, bytes, algorithm, group size and span;
//  - a forward or backward slice holds child slices for its parts (recompute, compute, exposed
//    communication per parallelism, overheads), which tile it exactly;
//  - flow events ("s" at the sending slice, "f" with "bp":"e" at the receiving one) for every
//    pipeline send and receive;
//  - a counter track per stage ("C", memory) for the bytes in use over the step: the static part
//    (weights, gradients, optimizer, buffers) plus the activations of the microbatches in flight;
//  - timestamps ("ts") in microseconds with exactly three decimals, the simulator's integer
//    nanoseconds written as text after an origin (otherData.time_origin_us, a power of two that
//    puts the whole step in one binade); each duration ("dur") is the exact difference of its
//    end's and start's doubles. Back-to-back slices and children ending with their parent never
//    overlap by rounding, whether a reader rounds to nanoseconds (Perfetto) or adds doubles after
//    subtracting a thread's first timestamp (speedscope).
#include <string>

#include "sim/simulate.hpp"

namespace sextant {

std::string chrome_trace(const Simulation& simulation, const std::string& title);

// The bytes chrome_trace() produces for a simulation of `tasks` tasks, from above, so that a
// trace beyond the TraceBytes work limit is refused before the step is simulated.
double estimated_trace_bytes(double tasks);

}  // namespace sextant
