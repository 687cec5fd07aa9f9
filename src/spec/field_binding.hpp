#pragma once
// bind<&T::member>() (or a path into nested structs, bind<&T::part, &Part::member>()): the
// FieldBinding a table entry holds, so that one generic reader (read_fields in fields.hpp) fills
// the struct from a JSON object and tests read each member back. Members may be integers, numbers,
// booleans, strings, enums with an `enum_names` table, or std::optional of any of these. Included
// only by the files that declare tables: it needs the whole JSON library.
#include <optional>
#include <string>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "spec/fields.hpp"

namespace sextant {

namespace binding_detail {
template <class T>
struct Optional : std::false_type {
    using type = T;
};
template <class T>
struct Optional<std::optional<T>> : std::true_type {
    using type = T;
};

template <class M>
struct MemberOf;
template <class C, class M>
struct MemberOf<M C::*> {
    using owner = C;
};

// A JSON value the table already checked (type, range, choices) as the member's value type.
template <class V>
V value_from(const json& v) {
    if constexpr (std::is_same_v<V, bool>) {
        return v.get<bool>();
    } else if constexpr (std::is_same_v<V, std::string>) {
        return v.get<std::string>();
    } else if constexpr (std::is_enum_v<V>) {
        return enum_from_name<V>(v.get<std::string>()).value();
    } else if constexpr (std::is_integral_v<V>) {
        return static_cast<V>(v.get<double>());  // 1e3 is the integer 1000
    } else {
        return v.get<double>();
    }
}

template <class V>
json value_to(const V& v) {
    if constexpr (Optional<V>::value) {
        return v ? value_to(*v) : json();
    } else if constexpr (std::is_enum_v<V>) {
        return std::string(name_of(v));
    } else if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>) {
        return static_cast<std::int64_t>(v);
    } else {
        return v;
    }
}
}  // namespace binding_detail

template <auto First, auto... Rest>
constexpr FieldBinding bind() {
    using Owner = typename binding_detail::MemberOf<decltype(First)>::owner;
    using Member = std::remove_cvref_t<decltype(((std::declval<Owner&>().*First) .* ... .* Rest))>;
    using Value = typename binding_detail::Optional<Member>::type;
    FieldBinding b;
    b.owner = &kFieldOwner<Owner>;
    b.assign = [](void* object, const json& v) {
        ((static_cast<Owner*>(object)->*First) .* ... .* Rest) = binding_detail::value_from<Value>(v);
    };
    b.read = [](const void* object) -> json {
        return binding_detail::value_to(((static_cast<const Owner*>(object)->*First) .* ... .* Rest));
    };
    if constexpr (std::is_enum_v<Value>) b.names = enum_names(Value{});
    return b;
}

}  // namespace sextant
