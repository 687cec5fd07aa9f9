// A calibration profile (calibration/), read for an H100: src/profile/profile.cpp.
#include "fuzz_input.hpp"
#include "profile/profile.hpp"
#include "spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const sextant::GpuSpec gpu = sextant::load_gpu("H100-SXM5-80GB", "");
    return sextant::fuzz::read_input([&] {
        const sextant::json doc = sextant::resolve_inherited(sextant::fuzz::json_of(data, size), "calibration", "/calibration");
        (void)sextant::CalibrationProfile::from_json(doc, "/calibration", gpu);
    });
}
