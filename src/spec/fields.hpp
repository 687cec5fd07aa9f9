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

// A field's default as its table states it: a typed value (the one statement of that default:
// the generic reader fills the member with it, `sextant schema` prints it), a rule that derives
// it from other values (free text naming the rule, computed by one function of the parser), or
// nothing (required, or optional with no value).
struct FieldDefault {
    enum class Kind : std::uint8_t { None, Required, Integer, Number, Boolean, String, Rule };
    Kind kind = Kind::None;
    double number = 0;
    bool boolean = false;
    std::string_view text;

    constexpr FieldDefault() = default;
    constexpr FieldDefault(Kind k, double n, bool b, std::string_view t) : kind(k), number(n), boolean(b), text(t) {}
    // Free text: a rule (tables whose fields are not bound to a struct state every default so).
    constexpr FieldDefault(const char* rule) : kind(*rule ? Kind::Rule : Kind::None), text(rule) {}
    constexpr bool typed() const { return kind != Kind::None && kind != Kind::Required && kind != Kind::Rule; }
};
constexpr FieldDefault required() { return {FieldDefault::Kind::Required, 0, false, ""}; }
constexpr FieldDefault default_integer(std::int64_t v) { return {FieldDefault::Kind::Integer, static_cast<double>(v), false, ""}; }
constexpr FieldDefault default_number(double v) { return {FieldDefault::Kind::Number, v, false, ""}; }
constexpr FieldDefault default_bool(bool v) { return {FieldDefault::Kind::Boolean, 0, v, ""}; }
constexpr FieldDefault default_string(std::string_view v) { return {FieldDefault::Kind::String, 0, false, v}; }

// The member of a struct a field fills (spec/field_binding.hpp makes one from member pointers):
// set from a JSON value already checked against the field, and read back for tests and printing.
struct FieldBinding {
    const void* owner = nullptr;  // &kFieldOwner<T> of the struct; null: the parser reads it by hand
    void (*assign)(void* object, const json& value) = nullptr;
    json (*read)(const void* object) = nullptr;
    std::span<const std::string_view> names = {};  // an enum member's names, in the enum's order
};
template <class T>
inline constexpr char kFieldOwner = 0;

struct FieldDef {
    std::string_view name;
    FieldType type;
    std::string_view help;
    std::string_view unit = "";
    FieldDefault fallback = {};
    double min = -std::numeric_limits<double>::infinity();  // inclusive lower bound
    double max = std::numeric_limits<double>::infinity();   // inclusive upper bound
    std::string_view choices = "";                          // "a|b|c"; empty: the bound enum's names
    FieldBinding binding = {};
};

// An enum's names, one table per enum in the enum's order, found by argument-dependent lookup of
// `enum_names(E)` beside the enum: what the parser accepts, `schema` lists and reports print.
template <class E>
std::string_view name_of(E value) {
    return enum_names(value)[static_cast<std::size_t>(value)];
}
template <class E>
std::optional<E> enum_from_name(std::string_view name) {
    const auto names = enum_names(E{});
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return static_cast<E>(i);
    return std::nullopt;
}

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

    // A string field's value, else the table's typed default.
    std::string string_or_default(std::string_view name) const;

    std::string path_of(std::string_view name) const;
    const std::string& path() const { return path_; }
    std::span<const FieldDef> fields() const { return fields_; }

private:
    const FieldDef& def(std::string_view name) const;
    void check_range(const FieldDef& field, double value, const json& raw_value) const;

    const json& object_;
    std::string path_;
    std::span<const FieldDef> fields_;
};

// The generic reader: fills every member of `object` that the reader's table binds to T. A given
// value wins; else read_fields applies the field's typed default (and refuses a missing required
// field), read_given leaves the member as it is (a spec whose unset members mean "open").
void fill_bound(const ObjectReader& reader, const void* owner, void* object, bool apply_defaults);
template <class T>
void read_fields(const ObjectReader& reader, T& object) {
    fill_bound(reader, &kFieldOwner<T>, &object, true);
}
template <class T>
void read_given(const ObjectReader& reader, T& object) {
    fill_bound(reader, &kFieldOwner<T>, &object, false);
}
// Sets every member of `object` bound in `fields` that reads as null (an unset optional) to the
// field's typed default.
void fill_unset(std::span<const FieldDef> fields, const void* owner, void* object);
template <class T>
void fill_unset(std::span<const FieldDef> fields, T& object) {
    fill_unset(fields, &kFieldOwner<T>, &object);
}

// A typed default as JSON (null for a rule or none).
json default_value(const FieldDefault& fallback);
// What `schema` and the README show as the default: the typed value printed, or the rule's text.
std::string default_text(const FieldDef& field);
// The accepted names of an enumerated field, "a|b|c" (empty for other fields).
std::string choices_text(const FieldDef& field);

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
