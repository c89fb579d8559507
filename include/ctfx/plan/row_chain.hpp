// ctfx/plan/row_chain.hpp — which consecutive kernels run row by row together: elementwise kernels
// and reductions over the last dimension (their values fused or not) whose loop domains are the
// same [..., n] (or, for an elementwise kernel, [..., 1]: a value per row), consecutive in the
// schedule and in one graph partition (softmax: the row maximum, exp(x - max), the row sum, the
// division; RMSNorm: the mean of squares, rsqrt(mean + eps), the scaling; an optimizer's updates:
// SGD's new momentum into its buffer, then the parameter from it). Each row is then carried through
// every step while it is in L1, where one pass over the whole tensor per step moves it through memory
// each time (Inductor runs softmax's steps row by row in one kernel the same way, and an optimizer
// step as one kernel with several stores). The leading dimensions are the rows (any rank); a chain
// of elementwise kernels only runs block by block of a few thousand elements instead (no rows needed).
//
// Legal when every step reads, of what the chain writes, only row r of it while it computes row r
// (block b, for elementwise chains: the same elements): the run checks that every overlap between a
// range a step writes and one a step reads or writes has the same base and the same row step, each
// row within its step (elementwise chains: the same element stride too)
// (kernels::static_row_chain::run), and where two steps fail it, splits the chain between them.
// A step that reads a row the chain writes later (a row maximum's buffer reused for the sum) sees it
// as the whole-tensor order would: row r is read before it is overwritten, and the other rows are
// not touched. compiled<G> runs chains (kernels/row_chain.hpp); runtime_plan runs steps one by one.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include "../analysis/liveness.hpp"
#include "../graph/ir.hpp"
#include "fusion.hpp"

namespace ctfx {

/// What a step of a row chain is: not one, an elementwise kernel, or a reduction over the last
/// dimension of a [rows, n] input into one value per row.
enum class row_step : std::uint8_t { other, map, fold };

/// The fold case of row_step: a sum, amax or mean over the last dimension of an input of rank 2 or
/// more (a value in memory, or the values of a group fused into it), of the input's dtype.
constexpr bool is_row_fold(const ir& g, std::int32_t i) {
  const node& n = g[i];
  if (!is_reduction(n.op) || !n.meta.is_tensor() || n.nargs < 1) return false;
  const std::int32_t a = g.args[static_cast<std::size_t>(n.arg0)];
  if (a < 0 || g[a].meta.rank < 2 || g[a].meta.dt != n.meta.dt || !is_floating(n.meta.dt)) return false;
  return reduction_dims(g, i) == 1u << (g[a].meta.rank - 1);
}

/// The extents [..., n] a step's loop runs over: an elementwise kernel's result, a fold's input.
constexpr const tensor_meta& row_domain(const ir& g, std::int32_t i, row_step k) {
  return k == row_step::fold ? g[g.args[static_cast<std::size_t>(g[i].arg0)]].meta : g[i].meta;
}

/// The steps from s on that run row by row with it: the last one, e >= s (e == s: no chain), and
/// whether the chain has an elementwise kernel over whole rows (`wide_map`) and a fold. Consecutive
/// steps of one partition over the same rows: the folds' inputs and the wide maps over [..., n] with
/// one rank, one n and the same leading extents, maps over [..., 1] (a value per row, RMSNorm's
/// rsqrt(mean + eps)) among them. `kind(i)`: node i's row_step.
struct row_chain_span {
  std::size_t last = 0;
  bool wide_map = false, fold = false;
};
template <class Kind>
constexpr row_chain_span row_chain_from(const ir& g, const liveness& L, std::size_t s, Kind&& kind) {
  row_chain_span c{s, false, false};
  const tensor_meta* wide = nullptr;  // the [rows, n] of the folds and wide maps
  const tensor_meta* first = nullptr;
  for (std::size_t e = s; e < L.steps.size(); ++e) {
    const std::int32_t i = L.steps[e];
    const row_step k = kind(i);
    if (k == row_step::other || (e > s && L.step_partition[e] != L.step_partition[s])) break;
    const tensor_meta& d = row_domain(g, i, k);
    if (d.rank < 1 || (first && d.rank != first->rank)) break;
    const int last = d.rank - 1;
    bool same_rows = true;
    for (int r = 0; first && r < last; ++r) same_rows = same_rows && d.size[r] == first->size[r];
    if (!same_rows) break;
    const bool narrow = k == row_step::map && d.rank >= 2 && d.size[last] == sym_expr(1);
    if (!narrow && wide && !(d.size[last] == wide->size[last])) break;
    if (!first) first = &d;
    if (!narrow) wide = &d;
    c.last = e;
    c.fold = c.fold || k == row_step::fold;
    c.wide_map = c.wide_map || (k == row_step::map && !narrow);
  }
  return c;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
