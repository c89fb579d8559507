// ctfx/plan/row_siblings.hpp — which consecutive kernels run row by row together: two elementwise
// kernels computed into slices of one cat along its last dimension (plan/fusion.hpp's `into`),
// consecutive in the schedule and in one graph partition. Each row of the cat's result is then
// written in one visit (Inductor's horizontal fusion of a cat's pointwise inputs): RoPE's two
// rotated halves of a KV cache's rows, which lie pages apart, cost one pass over those pages.
// Legal because the kernels write disjoint slices that none of them reads (cat is their only
// reader). compiled<G> runs them so (kernels::static_row_siblings); runtime_plan, whose per-row
// cost is its interpreter's, gains nothing measurable from it and runs them one after the other.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include "../analysis/liveness.hpp"
#include "../graph/ir.hpp"

namespace ctfx {

// Whether steps s and s + 1 of L run row by row together; `into`: plan/fusion.hpp's per node,
// `elementwise(i)`: whether node i is an elementwise kernel (a group root or a single op).
template <class Elementwise>
constexpr bool row_siblings(const ir& g, const std::int32_t* into, const liveness& L, std::size_t s, Elementwise&& elementwise) {
  if (s + 1 >= L.steps.size() || L.step_partition[s] != L.step_partition[s + 1]) return false;
  const std::int32_t a = L.steps[s], b = L.steps[s + 1];
  const std::int32_t c = into[static_cast<std::size_t>(a)];
  if (c < 0 || into[static_cast<std::size_t>(b)] != c || g[c].op != op_kind::cat || !elementwise(a) || !elementwise(b)) return false;
  const std::int32_t d = g[c].npar ? static_cast<std::int32_t>(g.iparam(c, 0)) : 0;
  return d == g[c].meta.rank - 1 || d == -1;  // along the last dimension: each operand a run of every row
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
