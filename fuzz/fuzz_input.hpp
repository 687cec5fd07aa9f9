#pragma once
// What every fuzz target does with one input: hand the bytes to one of Sextant's readers and
// accept exactly two outcomes, a value or an InputError (exit 2 in the CLI). Anything else
// escapes to libFuzzer as a finding: another exception (an "internal error", exit 1), a crash,
// a sanitizer report, a hang (-timeout) or memory beyond -rss_limit_mb.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "spec/presets.hpp"

namespace sextant::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// A JSON input as the file loaders read it (depth and number checks included).
inline json json_of(const std::uint8_t* data, std::size_t size) {
    return parse_json_text(text_of(data, size), "", "\"fuzz input\"");
}

template <class Reader>
int read_input(Reader&& reader) {
    try {
        reader();
    } catch (const InputError&) {
        // The documented answer to bad input.
    }
    return 0;
}

}  // namespace sextant::fuzz
