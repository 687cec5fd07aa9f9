#pragma once
// A command's answer as data. The command fills one Output; `render_text` lays it out for a
// terminal and `render_json` as one JSON document (and a table as CSV), so a number can never
// read differently in two formats, and a new format is one renderer here, not a change to every
// command. JSON places each value at a JSON pointer: commands keep the document shapes their
// users' scripts read (README "Commands"). A fact or column with no pointer is text only; one
// with no label is JSON only.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace sextant {

// How a value reads in text. JSON carries the raw value: seconds, bytes, fractions.
enum class Style : std::uint8_t {
    Plain,          // integers as they are, numbers with `decimals`, strings, yes/no
    Duration,       // format_seconds: "1.234 s", "12.3 ms"
    FixedDuration,  // "{:.<decimals>f} s": columns of step times compared digit by digit
    ByteSize,       // format_bytes: "12.34 GiB"
    Fraction,       // a fraction shown as a percentage: 0.4512 -> "45.1%"
    Percent,        // already a percentage: 3.14 -> "3.1%"
    SignedPercent,  // already a percentage, signed: "+3.1%"
    Signed,         // "{:+.<decimals>f}"
    Hours,          // seconds shown in hours, with `decimals`
    Days,           // seconds shown in days, with `decimals`
};

struct Value {
    Value() = default;
    Value(bool b) : json(b) {}  // NOLINT: implicit on purpose, rows are written as brace lists
    Value(int v) : json(v) {}  // NOLINT
    Value(std::int64_t v) : json(v) {}  // NOLINT
    Value(std::size_t v) : json(v) {}  // NOLINT
    Value(double v, Style s = Style::Plain, int places = 1) : json(v), style(s), decimals(places) {}  // NOLINT
    Value(const char* s) : json(s) {}  // NOLINT
    Value(std::string s) : json(std::move(s)) {}  // NOLINT
    // Structured JSON (an object, a list) with the text a reader sees for it.
    static Value structured(nlohmann::json j, std::string text);

    nlohmann::json json;        // null: absent (text "-", JSON key left out)
    Style style = Style::Plain;
    int decimals = 1;
    std::string text_override;  // set by structured()
};

std::string cell_text(const Value& v);

struct Fact {
    std::string pointer;  // JSON pointer ("/step_time_s"); empty: text only
    std::string label;    // text label; empty: JSON only
    Value value;
    std::string detail = "";  // text after the value ("of 79.65 GiB (fits)")
};

struct Column {
    std::string key;     // the row object's key in JSON; empty: text only
    std::string header;  // text header; empty: JSON only
};

struct Table {
    std::string pointer = "";  // where the rows go in JSON (an array of objects); empty: text only
    std::vector<Column> columns = {};
    std::vector<std::vector<Value>> rows = {};
    // Text only: consecutive rows whose other cells read the same print once, this column
    // showing the range of theirs ("1-14"). -1: every row prints.
    int merge_runs_on = -1;
    std::string title = "";                   // text only: the line above the table
    std::vector<std::size_t> json_only_rows = {};  // rows text leaves out (causes with no events)
    bool hidden_in_text = false;                    // the whole table is JSON only
};

struct Note {
    std::string text;
    bool attached = false;  // text: right under the block before it, no blank line
};

// Text placement only: a blank line between blocks.
using OutputBlock = std::variant<std::vector<Fact>, Table, Note>;

struct Output {
    std::string heading;  // text only: the first line
    std::vector<OutputBlock> blocks;

    void add_facts(std::vector<Fact> facts) { blocks.emplace_back(std::move(facts)); }
    // A new table block; the reference holds until the next block is added.
    Table& table(std::string pointer, std::vector<Column> columns);
    void note(std::string text, bool attached = false) { blocks.emplace_back(Note{std::move(text), attached}); }
};

// One row of a table as JSON: its keyed columns, absent values left out.
nlohmann::json row_json(const Table& table, const std::vector<Value>& row);

std::string render_text(const Output& out);
nlohmann::json render_json(const Output& out);
// One table as CSV (RFC 4180 quoting), the JSON keys as the header: the columns named in `keys`,
// in that order, or else every keyed column with a number, string or boolean in its first row.
std::string render_csv(const Table& table, const std::vector<std::string>& keys = {});

}  // namespace sextant
