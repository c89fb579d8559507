// ctfx/kernels/element.hpp — the C++ element type of each dtype, and how kernels compute with it.
//
// float16 and bfloat16 are stored as their 16 bits (the same struct on host and device, so a host
// run and a CUDA run see identical storage) and computed in float, rounding to nearest even on
// store, as PyTorch's CPU kernels do. bool is one byte holding 0 or 1.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include "../core/config.hpp"
#include "../core/dtype.hpp"
#include "../core/scalar.hpp"

namespace ctfx {

namespace detail {
CTFX_HD inline std::uint32_t float_bits(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }
CTFX_HD inline float bits_float(std::uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
// c ? a : b as bit arithmetic (all ones or zero): g++ if-converts a nested ?: of this size only
// sometimes, and a loop with control flow is not vectorized.
CTFX_HD inline std::uint32_t pick_bits(bool c, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t m = 0u - static_cast<std::uint32_t>(c);
  return (a & m) | (b & ~m);
}
}  // namespace detail

// Both conversions are written without branches (each case computed, the right one selected), so
// that a loop converting many values vectorizes at every ISA level: the compiler turns the selects
// into blends. Round to nearest even; NaN becomes the quiet NaN of its sign (0x7e00, PyTorch's
// c10::Half), the payload dropped.
struct half_t {
  std::uint16_t bits = 0;
  half_t() = default;
  CTFX_HD explicit half_t(float f) {
    const std::uint32_t x = detail::float_bits(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t mag = x & 0x7fffffffu;
    // normal: rebias the exponent (-112 << 23) and round the 13 dropped bits to nearest even
    const std::uint32_t normal = (mag + 0xc8000fffu + ((mag >> 13) & 1u)) >> 13;
    // subnormal or zero in half: the float's mantissa rounds (RNE) at 2^-24 granularity
    const std::uint32_t sub = detail::float_bits(detail::bits_float(detail::pick_bits(mag < 0x38800000u, mag, 0u)) + 0.5f) - 0x3f000000u;
    const std::uint32_t big = detail::pick_bits(mag > 0x7f800000u, 0x7e00u, 0x7c00u);  // NaN, or inf (what rounds to it included)
    const std::uint32_t r = detail::pick_bits(mag >= 0x477ff000u, big, detail::pick_bits(mag < 0x38800000u, sub, normal));
    bits = static_cast<std::uint16_t>(sign | r);
  }
  CTFX_HD explicit operator float() const {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exp = (bits >> 10) & 0x1fu, man = bits & 0x3ffu;
    const std::uint32_t normal = ((exp + 112u) << 23) | (man << 13);
    const std::uint32_t special = 0x7f800000u | (man << 13);                                        // inf, NaN
    const std::uint32_t sub = detail::float_bits(static_cast<float>(man) * (1.0f / 16777216.0f));  // man * 2^-24, exact
    return detail::bits_float(sign | detail::pick_bits(exp == 0x1fu, special, detail::pick_bits(exp == 0, sub, normal)));
  }
};

struct bfloat16_t {
  std::uint16_t bits = 0;
  bfloat16_t() = default;
  CTFX_HD explicit bfloat16_t(float f) {
    const std::uint32_t x = detail::float_bits(f);
    const std::uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // round to nearest even
    const std::uint32_t nan = (x >> 16) | 0x40u;                             // quiet NaN, its sign and payload's top
    bits = static_cast<std::uint16_t>(detail::pick_bits((x & 0x7fffffffu) > 0x7f800000u, nan, rounded));
  }
  CTFX_HD explicit operator float() const { return detail::bits_float(static_cast<std::uint32_t>(bits) << 16); }
};

// dtype -> storage type.
template <dtype D> struct element;
template <> struct element<dtype::b8> { using type = std::uint8_t; };
template <> struct element<dtype::i8> { using type = std::int8_t; };
template <> struct element<dtype::i32> { using type = std::int32_t; };
template <> struct element<dtype::i64> { using type = std::int64_t; };
template <> struct element<dtype::f16> { using type = half_t; };
template <> struct element<dtype::bf16> { using type = bfloat16_t; };
template <> struct element<dtype::f32> { using type = float; };
template <> struct element<dtype::f64> { using type = double; };
template <dtype D> using element_t = typename element<D>::type;

// The type a kernel computes in for a result of dtype D: double for f64, float for the other
// floats, int64 for integers, and bool as int64 (0/1) too.
template <dtype D>
using compute_t = std::conditional_t<D == dtype::f64, double, std::conditional_t<is_floating(D), float, std::int64_t>>;

// Loads an element of dtype S as compute type C; stores a C as dtype D.
template <dtype S, class C>
CTFX_HD inline C load_as(const void* p) {
  const auto& v = *static_cast<const element_t<S>*>(p);
  if constexpr (S == dtype::f16 || S == dtype::bf16) return static_cast<C>(static_cast<float>(v));
  else return static_cast<C>(v);
}
template <dtype D, class C>
CTFX_HD inline void store_as(void* p, C v) {
  auto* q = static_cast<element_t<D>*>(p);
  if constexpr (D == dtype::f16 || D == dtype::bf16) *q = element_t<D>(static_cast<float>(v));
  else if constexpr (D == dtype::b8) *q = static_cast<std::uint8_t>(v != C(0));
  else if constexpr (std::is_floating_point_v<C> && !is_floating(D)) {
    // float -> integer as PyTorch's CPU kernels give it on x86 (a C++ cast, which the compiler emits
    // as cvttss2si/cvttsd2si), written out so that every backend gives the same bits and no value
    // is UB: truncation toward zero into 32 bits (64 for i64); a NaN or a value out of that range
    // is the "integer indefinite" INT_MIN; an i8 keeps the low 8 bits of that 32-bit integer, so
    // 200.0 is -56 and 1000.0 is -24, as in PyTorch.
    using E = element_t<D>;
    using W = std::conditional_t<sizeof(E) == 8, std::int64_t, std::int32_t>;
    constexpr double lo = static_cast<double>(W(1) << (sizeof(W) * 8 - 2)) * -2.0;  // -2^(bits-1), exact
    const double d = static_cast<double>(v);
    const W w = d > lo - 1.0 && d < -lo ? static_cast<W>(d) : std::numeric_limits<W>::min();  // false for NaN
    *q = static_cast<E>(static_cast<std::make_unsigned_t<E>>(static_cast<std::make_unsigned_t<W>>(w)));
  } else *q = static_cast<element_t<D>>(v);
}

// Calls f(std::integral_constant<dtype, D>{}) for the run-time dtype d.
template <class F>
CTFX_HD inline decltype(auto) visit_dtype(dtype d, F&& f) {
  switch (d) {
    case dtype::b8: return f(std::integral_constant<dtype, dtype::b8>{});
    case dtype::i8: return f(std::integral_constant<dtype, dtype::i8>{});
    case dtype::i32: return f(std::integral_constant<dtype, dtype::i32>{});
    case dtype::i64: return f(std::integral_constant<dtype, dtype::i64>{});
    case dtype::f16: return f(std::integral_constant<dtype, dtype::f16>{});
    case dtype::bf16: return f(std::integral_constant<dtype, dtype::bf16>{});
    case dtype::f32: return f(std::integral_constant<dtype, dtype::f32>{});
    case dtype::f64: break;
  }
  return f(std::integral_constant<dtype, dtype::f64>{});
}

// Calls f(C{}) with C = compute_t<d> for the run-time dtype d: three instances, not eight, where
// only the arithmetic's type matters.
template <class F>
CTFX_HD inline void visit_compute(dtype d, F&& f) {
  if (d == dtype::f64) f(double{});
  else if (is_floating(d)) f(float{});
  else f(std::int64_t{});
}

// Calls f(std::integral_constant<dtype, B>{}) with B the dtype that moves d's elements as bits, by
// their size: i8, f16 (half_t: its bits, assigned), i32 or i64. For copies of one element type onto
// itself: four instances for the eight dtypes.
template <class F>
CTFX_HD inline decltype(auto) visit_bits_dtype(dtype d, F&& f) {
  switch (size_of(d)) {
    case 1: return f(std::integral_constant<dtype, dtype::i8>{});
    case 2: return f(std::integral_constant<dtype, dtype::f16>{});
    case 4: return f(std::integral_constant<dtype, dtype::i32>{});
    default: break;
  }
  return f(std::integral_constant<dtype, dtype::i64>{});
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
