// ctfx/core/scalar.hpp — a scalar operand or fill value as PyTorch's c10::Scalar holds it.
//
// A Python int stays an exact int64 (2**53 + 1 is not a double), a float a double, a bool a bool:
// the category decides promotion (torch.result_type) and the kernels convert the value to their
// compute type in one step, as c10::Scalar::to<T>() does (an int64 goes to float directly, not
// through double, which could round twice).
#pragma once
#include "diagnostics_push.hpp"
#include <cstdint>
#include <type_traits>
#include "config.hpp"
#include "dtype.hpp"

namespace ctfx {

namespace detail {
// f rounded to the nearest half (f16) or bfloat16, ties to even, back as a float: the arithmetic
// of kernels/element.hpp's half_t and bfloat16_t, in constant evaluation.
constexpr float round_to_half(float f) {
  const auto x = __builtin_bit_cast(std::uint32_t, f);
  const std::uint32_t sign = x & 0x80000000u, mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return f;  // inf or nan
  if (mag >= 0x477ff000u) return __builtin_bit_cast(float, sign | 0x7f800000u);  // rounds to inf
  if (mag < 0x38800000u) {  // a subnormal half: a multiple of 2^-24
    const float a = __builtin_bit_cast(float, mag) + 0.5f;  // RNE at 2^-24
    const float r = static_cast<float>(__builtin_bit_cast(std::uint32_t, a) - 0x3f000000u) * (1.0f / 16777216.0f);
    return sign ? -r : r;
  }
  const std::uint32_t odd = (mag >> 13) & 1u;
  const std::uint32_t m = (mag + 0xfffu + odd) & ~0x1fffu;  // round to 10 mantissa bits, ties to even
  return __builtin_bit_cast(float, sign | m);
}
constexpr float round_to_bfloat16(float f) {
  std::uint32_t x = __builtin_bit_cast(std::uint32_t, f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return f;
  x += 0x7fffu + ((x >> 16) & 1u);
  return __builtin_bit_cast(float, x & 0xffff0000u);
}
}  // namespace detail

/// The Python category of a scalar: float, int or bool.
enum class scalar_kind : std::uint8_t { floating, integral, boolean };

/// A scalar operand or fill value: a double, or an exact int64 (an int; a bool as 0 or 1).
struct scalar_value {
  double d = 0.0;       ///< the value, for a float
  std::int64_t i = 0;   ///< the value, for an int or a bool
  scalar_kind kind = scalar_kind::floating;  ///< its category

  constexpr scalar_value() = default;
  /// A Python float.
  constexpr scalar_value(double v) : d(v) {}  // NOLINT: a double is a float scalar
  /// A Python int (an integral C++ value), a Python bool (a C++ bool).
  template <class T>
    requires(std::is_integral_v<T>)
  constexpr scalar_value(T v)  // NOLINT: an integer is an int scalar
      : d(static_cast<double>(v)), i(static_cast<std::int64_t>(v)),
        kind(std::is_same_v<T, bool> ? scalar_kind::boolean : scalar_kind::integral) {}
  /// A Python int.
  static constexpr scalar_value integer(std::int64_t v) {
    scalar_value s;
    s.i = v;
    s.d = static_cast<double>(v);
    s.kind = scalar_kind::integral;
    return s;
  }
  /// A Python bool.
  static constexpr scalar_value boolean(bool v) {
    scalar_value s = integer(v ? 1 : 0);
    s.kind = scalar_kind::boolean;
    return s;
  }
  /// An int or a bool (its value is `i`).
  constexpr bool exact_int() const { return kind != scalar_kind::floating; }
  /// The value in type C, converted once from what the scalar holds (c10::Scalar::to<C>).
  template <class C>
  CTFX_HD constexpr C as() const {
    return kind != scalar_kind::floating ? static_cast<C>(i) : static_cast<C>(d);
  }
  /// The scalar converted to dtype `to` as PyTorch converts a wrapped number to the operands'
  /// common dtype before computing (an int wraps to a narrower int; a float rounds to f32, f16 or
  /// bfloat16 through float, as c10::Half and c10::BFloat16 are made). A value a float dtype holds
  /// exactly keeps its category.
  constexpr scalar_value rounded_to(dtype to) const {
    switch (to) {
      case dtype::b8: return exact_int() ? boolean(i != 0) : boolean(d != 0.0);
      case dtype::i8: return exact_int() ? integer(static_cast<std::int8_t>(i)) : *this;
      case dtype::i32: return exact_int() ? integer(static_cast<std::int32_t>(i)) : *this;
      case dtype::f16: case dtype::bf16: break;
      default: return *this;  // i64, f32, f64: the kernels' as<C>() converts in one step, as PyTorch does
    }
    const float f = as<float>();
    const float r = to == dtype::f16 ? detail::round_to_half(f) : detail::round_to_bfloat16(f);
    if (static_cast<double>(r) == as<double>() && (!exact_int() || static_cast<double>(r) == static_cast<double>(i)))
      return *this;
    return scalar_value(static_cast<double>(r));
  }
  /// Bit-for-bit equality (a NaN equals itself; -0.0 differs from 0.0), the rule a pass or a
  /// printer's round trip needs.
  constexpr bool same(const scalar_value& o) const {
    return kind == o.kind && (exact_int() ? i == o.i : __builtin_bit_cast(std::uint64_t, d) == __builtin_bit_cast(std::uint64_t, o.d));
  }
  /// Whether the scalar's value is v (an int compared exactly when v is integral).
  constexpr bool equals(double v) const {
    if (!exact_int()) return d == v;
    return v >= -0x1p63 && v < 0x1p63 && static_cast<double>(static_cast<std::int64_t>(v)) == v &&
           static_cast<std::int64_t>(v) == i;
  }
};

}  // namespace ctfx
#include "diagnostics_pop.hpp"
