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
//  - timestamps in microseconds with exactly three decimals, converted from the simulator's
//    integer nanoseconds (ts = ns / 1000 as text), so back-to-back slices never overlap by
//    rounding.
#include <string>

#include "sim/simulate.hpp"

namespace sextant {

std::string chrome_trace(const Simulation& simulation, const std::string& title);

}  // namespace sextant
