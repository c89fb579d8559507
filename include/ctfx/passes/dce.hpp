// ctfx/passes/dce.hpp — dead-code elimination: drop nodes whose value nobody reads and that have no
// effect of their own. One reverse sweep: a node is live if it has an effect or a live user.
//
// Effects: graph inputs and the output; every mutating op (copy_, fill_, add_, index_put_, G_,
// foreach_*_, all_reduce_); user ops (`custom`, `auto_functionalized`: ctfx cannot see what they do
// besides their declared writes, as FX keeps them); collectives (every rank must take part).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "report.hpp"
#include "rewrite.hpp"

namespace ctfx {

// An op whose node is kept even when nobody reads its value.
constexpr bool has_side_effect(op_kind k) {
  return k == op_kind::placeholder || k == op_kind::output || is_mutating(k) || k == op_kind::custom ||
         k == op_kind::auto_functionalized || facts(k).family == op_family::collective;
}
constexpr bool has_side_effect(const ir& g, std::int32_t i) { return has_side_effect(g[i].op); }

// The program's values that nothing uses (report.hpp's unused_value): results computed from tensor
// arguments, without an effect, that no node reads — not the output, not an `update`'s copy_. Views
// (which compute nothing), getitems of a tuple that is used, and factories (zeros, full, ...) are
// not reported: PyTorch's graphs leave such nodes unused routinely, and dropping them loses nothing.
// Run on the graph as the program wrote it, before any pass (the passes leave dead nodes for dce).
constexpr void find_unused_values(const ir& g, std::vector<unused_value>& out) {
  if (!g.error.ok()) return;
  const std::int32_t n = g.size();
  detail::cvec<std::uint8_t> used(static_cast<std::size_t>(n));
  std::uint8_t* us = used.data();
  const node* nd = g.nodes.data();
  const std::int32_t* args = g.args.data();
  for (std::int32_t i = 0; i < n; ++i)
    for (const std::int32_t *a = args + nd[i].arg0, *e = a + nd[i].nargs; a != e; ++a)
      if (*a >= 0 && *a < n) us[*a] = 1;
  for (std::int32_t i = 0; i < n; ++i) {
    const op_kind k = nd[i].op;
    if (us[i] || has_side_effect(k) || !nd[i].meta.is_tensor() || nd[i].nargs == 0 || is_view_op(k) || k == op_kind::getitem)
      continue;
    unused_value u;
    u.node = i;
    u.name = nd[i].name;
    u.op = nd[i].op;
    out.push_back(u);
  }
}

// By value, so that a graph without dead nodes is moved through, not copied.
//
// Liveness without a users index: in reverse program order a node is live when it has an effect or
// a later live node marked it, and a live node marks its arguments (arguments come before their
// users, so each node is final when the sweep reaches it). Raw pointers: in constant evaluation a
// call per node or per edge costs more than the test it wraps, and the pass runs on every pipeline.
constexpr ir dce(ir g) {
  if (!g.error.ok()) return g;
  const std::int32_t n = g.size();
  detail::cvec<std::uint8_t> live(static_cast<std::size_t>(n));
  std::uint8_t* lv = live.data();
  const node* nd = g.nodes.data();
  const std::int32_t* args = g.args.data();
  bool any_dead = false;
  for (std::int32_t i = n - 1; i >= 0; --i) {
    if (!lv[i] && !has_side_effect(nd[i].op)) {
      any_dead = true;
      continue;
    }
    lv[i] = 1;
    for (const std::int32_t *a = args + nd[i].arg0, *e = a + nd[i].nargs; a != e; ++a)
      if (*a >= 0 && *a < n) lv[*a] = 1;
  }
  if (!any_dead) return g;
  rewrite rw(g);
  for (std::int32_t i = 0; i < n; ++i)
    if (!lv[i]) rw.erase(i);
  return static_cast<rewrite&&>(rw).apply();
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
