// ctfx/passes/dce.hpp — dead-code elimination: drop nodes whose value nobody reads and that have no
// effect of their own. One reverse sweep: a node is live if it has an effect or a live user.
//
// Effects: graph inputs and the output; every mutating op (copy_, fill_, add_, index_put_, G_,
// foreach_*_, all_reduce_); user ops (`custom`, `auto_functionalized`: ctfx cannot see what they do
// besides their declared writes, as FX keeps them); collectives (every rank must take part).
#pragma once
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "../analysis/users.hpp"
#include "rewrite.hpp"

namespace ctfx {

constexpr bool has_side_effect(const ir& g, std::int32_t i) {
  const op_kind k = g[i].op;
  return k == op_kind::placeholder || k == op_kind::output || is_mutating(k) || k == op_kind::custom ||
         k == op_kind::auto_functionalized || facts(k).family == op_family::collective;
}

// By value, so that a graph without dead nodes is moved through, not copied.
constexpr ir dce(ir g) {
  if (!g.error.ok()) return g;
  const users_index u = users_of(g);
  detail::cvec<std::uint8_t> live(static_cast<std::size_t>(g.size()));
  bool any_dead = false;
  for (std::int32_t i = g.size() - 1; i >= 0; --i) {
    bool l = has_side_effect(g, i);
    for (auto user : u.of(i)) l = l || live[static_cast<std::size_t>(user)] != 0;
    live[static_cast<std::size_t>(i)] = l ? 1 : 0;
    any_dead = any_dead || !l;
  }
  if (!any_dead) return g;
  rewrite rw(g);
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (!live[static_cast<std::size_t>(i)]) rw.erase(i);
  return static_cast<rewrite&&>(rw).apply();
}

}  // namespace ctfx
