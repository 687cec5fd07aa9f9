// A scenario file: parsing and every rule of its fixed knobs (src/spec/scenario.cpp); parts are
// resolved against the data folder's presets.
#include "fuzz_input.hpp"
#include "spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] { (void)sextant::parse_scenario(sextant::fuzz::json_of(data, size), sextant::data_dir() / "scenarios"); });
}
