// ctfx/ops/index.hpp — index_put / _unsafe_index_put and their in-place twins, with accumulate, and
// index (x[indices], a gather).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <span>
#include "basic.hpp"

namespace ctfx {
namespace ops {
struct index_put_t : op_tag<op_kind::index_put, "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"> {};
struct index_put__t : op_tag<op_kind::index_put_, "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)"> {};
struct unsafe_index_put_t : op_tag<op_kind::unsafe_index_put, "_unsafe_index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"> {};
struct unsafe_index_put__t : op_tag<op_kind::unsafe_index_put_, "_unsafe_index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)"> {};
// (index_tensor_t: ctfx::index_t is the extent type.)
struct index_tensor_t : op_tag<op_kind::index, "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"> {};
}  // namespace ops

namespace detail {

// The shape that `x[indices]` selects (advanced indexing): the broadcast of the index shapes placed
// where the indexed dimensions were when they are adjacent, in front otherwise. A bool mask selects
// a data-dependent number of elements; its position gets size -1 ("any"), which only values with
// size 1 there can fill.
constexpr bool indexed_shape(ir& g, std::int32_t id, const tensor_meta& x, std::span<const std::int32_t> idx,
                             tensor_meta& sel) {
  tensor_meta bshape{};
  bshape.rank = 0;
  int first = -1, last = -1, dim = 0;
  bool adjacent = true;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] < 0) { ++dim; continue; }
    const tensor_meta& t = g.meta(idx[i]);
    if (!is_index_dtype(t.dt)) {
      auto m = about(g, id); m << "index " << static_cast<int>(i) << " ('" << arg_name(g, idx[i]) << "') has dtype "
        << name_of(t.dt) << "; indices must be i32, i64 or b8";
      fail(g, id, rule::index_dtype, m); return false;
    }
    int covers = t.dt == dtype::b8 ? t.rank : 1;
    if (t.dt == dtype::b8) {
      for (int j = 0; j < t.rank; ++j)
        if (dim + j >= x.rank || !(t.size[j] == x.size[dim + j])) {
          auto m = about(g, id); m << "mask "; put_type(m, g, t); m << " does not match the indexed dimensions of "; put_type(m, g, x);
          fail(g, id, rule::bad_argument, m); return false;
        }
    }
    if (first >= 0 && last + 1 != dim) adjacent = false;
    if (first < 0) first = dim;
    last = dim + covers - 1;
    tensor_meta ts = t;
    if (t.dt == dtype::b8) { ts = tensor_meta{}; ts.rank = 1; ts.size[0] = sym_expr(-1); }
    if (bshape.rank == 0) bshape = ts;
    else if (!broadcast_into(bshape, ts)) {
      auto m = about(g, id); m << "index shapes do not broadcast: "; put_type(m, g, t);
      fail(g, id, rule::broadcast_shapes, m); return false;
    }
    dim += covers;
  }
  if (dim > x.rank) {
    auto m = about(g, id); m << "too many indices (" << dim << ") for "; put_type(m, g, x);
    fail(g, id, rule::bad_argument, m); return false;
  }
  if (first < 0) { sel = x; return true; }  // all None: the whole tensor
  sel = tensor_meta{};
  sel.dt = x.dt;
  int r = 0;
  auto push = [&](const sym_expr& s) { if (r < max_rank) sel.size[r] = s; ++r; };
  if (adjacent) {
    for (int j = 0; j < first; ++j) push(x.size[j]);
    for (int j = 0; j < bshape.rank; ++j) push(bshape.size[j]);
    for (int j = last + 1; j < x.rank; ++j) push(x.size[j]);
  } else {
    for (int j = 0; j < bshape.rank; ++j) push(bshape.size[j]);
    int d = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) {
      int covers = idx[i] >= 0 && g.meta(idx[i]).dt == dtype::b8 ? g.meta(idx[i]).rank : 1;
      if (idx[i] < 0) push(x.size[d]);
      d += covers;
    }
    for (int j = d; j < x.rank; ++j) push(x.size[j]);
  }
  if (!rank_ok(g, id, r)) return false;
  sel.rank = static_cast<std::int8_t>(r);
  return true;
}

constexpr bool index_put_meta(ir& g, std::int32_t id, tensor_meta& out) {
  auto a = g.args_of(id);
  const tensor_meta& x = g.meta(a[0]);
  const tensor_meta& v = g.meta(a[1]);
  tensor_meta sel{};
  if (!indexed_shape(g, id, x, a.subspan(2), sel)) return false;
  if (v.dt != x.dt) {
    auto m = about(g, id); m << "values dtype " << name_of(v.dt) << " differs from the destination's " << name_of(x.dt);
    fail(g, id, rule::dtype_mismatch, m); return false;
  }
  // Values broadcast to the selected shape; a data-dependent (-1) extent accepts only size 1.
  bool fits = v.rank <= sel.rank;
  for (int j = 0; fits && j < v.rank; ++j) {
    const sym_expr& want = sel.size[sel.rank - v.rank + j];
    const sym_expr& have = v.size[j];
    fits = have == sym_expr(1) || (!(want == sym_expr(-1)) && have == want);
  }
  if (!fits) {
    auto m = about(g, id); m << "values "; put_type(m, g, v); m << " do not broadcast to the indexed shape ";
    tensor_meta shown = sel; put_type(m, g, shown);
    fail(g, id, rule::broadcast_shapes, m); return false;
  }
  out = is_mutating(g[id].op) ? x : clone_meta(x);
  return true;
}

// The operand whose stride order index.Tensor's result takes (PyTorch's meta function for it,
// which FakeTensor runs: the restrided source of ATen's AdvancedIndex): x, its indexed dimensions
// moved to the front when they are not adjacent (transposeToFront); then x's strides with the
// indexed span replaced by one stride 0 per dimension of the broadcast indices. The span runs from
// the first dimension after the Nones counted "before" to the end less those counted "after"; a
// None counts "after" once a non-0-d index was seen, so with 0-d indices every None counts before
// and the strides kept are x's first ones, as PyTorch computes them. `sel` is the selected shape.
constexpr tensor_meta restrided_source(const tensor_meta& x, std::span<const std::int32_t> idx, const tensor_meta& sel, int brank) {
  bool indexed[max_rank]{};
  int first = -1, last = -1, n_indexed = 0;
  for (std::size_t i = 0; i < idx.size() && i < static_cast<std::size_t>(max_rank); ++i)
    if (idx[i] >= 0) { indexed[i] = true; if (first < 0) first = static_cast<int>(i); last = static_cast<int>(i); ++n_indexed; }
  if (first < 0) return x;
  int order[max_rank]{};  // x's dimensions, the indexed ones first unless they are adjacent
  int k = 0;
  const bool adjacent = last - first + 1 == n_indexed;
  for (int d = 0; d < x.rank; ++d) if (adjacent || indexed[d]) order[k++] = d;
  if (!adjacent) for (int d = 0; d < x.rank; ++d) if (!indexed[d]) order[k++] = d;
  int before = 0, after = 0;
  bool seen = false;
  for (int d = 0; d < x.rank; ++d) {
    if (indexed[order[d]]) { seen = seen || brank > 0; continue; }
    if (seen) ++after; else ++before;
  }
  tensor_meta r = sel;
  for (int j = 0; j < sel.rank; ++j)
    r.stride[j] = j < before ? x.stride[order[j]] : j < before + brank ? sym_expr(0) : x.stride[order[x.rank - (sel.rank - j)]];
  return r;
}

// x[indices]: the selected shape, in a fresh tensor laid out as ATen's index meta function lays it
// out: the elementwise stride order of the restrided source (a non-empty x; an empty one gives a
// row-major result). Integer indices only: a bool mask selects a number of elements known only
// from its values.
constexpr bool index_meta(ir& g, std::int32_t id, tensor_meta& out) {
  auto a = g.args_of(id);
  const tensor_meta& x = g.meta(a[0]);
  for (std::size_t i = 1; i < a.size(); ++i)
    if (a[i] >= 0 && g.meta(a[i]).dt == dtype::b8) {
      auto m = about(g, id);
      m << "index " << static_cast<int>(i - 1) << " ('" << arg_name(g, a[i]) << "') is a bool mask, whose result size "
        << "depends on its values; index with integer indices (the mask's nonzero()), or use where";
      fail(g, id, rule::index_dtype, m);
      return false;
    }
  tensor_meta sel{};
  if (!indexed_shape(g, id, x, a.subspan(1), sel)) return false;
  if (const sym_expr n = x.numel(); n.is_static() && n.value() == 0) { out = contiguous_like(sel, x.dt); return true; }
  int brank = sel.rank - x.rank;  // the broadcast indices' rank: sel has it in place of the indexed dims
  for (std::size_t i = 1; i < a.size(); ++i) brank += a[i] >= 0;
  const tensor_meta src = restrided_source(x, a.subspan(1), sel, brank);
  const tensor_meta* ops[1] = {&src};
  return elementwise_result(g, id, sel, x.dt, ops, 1, out);
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
