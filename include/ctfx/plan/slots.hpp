// ctfx/plan/slots.hpp — the memory slots a program lays out, and the blocks its arena packs.
//
// A slot holds one buffer, or several along plan/reuse.hpp's reuse lines (a buffer taking the
// memory of one that died before it); an output computed straight in the caller's buffer
// (plan/outputs.hpp) gets none, nor do the buffers whose memory it takes along the reuse lines,
// which live in the caller's buffer before it (caller_held_buffers). The arena (plan/arena.hpp)
// then packs the slots, not the buffers: a slot keeps Inductor's reuse (an elementwise result taking the memory of an input that dies at
// its step, at the same offset), and the arena overlaps slots whose lives do not meet. Packing the
// buffers directly could shift such a result against its input and clobber elements not yet read.
//
// Constant-evaluable: the executor computes these when a program is made, and compiled<G> in the
// compiler, so that its arena is planned there (exec/compiled.hpp).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include <vector>
#include "../analysis/liveness.hpp"
#include "arena.hpp"
#include "outputs.hpp"
#include "reuse.hpp"

namespace ctfx {

struct slot_plan {
  std::vector<sym_expr> bytes;               // per slot: its size
  std::vector<std::int32_t> slot_of_buffer;  // per liveness buffer: its slot, or -1 (in the caller's buffer)
  std::vector<std::int32_t> output_of_buffer;  // per liveness buffer: the output whose caller buffer holds it, or -1
};

// `reuse`: the reuse lines to follow (null: one slot per buffer); `direct_storage`: the storages
// of outputs computed in the caller's buffers (-1 entries ignored).
constexpr slot_plan plan_slots(const liveness& life, const reuse_plan* reuse, std::span<const std::int32_t> direct_storage) {
  slot_plan p;
  const std::size_t nb = life.buffers.size();
  p.slot_of_buffer.assign(nb, -1);
  const detail::cvec<std::int32_t> reuses = reuse_sources(reuse, nb);  // per buffer: the buffer whose memory it takes
  const detail::cvec<std::int32_t> held = caller_held_buffers(life, reuse, direct_storage);
  p.output_of_buffer.assign(held.begin(), held.end());
  for (std::size_t bi = 0; bi < nb; ++bi) {
    if (held[bi] >= 0) continue;
    const std::int32_t from = reuses[bi];
    if (from >= 0 && p.slot_of_buffer[static_cast<std::size_t>(from)] >= 0) {
      const auto s = static_cast<std::size_t>(p.slot_of_buffer[static_cast<std::size_t>(from)]);
      p.slot_of_buffer[bi] = static_cast<std::int32_t>(s);
      // Reuse keys are equal sizes; keep the larger expression anyway if they are written apart.
      if (!(p.bytes[s] == life.buffers[bi].bytes) && known_le(p.bytes[s], life.buffers[bi].bytes)) p.bytes[s] = life.buffers[bi].bytes;
    } else {
      p.slot_of_buffer[bi] = static_cast<std::int32_t>(p.bytes.size());
      p.bytes.push_back(life.buffers[bi].bytes);
    }
  }
  return p;
}

// The lives of the slots, as liveness buffers (one per slot, in slot order): what the arena packs.
// A slot lives from its first buffer's defining step (a block starts there, never at the half
// step where a reusing result may begin) to its last buffer's end.
constexpr liveness slot_liveness(const liveness& life, const slot_plan& p) {
  liveness SL = life;
  SL.buffers.assign(p.bytes.size(), buffer_life{});
  std::vector<std::uint8_t> seen(p.bytes.size(), 0);
  for (std::size_t bi = 0; bi < life.buffers.size(); ++bi) {
    if (p.slot_of_buffer[bi] < 0) continue;  // an output in the caller's buffer
    const auto& b = life.buffers[bi];
    const auto k = static_cast<std::size_t>(p.slot_of_buffer[bi]);
    auto& t = SL.buffers[k];
    const std::int64_t begin = 2 * static_cast<std::int64_t>(b.def_step);
    if (!seen[k]) {
      t = b;
      t.begin = begin;
      t.bytes = p.bytes[k];
      seen[k] = 1;
    } else {
      t.begin = t.begin < begin ? t.begin : begin;
      t.end = t.end > b.end ? t.end : b.end;
      t.def_step = t.def_step < b.def_step ? t.def_step : b.def_step;
      t.last_step = t.last_step > b.last_step ? t.last_step : b.last_step;
      t.is_output = t.is_output || b.is_output;
      t.unbacked = t.unbacked || b.unbacked;
      t.crosses_partition = t.crosses_partition || b.crosses_partition;
    }
  }
  for (std::size_t bi = 0; bi < life.buffers.size(); ++bi)
    SL.buffer_of[static_cast<std::size_t>(life.buffers[bi].storage)] = p.slot_of_buffer[bi];
  return SL;
}

// The first pool of `A` (an arena of the slots SL) where two live slots of static size share bytes,
// or -1: the plan's own check, made wherever it is planned (a planner bug otherwise).
constexpr std::int32_t arena_overlap(const arena_plan& A, const liveness& SL) {
  for (std::size_t p = 0; p < A.pools.size(); ++p) {
    std::vector<arena_block> blocks;
    std::vector<std::int64_t> off;
    for (std::size_t k = 0; k < SL.buffers.size(); ++k) {
      const auto& sl = A.slots[k];
      const auto& bl = SL.buffers[k];
      if (sl.pool != static_cast<std::int32_t>(p) || sl.lane >= 0 || !bl.bytes.is_static()) continue;
      blocks.push_back({bl.begin, bl.end, bl.bytes.value(), 1});
      off.push_back(sl.offset);
    }
    if (!arena_check(blocks, off).ok()) return static_cast<std::int32_t>(p);
  }
  return -1;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
