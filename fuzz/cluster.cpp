// A cluster file (topologies/) with its GPU datasheet preset, and the job's share of an NVLink
// domain it resolves to: src/spec/cluster_spec.cpp.
#include "fuzz_input.hpp"
#include "spec/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    return sextant::fuzz::read_input([&] {
        const sextant::ClusterSpec c = sextant::parse_cluster(sextant::fuzz::json_of(data, size), "/cluster", sextant::load_gpu);
        // The job's share of a domain divides by what parsing let through (gpus_per_node, segment_nodes).
        (void)c.job_domain_gpus();
    });
}
