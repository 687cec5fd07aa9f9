#pragma once
// Plain-text tables for terminal output: columns padded to their widest cell, numbers
// right-aligned.
#include <string>
#include <vector>

namespace sextant {

class TextTable {
public:
    explicit TextTable(std::vector<std::string> header);
    void add_row(std::vector<std::string> cells);
    // A row that spans the whole table (a rule or a note).
    void add_separator();
    std::string render() const;

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;  // empty row = separator
};

std::string format_bytes(double bytes);       // "12.34 GiB"
std::string format_seconds(double seconds);   // "1.234 s", "12.3 ms", "45.6 us"
std::string format_count(double value);       // "405.85e9" style for large counts

}  // namespace sextant
