// ctfx/passes/hoist_computed_indices.hpp — the last pass: indices the graph computes are computed
// before the first write into a caller buffer, so that the executor can check them there.
//
// Validate before mutate: every index is checked before the first step that writes a caller buffer
// (an input updated in place) or exchanges data with other ranks (a collective). An index tensor that
// is a graph input is checked before the run starts; one the graph computes (`x[i - 3] = v`,
// `out = y[argmax(z)]`) only once its value exists. After reinplacing, an early in-place update of
// an input can come before that computation in program order, though nothing orders them:
//
//   x[0:1].copy_(y[0:1])     # reinplaced update of input x: the first caller write
//   j = i + 1                # computed indices
//   out = index_put(y, [j], ...)
//
// This pass moves the nodes that index values depend on (the index tensors, what they are computed
// from, and what must stay before those: a read of a storage before its write, one user op before
// the next) ahead of the first such write, keeping every other order. Then the executor checks the
// indices of every later index op just before that write (exec/program.hpp). When an index depends
// on the write itself (`x.add_(1); out = y[x]`, x an input) nothing can move: the executor refuses
// the plan, naming the node.
//
// One reverse sweep marks the nodes to move (from the edges of analysis/order.hpp), one rebuild
// places them: linear in nodes + edges. A graph without such an index is returned as it is.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include "../analysis/order.hpp"
#include "rewrite.hpp"

namespace ctfx {

namespace detail {
// Writes a caller buffer or exchanges with other ranks: what no computed index check may follow.
constexpr bool is_check_barrier(const ir& g, std::int32_t i, const std::uint8_t* input_storage) {
  if (facts(g[i].op).family == op_family::collective) return true;
  bool caller = false;
  for_each_write(g, i, [&](std::int32_t s) { caller = caller || (s >= 0 && input_storage[s]); });
  return caller;
}
}  // namespace detail

// `moved`: set when the pass reordered nodes (the pipeline verifies the graph again only then).
constexpr ir hoist_computed_indices_moved(ir g, bool& moved) {
  moved = false;
  if (!g.error.ok()) return g;
  const std::int32_t n = g.size();
  std::int32_t ns = g.next_storage;
  for (std::int32_t i = 0; i < n; ++i) ns = g[i].meta.storage >= ns ? g[i].meta.storage + 1 : ns;
  detail::cvec<std::uint8_t> input_storage(static_cast<std::size_t>(ns), 0);
  for (std::int32_t i = 0; i < n; ++i)
    if (g[i].op == op_kind::placeholder && g[i].meta.storage >= 0) input_storage[static_cast<std::size_t>(g[i].meta.storage)] = 1;
  // The first barrier, and whether an index op with index tensors follows it.
  std::int32_t w0 = -1;
  bool later_index = false;
  for (std::int32_t i = 0; i < n && !later_index; ++i) {
    if (w0 < 0 && detail::is_check_barrier(g, i, input_storage.data())) w0 = i;
    if (w0 >= 0 && is_index_op(g[i].op)) for_each_index_tensor(g, i, [&](std::int32_t) { later_index = true; });
  }
  if (!later_index) return g;
  // The nodes the later index checks depend on (placeholders too: they keep their relative order).
  const order_deps d = order_of(g);
  detail::cvec<std::uint8_t> early(static_cast<std::size_t>(n), 0);
  std::uint8_t* e = early.data();
  bool moves = false;
  for (std::int32_t i = n - 1; i >= w0; --i) {
    if (is_index_op(g[i].op)) {
      for_each_index_tensor(g, i, [&](std::int32_t x) { e[x] = 1; });
      for (auto p : d.index_part(i)) e[p] = 1;
    }
    if (g[i].op == op_kind::placeholder) e[i] = 1;
    if (!e[i]) continue;
    moves = true;
    for (auto a : g.args_of(i))
      if (a >= 0) e[a] = 1;
    for (auto p : d.of(i)) e[p] = 1;
  }
  if (!moves) return g;
  // Before w0: as it was. From w0 on, within each run of one graph partition (partitions stay in
  // order): the marked nodes, then the others, each in program order. Every edge still points
  // forward: a marked node's predecessors are marked, or earlier.
  detail::cvec<std::int32_t> order;
  order.reserve(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < w0; ++i) order.push_back(i);
  for (std::int32_t b = w0; b < n;) {
    std::int32_t end = b;
    while (end < n && g[end].partition == g[b].partition) ++end;
    for (std::int32_t i = b; i < end; ++i)
      if (e[i]) order.push_back(i);
    for (std::int32_t i = b; i < end; ++i)
      if (!e[i]) order.push_back(i);
    b = end;
  }
  bool same = true;
  for (std::int32_t k = 0; k < n && same; ++k) same = order[static_cast<std::size_t>(k)] == k;
  if (same) return g;
  detail::cvec<std::int32_t> pos(static_cast<std::size_t>(n), -1);
  std::int32_t* ps = pos.data();
  rebuilder rb(g);
  for (auto i : order) ps[i] = rb.copy(i, [&](std::int32_t a) { return ps[a]; });
  moved = true;
  return static_cast<rebuilder&&>(rb).finish();
}

constexpr ir hoist_computed_indices(ir g) {
  bool moved = false;
  return hoist_computed_indices_moved(static_cast<ir&&>(g), moved);
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
