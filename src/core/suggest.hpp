#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sextant {

// Edit distance, case-insensitive: how far a misspelt name is from a valid one.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The valid names closest to `name` (at most `limit`, only plausible ones), best first.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& valid,
                                       std::size_t limit = 3);

// "did you mean 'a' or 'b'?" or, when nothing is close, "valid: a, b, c".
std::string suggestion_text(std::string_view name, const std::vector<std::string>& valid);

}  // namespace sextant
