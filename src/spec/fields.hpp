#pragma once
// One table of settings: every scenario key is declared once, with its type, unit, default,
// range and help. Parsing, unknown-key detection, suggestions and `sextant schema` all read it.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sextant {

using json = nlohmann::json;

enum class FieldType { Integer, Number, Boolean, String, Object, Array, Any };

struct FieldDef {
    std::string_view name;
    FieldType type;
    std::string_view help;
    std::string_view unit = "";
    std::string_view default_text = "";
    double min = -std::numeric_limits<double>::infinity();  // inclusive lower bound
    double max = std::numeric_limits<double>::infinity();   // inclusive upper bound
    std::string_view choices = "";                          // "a|b|c" for enumerated strings
};

// A named table, for `sextant schema` and the README.
struct FieldTable {
    std::string_view object;  // JSON path pattern, e.g. "/layout"
    std::string_view help;
    std::span<const FieldDef> fields;
};


// Reads one JSON object against its table: checks that it is an object, that every key is
// declared (or explicitly ignored), and each value's type, range and choices. A null value reads
// as "not given" (the published-runs convention for unpublished knobs).
class ObjectReader {
public:
    ObjectReader(const json& object, std::string path, std::span<const FieldDef> fields,
                 std::span<const std::string_view> ignored = {});
    // The reader keeps a reference to the object: a temporary would dangle.
    ObjectReader(json&& object, std::string path, std::span<const FieldDef> fields,
                 std::span<const std::string_view> ignored = {}) = delete;

    bool has(std::string_view name) const;
    std::optional<std::int64_t> integer(std::string_view name) const;
    std::optional<double> number(std::string_view name) const;
    std::optional<bool> boolean(std::string_view name) const;
    std::optional<std::string> string(std::string_view name) const;
    const json* raw(std::string_view name) const;  // any type, null when absent or null

    std::int64_t require_integer(std::string_view name) const;
    double require_number(std::string_view name) const;
    std::string require_string(std::string_view name) const;

    std::string path_of(std::string_view name) const;
    const std::string& path() const { return path_; }

private:
    const FieldDef& def(std::string_view name) const;
    void check_range(const FieldDef& field, double value, const json& raw_value) const;

    const json& object_;
    std::string path_;
    std::span<const FieldDef> fields_;
};

// Helpers for rules that need the raw text of a value.
std::string value_text(const json& value);
// A JSON integer, or a float with no fractional part (1e3 is 1000).
bool is_integral(const json& value);
// A numeric field's accepted range as "LO..HI" or "LO.." (empty for other fields), for `schema`.
std::string range_text(const FieldDef& field);
// A member of an object read without a field table (foreign formats: Hugging Face configs,
// published-runs entries): `fallback` when absent or null, an InputError at path/key when it
// has another type.
std::string string_member(const json& object, const char* key, const std::string& fallback, const std::string& path);
bool bool_member(const json& object, const char* key, bool fallback, const std::string& path);

}  // namespace sextant
