// ctfx/ops/meta.hpp — the metadata rule of every op in one dispatch: given a node whose arguments
// have metadata, compute its dtype, sizes, strides, offset and storage (Inductor's fake-tensor
// propagation). Builders, passes and the verifier all call this one function.
#pragma once
#include "basic.hpp"
#include "collectives.hpp"
#include "custom.hpp"
#include "elementwise.hpp"
#include "factories.hpp"
#include "foreach.hpp"
#include "index.hpp"
#include "reductions.hpp"
#include "scatters.hpp"
#include "views.hpp"

namespace ctfx {

// Computes the metadata of node `id` into `out` (storage: detail::fresh for a new buffer). Returns
// false after recording an error on the graph.
constexpr bool compute_meta(ir& g, std::int32_t id, tensor_meta& out) {
  using namespace detail;
  // The node and its arguments through raw pointers: this runs for every node a graph builds and
  // for every node the verifier re-derives, and in constant evaluation each accessor (g[i],
  // g.meta, a span's operator[]) is a call that costs more than the check. The rules do not add
  // nodes, so N stays valid.
  const node* N = g.nodes.data();
  const node& n = N[id];
  const std::int32_t* A = g.args.data() + n.arg0;
  const auto na = static_cast<std::size_t>(n.nargs);
  const std::span<const std::int32_t> a(A, na);
  const std::span<const sym_expr> p(g.params.data() + n.par0, static_cast<std::size_t>(n.npar));
  const std::int32_t size = g.size();
  for (std::size_t i = 0; i < na; ++i) {
    if (A[i] < -1 || A[i] >= size) {
      auto m = about(g, id); m << "argument " << static_cast<int>(i) << " names no node of this graph";
      fail(g, id, rule::undefined_node, m); return false;
    }
    if (A[i] >= id) {
      auto m = about(g, id); m << "argument " << static_cast<int>(i) << " ('" << arg_name(g, A[i]) << "') is defined after its use";
      fail(g, id, rule::use_before_definition, m); return false;
    }
  }
  auto need = [&](std::size_t k) {
    if (na >= k) {
      bool ok = true;
      for (std::size_t i = 0; ok && i < k; ++i) ok = A[i] >= 0 && N[A[i]].meta.storage >= 0;
      if (ok) return true;
    }
    auto m = about(g, id); m << "expects " << static_cast<int>(k) << " tensor arguments";
    fail(g, id, rule::bad_argument, m);
    return false;
  };
  switch (n.op) {
    case op_kind::placeholder: out = n.meta; return true;
    case op_kind::output: out = tensor_meta{}; out.storage = -1; return true;
    case op_kind::getitem:
      if (a.size() != 1 || a[0] < 0) { auto m = about(g, id); m << "expects one tuple argument"; fail(g, id, rule::bad_argument, m); return false; }
      return getitem_meta(g, id, out);
    case op_kind::sym_size: if (!need(1)) return false; out = tensor_meta{}; out.dt = dtype::i64; out.storage = -1; return true;
    case op_kind::copy_:
      if (!need(2) || !copy_compatible(g, id, N[A[0]].meta, N[A[1]].meta)) return false;
      out = N[A[0]].meta; return true;
    case op_kind::copy:
      if (!need(2) || !copy_compatible(g, id, N[A[0]].meta, N[A[1]].meta)) return false;
      out = clone_meta(N[A[0]].meta); return true;
    case op_kind::clone: if (!need(1)) return false; out = clone_meta(N[A[0]].meta); return true;
    case op_kind::empty: case op_kind::zeros: case op_kind::ones: case op_kind::full:
      return factory_meta(g, id, p, static_cast<dtype>(n.aux), out);
    case op_kind::empty_like: if (!need(1)) return false; out = contiguous_like(N[A[0]].meta, N[A[0]].meta.dt); return true;
    case op_kind::fill_: if (!need(1)) return false; out = N[A[0]].meta; return true;
    case op_kind::convert: if (!need(1)) return false; out = contiguous_like(N[A[0]].meta, static_cast<dtype>(n.aux)); return true;
    case op_kind::all_reduce: if (!need(1)) return false; out = clone_meta(N[A[0]].meta); return true;
    case op_kind::all_reduce_: if (!need(1)) return false; out = N[A[0]].meta; return true;
    case op_kind::slice_scatter: case op_kind::select_scatter: case op_kind::diagonal_scatter:
    case op_kind::as_strided_scatter: case op_kind::generalized_scatter: case op_kind::generalized_scatter_:
      if (!need(2)) return false;
      return scatter_meta(g, id, n.op, N[A[0]].meta, N[A[1]].meta, p, out);
    case op_kind::index_put: case op_kind::index_put_: case op_kind::unsafe_index_put: case op_kind::unsafe_index_put_:
      if (!need(2)) return false;
      return index_put_meta(g, id, out);
    case op_kind::sum: case op_kind::amax:
      if (!need(1)) return false;
      return reduction_meta(g, id, N[A[0]].meta, p, n.aux != 0, out);
    case op_kind::cat:
      if (!need(a.size())) return false;
      return cat_meta(g, id, a, p.empty() ? sym_expr(0) : p[0], out);
    case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_:
      if (!need(a.size())) return false;
      return foreach_meta(g, id, out);
    case op_kind::custom: case op_kind::auto_functionalized:
      if (!need(a.size())) return false;
      return custom_meta(g, id, out);
    default: break;
  }
  if (is_view_op(n.op)) return need(1) && view_meta(g, id, n.op, N[A[0]].meta, p, out);
  if (is_unary(n.op)) { if (!need(1)) return false; out = contiguous_like(N[A[0]].meta, N[A[0]].meta.dt); return true; }
  if (is_binary(n.op)) {
    if (n.aux == 0) return need(2) && binary_meta(g, id, n.op, N[A[0]].meta, &N[A[1]].meta, false, out);
    return need(1) && binary_meta(g, id, n.op, N[A[0]].meta, nullptr, n.aux == 2, out);
  }
  auto m = about(g, id); m << "has no metadata rule";
  fail(g, id, rule::bad_argument, m);
  return false;
}

// Computes and stores the metadata of node `id`, giving fresh results a new storage.
constexpr bool infer_meta(ir& g, std::int32_t id) {
  tensor_meta m{};
  if (!compute_meta(g, id, m)) {
    g[id].meta = tensor_meta{};
    g[id].meta.storage = g.fresh_storage();  // keep going: later nodes report their own errors
    return false;
  }
  if (m.any_overflow()) {
    auto t = detail::about(g, id);
    t << "a symbolic extent needs more than 2 terms of 2 symbols";
    detail::fail(g, id, rule::symbolic_limit, t);
  }
  if (m.storage == detail::fresh) m.storage = g.fresh_storage();
  g[id].meta = m;
  return true;
}

}  // namespace ctfx
