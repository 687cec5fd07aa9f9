#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace sextant {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& valid,
                                       std::size_t limit) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    // A name is plausible when fewer than about half its letters differ, or when one contains the
    // other ("h100" for "H100-SXM5-80GB").
    std::string lower_name(name);
    std::transform(lower_name.begin(), lower_name.end(), lower_name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& candidate : valid) {
        std::string lower(candidate);
        std::transform(lower.begin(), lower.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        std::size_t d = edit_distance(name, candidate);
        bool contains = !lower_name.empty() && (lower.find(lower_name) != std::string::npos ||
                                                lower_name.find(lower) != std::string::npos);
        if (contains) d = std::min<std::size_t>(d, 1);
        if (d <= std::max<std::size_t>(2, std::max(name.size(), candidate.size()) / 2))
            scored.emplace_back(d, candidate);
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
    return out;
}

std::string suggestion_text(std::string_view name, const std::vector<std::string>& valid) {
    auto near = closest_names(name, valid);
    std::string text;
    if (!near.empty()) {
        text = "did you mean ";
        for (std::size_t i = 0; i < near.size(); ++i) {
            if (i > 0) text += i + 1 == near.size() ? " or " : ", ";
            text += "'" + near[i] + "'";
        }
        return text + "?";
    }
    text = "valid: ";
    for (std::size_t i = 0; i < valid.size(); ++i) text += (i ? ", " : "") + valid[i];
    return text;
}

}  // namespace sextant
