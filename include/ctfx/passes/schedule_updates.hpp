// ctfx/passes/schedule_updates.hpp — write-backs scheduled where their value is computed, so that
// the value is computed straight into the caller's buffer even when other nodes read it too.
//
// An `update(x, v)` reaches the passes as the epilogue `copy_(x, v)` at the end of the program.
// When v has readers besides that copy_ (an optimizer's new momentum, read by the parameter's step
// and written back), fusion cannot compute v inside the copy_'s kernel, so v gets a buffer of x's
// size and the copy_ costs one more pass over memory. This pass moves the copy_ to just after v
// and lets v's other readers read x instead (the copy_'s result):
//
//   buf = add(mul(m, 0.9), g)            copy_ = copy_(m, add(mul(m, 0.9), g))   # one kernel, into m
//   p2  = sub(p, mul(buf, 0.01))   ->    p2    = sub(p, mul(copy_, 0.01))        # reads m
//   copy_(m, buf); copy_(p, p2)          copy_(p, p2)                            # fused into its value
//
// Legal when (each checked, otherwise the graph is left as it is):
//   - x is a graph input of v's dtype and layout (the readers see the same values, in the same
//     places, at the same addresses relative to the tensor), and v is an elementwise value (the
//     only kind fusion computes into a copy_; the others keep their buffer whatever the order);
//   - v's other readers compute (no view, no output: a view or a result of x would make the program
//     return or keep an alias of a caller's buffer it did not have), and nothing writes v;
//   - between v and the copy_, no node reads x (it would now see the new value) or writes x, and
//     none is a user op, a collective or an index op (validate before mutate: the write into the
//     caller's buffer does not move ahead of anything that can fail a run-time check, or of what
//     other ranks must agree on first); readers after the copy_ come before the next write into x.
// The plan then no longer depends on the order of independent `update` calls: each write-back sits
// where its value is computed.
//
// Linear in nodes + edges, plus a binary search per check (N log N).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include "../analysis/order.hpp"
#include "rewrite.hpp"

namespace ctfx {

namespace detail {
// Nodes a caller-buffer write may not move ahead of (they can fail a run-time check, or other ranks
// take part in them), or that may touch more memory than they declare.
constexpr bool pins_updates(op_kind k) {
  return k == op_kind::custom || k == op_kind::auto_functionalized || facts(k).family == op_family::collective || is_index_op(k) ||
         is_control_op(k);  // a subgraph's plan can fail at run time
}
}  // namespace detail

/// The pass (see the header's comment); `moved` is set when it moved a write-back.
constexpr ir schedule_updates_moved(ir g, bool& moved) {
  moved = false;
  if (!g.error.ok()) return g;
  const std::int32_t n = g.size();
  const auto N = static_cast<std::size_t>(n);
  // Candidates first (most graphs have none: they are returned untouched, with no analysis).
  bool any = false;
  detail::cvec<std::int32_t> uses(N, 0);
  for (std::int32_t i = 0; i < n; ++i)
    for (auto a : g.args_of(i))
      if (a >= 0) ++uses[static_cast<std::size_t>(a)];
  for (std::int32_t c = 0; c < n && !any; ++c) {
    if (g[c].op != op_kind::copy_ || g[c].nargs != 2) continue;
    const std::int32_t v = g.arg(c, 1);
    any = v >= 0 && uses[static_cast<std::size_t>(v)] > 1 && is_fusible_elementwise(g[v].op);
  }
  if (!any) return g;
  // Per storage, the nodes that read it (their positions, in order), and the nodes that write it.
  std::int32_t ns = g.next_storage;
  for (std::int32_t i = 0; i < n; ++i) ns = g[i].meta.storage >= ns ? g[i].meta.storage + 1 : ns;
  detail::cvec<std::int32_t> roff(static_cast<std::size_t>(ns) + 2, 0), rat;
  auto for_each_read = [&](std::int32_t i, auto&& f) {
    if (is_view_op(g[i].op) || g[i].op == op_kind::getitem || g[i].op == op_kind::sym_size || g[i].op == op_kind::placeholder) return;
    for (auto a : g.args_of(i))
      if (a >= 0 && g.meta(a).storage >= 0) f(g.meta(a).storage);
  };
  for (std::int32_t i = 0; i < n; ++i) for_each_read(i, [&](std::int32_t s) { ++roff[static_cast<std::size_t>(s) + 2]; });
  for (std::size_t s = 2; s < roff.size(); ++s) roff[s] += roff[s - 1];
  rat.assign(static_cast<std::size_t>(roff[roff.size() - 1]), 0);
  for (std::int32_t i = 0; i < n; ++i)
    for_each_read(i, [&](std::int32_t s) { rat[static_cast<std::size_t>(roff[static_cast<std::size_t>(s) + 1]++)] = i; });
  auto read_between = [&](std::int32_t s, std::int32_t lo, std::int32_t hi) {  // strictly between
    std::int32_t b = roff[static_cast<std::size_t>(s)], e = roff[static_cast<std::size_t>(s) + 1];
    const std::int32_t end = e;
    while (b < e) {
      const std::int32_t mid = b + (e - b) / 2;
      if (rat[static_cast<std::size_t>(mid)] <= lo) b = mid + 1;
      else e = mid;
    }
    return b < end && rat[static_cast<std::size_t>(b)] < hi;
  };
  const write_positions writes(g);
  detail::cvec<std::int32_t> pinned(N + 1, 0);  // prefix counts of detail::pins_updates
  for (std::int32_t i = 0; i < n; ++i)
    pinned[static_cast<std::size_t>(i) + 1] = pinned[static_cast<std::size_t>(i)] + (detail::pins_updates(g[i].op) ? 1 : 0);
  // The readers of each node (CSR).
  detail::cvec<std::int32_t> uoff(N + 1, 0), uat(static_cast<std::size_t>(g.args.size()), 0);
  for (std::int32_t i = 0; i < n; ++i) uoff[static_cast<std::size_t>(i) + 1] = uoff[static_cast<std::size_t>(i)] + uses[static_cast<std::size_t>(i)];
  {
    detail::cvec<std::int32_t> fill(N, 0);
    for (std::size_t i = 0; i < N; ++i) fill[i] = uoff[i];
    for (std::int32_t i = 0; i < n; ++i)
      for (auto a : g.args_of(i))
        if (a >= 0) uat[static_cast<std::size_t>(fill[static_cast<std::size_t>(a)]++)] = i;
  }
  // to[v] = c: copy_ c moves to just after v, and v's other readers read c.
  detail::cvec<std::int32_t> to(N, -1), after(N, -1);
  bool moves = false;
  for (std::int32_t c = 0; c < n; ++c) {
    if (g[c].op != op_kind::copy_ || g[c].nargs != 2) continue;
    const std::int32_t x = g.arg(c, 0), v = g.arg(c, 1);
    if (x < 0 || v <= x || g[x].op != op_kind::placeholder || to[static_cast<std::size_t>(v)] >= 0) continue;
    const node& vn = g[v];
    const tensor_meta &xm = g[x].meta, &vm = vn.meta;
    if (uses[static_cast<std::size_t>(v)] < 2 || !is_fusible_elementwise(vn.op) || !vm.is_tensor() || !xm.is_tensor()) continue;
    if (!vm.same_layout(xm) || vm.storage == xm.storage || xm.storage < 0 || vn.partition != g[c].partition) continue;
    const std::int32_t xs = xm.storage;
    // Between v and c: nothing reads or writes x, nothing pins the write, one partition.
    bool ok = !read_between(xs, v, c) && !writes.written_between(xs, v, c) && !writes.written_between(vm.storage, v, n) &&
              pinned[static_cast<std::size_t>(c)] == pinned[static_cast<std::size_t>(v) + 1];
    for (std::int32_t q = v + 1; ok && q < c; ++q) ok = g[q].partition == vn.partition;
    // v's other readers compute, and see x before its next write.
    for (std::int32_t k = uoff[static_cast<std::size_t>(v)]; ok && k < uoff[static_cast<std::size_t>(v) + 1]; ++k) {
      const std::int32_t r = uat[static_cast<std::size_t>(k)];
      if (r == c) continue;
      const op_kind rk = g[r].op;
      ok = !is_view_op(rk) && rk != op_kind::output && rk != op_kind::getitem && rk != op_kind::sym_size &&
           !(is_mutating(rk) && g.arg(r, 0) == v) && (r < c || !writes.written_between(xs, c, r));
    }
    if (!ok) continue;
    to[static_cast<std::size_t>(v)] = c;
    after[static_cast<std::size_t>(c)] = v;
    moves = true;
  }
  if (!moves) return g;
  // The new order: each moved copy_ right after its value; the others as they were.
  detail::cvec<std::int32_t> pos(N, -1);
  std::int32_t* ps = pos.data();
  rebuilder rb(g);
  auto place = [&](std::int32_t i) {
    ps[i] = rb.copy(i, [&](std::int32_t a) {
      const std::int32_t c = to[static_cast<std::size_t>(a)];
      return c >= 0 && c != i ? ps[c] : ps[a];
    });
  };
  for (std::int32_t i = 0; i < n; ++i) {
    if (after[static_cast<std::size_t>(i)] >= 0) continue;  // placed after its value
    place(i);
    if (const std::int32_t c = to[static_cast<std::size_t>(i)]; c >= 0) place(c);
  }
  moved = true;
  return static_cast<rebuilder&&>(rb).finish();
}

/// The pass, as a pipeline stage: write-backs moved to where their value is computed.
constexpr ir schedule_updates(ir g) {
  bool moved = false;
  return schedule_updates_moved(static_cast<ir&&>(g), moved);
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
