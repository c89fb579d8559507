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
// Counting sort into CSR: `key(i)` gives the bucket of item i (or -1 to skip it).
template <class Key>
constexpr void fill_csr(std::size_t buckets, std::size_t items, Key key, detail::cvec<std::int32_t>& off,
                        detail::cvec<std::int32_t>& ids) {
  off.clear();
  off.resize(buckets + 1);  // resize/assign, not push_back loops: an appended element costs 2-4x more
  for (std::size_t i = 0; i < items; ++i) {
    std::int32_t k = key(i);
    if (k >= 0) ++off[static_cast<std::size_t>(k) + 1];
  }
  for (std::size_t b = 0; b < buckets; ++b) off[b + 1] += off[b];
  detail::cvec<std::int32_t> at(off.begin(), off.end() - 1);
  ids.assign(static_cast<std::size_t>(off[buckets]), -1);
  for (std::size_t i = 0; i < items; ++i) {
    std::int32_t k = key(i);
    if (k >= 0) ids[static_cast<std::size_t>(at[static_cast<std::size_t>(k)]++)] = static_cast<std::int32_t>(i);
  }
}
}  // namespace detail

// Users of every node as CSR (off: n + 1 offsets, ids: the users in program order, each once).
// Two sweeps over the arguments, counting then placing; `seen[a]` drops a second read of `a` by
// the same node (marked i while counting, -2 - i while placing). No edge list, no remapping: every
// push_back costs in constant evaluation.
constexpr void user_csr(const ir& g, detail::cvec<std::int32_t>& off, detail::cvec<std::int32_t>& ids) {
  const auto n = static_cast<std::size_t>(g.size());
  off.clear();
  off.resize(n + 1);
  detail::cvec<std::int32_t> seen(n, -1);
  const std::int32_t size = g.size();
  for (std::int32_t i = 0; i < size; ++i)
    for (auto a : g.args_of(i))
      if (a >= 0 && a < size && seen[static_cast<std::size_t>(a)] != i) {
        seen[static_cast<std::size_t>(a)] = i;
        ++off[static_cast<std::size_t>(a) + 1];
      }
  for (std::size_t i = 0; i < n; ++i) off[i + 1] += off[i];
  detail::cvec<std::int32_t> at(off.begin(), off.end() - 1);
  ids.assign(static_cast<std::size_t>(off[n]), -1);
  for (std::int32_t i = 0; i < size; ++i)
    for (auto a : g.args_of(i))
      if (a >= 0 && a < size && seen[static_cast<std::size_t>(a)] != -2 - i) {
        seen[static_cast<std::size_t>(a)] = -2 - i;
        ids[static_cast<std::size_t>(at[static_cast<std::size_t>(a)]++)] = i;
      }
}

constexpr users_index users_of(const ir& g) {
  users_index u;
  const auto n = static_cast<std::size_t>(g.size());
  user_csr(g, u.user_off, u.user_ids);

  // Storages: every id below next_storage (and any larger one a node carries).
  std::int32_t n_storage = g.next_storage;
  for (const auto& nd : g.nodes)
    if (nd.meta.storage >= n_storage) n_storage = nd.meta.storage + 1;
  const auto ns = static_cast<std::size_t>(n_storage);
  detail::fill_csr(ns, n, [&](std::size_t i) { return g.nodes[i].meta.storage; }, u.storage_off, u.storage_ids);

  u.storage_flags.resize(ns);
  u.output_flags.resize(n);
  for (const auto& nd : g.nodes)
    if (nd.op == op_kind::placeholder && nd.meta.storage >= 0)
      u.storage_flags[static_cast<std::size_t>(nd.meta.storage)] |= 1;
  std::int32_t out = g.output_node();
  if (out >= 0)
    for (auto a : g.args_of(out))
      if (a >= 0) {
        u.output_flags[static_cast<std::size_t>(a)] = 1;
        if (g.meta(a).storage >= 0) u.storage_flags[static_cast<std::size_t>(g.meta(a).storage)] |= 2;
      }
  return u;
}

}  // namespace ctfx
