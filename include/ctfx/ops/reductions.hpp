// ctfx/ops/reductions.hpp — sum, amax, amin, prod, mean, argmax, argmin, cumsum, var, var_mean and cat.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <span>
#include "meta_util.hpp"
#include "result_layout.hpp"
#include "schema.hpp"

namespace ctfx {
namespace ops {
// What a reduction computes, and in which order, is kernels/reduce.hpp's (one definition for every
// executor and the reference).
struct sum_t : op_tag<op_kind::sum, "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"> {};
struct amax_t : op_tag<op_kind::amax, "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"> {};
struct amin_t : op_tag<op_kind::amin, "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"> {};
// prod over one dim (params: it) or all (none): an integer or bool x multiplies in i64 (PyTorch's
// dtype), f32 and f64 in their own, in PyTorch's CPU kernel's order (kernels/reduce.hpp's prod_run).
struct prod_t : op_tag<op_kind::prod, "prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"> {};
// mean: the sum in the accumulation type, rounded to the dtype, then divided by the count (PyTorch's
// CPU mean.dim: sum(...).div_(count)). Floating inputs only.
struct mean_t : op_tag<op_kind::mean, "mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"> {};
// argmax/argmin: the int64 index of the first maximum (minimum) along dim, or in the row-major
// flattened input when dim is None; a NaN counts as the maximum (minimum), its first index wins.
struct argmax_t : op_tag<op_kind::argmax, "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"> {};
struct argmin_t : op_tag<op_kind::argmin, "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"> {};
// cumsum along dim, in its input's dtype (the front ends convert an integer or bool input to int64,
// and to the dtype= argument, first, as PyTorch does); what it computes is kernels/scan.hpp's.
struct cumsum_t : op_tag<op_kind::cumsum, "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"> {};
// cumprod: cumsum's rules, each prefix multiplied sequentially (PyTorch's CPU kernel) instead.
struct cumprod_t : op_tag<op_kind::cumprod, "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"> {};
// logcumsumexp: log(cumsum(exp(x))) as PyTorch's CPU kernel folds it, floats only (kernels/scan.hpp).
struct logcumsumexp_t : op_tag<op_kind::logcumsumexp, "logcumsumexp(Tensor self, int dim) -> Tensor"> {};
// var (aux: keepdim, bit 1 set when it is var_mean's first result): Welford's variance of the reduced elements (kernels/welford.hpp), divided by max(n -
// correction, 0); var_mean: the mean of the same Welford fold (var_mean.correction's second
// result, which PyTorch computes with the variance, not as sum / n). Floating inputs f32 and f64.
struct var_t : op_tag<op_kind::var, "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"> {};
struct var_mean_t : op_tag<op_kind::var_mean, "var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"> {};
struct cat_t : op_tag<op_kind::cat, "cat(Tensor[] tensors, int dim=0) -> Tensor"> {};
}  // namespace ops

namespace detail {

// Below this many elements per output PyTorch's CPU var/var_mean folds them in one sequential
// Welford pass (at::internal::GRAIN_SIZE); above, threads fold chunks it then combines.
inline constexpr index_t welford_sequential_limit = 32768;

// var / var_mean over the flagged dimensions: f32 or f64 in, its dtype out; every reduced extent
// static and above 0, fewer than welford_sequential_limit elements per output (the order ctfx
// reproduces); a var over every dimension is refused (PyTorch's full var is a two-pass algorithm
// of its own mean) unless it is var_mean's (aux bit 1), which is Welford's.
constexpr bool welford_meta(ir& g, std::int32_t id, const tensor_meta& x, const bool* reduce, bool keepdim, tensor_meta& out) {
  const bool is_var = g[id].op == op_kind::var;
  auto refuse = [&](rule r, auto&& say) {
    auto m = about(g, id);
    m << (is_var ? "var of " : "var_mean of ");
    put_type(m, g, x);
    m << ": ";
    say(m);
    fail(g, id, r, m);
    return false;
  };
  if (x.dt != dtype::f32 && x.dt != dtype::f64)
    return refuse(rule::dtype_mismatch, [](auto& m) { m << "f32 and f64 only (PyTorch's f16/bf16 var rounds in its own way; convert to f32 first)"; });
  index_t n = 1;
  bool all = true;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduce[i]) { all = all && x.size[i] == sym_expr(1); continue; }
    if (!x.size[i].is_static() || x.size[i].value() == 0)
      return refuse(rule::bad_dimension, [&](auto& m) { m << "dimension " << i << " has extent 0 or a symbolic one (reduce over extents known above 0)"; });
    n *= x.size[i].value();
  }
  if (n >= welford_sequential_limit)
    return refuse(rule::bad_argument, [](auto& m) { m << "32,768 or more elements per result, which PyTorch folds in chunks across threads (not reproduced)"; });
  if (is_var && all && x.rank > 0 && (g[id].aux & 2) == 0)
    return refuse(rule::bad_argument, [](auto& m) { m << "a var over every dimension, which PyTorch computes in two passes from its own mean (not reproduced; var_mean's is)"; });
  tensor_meta r{};
  r.dt = x.dt;
  int k = 0;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduce[i]) r.size[k++] = x.size[i];
    else if (keepdim) r.size[k++] = sym_expr(1);
  }
  r.rank = static_cast<std::int8_t>(k);
  r.set_contiguous();
  r.storage = fresh;
  out = r;
  return true;
}

constexpr bool reduction_meta(ir& g, std::int32_t id, const tensor_meta& x, std::span<const sym_expr> dims,
                              bool keepdim, tensor_meta& out) {
  bool reduce[max_rank]{};
  if (dims.empty()) for (int i = 0; i < x.rank; ++i) reduce[i] = true;
  for (auto d : dims) {
    if (!d.is_static()) { auto m = about(g, id); m << "reduction dims must be static"; fail(g, id, rule::bad_argument, m); return false; }
    int n = norm_dim(g, id, d.value(), x.rank);
    if (n < 0) return false;
    reduce[n] = true;
  }
  if (g[id].op == op_kind::var || g[id].op == op_kind::var_mean) return welford_meta(g, id, x, reduce, keepdim, out);
  if (g[id].op == op_kind::mean && !is_floating(x.dt)) {
    auto m = about(g, id);
    m << "mean of "; put_type(m, g, x); m << ": mean needs a floating input (convert it to f32 first)";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  // PyTorch's amin raises on an empty reduced dimension (it has no identity); one whose extent is
  // symbolic could be empty at run time, where ctfx has no value to give, so both are refused.
  for (int i = 0; g[id].op == op_kind::amin && i < x.rank; ++i) {
    if (!reduce[i] || (x.size[i].is_static() && x.size[i].value() > 0)) continue;
    auto m = about(g, id);
    m << "amin of "; put_type(m, g, x); m << " over dimension " << i << ", whose extent is 0 or symbolic: an empty reduction has no minimum"
      << " (PyTorch raises); reduce over dimensions of known positive extent";
    fail(g, id, rule::bad_dimension, m);
    return false;
  }
  if (g[id].op == op_kind::prod && (x.dt == dtype::f16 || x.dt == dtype::bf16)) {
    auto m = about(g, id);
    m << "prod of "; put_type(m, g, x);
    m << ": PyTorch's kernel rounds each product to the half type (not reproduced); convert to f32 first";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  tensor_meta r{};
  const bool sum_like = g[id].op == op_kind::sum || g[id].op == op_kind::prod;
  const bool own_dtype = sum_like && (g[id].aux & sum_in_input_dtype) != 0;  // dtype= given
  if (own_dtype && x.dt == dtype::b8) {
    auto m = about(g, id);
    m << "sum with dtype=bool: ctfx sums in an integer or floating dtype (sum in int64 and compare with 0)";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  r.dt = sum_like && !is_floating(x.dt) && !own_dtype ? dtype::i64 : x.dt;
  int k = 0;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduce[i]) r.size[k++] = x.size[i];
    else if (keepdim) r.size[k++] = sym_expr(1);
  }
  r.rank = static_cast<std::int8_t>(k);
  r.set_contiguous();
  r.storage = fresh;
  out = r;
  return true;
}

// argmax/argmin (params: the dim, or none for the flattened input; aux: keepdim): an int64 result
// of the reduction's shape (none with keepdim: every dimension of extent 1). A reduced extent of 0,
// or a symbolic one (0 at run time is possible), is refused: PyTorch raises there.
constexpr bool arg_reduction_meta(ir& g, std::int32_t id, const tensor_meta& x, std::span<const sym_expr> dims, bool keepdim,
                                  tensor_meta& out) {
  const char* what = g[id].op == op_kind::argmax ? "argmax" : "argmin";
  if (dims.size() > 1) { auto m = about(g, id); m << what << " takes one dim or none"; fail(g, id, rule::bad_argument, m); return false; }
  bool reduce[max_rank]{};
  if (dims.empty()) {
    for (int i = 0; i < x.rank; ++i) reduce[i] = true;
  } else {  // (the front ends give a 0-d input, which PyTorch lets take dim 0 or -1, no dim)
    if (!dims[0].is_static()) { auto m = about(g, id); m << what << "'s dim must be static"; fail(g, id, rule::bad_argument, m); return false; }
    const int n = norm_dim(g, id, dims[0].value(), x.rank);
    if (n < 0) return false;
    reduce[n] = true;
  }
  for (int i = 0; i < x.rank; ++i) {
    if (!reduce[i] || (x.size[i].is_static() && x.size[i].value() > 0)) continue;
    auto m = about(g, id);
    m << what << " of "; put_type(m, g, x); m << " over dimension " << i << ", whose extent is 0 or symbolic: an empty reduction has no index"
      << " (PyTorch raises); reduce over dimensions of known positive extent";
    fail(g, id, rule::bad_dimension, m);
    return false;
  }
  tensor_meta r{};
  r.dt = dtype::i64;
  int k = 0;
  for (int i = 0; i < x.rank; ++i) {
    if (!reduce[i]) r.size[k++] = x.size[i];
    else if (keepdim) r.size[k++] = sym_expr(1);
  }
  r.rank = static_cast<std::int8_t>(k);
  r.set_contiguous();
  r.storage = fresh;
  out = r;
  return true;
}

// cumsum, cumprod and logcumsumexp (params: dim): a contiguous result of the input's sizes and dtype, which is a float or
// int64 (PyTorch sums smaller integers and bools in int64: the front ends convert them first).
constexpr bool cumsum_meta(ir& g, std::int32_t id, const tensor_meta& x, std::span<const sym_expr> p, tensor_meta& out) {
  if (p.size() != 1 || !p[0].is_static()) { auto m = about(g, id); m << name_of(g.nodes[static_cast<std::size_t>(id)].op) << " takes one static dim"; fail(g, id, rule::bad_argument, m); return false; }
  if (x.rank > 0 && norm_dim(g, id, p[0].value(), x.rank) < 0) return false;
  if (x.rank == 0 && p[0].value() != 0 && p[0].value() != -1) { (void)norm_dim(g, id, p[0].value(), 1); return false; }
  if (g.nodes[static_cast<std::size_t>(id)].op == op_kind::logcumsumexp && !is_floating(x.dt)) {
    auto m = about(g, id);
    m << "logcumsumexp of "; put_type(m, g, x); m << ": PyTorch takes floats only (convert the input to a float dtype first)";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  if (!is_floating(x.dt) && x.dt != dtype::i64) {
    auto m = about(g, id);
    m << name_of(g.nodes[static_cast<std::size_t>(id)].op) << " of "; put_type(m, g, x); m << ": PyTorch sums (multiplies) integers and bools in int64 (convert the input to i64, or to the dtype= asked, first)";
    fail(g, id, rule::dtype_mismatch, m);
    return false;
  }
  tensor_meta r = x;
  r.set_contiguous();
  r.storage = fresh;
  out = r;
  return true;
}

constexpr bool cat_meta(ir& g, std::int32_t id, std::span<const std::int32_t> ts, const sym_expr& dim, tensor_meta& out) {
  if (ts.empty()) { auto m = about(g, id); m << "cat needs at least one tensor"; fail(g, id, rule::list_arguments, m); return false; }
  const tensor_meta& f = g.meta(ts[0]);
  if (!dim.is_static()) { auto m = about(g, id); m << "cat dim must be static"; fail(g, id, rule::bad_argument, m); return false; }
  int d = norm_dim(g, id, dim.value(), f.rank);
  if (d < 0) return false;
  tensor_meta r = f;
  r.size[d] = sym_expr(0);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const tensor_meta& t = g.meta(ts[i]);
    bool same = t.rank == f.rank;
    for (int j = 0; same && j < f.rank; ++j) same = j == d || t.size[j] == f.size[j];
    if (!same) {
      auto m = about(g, id); m << "tensor " << static_cast<int>(i) << " "; put_type(m, g, t); m << " does not match "; put_type(m, g, f);
      m << " outside dimension " << d;
      fail(g, id, rule::broadcast_shapes, m); return false;
    }
    r.size[d] = r.size[d] + t.size[d];
    r.dt = promote(r.dt, t.dt);
  }
  // Row-major, or channels-last when every input suggests it (cat_compute_output_memory_format);
  // where that depends on sizes the graph leaves open, the format PyTorch printed (printed_order).
  auto rule = [&](order_decider* decider, tensor_meta& res) {
    memory_format mf{}, next{};
    if (!suggested_format(&g, f, mf, decider)) return false;
    for (std::size_t i = 1; i < ts.size(); ++i) {
      if (!suggested_format(&g, g.meta(ts[i]), next, decider)) return false;
      mf = cat_output_format(mf, next);
    }
    res = result_in_format(r, r.dt, mf);
    return true;
  };
  return checked_layout(g, id, rule, out);
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
