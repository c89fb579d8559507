// ctfx/detail/python_mod.hpp — Python's modulo (aten.remainder) on one element, shared by the op's
// reference semantics (ops/elementwise.hpp) and the kernels (kernels/pointwise.hpp).
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

}  // namespace ctfx::ops::detail
#include "../core/diagnostics_pop.hpp"
