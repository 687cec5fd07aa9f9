#pragma once
// Strong units for the quantities that flow between stages. A Quantity is a double with a tag:
// same-unit arithmetic is allowed, mixing units needs an explicit operator below.
#include <compare>

namespace sextant {

template <class Tag>
struct Quantity {
    double v = 0.0;
    constexpr Quantity() = default;
    constexpr explicit Quantity(double value) : v(value) {}
    constexpr double value() const { return v; }
    constexpr Quantity operator+(Quantity o) const { return Quantity(v + o.v); }
    constexpr Quantity operator-(Quantity o) const { return Quantity(v - o.v); }
    constexpr Quantity& operator+=(Quantity o) { v += o.v; return *this; }
    constexpr Quantity& operator-=(Quantity o) { v -= o.v; return *this; }
    constexpr Quantity operator*(double k) const { return Quantity(v * k); }
    constexpr Quantity operator/(double k) const { return Quantity(v / k); }
    constexpr double operator/(Quantity o) const { return v / o.v; }
    constexpr auto operator<=>(const Quantity&) const = default;
};
template <class Tag>
constexpr Quantity<Tag> operator*(double k, Quantity<Tag> q) { return q * k; }

using Bytes = Quantity<struct BytesTag>;
using Seconds = Quantity<struct SecondsTag>;
using Flops = Quantity<struct FlopsTag>;
using BytesPerSecond = Quantity<struct BytesPerSecondTag>;
using FlopsPerSecond = Quantity<struct FlopsPerSecondTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.v / r.v); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.v / r.v); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.v * t.v); }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;

}  // namespace sextant
