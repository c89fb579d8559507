// ctfx/plan/row_chain.hpp — which consecutive kernels run row by row together: elementwise kernels
// and reductions over the last dimension whose loop domains are the same [rows, n], consecutive in
// the schedule and in one graph partition (softmax: the row maximum, exp(x - max), the row sum, the
// division). Each row is then carried through every step while it is in L1, where one pass over the
// whole tensor per step moves it through memory each time (Inductor runs softmax's steps row by row
// in one kernel the same way).
//
// Legal when every step reads, of what the chain writes, only row r of it while it computes row r:
// the run checks that every overlap between a range a step writes and one a step reads or writes
// has the same base and the same row step, each row within its step
// (kernels::static_row_chain::run), and otherwise runs the steps one after the other. A step that
// reads a row the chain writes later (a row maximum's buffer reused for the sum) sees it as the
// whole-tensor order would: row r is read before it is overwritten, and the other rows are not
// touched. compiled<G> runs chains (kernels/row_chain.hpp); runtime_plan runs steps one by one.
#pragma once
#include <cstdint>
#include "../analysis/liveness.hpp"
#include "../graph/ir.hpp"
#include "fusion.hpp"

namespace ctfx {

/// What a step of a row chain is: not one, an elementwise kernel, or a reduction over the last
/// dimension of a [rows, n] input into one value per row.
enum class row_step : std::uint8_t { other, map, fold };

/// The fold case of row_step: a sum, amax or mean over dimension 1 of a rank-2 input, of the
/// input's dtype, no elementwise op fused into it.
constexpr bool is_row_fold(const ir& g, std::int32_t i, bool has_members) {
  const node& n = g[i];
  if (has_members || !is_reduction(n.op) || !n.meta.is_tensor() || n.nargs < 1) return false;
  const std::int32_t a = g.args[static_cast<std::size_t>(n.arg0)];
  if (a < 0 || g[a].meta.rank != 2 || g[a].meta.dt != n.meta.dt || !is_floating(n.meta.dt)) return false;
  return reduction_dims(g, i) == 2u;
}

/// The extents [rows, n] a step's loop runs over: an elementwise kernel's result, a fold's input.
constexpr const tensor_meta& row_domain(const ir& g, std::int32_t i, row_step k) {
  return k == row_step::fold ? g[g.args[static_cast<std::size_t>(g[i].arg0)]].meta : g[i].meta;
}

/// Whether steps s and s + 1 of L run row by row together; `kind(i)`: node i's row_step.
template <class Kind>
constexpr bool row_chained(const ir& g, const liveness& L, std::size_t s, Kind&& kind) {
  if (s + 1 >= L.steps.size() || L.step_partition[s] != L.step_partition[s + 1]) return false;
  const std::int32_t a = L.steps[s], b = L.steps[s + 1];
  const row_step ka = kind(a), kb = kind(b);
  if (ka == row_step::other || kb == row_step::other) return false;
  const tensor_meta &da = row_domain(g, a, ka), &db = row_domain(g, b, kb);
  return da.rank == 2 && db.rank == 2 && da.size[0] == db.size[0] && da.size[1] == db.size[1];
}

}  // namespace ctfx
