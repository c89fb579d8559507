// ctfx/plan/arena_gen.hpp — instances with a known optimum for the arena planner (arena.hpp): a
// time × memory rectangle cut at random into blocks (guillotine cuts). The blocks tile the
// rectangle, so at every step their sizes add up to its height: the lower bound — and the optimum —
// is the height, and any plan above it has left a gap. Greedy orders do not find these tilings
// (greedy by size plans them 1.3–1.4 × the optimum); they test the search.
//
// Generation: start from the whole rectangle; until there are `blocks` pieces, pick a piece with
// probability proportional to its area (so pieces stay of comparable size, as the minimalloc
// benchmark's do) and cut it in time or in memory (each with probability 1/2 when both are
// possible) at a uniformly random point of the grid: `step` in time, `granule` bytes in memory.
// Pieces that cannot be cut in either direction are never picked. O(blocks²), constexpr.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <vector>
#include "arena.hpp"  // arena_block, detail::splitmix

namespace ctfx {

struct exact_packing_options {
  std::int32_t blocks = 400;
  std::int64_t steps = 2000;        // time: [0, steps)
  std::int64_t bytes = 1 << 20;     // memory: [0, bytes), the optimum
  std::int64_t granule = 1024;      // cuts in memory at multiples of this (bytes % granule == 0)
};

constexpr std::vector<arena_block> exact_packing(std::uint64_t seed, exact_packing_options o = {}) {
  struct piece { std::int64_t t0, t1, o0, o1; };
  std::vector<piece> p;
  p.push_back({0, o.steps, 0, o.bytes});
  detail::splitmix rng{seed};
  while (static_cast<std::int32_t>(p.size()) < o.blocks) {
    // Area-weighted pick among the pieces that can be cut (area in steps × granules).
    std::int64_t total = 0;
    auto weight = [&](const piece& x) {
      const std::int64_t w = x.t1 - x.t0, h = (x.o1 - x.o0) / o.granule;
      return (w >= 2 || h >= 2) ? w * h : 0;
    };
    for (const auto& x : p) total += weight(x);
    if (total == 0) break;  // every piece is one step × one granule
    std::int64_t pick = rng.below(total);
    std::size_t k = 0;
    while (pick >= weight(p[k])) { pick -= weight(p[k]); ++k; }
    const piece x = p[k];
    const std::int64_t w = x.t1 - x.t0, h = (x.o1 - x.o0) / o.granule;
    const bool in_time = h < 2 || (w >= 2 && rng.below(2) == 0);
    if (in_time) {
      const std::int64_t t = x.t0 + 1 + rng.below(w - 1);
      p[k] = {x.t0, t, x.o0, x.o1};
      p.push_back({t, x.t1, x.o0, x.o1});
    } else {
      const std::int64_t c = x.o0 + (1 + rng.below(h - 1)) * o.granule;
      p[k] = {x.t0, x.t1, x.o0, c};
      p.push_back({x.t0, x.t1, c, x.o1});
    }
  }
  std::vector<arena_block> b;
  b.reserve(p.size());
  for (const auto& x : p) b.push_back({x.t0, x.t1, x.o1 - x.o0, 1});
  return b;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
