// A scenario's /reliability or a failure-rate preset (calibration/reliability/):
// src/spec/reliability_spec.cpp.
#include "fuzz_input.hpp"
#include "spec/reliability_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] { (void)sextant::reliability::parse_reliability(sextant::fuzz::json_of(data, size), "/reliability"); });
}
