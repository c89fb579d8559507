// ctfx/core/dtype.hpp — element types, their sizes, names and PyTorch's type promotion.
#pragma once
#include "diagnostics_push.hpp"
#include <cstdint>
#include <string_view>

namespace ctfx {

/// Element types: bool (b8), int8, int32, int64, float16, bfloat16, float32, float64 (torch.bool, torch.int8, ...).
enum class dtype : std::uint8_t { b8, i8, i32, i64, f16, bf16, f32, f64 };

/// Values usable in the DSL: g.input("x", ctfx::f32, {4, 8}).
///@{
inline constexpr dtype b8 = dtype::b8, i8 = dtype::i8, i32 = dtype::i32, i64 = dtype::i64,
                       f16 = dtype::f16, bf16 = dtype::bf16, f32 = dtype::f32, f64 = dtype::f64;

///@}
/// Bytes of one element of `d`.
constexpr int size_of(dtype d) {
  switch (d) {
    case dtype::b8: case dtype::i8: return 1;
    case dtype::f16: case dtype::bf16: return 2;
    case dtype::i32: case dtype::f32: return 4;
    case dtype::i64: case dtype::f64: return 8;
  }
  return 0;
}

/// The short names PyTorch prints in graph dumps ("f32[4, 8]").
constexpr std::string_view name_of(dtype d) {
  switch (d) {
    case dtype::b8: return "b8";
    case dtype::i8: return "i8";
    case dtype::i32: return "i32";
    case dtype::i64: return "i64";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
  }
  return "?";
}

/// f16, bf16, f32 or f64 (`torch.is_floating_point`).
constexpr bool is_floating(dtype d) {
  return d == dtype::f16 || d == dtype::bf16 || d == dtype::f32 || d == dtype::f64;
}
/// i8, i32 or i64 (bool is its own category).
constexpr bool is_integral(dtype d) { return d == dtype::i8 || d == dtype::i32 || d == dtype::i64; }
/// A dtype an index tensor may have: i32, i64, or b8 (a mask).
constexpr bool is_index_dtype(dtype d) { return d == dtype::i32 || d == dtype::i64 || d == dtype::b8; }

/// torch.result_type for two tensors of equal priority: bool < integers < floats; within a category
/// the wider type wins, and f16 with bf16 gives f32 (neither holds the other).
constexpr dtype promote(dtype a, dtype b) {
  if (a == b) return a;
  auto cat = [](dtype d) { return d == dtype::b8 ? 0 : is_integral(d) ? 1 : 2; };
  if (cat(a) != cat(b)) return cat(a) > cat(b) ? a : b;
  if ((a == dtype::f16 && b == dtype::bf16) || (a == dtype::bf16 && b == dtype::f16)) return dtype::f32;
  return size_of(a) >= size_of(b) ? a : b;
}

/// torch.result_type of two tensors where one may be 0-d (`a_dim`/`b_dim`: the tensor has
/// dimensions): a 0-d tensor promotes a dimensioned one only across categories (a float 0-d makes an
/// integer tensor float), as the `full_default` operands Inductor prints for scalar branches do.
constexpr dtype result_type(dtype a, bool a_dim, dtype b, bool b_dim) {
  if (a_dim == b_dim) return promote(a, b);
  const dtype hi = a_dim ? a : b, lo = a_dim ? b : a;
  if (is_floating(hi)) return hi;
  if (hi == dtype::b8 || is_floating(lo)) return promote(hi, lo);
  return hi;
}

/// torch.result_type of a tensor and a Python scalar (`scalar_integral`: an int, else a float): the
/// scalar ("wrapped number") moves the result to its category only: a float scalar makes a bool or
/// integer tensor the default dtype f32, an int scalar makes a bool tensor i64.
constexpr dtype promote_scalar(dtype a, bool scalar_integral) {
  if (!scalar_integral) return is_floating(a) ? a : dtype::f32;
  return a == dtype::b8 ? dtype::i64 : a;
}

}  // namespace ctfx
#include "diagnostics_pop.hpp"
