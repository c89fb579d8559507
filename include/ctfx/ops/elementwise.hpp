// ctfx/ops/elementwise.hpp — unary and binary elementwise ops with broadcasting and PyTorch's type
// promotion: each op's tag (name, schema) and its metadata rules. What an op computes on one element
// is defined once, by the scalar functions every kernel and the reference interpreter call
// (kernels/pointwise.hpp: unary_value, binary_value, scalar_binary_value).
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"
#include "result_layout.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
#define CTFX_UNARY(NAME, SIG) \
  struct NAME##_t : op_tag<op_kind::NAME, SIG> {};
CTFX_UNARY(neg, "neg(Tensor self) -> Tensor")
CTFX_UNARY(abs, "abs(Tensor self) -> Tensor")
CTFX_UNARY(exp, "exp(Tensor self) -> Tensor")
CTFX_UNARY(exp2, "exp2(Tensor self) -> Tensor")
CTFX_UNARY(log, "log(Tensor self) -> Tensor")
CTFX_UNARY(log2, "log2(Tensor self) -> Tensor")
CTFX_UNARY(log10, "log10(Tensor self) -> Tensor")
CTFX_UNARY(sin, "sin(Tensor self) -> Tensor")
CTFX_UNARY(cos, "cos(Tensor self) -> Tensor")
CTFX_UNARY(sqrt, "sqrt(Tensor self) -> Tensor")
CTFX_UNARY(relu, "relu(Tensor self) -> Tensor")
CTFX_UNARY(ceil, "ceil(Tensor self) -> Tensor")
CTFX_UNARY(floor, "floor(Tensor self) -> Tensor")
CTFX_UNARY(round, "round(Tensor self) -> Tensor")
CTFX_UNARY(trunc, "trunc(Tensor self) -> Tensor")
CTFX_UNARY(tanh, "tanh(Tensor self) -> Tensor")
CTFX_UNARY(erf, "erf(Tensor self) -> Tensor")
CTFX_UNARY(log1p, "log1p(Tensor self) -> Tensor")
CTFX_UNARY(expm1, "expm1(Tensor self) -> Tensor")
CTFX_UNARY(sigmoid, "sigmoid(Tensor self) -> Tensor")
CTFX_UNARY(rsqrt, "rsqrt(Tensor self) -> Tensor")
CTFX_UNARY(sign, "sign(Tensor self) -> Tensor")
#undef CTFX_UNARY
// ~x on integers (a bool's ~ is logical_not)
struct bitwise_not_t : op_tag<op_kind::bitwise_not, "bitwise_not(Tensor self) -> Tensor"> {};
struct logical_not_t : op_tag<op_kind::logical_not, "logical_not(Tensor self) -> Tensor"> {};
struct convert_t : op_tag<op_kind::convert, "convert_element_type(Tensor a, ScalarType dtype) -> Tensor"> {};

#define CTFX_BINARY(NAME, SIG) \
  struct NAME##_t : op_tag<op_kind::NAME, SIG> {};
CTFX_BINARY(add, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
CTFX_BINARY(sub, "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
CTFX_BINARY(mul, "mul.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(div, "div.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(maximum, "maximum(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(minimum, "minimum(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(pow, "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor")
// Python's modulo: the result has the divisor's sign (PyTorch: fmod, then + b where the signs differ);
// an integer remainder by 0 is 0 here, where PyTorch raises.
CTFX_BINARY(remainder, "remainder.Tensor(Tensor self, Tensor other) -> Tensor")
// C's fmod: the remainder of truncating division (the dividend's sign); an integer fmod by 0 is 0
// here, where PyTorch raises.
CTFX_BINARY(fmod, "fmod.Tensor(Tensor self, Tensor other) -> Tensor")
// a // b and trunc(a / b) (aten.div.Tensor_mode with rounding_mode 'floor' / 'trunc'); integers stay
// integers; an integer division by 0 is 0 here, where PyTorch raises.
// sqrt(a^2 + b^2) without overflow (C's hypot); floats only, as PyTorch's
CTFX_BINARY(hypot, "hypot(Tensor self, Tensor other) -> Tensor")
// atan(a / b) in the quadrant of (b, a) (C's atan2); integers give f32, as PyTorch's
CTFX_BINARY(atan2, "atan2(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(floor_divide, "floor_divide(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(trunc_divide, "trunc_divide(Tensor self, Tensor other) -> Tensor")
// Integer bitwise ops (and bools, except the shifts). A shift by a count below 0 or at least the
// dtype's width gives 0 (left) or the sign (right), as PyTorch's CPU kernels.
CTFX_BINARY(bitwise_and, "bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(bitwise_or, "bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(bitwise_xor, "bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(bitwise_left_shift, "bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(bitwise_right_shift, "bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_BINARY(add_, "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
CTFX_BINARY(sub_, "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
CTFX_BINARY(mul_, "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
CTFX_BINARY(div_, "div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")
CTFX_BINARY(clamp_min, "clamp_min(Tensor self, Scalar min) -> Tensor")
CTFX_BINARY(clamp_max, "clamp_max(Tensor self, Scalar max) -> Tensor")
#undef CTFX_BINARY
// Comparisons and logical ops: bool results (NaN compares unequal to everything, and is true).
#define CTFX_PREDICATE(NAME, SIG) \
  struct NAME##_t : op_tag<op_kind::NAME, SIG> {};
CTFX_PREDICATE(eq, "eq.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(ne, "ne.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(lt, "lt.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(le, "le.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(gt, "gt.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(ge, "ge.Tensor(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(logical_and, "logical_and(Tensor self, Tensor other) -> Tensor")
CTFX_PREDICATE(logical_or, "logical_or(Tensor self, Tensor other) -> Tensor")
#undef CTFX_PREDICATE
struct where_t : op_tag<op_kind::where, "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"> {};
// a * b + c rounded once (prims.fma; std::fma). Integers: a * b + c modulo 2^bits.
struct fma_t : op_tag<op_kind::fma, "fma(Tensor a, Tensor b, Tensor c) -> Tensor"> {};
}  // namespace ops

namespace detail {

// Result dtype of a binary op: torch.result_type of its operands. A scalar operand does not widen a
// tensor's dtype within its category (PyTorch's "wrapped number" rule), except that a non-integral
// scalar makes an integer tensor f32; a 0-d tensor widens a dimensioned one only across categories
// (f16 * f32[] is f16); true division of integers gives f32.
constexpr dtype binary_dtype(op_kind k, const tensor_meta& a, const tensor_meta* b, bool scalar_is_integral) {
  if (yields_bool(k)) return dtype::b8;
  dtype r = a.dt;
  if (!b) {
    r = promote_scalar(a.dt, scalar_is_integral);
  } else {
    r = result_type(a.dt, a.rank > 0, b->dt, b->rank > 0);
  }
  if ((k == op_kind::div || k == op_kind::atan2) && !is_floating(r)) r = dtype::f32;
  return r;
}

constexpr bool binary_meta(ir& g, std::int32_t id, op_kind k, const tensor_meta& a, const tensor_meta* b,
                           bool scalar_is_integral, tensor_meta& out) {
  tensor_meta shape = a;
  if (b && !broadcast_into(shape, *b, &g)) {
    auto m = about(g, id);
    m << "operand shapes "; put_type(m, g, a); m << " and "; put_type(m, g, *b); m << " do not broadcast";
    fail(g, id, rule::broadcast_shapes, m);
    return false;
  }
  dtype dt = binary_dtype(k, a, b, scalar_is_integral);
  const op_kind base = is_mutating(k) ? facts(k).twin : k;
  const bool shift = base == op_kind::bitwise_left_shift || base == op_kind::bitwise_right_shift;
  if ((is_bitwise(base) && is_floating(dt)) || (shift && dt == dtype::b8) || (base == op_kind::hypot && !is_floating(dt))) {
    // PyTorch has these kernels for these dtypes only ("not implemented for 'Float'")
    auto m = about(g, id);
    m << name_of(base) << " of "; put_type(m, g, a);
    if (b) { m << " and "; put_type(m, g, *b); } else m << " and a number";
    m << (base == op_kind::hypot ? " computes in floats only" : shift ? " computes in integers only (not bools, not floats)"
                                                                     : " computes in integers and bools only");
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  if (is_mutating(k)) {
    // In place: the result is `a` itself, so the broadcast shape and the dtype must be a's.
    if (!shape.same_shape(a) || promote(a.dt, dt) != a.dt) {
      auto m = about(g, id); m << "an in-place result of type "; put_type(m, g, shape); m << " does not fit "; put_type(m, g, a);
      fail(g, id, rule::broadcast_shapes, m);
      return false;
    }
    out = a;
    return true;
  }
  const tensor_meta* ops[2] = {&a, b};
  return elementwise_result(g, id, shape, dt, ops, b ? 2 : 1, out);
}

// The type a comparison or logical op computes in: torch.result_type of its operands (b: a tensor,
// or null for a scalar right operand, integral or not).
constexpr dtype operand_dtype(const tensor_meta& a, const tensor_meta* b, bool scalar_is_integral) {
  return b ? result_type(a.dt, a.rank > 0, b->dt, b->rank > 0) : promote_scalar(a.dt, scalar_is_integral);
}

// The dtype PyTorch casts a binary op's tensor operands to before computing (TensorIterator's
// common dtype): its result's, or for a bool-result op the operands' promoted type.
constexpr dtype common_dtype(op_kind k, const tensor_meta& a, const tensor_meta& b) {
  return yields_bool(k) ? operand_dtype(a, &b, false) : binary_dtype(k, a, &b, false);
}

// Whether operand `j` (0: left, 1: right) of binary op k, of dtype `from`, must be converted to the
// common dtype `to` before the kernels read it. The kernels load an operand straight into the
// compute type (float for f16 and bf16, int64 for the integers), so a value `to` cannot hold
// exactly would skip PyTorch's cast: f16(x) < f32[](0.1) compares with f16(0.1). Not needed where
// the loads are that cast (to is f32, f64 or i64), where every value of `from` fits `to`, for
// integer add/sub/mul (equal modulo 2^bits either way), nor for mul and div's right operand in
// f16/bf16: their CPU kernels read a one-element right operand at full precision (opmath).
constexpr bool cast_before_compute(op_kind k, int j, dtype from, dtype to, bool from_is_0d) {
  if (from == to || to == dtype::f32 || to == dtype::f64 || to == dtype::i64) return false;
  auto fits = [](dtype f, dtype t) {
    if (f == dtype::b8) return true;
    if (t == dtype::b8) return false;
    if (f == dtype::i8) return true;  // every target but bool holds -128..127 exactly
    return false;  // i32, i64, f16, bf16, f32, f64 into i8, i32, f16 or bf16: some value does not fit
  };
  if (fits(from, to)) return false;
  const op_kind base = is_mutating(k) ? facts(k).twin : k;
  if (!is_floating(to) && (base == op_kind::add || base == op_kind::sub || base == op_kind::mul)) return false;
  if (j == 1 && from_is_0d && (to == dtype::f16 || to == dtype::bf16) && (base == op_kind::mul || base == op_kind::div))
    return false;
  return true;
}

// The unary ops whose value is a floating-point function (PyTorch's unary float ops): on an integer
// or bool tensor they compute in, and give, f32 (graph/builder.hpp converts the input first).
constexpr bool promotes_int_to_float(op_kind k) {
  switch (k) {
    case op_kind::exp: case op_kind::exp2: case op_kind::log: case op_kind::log2: case op_kind::log10: case op_kind::sin: case op_kind::cos: case op_kind::sqrt:
    case op_kind::tanh: case op_kind::erf: case op_kind::log1p: case op_kind::expm1: case op_kind::sigmoid: case op_kind::rsqrt:
      return true;
    default: return false;
  }
}

// where(cond, a, b): cond is bool; the three broadcast together; a and b promote (Inductor prints a
// scalar branch as a 0-d full, which promotes as the tensor it is).
constexpr bool where_meta(ir& g, std::int32_t id, const tensor_meta& c, const tensor_meta& a, const tensor_meta& b,
                          tensor_meta& out) {
  if (c.dt != dtype::b8) {
    auto m = about(g, id);
    m << "the condition is "; put_type(m, g, c); m << ", where needs a bool (b8) condition: compare it (x != 0) or convert it";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  tensor_meta shape = c;
  if (!broadcast_into(shape, a, &g) || !broadcast_into(shape, b, &g)) {
    auto m = about(g, id);
    m << "condition "; put_type(m, g, c); m << ", operands "; put_type(m, g, a); m << " and "; put_type(m, g, b);
    m << " do not broadcast";
    fail(g, id, rule::broadcast_shapes, m);
    return false;
  }
  const tensor_meta* ops[3] = {&c, &a, &b};
  return elementwise_result(g, id, shape, result_type(a.dt, a.rank > 0, b.dt, b.rank > 0), ops, 3, out);
}

// fma(a, b, c): the three broadcast together and promote (torch.result_type of a, b, then c; a
// number for b is a 0-d tensor of the result's dtype, which promotes as the tensor it is).
constexpr bool fma_meta(ir& g, std::int32_t id, const tensor_meta& a, const tensor_meta& b, const tensor_meta& c,
                        tensor_meta& out) {
  tensor_meta shape = a;
  if (!broadcast_into(shape, b, &g) || !broadcast_into(shape, c, &g)) {
    auto m = about(g, id);
    m << "fma's operands "; put_type(m, g, a); m << ", "; put_type(m, g, b); m << " and "; put_type(m, g, c);
    m << " do not broadcast";
    fail(g, id, rule::broadcast_shapes, m);
    return false;
  }
  const dtype ab = result_type(a.dt, a.rank > 0, b.dt, b.rank > 0);
  const dtype dt = result_type(ab, a.rank > 0 || b.rank > 0, c.dt, c.rank > 0);
  const tensor_meta* ops[3] = {&a, &b, &c};
  return elementwise_result(g, id, shape, dt, ops, 3, out);
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
