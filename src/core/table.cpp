#include "core/table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>

namespace sextant {

namespace {
bool is_numeric(const std::string& s) {
    if (s.empty()) return false;
    char c = s[0];
    return std::isdigit(static_cast<unsigned char>(c)) || ((c == '-' || c == '+') && s.size() > 1);
}
}  // namespace

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(header_.size());
    rows_.push_back(std::move(cells));
}

void TextTable::add_separator() { rows_.emplace_back(); }

std::string TextTable::render() const {
    std::vector<std::size_t> width(header_.size());
    for (std::size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
    for (const auto& row : rows_)
        for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    std::size_t total = 0;
    for (auto w : width) total += w + 2;
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::string& cell = cells[c];
            std::string pad(width[c] - cell.size(), ' ');
            out += is_numeric(cell) && c > 0 ? pad + cell : cell + pad;
            if (c + 1 < cells.size()) out += "  ";
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out = line(header_);
    out += std::string(total > 2 ? total - 2 : total, '-') + "\n";
    for (const auto& row : rows_)
        out += row.empty() ? std::string(total > 2 ? total - 2 : total, '-') + "\n" : line(row);
    return out;
}

std::string format_bytes(double bytes) {
    const double gib = 1024.0 * 1024.0 * 1024.0;
    if (std::fabs(bytes) >= gib) return fmt::format("{:.2f} GiB", bytes / gib);
    if (std::fabs(bytes) >= 1024.0 * 1024.0) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0));
    if (std::fabs(bytes) >= 1024.0) return fmt::format("{:.1f} KiB", bytes / 1024.0);
    return fmt::format("{:.0f} B", bytes);
}

std::string format_seconds(double s) {
    if (std::fabs(s) >= 1.0) return fmt::format("{:.3f} s", s);
    if (std::fabs(s) >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
    return fmt::format("{:.1f} us", s * 1e6);
}

std::string format_count(double v) {
    if (std::fabs(v) >= 1e9) return fmt::format("{:.2f}e9", v / 1e9);
    if (std::fabs(v) >= 1e6) return fmt::format("{:.2f}e6", v / 1e6);
    return fmt::format("{:.0f}", v);
}

}  // namespace sextant
