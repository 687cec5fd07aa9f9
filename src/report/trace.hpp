#pragma once
// Chrome/Perfetto trace of a simulated step: one process per simulated rank (pipeline stage),
// one thread per stream, complete events in microseconds.
#include <string>

#include "sim/simulate.hpp"

namespace sextant {

std::string chrome_trace(const Simulation& simulation, const std::string& title);

}  // namespace sextant
