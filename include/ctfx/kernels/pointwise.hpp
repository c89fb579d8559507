// ctfx/kernels/pointwise.hpp — elementwise kernels: unary, binary and where with broadcasting,
// dtype conversion, copies between any two layouts, and fills. One functor per family, written once
// for host and device; the op is either a compile-time constant (static_op<K>, from a compiled
// plan) or a run-time value (dynamic_op, for graphs built at run time) — the same arithmetic.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include "../detail/python_mod.hpp"
#include "../ops/op_kind.hpp"
#include "element.hpp"
#include "launch.hpp"
#if defined(_OPENMP)
#include <omp.h>
#endif
#include "math.hpp"
#include "rows.hpp"
#include "strided.hpp"

namespace ctfx {

template <op_kind K> struct static_op { CTFX_HD static constexpr op_kind kind() { return K; } };
struct dynamic_op {
  op_kind k;
  CTFX_HD constexpr op_kind kind() const { return k; }
};

namespace kernels {

// Loads element `p` of run-time dtype `d` as C (loop-invariant switch; C is the result's compute type).
template <class C>
CTFX_HD inline C load_dyn(dtype d, const std::byte* p) {
  switch (d) {
    case dtype::b8: return load_as<dtype::b8, C>(p);
    case dtype::i8: return load_as<dtype::i8, C>(p);
    case dtype::i32: return load_as<dtype::i32, C>(p);
    case dtype::i64: return load_as<dtype::i64, C>(p);
    case dtype::f16: return load_as<dtype::f16, C>(p);
    case dtype::bf16: return load_as<dtype::bf16, C>(p);
    case dtype::f32: return load_as<dtype::f32, C>(p);
    case dtype::f64: break;
  }
  return load_as<dtype::f64, C>(p);
}

// Integer arithmetic wraps (two's complement), as PyTorch's does, instead of being undefined.
template <class C>
CTFX_HD inline C wrap_add(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
  else return a + b;
}
template <class C>
CTFX_HD inline C wrap_mul(C a, C b) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
  else return a * b;
}

// relu on the bits: 0 where x < 0 (negative, not -0, not NaN), else x itself — the same values as
// `x < 0 ? 0 : x`, but an integer subtract, one unsigned compare and a mask, which compilers
// vectorize (a float compare under the default -ftrapping-math blocks it). The negative numbers to
// zero are exactly the bit patterns from the smallest negative subnormal's up to -inf's.
template <class C>
CTFX_HD inline C relu_bits(C x) {
  using U = std::conditional_t<sizeof(C) == 4, std::uint32_t, std::uint64_t>;
  constexpr U sign = U(1) << (sizeof(C) * 8 - 1);
  constexpr U neg_inf = sizeof(C) == 4 ? U(0xff800000u) : U(0xfff0000000000000ull);
  const U u = __builtin_bit_cast(U, x);
  const U zero_it = U(0) - static_cast<U>(u - (sign + 1) <= neg_inf - (sign + 1));
  return __builtin_bit_cast(C, static_cast<U>(u & ~zero_it));
}

// c ? a : b on the bits: a mask from c, and and-or, the same bits as the branch. A compiler given
// `c ? a : b` with a float compare behind c keeps the branch (a mispredicted one per element where
// c has no pattern, and no vector loop); this it vectorizes.
template <class V>
CTFX_HD inline V select_bits(bool c, V a, V b) {
  if constexpr (std::is_arithmetic_v<V> && (sizeof(V) == 1 || sizeof(V) == 2 || sizeof(V) == 4 || sizeof(V) == 8)) {
    using U = std::conditional_t<sizeof(V) == 1, std::uint8_t,
                                 std::conditional_t<sizeof(V) == 2, std::uint16_t, std::conditional_t<sizeof(V) == 4, std::uint32_t, std::uint64_t>>>;
    const U m = static_cast<U>(U(0) - static_cast<U>(c));
    return __builtin_bit_cast(V, static_cast<U>((__builtin_bit_cast(U, a) & m) | (__builtin_bit_cast(U, b) & static_cast<U>(~m))));
  } else {
    return c ? a : b;
  }
}

// -x as its sign bit flipped. Written as a float negation, a compiler that sees it feed a sub or an
// add (fused kernels compute the whole expression in registers) may rewrite y - (-x) as y + x,
// whose NaN keeps x's sign instead of -x's: the unfused graph's -nan would come out as nan.
template <class C>
CTFX_HD inline C neg_bits(C x) {
  using U = std::conditional_t<sizeof(C) == 4, std::uint32_t, std::uint64_t>;
  return __builtin_bit_cast(C, static_cast<U>(__builtin_bit_cast(U, x) ^ (U(1) << (sizeof(C) * 8 - 1))));
}

template <class C>
CTFX_INLINE CTFX_HD C unary_value(op_kind k, C x) {
  if constexpr (std::is_integral_v<C>) {
    switch (k) {
      case op_kind::neg: return static_cast<C>(0ull - static_cast<std::uint64_t>(x));
      case op_kind::abs: return x < 0 ? static_cast<C>(0ull - static_cast<std::uint64_t>(x)) : x;
      case op_kind::relu: return x < 0 ? C(0) : x;
      case op_kind::logical_not: return C(x == C(0));
      case op_kind::bitwise_not: return static_cast<C>(~x);  // never on bool (ops/meta.hpp: logical_not)
      case op_kind::sign: return ops::detail::sign_of(x);
      default: return x;  // ceil/floor/round/trunc/convert of an integer; float ops promote first
    }
  } else {
    switch (k) {
      case op_kind::neg: return neg_bits(x);
      case op_kind::abs: return std::fabs(x);
      case op_kind::exp: return math::exp_of(x);
      case op_kind::exp2: return std::exp2(x);  // libm's; PyTorch's vectorized kernel (SLEEF) within 1 ulp
      case op_kind::log: return std::log(x);
      // libm's, within 1 ulp of PyTorch's vectorized kernels (SLEEF); of a negative x, +NaN as SLEEF's
      // (libm's is -NaN on x86)
      case op_kind::log2: return x < C(0) ? std::numeric_limits<C>::quiet_NaN() : std::log2(x);
      case op_kind::log10: return x < C(0) ? std::numeric_limits<C>::quiet_NaN() : std::log10(x);
      case op_kind::sin: return std::sin(x);
      case op_kind::cos: return std::cos(x);
      case op_kind::sqrt: return std::sqrt(x);
      case op_kind::relu: return relu_bits(x);  // relu(nan) = nan
      case op_kind::ceil: return std::ceil(x);
      case op_kind::floor: return std::floor(x);
      case op_kind::round: return std::nearbyint(x);  // half to even
      case op_kind::trunc: return std::trunc(x);
      case op_kind::tanh: return std::tanh(x);
      case op_kind::erf: return std::erf(x);  // within 1 ulp of PyTorch's CPU erf (f32, f64; measured)
      case op_kind::log1p: return std::log1p(x);  // libm's; PyTorch's vectorized kernel (SLEEF) within 1 ulp
      case op_kind::expm1: return std::expm1(x);
      case op_kind::sigmoid: return C(1) / (C(1) + math::exp_of(-x));
      case op_kind::rsqrt: return C(1) / std::sqrt(x);
      case op_kind::sign: return ops::detail::sign_of(x);
      case op_kind::logical_not: return C(x == C(0));  // not(nan) = false: nan is true
      default: return x;
    }
  }
}

// fma(a, b, c) = a * b + c rounded once (prims.fma): std::fma for floats (a hardware FMA where the
// target has one, correctly rounded either way; never contracted from a*b+c, which ctfx compiles
// with -ffp-contract=off); for integers a * b + c modulo 2^64 (the compute type), then truncated to
// the result's dtype like every integer op.
template <class C>
CTFX_INLINE CTFX_HD C fma_value(C a, C b, C c) {
  if constexpr (std::is_integral_v<C>) return wrap_add(wrap_mul(a, b), c);
  else return std::fma(a, b, c);
}

template <class C>
CTFX_INLINE CTFX_HD C binary_value(op_kind k, C a, C b) {
  switch (k) {
    case op_kind::add: case op_kind::add_: return wrap_add(a, b);
    case op_kind::sub: case op_kind::sub_:
      if constexpr (std::is_integral_v<C>) return wrap_add(a, static_cast<C>(0ull - static_cast<std::uint64_t>(b)));
      else return a - b;
    case op_kind::mul: case op_kind::mul_: return wrap_mul(a, b);
    case op_kind::div: case op_kind::div_:
      if constexpr (std::is_integral_v<C>) return b == 0 ? C(0) : (a == INT64_MIN && b == -1) ? a : a / b;
      else return a / b;
    case op_kind::maximum: case op_kind::clamp_min:  // a NaN on either side is the result
      if constexpr (!std::is_integral_v<C>) { if (a != a) return a; if (b != b) return b; }
      return a < b ? b : a;
    case op_kind::minimum: case op_kind::clamp_max:
      if constexpr (!std::is_integral_v<C>) { if (a != a) return a; if (b != b) return b; }
      return b < a ? b : a;
    case op_kind::pow:
      if constexpr (std::is_integral_v<C>) {
        if (b < 0) return a == 1 ? C(1) : a == -1 ? ((b & 1) ? C(-1) : C(1)) : C(0);
        C r = 1, base = a;
        for (C e = b; e > 0; e >>= 1) { if (e & 1) r = wrap_mul(r, base); base = wrap_mul(base, base); }
        return r;
      } else return std::pow(a, b);
    case op_kind::remainder: return ops::detail::python_mod(a, b);
    case op_kind::fmod:  // C's fmod (exact); integers: the remainder of truncating division, 0 by 0
      if constexpr (std::is_integral_v<C>) return b == 0 || (b == -1 && a == std::numeric_limits<C>::min()) ? C(0) : C(a % b);
      else return std::fmod(a, b);
    case op_kind::hypot:  // floats only (ops/meta.hpp refuses integers, as PyTorch does)
      if constexpr (std::is_integral_v<C>) return a;
      else return std::hypot(a, b);
    case op_kind::atan2:  // floats (ops/elementwise.hpp converts integers to f32, as PyTorch)
      if constexpr (std::is_integral_v<C>) return a;
      else return std::atan2(a, b);
    case op_kind::floor_divide: return ops::detail::floor_div(a, b);
    case op_kind::trunc_divide: return ops::detail::trunc_div(a, b);
    // Integers only (ops/meta.hpp refuses floats). An integer op computes in int64 and is stored
    // truncated to its dtype, which gives the narrow type's bits for and, or, xor and both shifts:
    // PyTorch's shift by a count below 0 or at least the width is 0 (left) or the sign (right).
    case op_kind::bitwise_and:
      if constexpr (std::is_integral_v<C>) return a & b; else return a;
    case op_kind::bitwise_or:
      if constexpr (std::is_integral_v<C>) return a | b; else return a;
    case op_kind::bitwise_xor:
      if constexpr (std::is_integral_v<C>) return a ^ b; else return a;
    case op_kind::bitwise_left_shift:
      if constexpr (std::is_integral_v<C>)
        return b < 0 || b >= C(sizeof(C) * 8) ? C(0) : static_cast<C>(static_cast<std::make_unsigned_t<C>>(a) << b);
      else return a;
    case op_kind::bitwise_right_shift:
      if constexpr (std::is_integral_v<C>) return b < 0 || b >= C(sizeof(C) * 8 - 1) ? C(a >> (sizeof(C) * 8 - 1)) : C(a >> b);
      else return a;
    // bool results as 0/1 in C (stored as b8); a NaN compares unequal and is true
    case op_kind::eq: return C(a == b);
    case op_kind::ne: return C(a != b);
    case op_kind::lt: return C(a < b);
    case op_kind::le: return C(a <= b);
    case op_kind::gt: return C(a > b);
    case op_kind::ge: return C(a >= b);
    case op_kind::logical_and: return C(a != C(0) && b != C(0));
    case op_kind::logical_or: return C(a != C(0) || b != C(0));
    default: return a;
  }
}

// Calls f(kind_c<K>{}) for the run-time kind k of a unary (visit_unary_kind) or binary
// (visit_binary_kind) elementwise op, so that a loop inside f has its op fixed: unary_value<C>(K,
// x) folds to the op's expression. Another kind gives f(kind_c<op_kind::count_>{}), for which
// unary_value and binary_value return their first operand, as they do for any kind they lack.
template <op_kind K>
using kind_c = std::integral_constant<op_kind, K>;
template <class F>
CTFX_HD inline void visit_unary_kind(op_kind k, F&& f) {
  switch (k) {
    case op_kind::neg: return f(kind_c<op_kind::neg>{});
    case op_kind::abs: return f(kind_c<op_kind::abs>{});
    case op_kind::exp: return f(kind_c<op_kind::exp>{});
    case op_kind::exp2: return f(kind_c<op_kind::exp2>{});
    case op_kind::log: return f(kind_c<op_kind::log>{});
    case op_kind::log2: return f(kind_c<op_kind::log2>{});
    case op_kind::log10: return f(kind_c<op_kind::log10>{});
    case op_kind::sin: return f(kind_c<op_kind::sin>{});
    case op_kind::cos: return f(kind_c<op_kind::cos>{});
    case op_kind::sqrt: return f(kind_c<op_kind::sqrt>{});
    case op_kind::relu: return f(kind_c<op_kind::relu>{});
    case op_kind::ceil: return f(kind_c<op_kind::ceil>{});
    case op_kind::floor: return f(kind_c<op_kind::floor>{});
    case op_kind::round: return f(kind_c<op_kind::round>{});
    case op_kind::trunc: return f(kind_c<op_kind::trunc>{});
    case op_kind::tanh: return f(kind_c<op_kind::tanh>{});
    case op_kind::erf: return f(kind_c<op_kind::erf>{});
    case op_kind::log1p: return f(kind_c<op_kind::log1p>{});
    case op_kind::expm1: return f(kind_c<op_kind::expm1>{});
    case op_kind::sigmoid: return f(kind_c<op_kind::sigmoid>{});
    case op_kind::rsqrt: return f(kind_c<op_kind::rsqrt>{});
    case op_kind::sign: return f(kind_c<op_kind::sign>{});
    case op_kind::convert: return f(kind_c<op_kind::convert>{});
    case op_kind::bitwise_not: return f(kind_c<op_kind::bitwise_not>{});
    case op_kind::logical_not: return f(kind_c<op_kind::logical_not>{});
    default: break;
  }
  f(kind_c<op_kind::count_>{});
}
template <class F>
CTFX_HD inline void visit_binary_kind(op_kind k, F&& f) {
  switch (k) {
    case op_kind::add: return f(kind_c<op_kind::add>{});
    case op_kind::sub: return f(kind_c<op_kind::sub>{});
    case op_kind::mul: return f(kind_c<op_kind::mul>{});
    case op_kind::div: return f(kind_c<op_kind::div>{});
    case op_kind::maximum: return f(kind_c<op_kind::maximum>{});
    case op_kind::minimum: return f(kind_c<op_kind::minimum>{});
    case op_kind::pow: return f(kind_c<op_kind::pow>{});
    case op_kind::remainder: return f(kind_c<op_kind::remainder>{});
    case op_kind::fmod: return f(kind_c<op_kind::fmod>{});
    case op_kind::hypot: return f(kind_c<op_kind::hypot>{});
    case op_kind::atan2: return f(kind_c<op_kind::atan2>{});
    case op_kind::floor_divide: return f(kind_c<op_kind::floor_divide>{});
    case op_kind::trunc_divide: return f(kind_c<op_kind::trunc_divide>{});
    case op_kind::bitwise_and: return f(kind_c<op_kind::bitwise_and>{});
    case op_kind::bitwise_or: return f(kind_c<op_kind::bitwise_or>{});
    case op_kind::bitwise_xor: return f(kind_c<op_kind::bitwise_xor>{});
    case op_kind::bitwise_left_shift: return f(kind_c<op_kind::bitwise_left_shift>{});
    case op_kind::bitwise_right_shift: return f(kind_c<op_kind::bitwise_right_shift>{});
    case op_kind::add_: return f(kind_c<op_kind::add_>{});
    case op_kind::sub_: return f(kind_c<op_kind::sub_>{});
    case op_kind::mul_: return f(kind_c<op_kind::mul_>{});
    case op_kind::div_: return f(kind_c<op_kind::div_>{});
    case op_kind::clamp_min: return f(kind_c<op_kind::clamp_min>{});
    case op_kind::clamp_max: return f(kind_c<op_kind::clamp_max>{});
    case op_kind::eq: return f(kind_c<op_kind::eq>{});
    case op_kind::ne: return f(kind_c<op_kind::ne>{});
    case op_kind::lt: return f(kind_c<op_kind::lt>{});
    case op_kind::le: return f(kind_c<op_kind::le>{});
    case op_kind::gt: return f(kind_c<op_kind::gt>{});
    case op_kind::ge: return f(kind_c<op_kind::ge>{});
    case op_kind::logical_and: return f(kind_c<op_kind::logical_and>{});
    case op_kind::logical_or: return f(kind_c<op_kind::logical_or>{});
    default: break;
  }
  f(kind_c<op_kind::count_>{});
}
static_assert(static_cast<int>(op_kind::logical_not) - static_cast<int>(op_kind::neg) + 1 == 25 &&
                  static_cast<int>(op_kind::logical_or) - static_cast<int>(op_kind::add) + 1 == 32,
              "ctfx: visit_unary_kind / visit_binary_kind must name every unary and binary op_kind");

// op(a, s) with a scalar right operand s. The same as binary_value, but for a floating-point pow by
// a scalar exponent, which PyTorch's CPU kernel (pow_tensor_scalar) computes as arithmetic for the
// exponents it specializes: 2 as a*a, 3 as a*a*a, -2 as 1/(a*a), 0.5 as sqrt, -0.5 as 1/sqrt, -1 as
// 1/a (a*a*a is not the correctly rounded cube std::pow gives). A tensor exponent stays std::pow,
// as in PyTorch.
template <class C>
CTFX_INLINE CTFX_HD C scalar_binary_value(op_kind k, C a, C s) {
  if constexpr (!std::is_integral_v<C>) {
    if (k == op_kind::pow) {
      if (s == C(2)) return a * a;
      if (s == C(3)) return a * a * a;
      if (s == C(-2)) return C(1) / (a * a);
      if (s == C(0.5)) return std::sqrt(a);
      if (s == C(-0.5)) return C(1) / std::sqrt(a);
      if (s == C(-1)) return C(1) / a;
    }
  }
  return binary_value<C>(k, a, s);
}

// The dtype an elementwise op computes in: its result's, except for the ops with bool results,
// which test their operands in the operands' promoted type (`operands`: ops/elementwise.hpp's
// operand_dtype), so that 0.5 is true and an f32 compares as f32.
constexpr dtype compute_dtype(op_kind k, dtype out, dtype operands) { return yields_bool(k) ? operands : out; }

// A scalar rounded to dtype P, as PyTorch converts a wrapped number to the operands' common dtype
// (an int exactly, through int64; a float through double).
template <dtype P>
CTFX_HD inline scalar_value scalar_in(scalar_value s) {
  element_t<P> e;
  if (s.exact_int()) store_as<P, std::int64_t>(&e, s.i);
  else store_as<P, double>(&e, s.d);
  if constexpr (is_floating(P)) return scalar_value(load_as<P, double>(&e));
  else return scalar_value::integer(load_as<P, std::int64_t>(&e));
}
// A scalar right operand as the kernels use it: in the compute type, and for the bool-result ops
// first rounded to the operands' dtype P, as PyTorch converts a wrapped number before comparing.
template <dtype P, class C>
CTFX_HD inline C scalar_operand(op_kind k, scalar_value s) {
  if (!yields_bool(k)) return s.as<C>();
  return scalar_in<P>(s).template as<C>();
}

// out[i] = op(a[i])  (a broadcast to out's extents, converted to the compute type of P)
template <dtype O, class Op, dtype P = O>
struct unary_fn {
  strided out, a;
  Op op;
  CTFX_HD void operator()(index_t i) const {
    using C = compute_t<P>;
    index_t c[max_rank]{};
    out.coords_of(i, c);
    store_as<O, C>(out.at_coords(c), unary_value<C>(op.kind(), load_dyn<C>(a.dt, a.at_coords(c))));
  }
};

// out[i] = op(a[i], b[i]) or op(a[i], scalar), computed in the compute type of P (compute_dtype)
template <dtype O, class Op, dtype P = O>
struct binary_fn {
  strided out, a, b;
  scalar_value scalar{};
  bool has_scalar = false;
  Op op;
  CTFX_HD void operator()(index_t i) const {
    using C = compute_t<P>;
    index_t c[max_rank]{};
    out.coords_of(i, c);
    const C x = load_dyn<C>(a.dt, a.at_coords(c));
    if (has_scalar) store_as<O, C>(out.at_coords(c), scalar_binary_value<C>(op.kind(), x, scalar_operand<P, C>(op.kind(), scalar)));
    else store_as<O, C>(out.at_coords(c), binary_value<C>(op.kind(), x, load_dyn<C>(b.dt, b.at_coords(c))));
  }
};

// A copy's rows on CUDA (kernels/rows.hpp): rows of its last dimension, each row's offsets found
// once (one division per dimension), its elements taken by the row's lanes; between equal dtypes
// at unit strides, aligned, whole vectors of 16 bytes (or of 8 elements, for 1-byte elements).
template <dtype S, dtype D>
struct copy_row_fn {
  static constexpr index_t bytes = sizeof(element_t<S>) > sizeof(element_t<D>) ? sizeof(element_t<S>) : sizeof(element_t<D>);
  static constexpr int width = 16 / bytes < 8 ? static_cast<int>(16 / bytes) : 8;
  strided out, src;  // src broadcast to out's extents
  CTFX_HD void operator()(index_t r, index_t j0, index_t j1, int lane, int lanes) const {
    const int last = out.rank - 1;
    const index_t inner = out.rank == 0 ? 1 : out.size[last];
    const index_t os = out.rank == 0 ? 0 : out.stride[last], ss = out.rank == 0 ? 0 : src.stride[last];
    index_t c[max_rank]{};
    out.coords_of(r * inner, c);
    auto* o = reinterpret_cast<element_t<D>*>(out.at_coords(c));
    const auto* i = reinterpret_cast<const element_t<S>*>(src.at_coords(c));
    index_t t = j0;
    if constexpr (S == D) {
      constexpr index_t vbytes = width * static_cast<index_t>(sizeof(element_t<D>));
      if (os == 1 && ss == 1 && aligned_to(o, vbytes) && aligned_to(i, vbytes)) {
        const index_t whole = (j1 - j0) / width;
        for (index_t v = lane; v < whole; v += lanes) move_vector<static_cast<int>(vbytes)>(o + j0 + v * width, i + j0 + v * width);
        t = j0 + whole * width;
      }
    }
    for (index_t j = t + lane; j < j1; j += lanes) {
      if constexpr (S == D) {
        std::memcpy(o + j * os, i + j * ss, sizeof(element_t<D>));
      } else {
        using C = std::conditional_t<(is_floating(S) || is_floating(D)), double, std::int64_t>;
        store_as<D, C>(o + j * os, load_as<S, C>(i + j * ss));
      }
    }
  }
};

// out[i] = c[i] ? a[i] : b[i]  (each broadcast to out's extents, a and b converted to out's dtype)
template <dtype O>
struct where_fn {
  strided out, c, a, b;
  CTFX_HD void operator()(index_t i) const {
    using C = compute_t<O>;
    index_t x[max_rank];
    out.coords_of(i, x);
    const bool t = load_as<dtype::b8, std::int64_t>(c.at_coords(x)) != 0;
    store_as<O, C>(out.at_coords(x), t ? load_dyn<C>(a.dt, a.at_coords(x)) : load_dyn<C>(b.dt, b.at_coords(x)));
  }
};

// out[i] = fma(a[i], b[i], c[i]) (each broadcast to out's extents, loaded into out's compute type)
template <dtype O>
struct fma_fn {
  strided out, a, b, c;
  CTFX_HD void operator()(index_t i) const {
    using C = compute_t<O>;
    index_t x[max_rank];
    out.coords_of(i, x);
    store_as<O, C>(out.at_coords(x), fma_value<C>(load_dyn<C>(a.dt, a.at_coords(x)), load_dyn<C>(b.dt, b.at_coords(x)),
                                                  load_dyn<C>(c.dt, c.at_coords(x))));
  }
};

// out = value, row by row (kernels/rows.hpp): each row's start found once, its elements stepped
// by the last dimension's stride.
template <dtype D>
struct fill_row_fn {
  static constexpr int width = 1;
  strided out;
  scalar_value value{};
  CTFX_HD void operator()(index_t r, index_t j0, index_t j1, int lane, int lanes) const {
    const index_t inner = out.rank == 0 ? 1 : out.size[out.rank - 1], os = out.rank == 0 ? 0 : out.stride[out.rank - 1];
    auto* o = reinterpret_cast<element_t<D>*>(out.at(r * inner));
    for (index_t j = j0 + lane; j < j1; j += lanes) store_as<D, compute_t<D>>(o + j * os, value.as<compute_t<D>>());
  }
};

// ---- launchers (run-time dtypes; the op may be static or dynamic)

// True when both views cover the same contiguous bytes in the same order.
inline bool same_dense(const strided& a, const strided& b) {
  if (a.dt != b.dt || a.rank != b.rank) return false;
  index_t s = 1;
  for (int d = a.rank - 1; d >= 0; --d) {
    if (a.size[d] != b.size[d]) return false;
    if (a.size[d] != 1 && (a.stride[d] != s || b.stride[d] != s)) return false;
    s *= a.size[d];
  }
  return true;
}

// Two layouts of one shape walked together in row-major order over their first `dims` dimensions:
// the current position's element offset in each (an odometer: no division per step).
struct odometer2 {
  const strided& a;
  const strided& b;
  int dims;
  index_t idx[max_rank]{};
  index_t ao = 0, bo = 0;
  void next() {
    for (int d = dims - 1; d >= 0; --d) {
      ao += a.stride[d];
      bo += b.stride[d];
      if (++idx[d] < a.size[d]) return;
      ao -= a.stride[d] * a.size[d];
      bo -= b.stride[d] * b.size[d];
      idx[d] = 0;
    }
  }
};

// Host fast path: both innermost dimensions are unit-stride, same dtype — copy row by row with
// memmove, walking the outer dimensions with an odometer (no division per element).
inline bool copy_rows_host(const strided& out, const strided& s) {
  if (out.dt != s.dt || out.rank == 0 || out.stride[out.rank - 1] != 1 || s.stride[s.rank - 1] != 1) return false;
  const int r = out.rank;
  const index_t inner = out.size[r - 1];
  const std::size_t row_bytes = static_cast<std::size_t>(inner) * static_cast<std::size_t>(size_of(out.dt));
  const index_t rows = inner == 0 ? 0 : out.numel() / inner;
  odometer2 w{out, s, r - 1};  // over the outer dimensions
  for (index_t k = 0; k < rows; ++k, w.next()) std::memmove(out.p + w.ao * size_of(out.dt), s.p + w.bo * size_of(s.dt), row_bytes);
  return true;
}

// A copy's layouts with extent-1 dimensions dropped (they carry no element: without them a column of
// a grid is a 1-D strided copy, one loop, rather than rows of one element, a memmove each); then
// what needs no element type: a dense same-dtype copy is one memcpy (clone at copy bandwidth), and
// on the host rows with unit stride are memmoves. True when that did the copy.
inline bool copy_untyped(const device_ctx& ctx, const strided& out_view, const strided& src, strided& out, strided& s) {
  s = src.broadcast_to(out_view.rank, out_view.size);
  if (out_view.numel() == 0) return true;
  out = out_view;
  int r = 0;
  for (int d = 0; d < out_view.rank; ++d)
    if (out_view.size[d] != 1) {
      out.size[r] = out_view.size[d]; out.stride[r] = out_view.stride[d];
      s.size[r] = s.size[d]; s.stride[r] = s.stride[d];
      ++r;
    }
  out.rank = s.rank = r;
  if (same_dense(out, s)) {
    const std::size_t bytes = static_cast<std::size_t>(out.numel()) * static_cast<std::size_t>(size_of(out.dt));
    if (out.p == s.p) return true;
#if defined(__CUDACC__)
    if (ctx.where == backend::cuda) {
      cudaMemcpyAsync(out.p, s.p, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(ctx.stream));
      return true;
    }
#endif
    std::memmove(out.p, s.p, bytes);
    return true;
  }
  return !runs_device_kernels(ctx) && copy_rows_host(out, s);
}

// Elements [k0, k1) of a copy (row-major order of out's extents; src broadcast to them) on the
// host: the innermost dimension one strided loop over typed pointers, the outer ones walked by an
// odometer from the range's first row (one division per dimension per range, none per element).
// The odometer's counters live in memory: stepped per element, their stores queued behind a column
// copy's missing stores and made it 1.7x slower than a plain loop (a 4094-row column of a 4096^2
// grid: 160 against 92 us).
template <dtype S, dtype D>
inline void copy_range_host(const strided& out, const strided& s, index_t k0, index_t k1) {
  if (k0 >= k1) return;
  using C = std::conditional_t<(is_floating(S) || is_floating(D)), double, std::int64_t>;
  const int r = out.rank;
  const index_t inner = r == 0 ? 1 : out.size[r - 1];
  const index_t os = r == 0 ? 0 : out.stride[r - 1], ss = r == 0 ? 0 : s.stride[r - 1];
  index_t c[max_rank]{};
  out.coords_of(k0, c);
  index_t ao = 0, bo = 0;
  for (int d = 0; d + 1 < r; ++d) {
    ao += c[d] * out.stride[d];
    bo += c[d] * s.stride[d];
  }
  index_t j0 = r == 0 ? 0 : c[r - 1];
  for (index_t k = k0; k < k1;) {
    const index_t j1 = inner - j0 < k1 - k ? inner : j0 + (k1 - k);
    auto* o = reinterpret_cast<element_t<D>*>(out.p + ao * size_of(D));
    const auto* i = reinterpret_cast<const element_t<S>*>(s.p + bo * size_of(S));
    for (index_t j = j0; j < j1; ++j) {
      if constexpr (S == D) o[j * os] = i[j * ss];
      else store_as<D, C>(o + j * os, load_as<S, C>(i + j * ss));
    }
    k += j1 - j0;
    j0 = 0;
    for (int d = r - 2; d >= 0; --d) {  // the next row
      ao += out.stride[d];
      bo += s.stride[d];
      if (++c[d] < out.size[d]) break;
      ao -= out.stride[d] * out.size[d];
      bo -= s.stride[d] * out.size[d];
      c[d] = 0;
    }
  }
}

// out = src (src broadcast to out's shape, converted to out's dtype), with the element types fixed:
// S, src's, and D, out's (compiled<G> knows them; copy below picks them at run time).
template <dtype S, dtype D>
inline void copy_typed(const device_ctx& ctx, const strided& out_view, const strided& src) {
  strided out, s;
  if (copy_untyped(ctx, out_view, src, out, s)) return;
  const index_t n = out.numel();
  if (!runs_device_kernels(ctx)) {
#if defined(_OPENMP)
    // On OMP a large copy is split into one range of elements per thread (a range's first row
    // found by one division per dimension); a small one stays on the calling thread.
    if (ctx.where == backend::omp && n >= (index_t{1} << 15)) {
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        copy_range_host<S, D>(out, s, n * t / T, n * (t + 1) / T);
      }
      return;
    }
#endif
    copy_range_host<S, D>(out, s, 0, n);
    return;
  }
  if constexpr (device_kernels_compiled) {
    const index_t inner = out.rank == 0 ? 1 : out.size[out.rank - 1];
    parallel_rows(ctx, n / inner, inner, copy_row_fn<S, D>{out, s});
  }
}

// out = src (src broadcast to out's shape, converted to out's dtype), the element types read from
// the views. Dense same-dtype copies are one memcpy; on the host, rows with unit stride are memmoves.
inline void copy(const device_ctx& ctx, const strided& out_view, const strided& src) {
  visit_dtype(src.dt, [&](auto sd) {
    visit_dtype(out_view.dt, [&](auto dd) { copy_typed<decltype(sd)::value, decltype(dd)::value>(ctx, out_view, src); });
  });
}

// out = src, both of one element type: a copy of bits, typed by the element's size only.
inline void copy_bits(const device_ctx& ctx, const strided& out_view, const strided& src) {
  visit_bits_dtype(out_view.dt, [&](auto bits) { copy_typed<decltype(bits)::value, decltype(bits)::value>(ctx, out_view, src); });
}

// out = value in out's element type D.
template <dtype D>
inline void fill_typed(const device_ctx& ctx, const strided& out, scalar_value value) {
  const index_t n = out.numel(), inner = out.rank == 0 ? 1 : out.size[out.rank - 1];
  if (n > 0) parallel_rows(ctx, n / inner, inner, fill_row_fn<D>{out, value});
}
inline void fill(const device_ctx& ctx, const strided& out, scalar_value value) {
  visit_dtype(out.dt, [&](auto dd) { fill_typed<decltype(dd)::value>(ctx, out, value); });
}
// The value a fill node writes: zeros, ones, full(v) and fill_(v).
constexpr scalar_value fill_value(op_kind k, scalar_value scalar) {
  return k == op_kind::zeros ? scalar_value(0.0) : k == op_kind::ones ? scalar_value(1.0) : scalar;
}

// A cat's result `out`: operand k (`src(k)`, k < n) copied into its slice along `dim`, unless
// `placed(k)` (its kernel computed it there already). A 1-D empty operand of a higher-rank cat
// takes no slice (PyTorch's legacy rule).
// `copy_part(part, s)` copies operand s into its slice (without it: kernels::copy on `ctx`, the
// element types read from the views).
template <class Src, class Placed, class Copy>
void cat_into(const strided& out, index_t dim, std::int32_t n, Src&& src, Placed&& placed, Copy&& copy_part) {
  if (dim < 0) dim += out.rank;
  index_t at = 0;
  for (std::int32_t k = 0; k < n; ++k) {
    const strided s = src(k);
    if (s.rank == 1 && s.size[0] == 0 && out.rank > 1) continue;
    strided part = out;
    part.size[dim] = s.size[dim];
    part.p = out.p + at * out.stride[dim] * size_of(out.dt);
    if (!placed(k)) copy_part(part, s);
    at += s.size[dim];
  }
}
template <class Src, class Placed>
void cat_into(const device_ctx& ctx, const strided& out, index_t dim, std::int32_t n, Src&& src, Placed&& placed) {
  cat_into(out, dim, n, src, placed, [&](const strided& part, const strided& s) { copy(ctx, part, s); });
}

template <class Op>
inline void unary(const device_ctx& ctx, Op op, const strided& out, const strided& a) {
  const strided x = a.broadcast_to(out.rank, out.size);
  if (op.kind() == op_kind::logical_not) {  // tests a in its own dtype
    visit_dtype(a.dt, [&](auto pd) {
      parallel_for(ctx, out.numel(), unary_fn<dtype::b8, Op, decltype(pd)::value>{out, x, op});
    });
    return;
  }
  visit_dtype(out.dt, [&](auto dd) { parallel_for(ctx, out.numel(), unary_fn<decltype(dd)::value, Op>{out, x, op}); });
}

// `operands`: the compute dtype of a bool-result op (ignored for the others).
template <class Op>
inline void binary(const device_ctx& ctx, Op op, const strided& out, const strided& a, const strided* b, scalar_value scalar,
                   dtype operands = dtype::f32) {
  const strided x = a.broadcast_to(out.rank, out.size);
  const strided y = b ? b->broadcast_to(out.rank, out.size) : strided{};
  if (yields_bool(op.kind())) {
    visit_dtype(operands, [&](auto pd) {
      parallel_for(ctx, out.numel(), binary_fn<dtype::b8, Op, decltype(pd)::value>{out, x, y, scalar, b == nullptr, op});
    });
    return;
  }
  visit_dtype(out.dt, [&](auto dd) {
    parallel_for(ctx, out.numel(), binary_fn<decltype(dd)::value, Op>{out, x, y, scalar, b == nullptr, op});
  });
}

inline void where(const device_ctx& ctx, const strided& out, const strided& c, const strided& a, const strided& b) {
  const strided cc = c.broadcast_to(out.rank, out.size);
  const strided x = a.broadcast_to(out.rank, out.size), y = b.broadcast_to(out.rank, out.size);
  visit_dtype(out.dt, [&](auto dd) { parallel_for(ctx, out.numel(), where_fn<decltype(dd)::value>{out, cc, x, y}); });
}

inline void fma(const device_ctx& ctx, const strided& out, const strided& a, const strided& b, const strided& c) {
  const strided x = a.broadcast_to(out.rank, out.size), y = b.broadcast_to(out.rank, out.size);
  const strided z = c.broadcast_to(out.rank, out.size);
  visit_dtype(out.dt, [&](auto dd) { parallel_for(ctx, out.numel(), fma_fn<decltype(dd)::value>{out, x, y, z}); });
}

}  // namespace kernels
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
