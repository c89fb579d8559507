// ctfx/ops/gather.hpp — the index ops along one dimension: gather (out[p] = x[p with p[dim] :=
// idx[p]]) and scatter (x[p with p[dim] := idx[p]] = src[p] over idx's positions p, or combined
// with sum, prod, amax or amin, with or without self: aux, graph/ir.hpp), as PyTorch's aten.gather /
// aten.scatter.src / aten.scatter_add / aten.scatter_reduce.two. Their index is one int64
// tensor of x's rank; dimension `dim` (param 0, in [0, rank)) is addressed through it.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "basic.hpp"

namespace ctfx {
namespace ops {
struct gather_t : op_tag<op_kind::gather, "gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"> {};
struct scatter_t : op_tag<op_kind::scatter, "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"> {};
struct scatter__t : op_tag<op_kind::scatter_, "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)"> {};
}  // namespace ops

namespace detail {

// The index's checks that PyTorch's gather and scatter make on shapes (at::native's
// gather_shape_check / scatter_shape_check): an int64 index of x's rank whose extent in every
// other dimension fits x's (and, for a scatter, src's in every dimension). A symbolic extent must be
// provably no larger (equal, or a known difference): ctfx refuses what it cannot prove.
constexpr bool along_dim_shapes(ir& g, std::int32_t id, const tensor_meta& x, const tensor_meta& idx, const tensor_meta* src, index_t dim) {
  if (idx.dt != dtype::i64) {
    auto m = about(g, id); m << "index ('" << arg_name(g, g.arg(id, first_index_arg(g[id].op))) << "') has dtype " << name_of(idx.dt)
                             << "; gather and scatter take an int64 index (convert it with .long())";
    fail(g, id, rule::index_dtype, m); return false;
  }
  if (x.rank == 0 || idx.rank != x.rank || (src && src->rank != x.rank)) {
    auto m = about(g, id); m << "the index "; put_type(m, g, idx); m << (src ? ", the source" : "") << " and the input ";
    put_type(m, g, x); m << " must have one rank of at least 1 (unsqueeze a 0-d operand)";
    fail(g, id, rule::bad_argument, m); return false;
  }
  if (dim < 0 || dim >= x.rank) {
    auto m = about(g, id); m << "dim " << static_cast<int>(dim) << " is outside [0, " << static_cast<int>(x.rank) << ")";
    fail(g, id, rule::bad_dimension, m); return false;
  }
  for (int d = 0; d < x.rank; ++d) {
    const bool fits_x = d == dim || known_le(idx.size[d], x.size[d]);
    const bool fits_src = !src || known_le(idx.size[d], src->size[d]);
    if (fits_x && fits_src) continue;
    auto m = about(g, id); m << "index extent " << static_cast<int>(d) << " of "; put_type(m, g, idx);
    m << " is not provably at most that of the " << (fits_x ? "source " : "input "); put_type(m, g, fits_x ? *src : x);
    m << " (PyTorch requires it; make the extents equal)";
    fail(g, id, rule::bad_argument, m); return false;
  }
  return true;
}

// gather(x, dim, idx): idx's shape, row-major (PyTorch's meta function gives it no other order).
constexpr bool gather_meta(ir& g, std::int32_t id, std::span<const sym_expr> p, tensor_meta& out) {
  const tensor_meta& x = g.meta(g.arg(id, 0));
  const tensor_meta& idx = g.meta(g.arg(id, 1));
  if (p.empty() || !p[0].is_static() || !along_dim_shapes(g, id, x, idx, nullptr, p[0].value())) {
    if (p.empty() || !p[0].is_static()) { auto m = about(g, id); m << "needs a static dim"; fail(g, id, rule::bad_dimension, m); }
    return false;
  }
  out = contiguous_like(idx, x.dt);
  return true;
}

// scatter(x, src, idx) along dim: x's shape, row-major (as PyTorch's functional scatter);
// scatter_ writes x itself.
constexpr bool scatter_dim_meta(ir& g, std::int32_t id, std::span<const sym_expr> p, tensor_meta& out) {
  const tensor_meta& x = g.meta(g.arg(id, 0));
  const tensor_meta& src = g.meta(g.arg(id, 1));
  const tensor_meta& idx = g.meta(g.arg(id, 2));
  if (p.empty() || !p[0].is_static()) { auto m = about(g, id); m << "needs a static dim"; fail(g, id, rule::bad_dimension, m); return false; }
  if (src.dt != x.dt) {
    auto m = about(g, id); m << "source dtype " << name_of(src.dt) << " differs from the input's " << name_of(x.dt)
                             << " (PyTorch refuses it too; convert the source)";
    fail(g, id, rule::dtype_mismatch, m); return false;
  }
  if (const std::int32_t c = g[id].aux & scatter_reduce_mask; c > 4 || (c > 1 && x.dt == dtype::b8)) {
    auto m = about(g, id);
    m << (c > 4 ? "has an unknown reduction (scatter_reduce takes sum, prod, mean, amax or amin)"
                : "reduces bool values with prod, amax or amin, which ctfx does not (convert to an integer dtype first)");
    fail(g, id, rule::bad_argument, m); return false;
  }
  if (!along_dim_shapes(g, id, x, idx, &src, p[0].value())) return false;
  out = is_mutating(g[id].op) ? x : contiguous_like(x, x.dt);
  return true;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
