#pragma once
// Values of command-line flags that are more than one number, parsed where the fuzzer and the
// tests reach them (durations are in reliability/duration_text.hpp). A bad value is an
// InputError naming the flag, the text and the rule.
#include <cstdint>
#include <string>
#include <vector>

namespace sextant {

// "N", "N1,N2,..." or "LO..HI" (doubling from LO while it stays at or below HI), positive
// integers: plan --gpus and --global-batch.
std::vector<std::int64_t> parse_count_sweep(const std::string& text, const std::string& flag);

// A finite size in bytes above zero with an optional K, M or G suffix (powers of 1024):
// collective --min and --max.
double parse_byte_size(const std::string& text, const std::string& flag);

}  // namespace sextant
