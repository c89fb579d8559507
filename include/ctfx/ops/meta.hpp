// ctfx/ops/meta.hpp — the metadata rule of every op in one dispatch: given a node whose arguments
// have metadata, compute its dtype, sizes, strides, offset and storage (Inductor's fake-tensor
// propagation). Builders, passes and the verifier all call this one function.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "basic.hpp"
#include "collectives.hpp"
#include "control.hpp"
#include "custom.hpp"
#include "elementwise.hpp"
#include "factories.hpp"
#include "foreach.hpp"
#include "gather.hpp"
#include "index.hpp"
#include "products.hpp"
#include "reductions.hpp"
#include "scatters.hpp"
#include "views.hpp"

namespace ctfx {

// g++'s evaluator memoizes a constexpr call whose arguments are values it has seen before (its
// call table lives for the whole translation unit), for calls nested at most
// -fconstexpr-cache-depth deep (default 8). With CTFX_MEMO_META=1, the rules of ops whose metadata
// depends only on (op, aux, at most four params, the metas of at most two tensor arguments) run
// through such a call, so that a rule runs once per distinct question in a compile: the builds,
// the verifier and the rebuilds of every pass ask again and again for the same layer shapes. The
// builder's calls sit ~10 deep, so it pays only with a deeper cache: the ctfx::ctfx CMake target
// sets both (CTFX_MEMO_META=1, -fconstexpr-cache-depth=64) for g++; at the default depth every
// question would miss and the detour would cost (bench/RESULTS.md §1). g++ only: clang and nvcc
// do not memoize constexpr calls.
#ifndef CTFX_MEMO_META
#define CTFX_MEMO_META 0
#endif
#if CTFX_MEMO_META && CTFX_GXX_FRONTEND
#define CTFX_MEMO_META_ACTIVE 1
#else
#define CTFX_MEMO_META_ACTIVE 0
#endif

namespace detail {
constexpr bool compute_meta_rule(ir& g, std::int32_t id, tensor_meta& out);

// A memoizable rule's question, by value: the op, the metas of its tensor arguments, at most four
// params. Storages are renumbered (the first argument's 0, the second's 0 when it shares it, else
// 1): the rules only test that arguments are tensors and hand an argument's storage on, so nodes
// that differ only in the buffers they read share an entry.
struct meta_key {
  op_kind op = op_kind::placeholder;
  std::int32_t aux = 0, nargs = 0, npar = 0;
  tensor_meta a{}, b{};
  sym_expr p0{}, p1{}, p2{}, p3{};
};
struct meta_answer {
  tensor_meta out{};
  bool ok = false;
};
constexpr bool memoizable(op_kind k) {
  switch (k) {
    case op_kind::copy_: case op_kind::copy: case op_kind::clone: case op_kind::empty_like: case op_kind::fill_:
    case op_kind::convert: case op_kind::all_reduce: case op_kind::all_reduce_: case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::mean:
    case op_kind::prod: case op_kind::argmax: case op_kind::argmin:
    case op_kind::slice_scatter: case op_kind::select_scatter: case op_kind::diagonal_scatter:
      return true;
    default: return is_view_op(k) || is_unary(k) || is_binary(k);
  }
}
// The rule on a scratch graph: the arguments (nodes 0 and 1) and the node. It has no symbol table:
// (a rule that needs one, to make a derived symbol, gives no answer)
// the rules compute with symbolic extents without one, and only a broken rule's message (formatted
// before it fails, then thrown away: the rule reruns on the graph) would print their names.
constexpr meta_answer answer_meta(meta_key k) {
  ir s;
  const auto na = static_cast<std::size_t>(k.nargs);
  s.nodes.resize(na + 1);
  node* N = s.nodes.data();
  if (na > 0) N[0].meta = k.a;
  if (na > 1) N[1].meta = k.b;
  const std::int32_t args[2] = {0, 1};
  s.args.append(args, args + na);
  const sym_expr p[4] = {k.p0, k.p1, k.p2, k.p3};
  s.params.append(p, p + k.npar);
  node& n = N[na];
  n.op = k.op;
  n.aux = k.aux;
  n.nargs = k.nargs;
  n.npar = k.npar;
  meta_answer r;
  // A rule that made a derived symbol (a floor division, a guard) needs the graph's symbol table:
  // no answer here, the rule runs on the graph.
  r.ok = compute_meta_rule(s, k.nargs, r.out) && s.syms.empty();
  return r;
}
// The memoized answer for node `id`, when its op and arguments allow one: true with `out` set.
// False leaves it to the rule on the graph (which also names the node when the rule is broken).
constexpr bool memo_meta(const ir& g, std::int32_t id, tensor_meta& out) {
  const node* N = g.nodes.data();
  const node& n = N[id];
  if (n.nargs > 2 || n.npar > 4 || !memoizable(n.op)) return false;
  const std::int32_t* A = g.args.data() + n.arg0;
  meta_key k;
  k.op = n.op;
  k.aux = n.aux;
  k.nargs = n.nargs;
  k.npar = n.npar;
  std::int32_t sa = -1, sb = -1;
  if (n.nargs > 0) {
    if (A[0] < 0 || A[0] >= id) return false;
    k.a = N[A[0]].meta;
    sa = k.a.storage;
    if (sa >= 0) k.a.storage = 0;
  }
  if (n.nargs > 1) {
    if (A[1] < 0 || A[1] >= id) return false;
    k.b = N[A[1]].meta;
    sb = k.b.storage;
    if (sb >= 0) k.b.storage = sb == sa ? 0 : 1;
  }
  // The layout rules tell derived symbols (>= 0) from sizes (>= 2) by the graph's table, which the
  // scratch graph lacks: no answer for arguments that use one.
  for (const tensor_meta* m : {&k.a, &k.b})
    for (int d = 0; d < m->rank; ++d)
      if (uses_derived(g, m->size[d]) || uses_derived(g, m->stride[d])) return false;
  const sym_expr* P = g.params.data() + n.par0;
  if (n.npar > 0) k.p0 = P[0];
  if (n.npar > 1) k.p1 = P[1];
  if (n.npar > 2) k.p2 = P[2];
  if (n.npar > 3) k.p3 = P[3];
  const meta_answer r = answer_meta(k);
  if (!r.ok) return false;
  out = r.out;
  if (out.storage == 0) out.storage = sa;
  else if (out.storage == 1) out.storage = sb;
  return true;
}
}  // namespace detail

/// Computes the metadata of node `id` into `out` (storage: detail::fresh for a new buffer). Returns
/// false after recording an error on the graph.
constexpr bool compute_meta(ir& g, std::int32_t id, tensor_meta& out) {
#if CTFX_MEMO_META_ACTIVE
  // (The scratch graph knows neither the strides PyTorch printed nor the graph's order symbols: an
  // answer that differs from the printed strides, or any answer once the graph has order symbols,
  // is left to the rule on the graph, which takes them into account.)
  if (__builtin_is_constant_evaluated() && !detail::has_order_symbols(g) && detail::memo_meta(g, id, out) &&
      (!g.printed.present || detail::as_printed(g, out, false)))
    return true;
#endif
  return detail::compute_meta_rule(g, id, out);
}

// The rules themselves, on the graph.
constexpr bool detail::compute_meta_rule(ir& g, std::int32_t id, tensor_meta& out) {
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
      if (a.size() == 1 && a[0] >= 0 && is_control_op(N[A[0]].op)) {
        if (control_result_meta(g, A[0], n.aux, out)) return true;
        auto m = about(g, id); m << "index " << n.aux << " is out of range for '" << N[A[0]].name.view() << "'";
        fail(g, id, rule::bad_argument, m);
        return false;
      }
      if (a.size() != 1 || a[0] < 0) { auto m = about(g, id); m << "expects one tuple argument"; fail(g, id, rule::bad_argument, m); return false; }
      return getitem_meta(g, id, out);
    case op_kind::sym_size: if (!need(1)) return false; out = tensor_meta{}; out.dt = dtype::i64; out.storage = -1; return true;
    case op_kind::copy_:
      if (!need(2) || !copy_compatible(g, id, N[A[0]].meta, N[A[1]].meta)) return false;
      out = N[A[0]].meta; return true;
    case op_kind::copy: {
      if (!need(2) || !copy_compatible(g, id, N[A[0]].meta, N[A[1]].meta)) return false;
      // aten.copy keeps self's strides even where they are not dense (a slice of a KV cache, as
      // PyTorch prints them); ctfx gives the copy a fresh buffer: self's order where the sizes
      // decide it, else row-major. The printed strides say nothing about an order to take
      // (graph/fx_parse.hpp compares only a copy's sizes).
      if (!preserve_format_layout(&g, N[A[0]].meta, N[A[0]].meta.dt, out, nullptr))
        out = contiguous_like(N[A[0]].meta, N[A[0]].meta.dt);
      return true;
    }
    case op_kind::clone:  // aux 1: memory_format=torch.contiguous_format
      if (!need(1)) return false;
      if (n.aux == 1) { out = contiguous_like(N[A[0]].meta, N[A[0]].meta.dt); return true; }
      return preserve_format_result(g, id, N[A[0]].meta, N[A[0]].meta.dt, out);
    case op_kind::empty: case op_kind::zeros: case op_kind::ones: case op_kind::full:
      return factory_meta(g, id, p, static_cast<dtype>(n.aux), out);
    case op_kind::empty_like: if (!need(1)) return false; return empty_like_result(g, id, N[A[0]].meta, N[A[0]].meta.dt, out);
    case op_kind::fill_: if (!need(1)) return false; out = N[A[0]].meta; return true;
    case op_kind::convert: if (!need(1)) return false; return preserve_format_result(g, id, N[A[0]].meta, static_cast<dtype>(n.aux), out);
    case op_kind::all_reduce: case op_kind::broadcast: case op_kind::all_gather: case op_kind::reduce_scatter:
    case op_kind::all_gather_blocks: case op_kind::reduce_scatter_blocks: case op_kind::halo_exchange:
      if (!need(1) || !collective_ok(g, id, N[A[0]].meta, p)) return false;
      out = collective_meta(n.op, N[A[0]].meta, p); return true;
    case op_kind::all_reduce_: case op_kind::broadcast_: case op_kind::halo_exchange_:
    case op_kind::all_gather_blocks_: case op_kind::reduce_scatter_blocks_:
      if (!need(1) || !collective_ok(g, id, N[A[0]].meta, p)) return false;
      out = N[A[0]].meta; return true;
    case op_kind::slice_scatter: case op_kind::select_scatter: case op_kind::diagonal_scatter:
    case op_kind::as_strided_scatter: case op_kind::generalized_scatter: case op_kind::generalized_scatter_:
      if (!need(2)) return false;
      return scatter_meta(g, id, n.op, N[A[0]].meta, N[A[1]].meta, p, out);
    case op_kind::index_put: case op_kind::index_put_: case op_kind::unsafe_index_put: case op_kind::unsafe_index_put_:
      if (!need(2)) return false;
      return index_put_meta(g, id, out);
    case op_kind::index:
      if (!need(1)) return false;
      return index_meta(g, id, out);
    case op_kind::gather:
      if (!need(2)) return false;
      return gather_meta(g, id, p, out);
    case op_kind::scatter: case op_kind::scatter_:
      if (!need(3)) return false;
      return scatter_dim_meta(g, id, p, out);
    case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::prod: case op_kind::mean: case op_kind::var: case op_kind::var_mean:
      if (!need(1)) return false;
      return reduction_meta(g, id, N[A[0]].meta, p, (n.aux & 1) != 0, out);  // (var's bit 1: var_mean's var)
    case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp:
      if (!need(1)) return false;
      return cumsum_meta(g, id, N[A[0]].meta, p, out);
    case op_kind::argmax: case op_kind::argmin:
      if (!need(1)) return false;
      return arg_reduction_meta(g, id, N[A[0]].meta, p, n.aux != 0, out);
    case op_kind::where:
      if (!need(3)) return false;
      return where_meta(g, id, N[A[0]].meta, N[A[1]].meta, N[A[2]].meta, out);
    case op_kind::fma:
      if (!need(3)) return false;
      return fma_meta(g, id, N[A[0]].meta, N[A[1]].meta, N[A[2]].meta, out);
    case op_kind::mm: case op_kind::bmm:
      if (!need(2)) return false;
      return product_meta(g, id, nullptr, N[A[0]].meta, N[A[1]].meta, out);
    case op_kind::addmm: case op_kind::baddbmm:
      if (!need(3)) return false;
      return product_meta(g, id, &N[A[0]].meta, N[A[1]].meta, N[A[2]].meta, out);
    case op_kind::cat:
      if (!need(a.size())) return false;
      return cat_meta(g, id, a, p.empty() ? sym_expr(0) : p[0], out);
    case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_:
      if (!need(a.size())) return false;
      return foreach_meta(g, id, out);
    case op_kind::custom: case op_kind::auto_functionalized:
      if (!need(a.size())) return false;
      return custom_meta(g, id, out);
    case op_kind::cond: case op_kind::while_loop:
      if (!need(a.size())) return false;
      return control_meta(g, id, out);
    default: break;
  }
  if (is_view_op(n.op)) return need(1) && view_meta(g, id, n.op, N[A[0]].meta, p, out);
  if (is_unary(n.op)) {
    if (!need(1)) return false;
    const tensor_meta* x[1] = {&N[A[0]].meta};
    if (n.op == op_kind::bitwise_not && (is_floating(N[A[0]].meta.dt) || N[A[0]].meta.dt == dtype::b8)) {
      auto m = about(g, id); m << "bitwise_not of "; put_type(m, g, N[A[0]].meta);
      m << ": an integer op (a bool's is logical_not; PyTorch has none for floats)";
      fail(g, id, rule::dtype_mismatch, m);
      return false;
    }
    return elementwise_result(g, id, N[A[0]].meta, n.op == op_kind::logical_not ? dtype::b8 : N[A[0]].meta.dt, x, 1, out);
  }
  if (is_binary(n.op)) {
    if (n.aux == 0) return need(2) && binary_meta(g, id, n.op, N[A[0]].meta, &N[A[1]].meta, false, out);
    return need(1) && binary_meta(g, id, n.op, N[A[0]].meta, nullptr, n.aux == 2, out);
  }
  auto m = about(g, id); m << "has no metadata rule";
  fail(g, id, rule::bad_argument, m);
  return false;
}

namespace detail {
// A binary op's scalar operand as PyTorch's CPU kernels use it: converted to the op's common dtype
// first, as every operand is (f16(x) + 0.1 adds f16(0.1); an int scalar wraps to an i8 or i32
// tensor's type) — except mul's and div's, which read the scalar at full precision in float for
// f16 and bf16 (their kernels' opmath scalar path). Rounded once here, so that every executor
// computes with the same value.
constexpr void round_scalar_operand(ir& g, std::int32_t id) {
  node& n = g[id];
  // _foreach_add's scalar: PyTorch adds it to each tensor as add does (rounded to the list's dtype
  // where the list has one); _foreach_mul's multiplies at full precision, as mul.
  if ((n.op == op_kind::foreach_add || n.op == op_kind::foreach_add_) && n.nargs == n.aux && n.nargs > 0) {
    const dtype p = g.meta(g.arg(id, 0)).dt;
    for (std::int32_t k = 1; k < n.nargs; ++k)
      if (g.meta(g.arg(id, k)).dt != p) return;
    if (is_floating(p)) n.scalar = n.scalar.rounded_to(p);
    return;
  }
  if (!is_binary(n.op) || n.nargs != 1 || n.aux == 0) return;
  const tensor_meta& a = g.meta(g.arg(id, 0));
  const dtype p = yields_bool(n.op) ? operand_dtype(a, nullptr, n.aux == 2) : g[id].meta.dt;
  const bool opmath = n.op == op_kind::mul || n.op == op_kind::div || n.op == op_kind::mul_ || n.op == op_kind::div_;
  if (opmath && (p == dtype::f16 || p == dtype::bf16)) return;
  n.scalar = n.scalar.rounded_to(p);
}
}  // namespace detail

/// Computes and stores the metadata of node `id`, giving fresh results a new storage.
constexpr bool infer_meta(ir& g, std::int32_t id) {
  tensor_meta m{};
  if (!compute_meta(g, id, m)) {
    g[id].meta = tensor_meta{};
    g[id].meta.storage = g.fresh_storage();  // keep going: later nodes report their own errors
    return false;
  }
  if (m.any_overflow()) {
    auto t = detail::about(g, id);
    t << "a symbolic extent needs more than " << sym_max_terms << " terms of " << sym_max_degree << " symbols";
    detail::fail(g, id, rule::symbolic_limit, t);
  }
  if (m.storage == detail::fresh) m.storage = g.fresh_storage();
  g[id].meta = m;
  detail::round_scalar_operand(g, id);
  return true;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
