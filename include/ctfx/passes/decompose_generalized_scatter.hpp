// ctfx/passes/decompose_generalized_scatter.hpp — G and G_ back to ordinary ops (Inductor's
// decompose_generalized_scatter, A.8 of the reference).
//
//   mutating (G_, or any view of the chain is as_strided/diagonal: those scatters always mutate):
//     G(inp, src, [v1, v2])  ->  t = clone(inp); a = v1(t); b = v2(a); copy_(b, src); uses read t
//     G_(inp, src, [v1, v2]) ->  a = v1(inp); b = v2(a); copy_(b, src);              uses read inp
//   functional (nested view scatters):
//     G(inp, src, [v1, v2])  ->  a = v1(inp); r2 = v2_scatter(a, src); r1 = v1_scatter(inp, r2)
//
// A source that G would broadcast is expanded first in the functional form (view scatters take the
// view's exact shape). A graph that gets a copy_ into an intermediate is marked
// graph_phase::reinplaced: it is no longer functional, and the verifier accepts such writes then.
#pragma once
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "../ops/meta.hpp"
#include "rewrite.hpp"

namespace ctfx {

namespace detail {

// Scatters that Inductor always lowers to mutation.
constexpr bool always_mutating_view(op_kind k) { return k == op_kind::as_strided || k == op_kind::diagonal; }

// True when some view of the chain is as_strided/diagonal, or has no functional scatter twin
// (a chain written by hand with, say, a permute can only be decomposed with mutation).
constexpr bool scatter_always_uses_mutation(std::span<const sym_expr> chain) {
  for (chain_cursor c{chain}; !c.done(); c.next())
    if (always_mutating_view(c.kind()) || !is_view_scatter(facts(c.kind()).twin)) return true;
  return false;
}

}  // namespace detail

// By value, so that a graph without generalized scatters is moved through, not copied.
constexpr ir decompose_generalized_scatter(ir g) {
  using namespace detail;
  if (!g.error.ok()) return g;
  bool any = false;  // no generalized scatter: the graph as it is
  for (const auto& nd : g.nodes)
    any = any || nd.op == op_kind::generalized_scatter || nd.op == op_kind::generalized_scatter_;
  if (!any) return g;
  rewrite rw(g);
  bool mutated = false;
  // Scratch space shared by all scatters (allocations cost in constant evaluation).
  detail::cvec<std::int32_t> bases;  // bases[j]: what view j is applied to
  detail::cvec<chain_cursor> views;
  detail::cvec<sym_expr> sizes;
  ir scratch;  // scatter_view_meta names a node in its (impossible) errors: give it one
  scratch.nodes.resize(1);
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const op_kind k = g[i].op;
    if (k != op_kind::generalized_scatter && k != op_kind::generalized_scatter_) continue;
    const std::int32_t inp = g.arg(i, 0), src = g.arg(i, 1);
    auto chain = g.params_of(g[i]);
    const bool mutating = k == op_kind::generalized_scatter_ || scatter_always_uses_mutation(chain);

    if (mutating) {
      std::int32_t t = inp;
      if (k == op_kind::generalized_scatter) t = rw.insert_before(i, node_like(g, i, op_kind::clone), {inp});
      std::int32_t v = t;
      for (chain_cursor c{chain}; !c.done(); c.next()) v = rw.insert_before(i, node_like(g, i, c.kind()), {v}, c.params());
      rw.insert_before(i, node_like(g, i, op_kind::copy_), {v, src});
      rw.replace(i, t);
      mutated = true;
      continue;
    }

    // Functional: the views down to the last one's input, then the scatters back up.
    bases.clear();
    views.clear();
    std::int32_t b = inp;
    for (chain_cursor c{chain}; !c.done(); c.next()) {
      bases.push_back(b);
      views.push_back(c);
      chain_cursor next = c;
      next.next();
      if (!next.done()) b = rw.insert_before(i, node_like(g, i, c.kind()), {b}, c.params());
    }
    // Expand a source that G would broadcast into the innermost view.
    tensor_meta view{};
    std::int32_t s = src;
    if (scatter_view_meta(scratch, 0, k, g.meta(inp), chain, view) && !g.meta(src).same_shape(view)) {
      sizes.clear();
      for (int d = 0; d < view.rank; ++d) sizes.push_back(view.size[d]);
      s = rw.insert_before(i, node_like(g, i, op_kind::expand), {src}, sizes);
    }
    for (std::size_t j = views.size(); j-- > 0;)
      s = rw.insert_before(i, node_like(g, i, facts(views[j].kind()).twin), {bases[j], s}, views[j].params());
    rw.replace(i, s);
  }
  ir out = static_cast<rewrite&&>(rw).apply();
  if (mutated) out.phase = graph_phase::reinplaced;
  return out;
}

}  // namespace ctfx
