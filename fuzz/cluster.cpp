// A cluster file (topologies/) with its GPU datasheet preset: src/spec/cluster_spec.cpp.
#include "fuzz_input.hpp"
#include "spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] { (void)sextant::parse_cluster(sextant::fuzz::json_of(data, size), "/cluster", sextant::load_gpu); });
}
