// ctfx/analysis/users.hpp — who uses each node, which nodes share a storage, and which storages
// belong to the caller (graph inputs) or are handed back (graph outputs). One linear sweep.
//
//   auto u = ctfx::users_of(g);
//   for (auto user : u.of(i)) ...              // users of node i, in program order, each once
//   for (auto v : u.with_storage(s)) ...       // nodes whose storage is s, in program order
//   u.is_input_storage(g.meta(i).storage)      // i aliases a graph input
//   ctfx::view_base(g, i)                      // the first non-view node under a view chain
//
// Node ids are program positions (the ir keeps nodes in program order), so "after node i" is `> i`.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include <vector>
#include "../detail/cvec.hpp"
#include "../graph/ir.hpp"

namespace ctfx {

struct users_index {
  detail::cvec<std::int32_t> user_off, user_ids;        // CSR: users of node i
  detail::cvec<std::int32_t> storage_off, storage_ids;  // CSR: nodes with storage s
  detail::cvec<std::uint8_t> storage_flags;             // bit 0: input storage, bit 1: output storage
  detail::cvec<std::uint8_t> output_flags;              // per node: an argument of the output node

  // Users of `node` in program order; a node that reads it twice is listed once.
  constexpr std::span<const std::int32_t> of(std::int32_t node) const { return range(user_off, user_ids, node); }
  constexpr std::int32_t count(std::int32_t node) const { return static_cast<std::int32_t>(of(node).size()); }
  // The last user of `node`, or -1 when it has none.
  constexpr std::int32_t last_user(std::int32_t node) const {
    auto u = of(node);
    return u.empty() ? -1 : u.back();
  }
  // Nodes whose storage (alias class) is `s`, in program order; empty for s < 0 (tuples).
  constexpr std::span<const std::int32_t> with_storage(std::int32_t s) const {
    if (s < 0 || static_cast<std::size_t>(s) + 1 >= storage_off.size()) return {};
    return range(storage_off, storage_ids, s);
  }
  // The storage of a graph input (placeholder), or of a graph output.
  constexpr bool is_input_storage(std::int32_t s) const { return flag(s, 1); }
  constexpr bool is_output_storage(std::int32_t s) const { return flag(s, 2); }
  // `node` is itself an argument of the output node.
  constexpr bool is_output(std::int32_t node) const {
    return node >= 0 && output_flags[static_cast<std::size_t>(node)] != 0;
  }

 private:
  static constexpr std::span<const std::int32_t> range(const detail::cvec<std::int32_t>& off,
                                                       const detail::cvec<std::int32_t>& ids, std::int32_t i) {
    auto b = static_cast<std::size_t>(off[static_cast<std::size_t>(i)]);
    auto e = static_cast<std::size_t>(off[static_cast<std::size_t>(i) + 1]);
    return {ids.data() + b, e - b};
  }
  constexpr bool flag(std::int32_t s, std::uint8_t bit) const {
    return s >= 0 && static_cast<std::size_t>(s) < storage_flags.size() &&
           (storage_flags[static_cast<std::size_t>(s)] & bit) != 0;
  }
};

// A graph input: a placeholder node.
constexpr bool is_graph_input(const ir& g, std::int32_t node) { return node >= 0 && g[node].op == op_kind::placeholder; }

// Follows view ops (slice, select, view, alias, ...) down to the first non-view node.
constexpr std::int32_t view_base(const ir& g, std::int32_t node) {
  while (node >= 0 && is_view_op(g[node].op)) node = g.arg(node, 0);
  return node;
}

namespace detail {
// True when node arguments [b, a) do not already hold x: a node that reads x twice is one user.
constexpr bool not_read_before(const std::int32_t* b, const std::int32_t* a, std::int32_t x) {
  for (; b != a; ++b)
    if (*b == x) return false;
  return true;
}
}  // namespace detail

// counts[x] += the number of nodes that read x (each once), for x in [0, g.size()).
constexpr void count_users(const ir& g, std::int32_t* counts) {
  const std::int32_t size = g.size();
  const node* nd = g.nodes.data();
  const std::int32_t* args = g.args.data();
  for (std::int32_t i = 0; i < size; ++i)
    for (const std::int32_t *b = args + nd[i].arg0, *a = b, *e = a + nd[i].nargs; a != e; ++a)
      if (const std::int32_t x = *a; x >= 0 && x < size && detail::not_read_before(b, a, x)) ++counts[x];
}

// Users of every node as CSR (off: n + 1 offsets, ids: the users in program order, each once).
// Two sweeps over the arguments: counting (off[x] += 1), then, after a running sum has made off[x]
// the end of x's range, placing users from the last node back (ids[--off[x]] = i), which leaves
// off[x] at the start of the range and the users in program order. A node that reads x twice
// counts once: its earlier arguments are compared (a node reads a handful). The sweeps read the
// pools through raw pointers, and need no scratch arrays: in constant evaluation every call, every
// element written, costs, and these loops run for every pass.
constexpr void user_csr(const ir& g, detail::cvec<std::int32_t>& off, detail::cvec<std::int32_t>& ids) {
  const std::int32_t size = g.size();
  const auto n = static_cast<std::size_t>(size);
  off.assign(n + 1, 0);
  std::int32_t* o = off.data();
  count_users(g, o);
  for (std::int32_t i = 1; i < size; ++i) o[i] += o[i - 1];
  const std::int32_t total = size > 0 ? o[size - 1] : 0;
  o[size] = total;
  ids.assign(static_cast<std::size_t>(total), -1);
  std::int32_t* out = ids.data();
  const node* nd = g.nodes.data();
  const std::int32_t* args = g.args.data();
  for (std::int32_t i = size - 1; i >= 0; --i)
    for (const std::int32_t *b = args + nd[i].arg0, *a = b, *e = a + nd[i].nargs; a != e; ++a)
      if (const std::int32_t x = *a; x >= 0 && x < size && detail::not_read_before(b, a, x)) out[--o[x]] = i;
}

constexpr users_index users_of(const ir& g) {
  users_index u;
  const std::int32_t size = g.size();
  const auto n = static_cast<std::size_t>(size);
  user_csr(g, u.user_off, u.user_ids);
  const node* nd = g.nodes.data();

  // Storages: every id below next_storage (and any larger one a node carries), bucketed by a
  // counting sort (CSR, as the users).
  std::int32_t n_storage = g.next_storage;
  for (std::int32_t i = 0; i < size; ++i)
    if (nd[i].meta.storage >= n_storage) n_storage = nd[i].meta.storage + 1;
  const auto ns = static_cast<std::size_t>(n_storage);
  u.storage_off.assign(ns + 1, 0);
  std::int32_t* so = u.storage_off.data();
  for (std::int32_t i = 0; i < size; ++i)
    if (const std::int32_t s = nd[i].meta.storage; s >= 0) ++so[s + 1];
  for (std::int32_t s = 0; s < n_storage; ++s) so[s + 1] += so[s];
  detail::cvec<std::int32_t> at(u.storage_off.begin(), u.storage_off.end() - 1);
  u.storage_ids.assign(static_cast<std::size_t>(so[n_storage]), -1);
  std::int32_t* pos = at.data();
  std::int32_t* ids = u.storage_ids.data();
  for (std::int32_t i = 0; i < size; ++i)
    if (const std::int32_t s = nd[i].meta.storage; s >= 0) ids[pos[s]++] = i;

  u.storage_flags.assign(ns, 0);
  u.output_flags.assign(n, 0);
  std::uint8_t* sf = u.storage_flags.data();
  for (std::int32_t i = 0; i < size; ++i)
    if (nd[i].op == op_kind::placeholder && nd[i].meta.storage >= 0) sf[nd[i].meta.storage] |= 1;
  const std::int32_t out = g.output_node();
  if (out >= 0)
    for (const std::int32_t *a = g.args.data() + nd[out].arg0, *e = a + nd[out].nargs; a != e; ++a)
      if (*a >= 0) {
        u.output_flags[static_cast<std::size_t>(*a)] = 1;
        if (nd[*a].meta.storage >= 0) sf[nd[*a].meta.storage] |= 2;
      }
  return u;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
