// A runtime profile (calibration/runtime/): src/spec/runtime_profile.cpp.
#include "spec/runtime_profile.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] {
        const sextant::json doc = sextant::resolve_inherited(sextant::fuzz::json_of(data, size), "calibration/runtime", "/framework");
        (void)sextant::parse_runtime_profile(doc, "fuzz", "/framework");
    });
}
