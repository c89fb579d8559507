// ctfx/passes/canonicalize_view_scatter_ops.hpp — select/slice/diagonal/as_strided scatters become
// one generalized scatter G(inp, src, [views]), and nested scatters fuse (Inductor's
// canonicalize_view_scatter_ops, A.5 of the reference):
//
//   a = X_scatter(view2(self), src, view1 args)      b = G(self, src, [view2, view1])
//   b = Y_scatter(self, a, view2 args)          ->   a = view2(b)        (only if a has other users)
//
// One program-order walk keeps, for every value, the root of its view chain (base_of) and the chain
// itself (chain_of, compared by hash and length first, then view by view). A scatter s of inp fuses
// with its source when the source is a G whose input has the chain of inp plus s's own view; the
// fused G is created before the inner G, which is erased, and the inner value's other users read
// the re-created view of the *updated* tensor.
//
// Where Inductor's rewrite could produce a wrong or invalid graph, ctfx does not fuse:
//   - inp must be defined before the inner G (the fused G takes its place);
//   - the re-created view must have exactly the inner result's layout (sizes, strides, offset), so
//     that every user (view, as_strided) sees the same elements;
//   - the re-created view must not make two outputs alias (the inner result and the outer one both
//     reaching the output).
// The view↔scatter pairing is the type table of ops/scatters.hpp (`X_scatter_t::view`).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "../analysis/users.hpp"
#include "../ops/meta.hpp"
#include "rewrite.hpp"

namespace ctfx {

namespace detail {

// The view twin of a view scatter, from the scatter tag types.
template <class... Scatter>
constexpr op_kind view_of_scatter_in(op_kind k) {
  op_kind r = op_kind::count_;
  ((Scatter::kind == k ? (r = Scatter::view::kind, 0) : 0), ...);
  return r;
}
constexpr op_kind view_of_scatter(op_kind k) {
  return view_of_scatter_in<ops::slice_scatter_t, ops::select_scatter_t, ops::diagonal_scatter_t,
                            ops::as_strided_scatter_t>(k);
}

constexpr std::uint64_t mix(std::uint64_t h, std::uint64_t v) { return (h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2))) * 1099511628211ull; }
constexpr std::uint64_t hash_view(op_kind k, std::span<const sym_expr> p) {
  std::uint64_t h = mix(0, static_cast<std::uint64_t>(k));
  for (const auto& e : p) {
    h = mix(h, static_cast<std::uint64_t>(e.c));
    for (int i = 0; i < e.n; ++i) h = mix(h, static_cast<std::uint64_t>(e.t[i].coeff) * 31u + e.t[i].mono);
  }
  return h;
}
constexpr bool same_params(std::span<const sym_expr> a, std::span<const sym_expr> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

struct canonicalizer {
  const ir& g;
  rewrite rw;
  // The storages the output node's arguments have (a handful): this pass needs only them and the
  // user counts, not a users index (whose lists cost ~0.1 G cc1plus instructions at 250 nodes).
  detail::cvec<std::int32_t> output_storages;
  // Per value id (old nodes, then new ones), sized for both up front and written by index: in
  // constant evaluation an appended element costs 2-4x a written one, and a scatter adds a value or
  // two. A value's layout is that of an old node (layout_id): a G has its scatter's, a re-created
  // view the layout of the inner result it stands for (so no tensor_meta is copied per value).
  detail::cvec<std::int32_t> base, parent, len, users, anchor, layout_id;
  detail::cvec<std::uint64_t> hash;
  detail::cvec<std::uint8_t> out_storage;  // the value's storage reaches the output
  std::size_t capacity = 0;  // of the per-value arrays
  // Scratch shared by all scatters (allocations cost in constant evaluation): the view chain of the
  // G being made, and a one-node graph for view_meta (it names a node in its impossible errors).
  detail::cvec<sym_expr> chain;
  ir scratch;

  constexpr bool is_output_storage(std::int32_t s) const {
    if (s < 0) return false;
    for (const std::int32_t* o = output_storages.begin(); o != output_storages.end(); ++o)
      if (*o == s) return true;
    return false;
  }

  constexpr explicit canonicalizer(const ir& graph) : g(graph), rw(graph) {
    auto n = static_cast<std::size_t>(g.size());
    // Each scatter adds at most a G and a re-created view: room for them up front (a reallocation
    // copies every element so far); G's view chain holds its scatters' parameters plus two per view.
    std::size_t scatters = 0, scatter_params = 0;
    for (const node& x : g.nodes)
      if (is_view_scatter(x.op)) { ++scatters; scatter_params += static_cast<std::size_t>(x.npar) + 2; }
    const std::size_t extra = 2 * scatters + 16;
    rw.reserve_inserts(extra, 2 * extra, 2 * scatter_params + 16);
    // Sized once for the old values and the new ones (add_value), and filled by index.
    size_values(n + extra);
    // Through pointers: a call per element costs as much as the element's work here.
    std::int32_t *b = base.data(), *pa = parent.data(), *us = users.data(), *an = anchor.data(), *li = layout_id.data();
    std::uint8_t* os = out_storage.data();
    const node* nd = g.nodes.data();
    const std::int32_t* args = g.args.data();
    const std::int32_t size = g.size();
    if (const std::int32_t o = g.output_node(); o >= 0)
      for (const std::int32_t *a = args + nd[o].arg0, *e = a + nd[o].nargs; a != e; ++a)
        if (*a >= 0 && *a < size && nd[*a].meta.storage >= 0) output_storages.push_back(nd[*a].meta.storage);
    for (std::int32_t i = 0; i < size; ++i) {
      b[i] = i;
      pa[i] = -1;
      an[i] = i;
      li[i] = i;
      os[i] = is_output_storage(nd[i].meta.storage) ? 1 : 0;
    }
    count_users(g, us);  // the nodes that read each value (users were resized to zeros)
  }

  constexpr void size_values(std::size_t c) {
    capacity = c;
    for (auto* v : {&base, &parent, &len, &users, &anchor, &layout_id}) v->resize(c);
    hash.resize(c);
    out_storage.resize(c);
  }
  constexpr const tensor_meta& layout(std::int32_t v) const { return g.nodes.data()[layout_id.data()[v]].meta; }
  // A new value `id` (the rewrite's next id), placed at `at`, laid out as old node `like`.
  constexpr std::int32_t add_value(std::int32_t id, std::int32_t at, std::int32_t like, bool out) {
    const auto i = static_cast<std::size_t>(id);
    if (i >= capacity) size_values(2 * i + 16);  // (not reached: the constructor counted two per scatter)
    base.data()[i] = id;
    parent.data()[i] = -1;
    len.data()[i] = 0;
    users.data()[i] = 0;
    anchor.data()[i] = anchor.data()[at];
    layout_id.data()[i] = layout_id.data()[like];
    hash.data()[i] = 0;
    out_storage.data()[i] = out ? 1 : 0;
    return id;
  }
  constexpr void record_view(std::int32_t v, std::int32_t a) {
    auto i = static_cast<std::size_t>(v), j = static_cast<std::size_t>(a);
    base[i] = base[j];
    parent[i] = a;
    len[i] = len[j] + 1;
    hash[i] = mix(hash[j], hash_view(rw.op(v), rw.params_of(v)));
  }
  // chain_of[x] == chain_of[y] + [view (k, p)]
  constexpr bool chain_extends(std::int32_t x, std::int32_t y, op_kind k, std::span<const sym_expr> p) const {
    auto xi = static_cast<std::size_t>(x), yi = static_cast<std::size_t>(y);
    if (base[xi] != base[yi] || len[xi] != len[yi] + 1 || parent[xi] < 0) return false;
    if (rw.op(x) != k || !same_params(rw.params_of(x), p)) return false;
    std::int32_t a = parent[xi], b = y;
    if (hash[static_cast<std::size_t>(a)] != hash[yi]) return false;
    for (; a != b; a = parent[static_cast<std::size_t>(a)], b = parent[static_cast<std::size_t>(b)]) {
      if (a < 0 || b < 0) return false;
      if (rw.op(a) != rw.op(b) || !same_params(rw.params_of(a), rw.params_of(b))) return false;
    }
    return true;
  }
  constexpr void drop_uses_of(std::int32_t id) {
    auto a = rw.args_of(id);
    for (std::size_t k = 0; k < a.size(); ++k) {
      bool dup = false;
      for (std::size_t j = 0; j < k; ++j) dup = dup || a[j] == a[k];
      if (a[k] >= 0 && !dup) --users[static_cast<std::size_t>(rw.resolve(a[k]))];
    }
  }
  constexpr void add_use(std::int32_t v) { ++users[static_cast<std::size_t>(v)]; }

  constexpr void scatter(std::int32_t s) {
    const op_kind vk = view_of_scatter(g[s].op);
    auto sp = g.params_of(g[s]);
    std::int32_t inp = rw.resolve(g.arg(s, 0)), src = rw.resolve(g.arg(s, 1));
    node proto = node_like(g, s, op_kind::generalized_scatter);
    proto.require_inplace = g[s].require_inplace;
    proto.required_line = g[s].required_line;
    // G(inp, ...) is clone_meta(inp), as s is: it takes s's metadata and storage (so s's users keep
    // theirs through the rebuild).
    proto.meta = g.meta(s);

    // The chain of the fused G: s's view, then the inner G's chain.
    bool fuse = src >= 0 && rw.op(src) == op_kind::generalized_scatter;
    std::int32_t src_inp = -1, src_src = -1;
    if (fuse) {
      src_inp = rw.resolve(rw.arg(src, 0));
      src_src = rw.resolve(rw.arg(src, 1));
      fuse = chain_extends(src_inp, inp, vk, sp) && anchor[static_cast<std::size_t>(inp)] < anchor[static_cast<std::size_t>(src)];
    }
    const bool src_has_other_users = fuse && users[static_cast<std::size_t>(src)] > 1;
    tensor_meta recreated{};
    if (fuse && src_has_other_users) {
      if (scratch.nodes.empty()) scratch.nodes.resize(1);
      fuse = view_meta(scratch, 0, vk, g.meta(s), sp, recreated) && recreated.same_layout(layout(src)) &&
             !(out_storage[static_cast<std::size_t>(src)] && is_output_storage(g.meta(s).storage));
    }

    // A view in the chain: (kind, count, params...).
    chain.clear();
    chain.push_back(sym_expr(static_cast<index_t>(vk)));
    chain.push_back(sym_expr(static_cast<index_t>(sp.size())));
    if (!fuse) {
      for (const auto& p : sp) chain.push_back(p);
      std::int32_t G = rw.insert_before(s, proto, {inp, src}, chain, true);
      add_value(G, s, s, out_storage[static_cast<std::size_t>(s)] != 0);
      users[static_cast<std::size_t>(G)] = users[static_cast<std::size_t>(s)];
      rw.replace(s, G);
      return;
    }

    // Fused: G(inp, src_src, [sv] + src's chain), placed before the inner G.
    auto inner = rw.params_of(src);
    for (const auto& p : sp) chain.push_back(p);
    for (const auto& p : inner) chain.push_back(p);
    proto.require_inplace = proto.require_inplace || rw.at(src).require_inplace;
    if (proto.required_line == 0) proto.required_line = rw.at(src).required_line;
    std::int32_t G = rw.insert_before(src, proto, {inp, src_src}, chain, true);
    bool g_out = out_storage[static_cast<std::size_t>(s)] != 0 || (src_has_other_users && out_storage[static_cast<std::size_t>(src)]);
    add_value(G, src, s, g_out);
    users[static_cast<std::size_t>(G)] = users[static_cast<std::size_t>(s)];
    add_use(inp);
    add_use(src_src);
    drop_uses_of(s);
    rw.replace(s, G);

    if (src_has_other_users) {
      node vp = node_like(g, s, vk);
      vp.meta = recreated;  // the view of G, whose storage is s's
      std::int32_t v = rw.insert_before(src, vp, {G}, sp, true);
      add_value(v, src, src, g_out);  // recreated has src's layout (checked above)
      record_view(v, G);
      add_use(G);
      users[static_cast<std::size_t>(v)] = users[static_cast<std::size_t>(src)];
      drop_uses_of(src);
      rw.replace(src, v);
    } else {
      drop_uses_of(src);
      rw.erase(src);
    }
  }

  constexpr ir run() && {
    const node* nd = g.nodes.data();
    for (std::int32_t i = 0; i < g.size(); ++i) {
      const op_kind k = nd[i].op;
      if (is_view_op(k)) record_view(i, rw.resolve(g.args.data()[nd[i].arg0]));
      else if (is_view_scatter(k)) scatter(i);
    }
    return static_cast<rewrite&&>(rw).apply();
  }
};

}  // namespace detail

// By value: a graph with nothing to canonicalize is returned by moving it, not copying it (a copy of
// a 1,000-node graph is a measurable part of a compile).
constexpr ir canonicalize_view_scatter_ops(ir g) {
  if (!g.error.ok()) return g;
  bool any = false;  // nothing to canonicalize: the graph as it is (no users index, no rebuild)
  for (const auto& nd : g.nodes) any = any || is_view_scatter(nd.op);
  if (!any) return g;
  return detail::canonicalizer(g).run();
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
