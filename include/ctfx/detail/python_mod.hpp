// ctfx/detail/python_mod.hpp — Python's modulo (aten.remainder), floor division and truncating
// division (aten.div's rounding modes) and sign on one element, shared by the ops' reference
// semantics (ops/elementwise.hpp) and the kernels (kernels/pointwise.hpp).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cmath>
#include <type_traits>
#include "../core/config.hpp"

namespace ctfx::ops::detail {

// The result takes the divisor's sign, as PyTorch's CPU kernel computes it: fmod (truncating `%`
// for integers), then + b where the remainder is nonzero and its sign differs from b's. An integer
// remainder by 0 is 0 (PyTorch raises ZeroDivisionError; ctfx's integer kernels do not fail).
template <class T>
CTFX_HD constexpr T python_mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);  // INT_MIN % -1 overflows
    }
    T r = static_cast<T>(a % b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    T r = static_cast<T>(std::fmod(a, b));
    if (r != T(0) && ((b < T(0)) != (r < T(0)))) r = static_cast<T>(r + b);
    return r;
  }
}

// a // b as PyTorch's div_floor_floating and div_floor_integer compute it: for floats, from fmod
// (exact) with PyTorch's corrections, x / 0 the IEEE quotient, a zero quotient signed as a / b;
// for integers, the truncated quotient minus one where the signs differ and the division is
// inexact. An integer division by 0 is 0 (PyTorch raises ZeroDivisionError).
template <class T>
CTFX_HD constexpr T floor_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));  // INT_MIN / -1 wraps
    }
    const T q = static_cast<T>(a / b);
    return ((a < 0) != (b < 0)) && static_cast<T>(a % b) != 0 ? static_cast<T>(q - 1) : q;
  } else {
    if (b == T(0)) return a / b;
    const T mod = static_cast<T>(std::fmod(a, b));
    T div = (a - mod) / b;
    if (mod != T(0) && (b < T(0)) != (mod < T(0))) div -= T(1);
    if (div == T(0)) return static_cast<T>(std::copysign(T(0), a / b));
    T f = static_cast<T>(std::floor(div));
    if (div - f > T(0.5)) f += T(1);
    return f;
  }
}

// trunc(a / b): for floats the correctly rounded quotient truncated, for integers C++'s `/`. An
// integer division by 0 is 0 (PyTorch raises ZeroDivisionError).
template <class T>
CTFX_HD constexpr T trunc_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    }
    return static_cast<T>(a / b);
  } else {
    return static_cast<T>(std::trunc(a / b));
  }
}

// sign(x): (0 < x) - (x < 0), as PyTorch computes it: sign(nan) = 0 and sign(-0.0) = +0.0.
template <class T>
CTFX_HD constexpr T sign_of(T x) {
  return static_cast<T>(static_cast<T>(T(0) < x) - static_cast<T>(x < T(0)));
}

}  // namespace ctfx::ops::detail
#include "../core/diagnostics_pop.hpp"
