#include "spec/fields.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"

namespace sextant {

namespace {
std::string type_name(FieldType t) {
    switch (t) {
        case FieldType::Integer: return "an integer";
        case FieldType::Number: return "a number";
        case FieldType::Boolean: return "true or false";
        case FieldType::String: return "a string";
        case FieldType::Object: return "an object";
        case FieldType::Array: return "an array";
        case FieldType::Any: return "any value";
    }
    return "a value";
}

bool type_matches(FieldType t, const json& v) {
    switch (t) {
        case FieldType::Integer: return is_integral(v);
        case FieldType::Number: return v.is_number();
        case FieldType::Boolean: return v.is_boolean();
        case FieldType::String: return v.is_string();
        case FieldType::Object: return v.is_object();
        case FieldType::Array: return v.is_array();
        case FieldType::Any: return true;
    }
    return false;
}

std::vector<std::string> split_choices(std::string_view choices) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= choices.size()) {
        std::size_t bar = choices.find('|', start);
        if (bar == std::string_view::npos) bar = choices.size();
        out.emplace_back(choices.substr(start, bar - start));
        start = bar + 1;
    }
    return out;
}

std::string format_bound(double x) {
    if (std::floor(x) == x && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
    return nlohmann::json(x).dump();
}

const json* member(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
}
}  // namespace

bool is_integral(const json& v) {
    return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
}

std::string range_text(const FieldDef& field) {
    if (field.type != FieldType::Integer && field.type != FieldType::Number) return "";
    const auto bounded = [](double x) { return std::isfinite(x) && std::fabs(x) < 1e300; };
    if (!bounded(field.min) && !bounded(field.max)) return "";
    return (bounded(field.min) ? format_bound(field.min) : "") + ".." + (bounded(field.max) ? format_bound(field.max) : "");
}

std::string string_member(const json& object, const char* key, const std::string& fallback, const std::string& path) {
    const json* v = member(object, key);
    if (!v) return fallback;
    if (!v->is_string()) throw InputError(path + "/" + key, value_text(*v), "must be a string");
    return v->get<std::string>();
}

bool bool_member(const json& object, const char* key, bool fallback, const std::string& path) {
    const json* v = member(object, key);
    if (!v) return fallback;
    if (!v->is_boolean()) throw InputError(path + "/" + key, value_text(*v), "must be true or false");
    return v->get<bool>();
}

std::string choices_text(const FieldDef& field) {
    if (!field.choices.empty()) return std::string(field.choices);
    std::string text;
    for (const auto& name : field.binding.names) text += (text.empty() ? "" : "|") + std::string(name);
    return text;
}

json default_value(const FieldDefault& d) {
    switch (d.kind) {
        case FieldDefault::Kind::Integer: return static_cast<std::int64_t>(d.number);
        case FieldDefault::Kind::Number: return d.number;
        case FieldDefault::Kind::Boolean: return d.boolean;
        case FieldDefault::Kind::String: return std::string(d.text);
        case FieldDefault::Kind::None:
        case FieldDefault::Kind::Required:
        case FieldDefault::Kind::Rule: break;
    }
    return nullptr;
}

std::string default_text(const FieldDef& field) {
    const FieldDefault& d = field.fallback;
    switch (d.kind) {
        case FieldDefault::Kind::Integer: return std::to_string(static_cast<std::int64_t>(d.number));
        case FieldDefault::Kind::Number: return format_bound(d.number);
        case FieldDefault::Kind::Boolean: return d.boolean ? "true" : "false";
        case FieldDefault::Kind::String:
        case FieldDefault::Kind::Rule: return std::string(d.text);
        case FieldDefault::Kind::None:
        case FieldDefault::Kind::Required: break;
    }
    return "";
}

void fill_bound(const ObjectReader& r, const void* owner, void* object, bool apply_defaults) {
    for (const FieldDef& f : r.fields()) {
        if (f.binding.owner != owner) continue;
        if (const json* v = r.raw(f.name)) {
            f.binding.assign(object, *v);
        } else if (!apply_defaults) {
            continue;
        } else if (f.fallback.typed()) {
            f.binding.assign(object, default_value(f.fallback));
        } else if (f.fallback.kind == FieldDefault::Kind::Required) {
            throw InputError(r.path_of(f.name), "", "is required (" + std::string(f.help) + ")");
        }
    }
}

void fill_unset(std::span<const FieldDef> fields, const void* owner, void* object) {
    for (const FieldDef& f : fields)
        if (f.binding.owner == owner && f.fallback.typed() && f.binding.read(object).is_null())
            f.binding.assign(object, default_value(f.fallback));
}

std::string ObjectReader::string_or_default(std::string_view name) const {
    if (auto v = string(name)) return *v;
    return std::string(def(name).fallback.text);
}

std::string value_text(const json& value) {
    std::string text = value.dump();
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

ObjectReader::ObjectReader(const json& object, std::string path, std::span<const FieldDef> fields,
                           std::span<const std::string_view> ignored)
    : object_(object), path_(std::move(path)), fields_(fields) {
    if (!object_.is_object()) throw InputError(path_, value_text(object_), "must be a JSON object");
    std::vector<std::string> valid;
    for (const auto& f : fields_) valid.emplace_back(f.name);
    for (auto it = object_.begin(); it != object_.end(); ++it) {
        const std::string& key = it.key();
        bool known = false;
        for (const auto& f : fields_) known = known || f.name == key;
        for (const auto& name : ignored) known = known || name == key;
        if (!known)
            throw InputError(path_ + "/" + key, "", "unknown key; " + suggestion_text(key, valid));
        const FieldDef& field = def(key);
        const json& v = it.value();
        if (v.is_null()) continue;
        if (!type_matches(field.type, v))
            throw InputError(path_of(key), value_text(v), "must be " + type_name(field.type));
        if (v.is_number()) check_range(field, v.get<double>(), v);
        if (const std::string choices = choices_text(field); !choices.empty() && v.is_string()) {
            auto options = split_choices(choices);
            std::string s = v.get<std::string>();
            bool ok = false;
            for (const auto& o : options) ok = ok || o == s;
            if (!ok)
                throw InputError(path_of(key), value_text(v),
                                 "must be one of " + choices + "; " + suggestion_text(s, options));
        }
    }
}

const FieldDef& ObjectReader::def(std::string_view name) const {
    for (const auto& f : fields_)
        if (f.name == name) return f;
    static const FieldDef ignored_field{"", FieldType::Any, ""};
    return ignored_field;
}

void ObjectReader::check_range(const FieldDef& field, double value, const json& raw_value) const {
    if (value < field.min) {
        std::string rule = field.min == 1 && field.type == FieldType::Integer
                               ? "must be a positive integer"
                               : "must be at least " + format_bound(field.min);
        throw InputError(path_of(field.name), value_text(raw_value), rule);
    }
    // An integer without its own bound still has to fit the 64-bit count it is read into.
    const double max = field.type == FieldType::Integer ? std::min(field.max, 9007199254740992.0) : field.max;
    if (value > max)
        throw InputError(path_of(field.name), value_text(raw_value), "must be at most " + format_bound(max));
}

std::string ObjectReader::path_of(std::string_view name) const {
    return path_ + "/" + std::string(name);
}

bool ObjectReader::has(std::string_view name) const { return raw(name) != nullptr; }

const json* ObjectReader::raw(std::string_view name) const {
    auto it = object_.find(std::string(name));
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
}

std::optional<std::int64_t> ObjectReader::integer(std::string_view name) const {
    const json* v = raw(name);
    if (!v) return std::nullopt;
    return static_cast<std::int64_t>(v->get<double>());
}

std::optional<double> ObjectReader::number(std::string_view name) const {
    const json* v = raw(name);
    if (!v) return std::nullopt;
    return v->get<double>();
}

std::optional<bool> ObjectReader::boolean(std::string_view name) const {
    const json* v = raw(name);
    if (!v) return std::nullopt;
    return v->get<bool>();
}

std::optional<std::string> ObjectReader::string(std::string_view name) const {
    const json* v = raw(name);
    if (!v) return std::nullopt;
    return v->get<std::string>();
}

std::int64_t ObjectReader::require_integer(std::string_view name) const {
    auto v = integer(name);
    if (!v) throw InputError(path_of(name), "", "is required (" + std::string(def(name).help) + ")");
    return *v;
}

double ObjectReader::require_number(std::string_view name) const {
    auto v = number(name);
    if (!v) throw InputError(path_of(name), "", "is required (" + std::string(def(name).help) + ")");
    return *v;
}

std::string ObjectReader::require_string(std::string_view name) const {
    auto v = string(name);
    if (!v) throw InputError(path_of(name), "", "is required (" + std::string(def(name).help) + ")");
    return *v;
}

}  // namespace sextant
