// ctfx/passes/remove_noop_ops.hpp — replace no-op calls by their source (Inductor's post-grad
// remove_noop_ops, A.3 of the reference), made sound where Inductor is not.
//
// One program-order sweep builds the new graph. Each node is copied with its arguments already
// replaced, then asked of the registry (passes/noop_rules.hpp); it is dropped in favour of its
// source `src` only if
//   1. same metadata: dtype, sizes, strides and the storage offset (tensor_meta::same_layout;
//      Inductor ignores the offset: pytorch#197489);
//   2. guard 1 (no new input/output or output/output aliasing): a node that is a fresh result in an
//      output storage is not replaced by a source in an input or output storage
//      (`f(x) = x.clone()`, `y = x.clone(); x.copy_(y); return y` keep their clones; `return x + 0`
//      stays a fresh tensor, pytorch#197893). The output storages grow as outputs are redirected, so
//      `return (t.clone(), t.clone())` keeps one clone (Inductor computes them once);
//   3. guard 2: a view that is itself an output is not replaced by an input or another output;
//   4. a fresh copy (not a view) of a graph input that the program writes (copy_ epilogue) is kept,
//      as Inductor keeps every such copy of a mutated storage (pytorch#198131: `dst[:] = src[:];
//      src.add_(1)` must not copy the updated src; `x.index_put_((i,), x[0:2].clone())` keeps its
//      2-row clone, without which reinplacing sees the values read x and copies all of x). One
//      exception, where ctfx drops more than Inductor: a copy whose every use (through views) is the
//      tensor a scatter or index_put updates (argument 0) is never read as a value, and reinplacing
//      decides whether that update may run in x; so the traced `y = x.clone(); y[0:2] = s;
//      x.copy_(y)` still loses its clone and runs in place.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "../analysis/users.hpp"
#include "inplace_tables.hpp"
#include "noop_rules.hpp"
#include "rewrite.hpp"

namespace ctfx {

// By value, so that a graph without no-ops is moved through, not copied.
template <class Rules>
constexpr ir remove_noop_ops_with(ir g) {
  if (!g.error.ok()) return g;
  // No node is a no-op candidate in g as it is: then none is in the rebuilt graph either (with no
  // node dropped it is g, node for node, and a rule looks at its node and earlier ones), so g is the
  // result — no users index, no rebuild.
  bool any = false;
  for (std::int32_t i = 0; i < g.size() && !any; ++i) {
    if (!Rules::has(g[i].op)) continue;
    const int k = Rules::match(g, i);
    if (k < 0 || k >= g[i].nargs) continue;
    const std::int32_t src = g.arg(i, k);
    any = src >= 0 && g.meta(i).is_tensor() && g.meta(src).is_tensor() && g.meta(i).same_layout(g.meta(src));
  }
  if (!any) return g;
  const users_index u = users_of(g);
  rebuilder rb(g);

  // Storage facts. Storage ids do not change in this pass (it creates no tensor).
  std::size_t ns = u.storage_flags.size();
  detail::cvec<std::uint8_t> out_storage, written_input;
  out_storage.resize(ns);
  written_input.resize(ns);
  for (std::size_t s = 0; s < ns; ++s) out_storage[s] = u.is_output_storage(static_cast<std::int32_t>(s)) ? 1 : 0;
  for (const auto& nd : g.nodes)
    if (nd.op == op_kind::copy_) {
      std::int32_t s = g.meta(g.args[static_cast<std::size_t>(nd.arg0)]).storage;
      if (s >= 0 && u.is_input_storage(s)) written_input[static_cast<std::size_t>(s)] = 1;
    }
  // Per old node: every use, through views, is argument 0 of a functional scatter or index_put
  // (the tensor it updates), and there is at least one. One reverse sweep over the users.
  detail::cvec<std::uint8_t> base_only(static_cast<std::size_t>(g.size()));
  for (std::int32_t i = g.size() - 1; i >= 0; --i) {
    bool ok = u.count(i) > 0;
    for (std::int32_t user : u.of(i)) {
      const op_kind k = g[user].op;
      if (is_meta_only(k)) continue;
      if (is_view_op(k) && g.arg(user, 0) == i && base_only[static_cast<std::size_t>(user)]) continue;
      const op_family f = facts(k).family;
      const bool updates = (f == op_family::scatter || f == op_family::index) && !is_index_read(k) && !is_mutating(k);
      auto a = g.args_of(user);
      for (std::size_t j = 0; j < a.size() && updates; ++j)
        if (a[j] == i && j != 0) ok = false;
      if (!updates) ok = false;
      if (!ok) break;
    }
    base_only[static_cast<std::size_t>(i)] = ok ? 1 : 0;
  }
  auto flag = [](const detail::cvec<std::uint8_t>& v, std::int32_t s) {
    return s >= 0 && static_cast<std::size_t>(s) < v.size() && v[static_cast<std::size_t>(s)] != 0;
  };

  detail::cvec<std::int32_t> map;       // old id -> new id
  detail::cvec<std::uint8_t> is_output;  // new id -> an argument of the output node
  map.reserve(static_cast<std::size_t>(g.size()));
  is_output.reserve(static_cast<std::size_t>(g.size()));
  auto mapped = [&](std::int32_t a) { return map[static_cast<std::size_t>(a)]; };

  for (std::int32_t i = 0; i < g.size(); ++i) {
    std::int32_t id = rb.copy(i, mapped);
    is_output.push_back(u.is_output(i) ? 1 : 0);
    map.push_back(id);
    if (!rb.out.error.ok()) break;
    const ir& h = rb.out;
    if (!Rules::has(h[id].op)) continue;
    int k = Rules::match(h, id);
    if (k < 0 || k >= h[id].nargs) continue;
    std::int32_t src = h.arg(id, k);
    if (src < 0) continue;
    const tensor_meta& m = h.meta(id);
    const tensor_meta& sm = h.meta(src);
    if (!m.is_tensor() || !sm.is_tensor() || !m.same_layout(sm)) continue;
    const bool node_is_view = m.storage == sm.storage;
    const bool src_is_input = h[src].op == op_kind::placeholder;
    if (!node_is_view && flag(out_storage, m.storage) &&
        (u.is_input_storage(sm.storage) || flag(out_storage, sm.storage)))
      continue;  // guard 1
    if (node_is_view && is_output[static_cast<std::size_t>(id)] &&
        (src_is_input || is_output[static_cast<std::size_t>(src)]))
      continue;  // guard 2
    if (!node_is_view && flag(written_input, sm.storage) && !base_only[static_cast<std::size_t>(i)])
      continue;  // a copy of a written input (pytorch#198131)
    // Replace: the uses of node i read src; src inherits what node i was to the output.
    if (flag(out_storage, m.storage) && sm.storage >= 0) out_storage[static_cast<std::size_t>(sm.storage)] = 1;
    if (is_output[static_cast<std::size_t>(id)]) is_output[static_cast<std::size_t>(src)] = 1;
    rb.drop_last();
    is_output.pop_back();
    map.back() = src;
  }
  return static_cast<rebuilder&&>(rb).finish();
}

// The pass with Inductor's registry (usable as ctfx::stage<G, &ctfx::remove_noop_ops>).
constexpr ir remove_noop_ops(ir g) { return remove_noop_ops_with<builtin_noop_rules>(static_cast<ir&&>(g)); }

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
