#pragma once
// How a calibration profile was made, section by section: is each number a measurement, a
// published figure (with its source), a figure derived from published ones, or a fit (with its
// fit set)? And where does it differ from the published profile of its GPU? `sextant calibrate
// show` prints this.
#include <string>
#include <vector>

#include "spec/fields.hpp"
#include "spec/hardware_spec.hpp"

namespace sextant {

struct ProvenanceLine {
    std::string section;  // "gemm bf16", "attention", "memory", "comm nic_efficiency", "factors compute", ...
    std::string basis;    // measured | published | derived | fit | default | unsourced (and mixes: "published 9, derived 1")
    std::string value;    // "10 points", "2.97 TB/s", "0.94"
    // Each source (or fit set) with how many of the section's numbers rest on it.
    std::vector<std::pair<std::string, int>> sources;
    std::string versus_published;  // "same", "x1.03 median (x0.95..x1.10, 10 points)", "0.822 -> 0.805", "added"
};

// `profile` and `published` are resolved profile documents (presets applied): the profile and the
// shipped profile of its GPU.
std::vector<ProvenanceLine> describe_profile(const json& profile, const json& published, const GpuSpec& gpu);

// measured | derived | published | unsourced, from a number's "source" text: sextant-calibrate
// writes "sextant-calibrate, ...", other measurements start "measured"; figures computed from
// published ones say how ("derived", "scaled to", "assuming", "x 0.83", "at 0.6x", "used for").
std::string source_basis(const std::string& source);

}  // namespace sextant
