// ctfx/plan/outputs.hpp — which graph outputs are computed straight into the caller's output
// buffer, so that they need no planned memory and no copy at the end.
//
// An output qualifies when its node holds a whole fresh buffer, dense from offset 0, and is returned
// once — then the buffer *is* the caller's (a dense caller buffer; a strided one gets a temporary,
// see exec/program.hpp). Not when the graph checks indices it computes itself: those checks run when
// the indices are computed, and an output written before a failing check would break
// validate-before-mutate. The same function serves compiled<G>::static_buffer_bytes (in the
// compiler) and the executors, so both agree on the planned bytes.
//
// Such an output's buffer also holds, before it, the buffers whose memory the output takes along
// plan/reuse.hpp's reuse lines: an elementwise output taking the memory of an input read at the
// index it writes and dying there (softmax's exp(x - max), divided in place into the caller's
// buffer), and so on back along the chain, as the hand-written loop keeps exp in the output. The
// caller's buffer is written first when the earliest of them is computed: first_caller_output_step.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include "../analysis/liveness.hpp"
#include "../detail/cvec.hpp"
#include "reuse.hpp"

namespace ctfx {

namespace detail {
// True when every index tensor of every index_put and index is a graph input that no earlier node writes
// (so every index is checked before the first write of a run).
constexpr bool indices_are_inputs(const ir& g) {
  detail::cvec<std::uint8_t> input(static_cast<std::size_t>(g.next_storage), 0), written(static_cast<std::size_t>(g.next_storage), 0);
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == op_kind::placeholder && g[i].meta.is_tensor()) input[static_cast<std::size_t>(g[i].meta.storage)] = 1;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    if (is_index_op(n.op))
      for (std::int32_t k = first_index_arg(n.op); k < n.nargs; ++k) {
        const std::int32_t x = g.arg(i, k);
        if (x < 0 || g.meta(x).dt == dtype::b8) continue;  // a mask has no values to check
        const auto s = static_cast<std::size_t>(g.meta(x).storage);
        if (!input[s] || written[s]) return false;
      }
    if (is_mutating(n.op)) {
      if (is_list_op(n.op))
        for (std::int32_t k = 0; k < n.aux; ++k) written[static_cast<std::size_t>(g.meta(g.arg(i, k)).storage)] = 1;
      else
        written[static_cast<std::size_t>(g.meta(g.arg(i, 0)).storage)] = 1;
    } else if (n.op == op_kind::custom || n.op == op_kind::auto_functionalized) {
      for (std::int32_t k = 0; k < n.nargs; ++k)
        if (g.arg(i, k) >= 0 && g.meta(g.arg(i, k)).is_tensor()) written[static_cast<std::size_t>(g.meta(g.arg(i, k)).storage)] = 1;
    }
  }
  return true;
}
}  // namespace detail

// Per output position (the output node's tensor arguments, in order): the storage computed in the
// caller's buffer, or -1.
constexpr detail::cvec<std::int32_t> direct_outputs(const ir& g, const liveness& L) {
  detail::cvec<std::int32_t> outs;
  const std::int32_t o = g.output_node();
  if (o < 0) return outs;
  for (auto a : g.args_of(o))
    if (a >= 0 && g.meta(a).is_tensor()) outs.push_back(a);
  detail::cvec<std::int32_t> direct(outs.size(), -1);
  if (!detail::indices_are_inputs(g)) return direct;
  for (std::size_t j = 0; j < outs.size(); ++j) {
    const tensor_meta& m = g.meta(outs[j]);
    const auto s = static_cast<std::size_t>(m.storage);
    const std::int32_t bi = L.buffer_of[s];
    if (bi < 0 || !m.is_contiguous() || !(m.offset == sym_expr(0))) continue;
    if (!(L.buffers[static_cast<std::size_t>(bi)].bytes == storage_bytes(m))) continue;
    bool once = true;
    for (std::size_t k = 0; k < outs.size(); ++k)
      if (k != j && g.meta(outs[k]).storage == m.storage) once = false;
    if (once) direct[j] = m.storage;
  }
  return direct;
}

// Per liveness buffer: the output position whose caller buffer holds it, or -1. `direct`: per
// output position, the storage computed in the caller's buffer (direct_outputs), or -1; `reuse`:
// the reuse lines followed (null: none). A freed buffer is taken at most once and an output is
// never freed, so the buffers an output's memory held before it form one chain, walked back.
constexpr detail::cvec<std::int32_t> caller_held_buffers(const liveness& L, const reuse_plan* reuse, std::span<const std::int32_t> direct) {
  const std::size_t nb = L.buffers.size();
  detail::cvec<std::int32_t> held(nb, -1);
  const detail::cvec<std::int32_t> from = reuse_sources(reuse, nb);
  for (std::size_t j = 0; j < direct.size(); ++j) {
    if (direct[j] < 0) continue;
    for (std::int32_t b = L.buffer_of[static_cast<std::size_t>(direct[j])]; b >= 0 && held[static_cast<std::size_t>(b)] < 0; b = from[static_cast<std::size_t>(b)])
      held[static_cast<std::size_t>(b)] = static_cast<std::int32_t>(j);
  }
  return held;
}

// The first step that computes a buffer held in a caller's output buffer (caller_held_buffers), or
// -1: from there on a failed check would leave a caller's buffer written.
constexpr std::int32_t first_caller_output_step(const liveness& L, std::span<const std::int32_t> held) {
  std::int32_t first = -1;
  for (std::size_t b = 0; b < held.size(); ++b)
    if (held[b] >= 0 && (first < 0 || L.buffers[b].def_step < first)) first = L.buffers[b].def_step;
  return first;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
