// ctfx/ops/scatters.hpp — functional view scatters and the generalized scatter.
//
// X_scatter(inp, src, args) = clone(inp) with X(clone, args) overwritten by src. Each scatter's
// view twin is a type (`using view = ...`), so the view↔scatter table is a compile-time fact. The
// generalized scatter G(inp, src, [v1..vk]) applies a chain of views; its in-place twin G_ writes
// into inp itself.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <span>
#include "basic.hpp"
#include "views.hpp"

namespace ctfx {
namespace ops {
struct slice_scatter_t : op_tag<op_kind::slice_scatter, "slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"> { using view = slice_t; };
struct select_scatter_t : op_tag<op_kind::select_scatter, "select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor"> { using view = select_t; };
struct diagonal_scatter_t : op_tag<op_kind::diagonal_scatter, "diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor"> { using view = diagonal_t; };
struct as_strided_scatter_t : op_tag<op_kind::as_strided_scatter, "as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor"> { using view = as_strided_t; };
struct generalized_scatter_t : op_tag<op_kind::generalized_scatter, "_generalized_scatter(Tensor self, Tensor src, ViewOp[] view_ops) -> Tensor"> {};
struct generalized_scatter__t : op_tag<op_kind::generalized_scatter_, "_inplace_generalized_scatter(Tensor(a!) self, Tensor src, ViewOp[] view_ops) -> Tensor(a!)"> {};
}  // namespace ops

namespace detail {

// A view chain is stored in the node's params as (kind, count, params...) per view.
struct chain_cursor {
  std::span<const sym_expr> p;
  std::size_t at = 0;
  constexpr bool done() const { return at >= p.size(); }
  constexpr op_kind kind() const { return static_cast<op_kind>(p[at].value()); }
  constexpr std::span<const sym_expr> params() const {
    return p.subspan(at + 2, static_cast<std::size_t>(p[at + 1].value()));
  }
  constexpr void next() { at += 2 + static_cast<std::size_t>(p[at + 1].value()); }
};

// Metadata of the view that a scatter writes: one view for X_scatter, the chain for G.
constexpr bool scatter_view_meta(ir& g, std::int32_t id, op_kind k, const tensor_meta& inp,
                                 std::span<const sym_expr> p, tensor_meta& view) {
  if (is_view_scatter(k)) return view_meta(g, id, facts(k).twin, inp, p, view);
  view = inp;
  for (chain_cursor c{p}; !c.done(); c.next()) {
    tensor_meta next{};
    if (!view_meta(g, id, c.kind(), view, c.params(), next)) return false;
    view = next;
  }
  return true;
}

constexpr bool scatter_meta(ir& g, std::int32_t id, op_kind k, const tensor_meta& inp, const tensor_meta& src,
                            std::span<const sym_expr> p, tensor_meta& out) {
  tensor_meta view{};
  if (!scatter_view_meta(g, id, k, inp, p, view)) return false;
  if (src.dt != inp.dt) {
    auto m = about(g, id); m << "source dtype " << name_of(src.dt) << " differs from the input's " << name_of(inp.dt);
    fail(g, id, rule::dtype_mismatch, m); return false;
  }
  // View scatters need the exact view shape (as PyTorch); the generalized scatter broadcasts.
  tensor_meta b = view;
  bool fits = is_view_scatter(k) ? src.same_shape(view) : (broadcast_into(b, src) && b.same_shape(view));
  if (!fits) {
    auto m = about(g, id); m << "source "; put_type(m, g, src); m << " does not fit the view "; put_type(m, g, view);
    m << " of '" << arg_name(g, g.arg(id, 0)) << "'";
    fail(g, id, rule::scatter_source_shape, m); return false;
  }
  out = k == op_kind::generalized_scatter_ ? inp : clone_meta(inp);
  return true;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
