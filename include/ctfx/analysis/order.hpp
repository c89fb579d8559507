// ctfx/analysis/order.hpp — the order a graph's nodes must keep, beyond "arguments first".
//
// A node's arguments come before it (data edges). Nodes that touch memory also keep their order per
// storage (alias class): a write after every earlier read and write of its storage, a read after
// the last earlier write. User ops (which may do more than they declare) and collectives (one
// sequence of exchanges per rank) keep their order among themselves. Views, getitem and sym_size
// touch no memory. Any topological order of these edges computes what program order computes.
//
//   order_deps d = order_of(g);
//   for (auto p : d.of(i)) ...        // what i must follow besides its arguments (earlier nodes)
//   for (auto p : d.index_part(i)) ...  // for an index op: the last writers of its index tensors
//   index_values_ready(g, L, d, i)      // the last step of schedule L that those values need
//
// One forward sweep, linear in nodes + edges: each read is listed once, and taken by at most one
// later write of its storage.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <cstdint>
#include <span>
#include "../detail/cvec.hpp"
#include "../graph/ir.hpp"
#include "liveness.hpp"

namespace ctfx {

// Calls f(storage) for each storage node i writes: a mutating op's written arguments, and the
// arguments a user op mutates in place (auto_functionalized writes fresh copies only).
template <class F>
constexpr void for_each_write(const ir& g, std::int32_t i, F&& f) {
  const node& n = g[i];
  if (is_mutating(n.op)) {
    if (is_list_op(n.op)) {
      for (std::int32_t k = 0; k < n.aux; ++k) f(g.meta(g.arg(i, k)).storage);
    } else {
      f(g.meta(g.arg(i, 0)).storage);
    }
  } else if (n.op == op_kind::custom) {
    const auto& s = g.customs[static_cast<std::size_t>(n.aux)];
    for (int a = 0; a < s.n_args; ++a)
      if (((s.mutates >> a) & 1u) && !((n.clone_mask >> a) & 1u)) f(g.meta(g.arg(i, a)).storage);
  }
}

// Ops whose order among themselves is kept whatever they touch.
constexpr bool keeps_effect_order(op_kind k) {
  return k == op_kind::custom || k == op_kind::auto_functionalized || facts(k).family == op_family::collective;
}

// The index tensors of an index op whose values must be checked (a bool mask has none).
template <class F>
constexpr void for_each_index_tensor(const ir& g, std::int32_t i, F&& f) {
  for (std::int32_t k = first_index_arg(g[i].op); k < g[i].nargs; ++k) {
    const std::int32_t x = g.arg(i, k);
    if (x >= 0 && g.meta(x).dt != dtype::b8) f(x);
  }
}

// The positions of the nodes that write each storage (CSR, in program order), and per position the
// user ops before it (user ops may write more than they declare: no group reads across one).
struct write_positions {
  detail::cvec<std::int32_t> off, at, opaque_before;
  constexpr explicit write_positions(const ir& g) {
    const std::int32_t n = g.size();
    std::int32_t ns = g.next_storage;
    for (std::int32_t i = 0; i < n; ++i) ns = g[i].meta.storage >= ns ? g[i].meta.storage + 1 : ns;
    off.assign(static_cast<std::size_t>(ns) + 2, 0);
    opaque_before.assign(static_cast<std::size_t>(n) + 1, 0);
    for (std::int32_t i = 0; i < n; ++i) {
      for_each_write(g, i, [&](std::int32_t s) { if (s >= 0) ++off[static_cast<std::size_t>(s) + 2]; });
      const bool opaque = g[i].op == op_kind::custom || g[i].op == op_kind::auto_functionalized;
      opaque_before[static_cast<std::size_t>(i) + 1] = opaque_before[static_cast<std::size_t>(i)] + (opaque ? 1 : 0);
    }
    for (std::size_t s = 2; s < off.size(); ++s) off[s] += off[s - 1];
    at.assign(static_cast<std::size_t>(off[off.size() - 1]), 0);
    for (std::int32_t i = 0; i < n; ++i)  // (off[s + 1] counts storage s's positions placed so far)
      for_each_write(g, i, [&](std::int32_t s) { if (s >= 0) at[static_cast<std::size_t>(off[static_cast<std::size_t>(s) + 1]++)] = i; });
  }
  // Whether a node strictly between lo and hi writes storage s (binary search: N log N in all).
  constexpr bool written_between(std::int32_t s, std::int32_t lo, std::int32_t hi) const {
    if (s < 0 || static_cast<std::size_t>(s) + 1 >= off.size()) return false;
    std::int32_t b = off[static_cast<std::size_t>(s)], e = off[static_cast<std::size_t>(s) + 1];
    while (b < e) {  // the first position > lo
      const std::int32_t mid = b + (e - b) / 2;
      if (at[static_cast<std::size_t>(mid)] <= lo) b = mid + 1;
      else e = mid;
    }
    return b < off[static_cast<std::size_t>(s) + 1] && at[static_cast<std::size_t>(b)] < hi;
  }
  constexpr bool opaque_between(std::int32_t lo, std::int32_t hi) const {
    return opaque_before[static_cast<std::size_t>(hi)] != opaque_before[static_cast<std::size_t>(lo) + 1];
  }
};

struct order_deps {
  detail::cvec<std::int32_t> off, ids;  // CSR: per node, the earlier nodes it must follow besides its arguments
  detail::cvec<std::int32_t> n_index;   // per node: its first entries that are the last writers of its index tensors' storages
  constexpr std::span<const std::int32_t> of(std::int32_t i) const {
    const auto b = static_cast<std::size_t>(off[static_cast<std::size_t>(i)]);
    return {ids.data() + b, static_cast<std::size_t>(off[static_cast<std::size_t>(i) + 1]) - b};
  }
  // What an index op's indices hold when it reads them, besides their own nodes: the writes into their storage before it.
  constexpr std::span<const std::int32_t> index_part(std::int32_t i) const {
    return of(i).first(static_cast<std::size_t>(n_index[static_cast<std::size_t>(i)]));
  }
};

constexpr order_deps order_of(const ir& g) {
  order_deps d;
  const std::int32_t n = g.size();
  std::int32_t ns = g.next_storage;
  for (std::int32_t i = 0; i < n; ++i) ns = g[i].meta.storage >= ns ? g[i].meta.storage + 1 : ns;
  d.off.assign(static_cast<std::size_t>(n) + 1, 0);
  d.n_index.assign(static_cast<std::size_t>(n), 0);
  d.ids.reserve(static_cast<std::size_t>(g.args.size()));
  // Per storage: its last writer, and the reads since then (a list through `next_read`).
  detail::cvec<std::int32_t> last_write(static_cast<std::size_t>(ns), -1), first_read(static_cast<std::size_t>(ns), -1);
  detail::cvec<std::int32_t> read_node, next_read;
  read_node.reserve(static_cast<std::size_t>(g.args.size()));
  next_read.reserve(static_cast<std::size_t>(g.args.size()));
  detail::cvec<std::uint8_t> written(static_cast<std::size_t>(ns), 0);  // by the node at hand
  std::int32_t last_effect = -1;
  for (std::int32_t i = 0; i < n; ++i) {
    d.off[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(d.ids.size());
    const node& nd = g[i];
    if (is_free_node(nd.op) && nd.op != op_kind::output) continue;
    if (is_index_op(nd.op)) {
      for_each_index_tensor(g, i, [&](std::int32_t x) {
        const std::int32_t s = g.meta(x).storage;
        if (s >= 0 && last_write[static_cast<std::size_t>(s)] >= 0) d.ids.push_back(last_write[static_cast<std::size_t>(s)]);
      });
      d.n_index[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(d.ids.size()) - d.off[static_cast<std::size_t>(i)];
    }
    for_each_write(g, i, [&](std::int32_t s) { written[static_cast<std::size_t>(s)] = 1; });
    for (std::int32_t k = 0; k < nd.nargs; ++k) {
      const std::int32_t a = g.arg(i, k);
      if (a < 0) continue;
      const std::int32_t s = g.meta(a).storage;
      if (s < 0 || written[static_cast<std::size_t>(s)]) continue;
      const auto su = static_cast<std::size_t>(s);
      if (last_write[su] >= 0) d.ids.push_back(last_write[su]);
      if (first_read[su] >= 0 && read_node[static_cast<std::size_t>(first_read[su])] == i) continue;  // read twice
      read_node.push_back(i);
      next_read.push_back(first_read[su]);
      first_read[su] = static_cast<std::int32_t>(read_node.size()) - 1;
    }
    for_each_write(g, i, [&](std::int32_t s) {
      const auto su = static_cast<std::size_t>(s);
      if (!written[su]) return;  // listed twice
      written[su] = 0;
      if (last_write[su] >= 0) d.ids.push_back(last_write[su]);
      for (std::int32_t r = first_read[su]; r >= 0; r = next_read[static_cast<std::size_t>(r)])
        if (read_node[static_cast<std::size_t>(r)] != i) d.ids.push_back(read_node[static_cast<std::size_t>(r)]);
      first_read[su] = -1;
      last_write[su] = i;
    });
    if (keeps_effect_order(nd.op)) {
      if (last_effect >= 0) d.ids.push_back(last_effect);
      last_effect = i;
    }
  }
  d.off[static_cast<std::size_t>(n)] = static_cast<std::int32_t>(d.ids.size());
  return d;
}

// The last step of schedule L that index op i's index values depend on: their nodes' (through
// views, which run no step) and the writes into their storage before i. -1: none. The program and
// compiled<G>'s static plan check computed indices by it (the same step on both).
constexpr std::int32_t index_values_ready(const ir& g, const liveness& L, const order_deps& deps, std::int32_t i) {
  std::int32_t ready = -1;
  for_each_index_tensor(g, i, [&](std::int32_t x) {
    while (x >= 0 && L.step_of[static_cast<std::size_t>(x)] < 0 && is_view_op(g[x].op)) x = g.arg(x, 0);
    if (x >= 0) ready = std::max(ready, L.step_of[static_cast<std::size_t>(x)]);
  });
  for (const std::int32_t d : deps.index_part(i)) ready = std::max(ready, L.step_of[static_cast<std::size_t>(d)]);
  return ready;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
