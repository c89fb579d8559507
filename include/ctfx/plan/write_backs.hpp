// ctfx/plan/write_backs.hpp — what a plan does with each write-back, and which nodes hold buffers:
// the facts behind `compiled<G>::report.all_inplace()` and `compiled<G>::require_no_buffers()`.
//
// An `update(x, v)` is a copy_ of v into the graph input x. After the passes and fusion it costs
// nothing more than v's own kernel when v is computed straight into x (fused into the copy_, or
// scheduled there by passes/schedule_updates.hpp), or when v has no buffer (an input, a view); it
// costs a buffer of v's size and one more pass over memory otherwise. Each write-back is one
// candidate of the report, "reinplaced" in the first case and named with the reason otherwise:
//   update-shared-value  v has another reader that cannot read x instead (a view of v, an output,
//                        a read of x's old value before the write: passes/schedule_updates.hpp)
//   update-not-fusible   v is computed by an op fusion does not compute into a copy_ (a reduction,
//                        an index op, a cat, a user op, a collective)
//   update-fusion-rule   fusion's writer-index-map (v's kernel reads x through another index map:
//                        a stencil) or no-write-between rule keeps v in a buffer
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include "../analysis/liveness.hpp"
#include "../ops/meta_util.hpp"
#include "../passes/report.hpp"
#include "fusion.hpp"
#include "outputs.hpp"

namespace ctfx {

/// The graph input whose storage node c (a copy_) writes, or -1: c is then not a write-back.
constexpr std::int32_t write_back_input(const ir& g, std::int32_t c) {
  const node& n = g[c];
  if (n.op != op_kind::copy_ || n.nargs != 2 || g.arg(c, 0) < 0) return -1;
  const std::int32_t s = g.meta(g.arg(c, 0)).storage;
  for (std::int32_t i = 0; i < g.size() && s >= 0; ++i)
    if (g[i].op == op_kind::placeholder && g[i].meta.storage == s) return i;
  return -1;
}

/// The number of write-backs of graph g.
constexpr std::size_t count_write_backs(const ir& g) {
  std::size_t n = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) n += g[i].op == op_kind::copy_ && write_back_input(g, i) >= 0;
  return n;
}

/// Calls f(candidate) for each write-back of g (optimized), in program order, as fusion `roots` (null: none) and
/// the lifetimes L (compute_liveness with those roots) run it; `caller_held`: per buffer of L, the
/// output whose caller buffer holds it, or -1 (plan/outputs.hpp's caller_held_buffers).
template <class F>
constexpr void for_each_write_back(const ir& g, const std::int32_t* roots, const liveness& L, std::span<const std::int32_t> caller_held, F&& f) {
  detail::cvec<std::int32_t> uses(static_cast<std::size_t>(g.size()), 0), other(static_cast<std::size_t>(g.size()), -1);
  for (std::int32_t i = 0; i < g.size(); ++i)
    for (auto a : g.args_of(i))
      if (a >= 0) ++uses[static_cast<std::size_t>(a)];
  for (std::int32_t c = 0; c < g.size(); ++c) {
    const std::int32_t x = g[c].op == op_kind::copy_ ? write_back_input(g, c) : -1;
    if (x < 0) continue;
    const std::int32_t v = g.arg(c, 1);
    reinplace_candidate k;
    k.node = c;
    k.name = g[c].name;
    k.op = op_kind::copy_;
    k.arg_name = g[x].name;
    k.trigger = reinplace_trigger::aten;
    const tensor_meta& vm = g.meta(v);
    const std::int32_t s = vm.storage;
    const std::int32_t b = s >= 0 && static_cast<std::size_t>(s) < L.buffer_of.size() ? L.buffer_of[static_cast<std::size_t>(s)] : -1;
    const bool buffered = !(roots && roots[v] == c) && b >= 0 && caller_held[static_cast<std::size_t>(b)] < 0;
    k.bytes = storage_bytes(vm);  // what the copy costs when the value has a buffer
    k.static_bytes = k.bytes.n == 0 && !k.bytes.overflow ? k.bytes.c : 0;
    k.reinplaced = !buffered;
    if (buffered) {
      if (uses[static_cast<std::size_t>(v)] > 1) {
        k.why = reinplace_reason::update_shared_value;
        for (std::int32_t r = v + 1; r < g.size() && k.blocker < 0; ++r)
          for (auto a : g.args_of(r))
            if (a == v && r != c) k.blocker = r;
      } else {
        k.why = is_fusible_elementwise(g[v].op) ? reinplace_reason::update_fusion_rule : reinplace_reason::update_not_fusible;
        k.blocker = v;
      }
      if (k.blocker >= 0) k.blocker_name = g[k.blocker].name;
    }
    f(k);
  }
}

/// The planned buffers' holders as a diagnostic (rule no-planned-buffers) naming each node that
/// holds one and its bytes, the largest first; ok() when the plan holds none. `slot_bytes`: the
/// total the plan lays out (compiled<G>::static_buffer_bytes()); `caller_held` as above.
constexpr diagnostic buffer_holders(const ir& g, const liveness& L, std::size_t slot_bytes, std::span<const std::int32_t> caller_held) {
  if (slot_bytes == 0) return {};
  detail::cvec<std::int32_t> held;
  for (std::size_t k = 0; k < L.buffers.size(); ++k) {
    const buffer_life& b = L.buffers[k];
    if (b.node < 0 || caller_held[k] >= 0) continue;
    held.push_back(static_cast<std::int32_t>(k));
  }
  for (std::size_t i = 1; i < held.size(); ++i)  // largest first (insertion sort: the message lists a few)
    for (std::size_t j = i; j > 0; --j) {
      const index_t a = L.buffers[static_cast<std::size_t>(held[j - 1])].bytes.value(), c = L.buffers[static_cast<std::size_t>(held[j])].bytes.value();
      if (a >= c) break;
      const std::int32_t t = held[j - 1];
      held[j - 1] = held[j];
      held[j] = t;
    }
  const std::int32_t first = held.empty() ? -1 : L.buffers[static_cast<std::size_t>(held[0])].node;
  detail::msg m = first >= 0 ? detail::about(g, first) : detail::msg{};
  m << "holds a planned buffer";
  if (first >= 0) m << " of " << static_cast<long long>(L.buffers[static_cast<std::size_t>(held[0])].bytes.value()) << " bytes";
  m << "; the plan lays out " << static_cast<long long>(slot_bytes) << " bytes in " << static_cast<long long>(held.size()) << " buffers";
  for (std::size_t k = 1; k < held.size() && k < 4; ++k) {
    const buffer_life& b = L.buffers[static_cast<std::size_t>(held[k])];
    m << (k == 1 ? " (also '" : ", '") << g[b.node].name.view() << "' " << static_cast<long long>(b.bytes.value());
  }
  if (held.size() > 1) m << (held.size() > 4 ? ", ...)" : ")");
  ir tmp;
  detail::fail(tmp, first, rule::planned_buffers, m);
  return tmp.error;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
