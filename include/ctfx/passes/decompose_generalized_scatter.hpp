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
#include "../core/diagnostics_push.hpp"
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
  // No generalized scatter: the graph as it is. Else room for what each adds (a view per link of
  // its chain, a clone, a copy_ and a copy-back at most; a link holds two parameters at least).
  std::size_t scatters = 0, params = 0;
  for (const auto& nd : g.nodes)
    if (nd.op == op_kind::generalized_scatter || nd.op == op_kind::generalized_scatter_) {
      ++scatters;
      params += static_cast<std::size_t>(nd.npar);
    }
  if (scatters == 0) return g;
  rewrite rw(g);
  const std::size_t inserts = params / 2 + 3 * scatters + 16;
  rw.reserve_inserts(inserts, 2 * inserts, params + 16);
  bool mutated = false;
  // Scratch space shared by all scatters (allocations cost in constant evaluation).
  detail::cvec<std::int32_t> bases;  // bases[j]: what view j is applied to
  detail::cvec<chain_cursor> views;
  detail::cvec<sym_expr> sizes;
  detail::cvec<tensor_meta> metas;   // metas[j]: the metadata of bases[j]
  ir scratch;  // view_meta names a node in its (impossible) errors: give it one
  scratch.nodes.resize(1);
  // Every node made here is given its metadata, computed on the old graph (rewrite::insert_before's
  // known_meta): a view's from its input's, a copy_ is its destination, a scatter is clone_meta of
  // its input, and what replaces G takes G's metadata and storage. The rebuild then infers nothing
  // (the verifier after the pass re-derives all of it).
  auto with_meta = [](node n, const tensor_meta& m) {
    n.meta = m;
    return n;
  };
  const node* nd = g.nodes.data();
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const op_kind k = nd[i].op;
    if (k != op_kind::generalized_scatter && k != op_kind::generalized_scatter_) continue;
    const std::int32_t* ia = g.args.data() + nd[i].arg0;
    const std::int32_t inp = ia[0], src = ia[1];
    const std::span<const sym_expr> chain(g.params.data() + nd[i].par0, static_cast<std::size_t>(nd[i].npar));
    const bool mutating = k == op_kind::generalized_scatter_ || scatter_always_uses_mutation(chain);

    if (mutating) {
      std::int32_t t = inp;
      if (k == op_kind::generalized_scatter)
        t = rw.insert_before(i, with_meta(node_like(g, i, op_kind::clone), nd[i].meta), {inp}, {}, true);
      std::int32_t v = t;
      tensor_meta vm = k == op_kind::generalized_scatter ? nd[i].meta : nd[inp].meta;
      bool known = true;
      for (chain_cursor c{chain}; !c.done(); c.next()) {
        tensor_meta next{};
        known = known && view_meta(scratch, 0, c.kind(), vm, c.params(), next);
        vm = next;
        v = rw.insert_before(i, with_meta(node_like(g, i, c.kind()), vm), {v}, c.params(), known);
      }
      rw.insert_before(i, with_meta(node_like(g, i, op_kind::copy_), vm), {v, src}, {}, known);
      rw.replace(i, t);
      mutated = true;
      continue;
    }

    // Functional: the views down to the last one's input, then the scatters back up.
    bases.clear();
    views.clear();
    metas.clear();
    std::int32_t b = inp;
    tensor_meta bm = nd[inp].meta;
    bool known = true;
    for (chain_cursor c{chain}; !c.done(); c.next()) {
      bases.push_back(b);
      views.push_back(c);
      metas.push_back(bm);
      chain_cursor next = c;
      next.next();
      tensor_meta vm{};
      known = known && view_meta(scratch, 0, c.kind(), bm, c.params(), vm);
      bm = vm;
      if (!next.done()) b = rw.insert_before(i, with_meta(node_like(g, i, c.kind()), bm), {b}, c.params(), known);
    }
    // Expand a source that G would broadcast into the innermost view (bm, when known).
    std::int32_t s = src;
    if (known && !nd[src].meta.same_shape(bm)) {
      sizes.clear();
      for (int d = 0; d < bm.rank; ++d) sizes.push_back(bm.size[d]);
      s = rw.insert_before(i, node_like(g, i, op_kind::expand), {src}, sizes);
    }
    for (std::size_t j = views.size(); j-- > 0;) {
      // The outermost scatter stands for G: G's metadata and storage; inner ones are fresh results.
      const tensor_meta m = j == 0 ? nd[i].meta : clone_meta(metas[j]);
      s = rw.insert_before(i, with_meta(node_like(g, i, facts(views[j].kind()).twin), m), {bases[j], s},
                           views[j].params(), known);
    }
    rw.replace(i, s);
  }
  ir out = static_cast<rewrite&&>(rw).apply();
  if (mutated) out.phase = graph_phase::reinplaced;
  return out;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
