// ctfx/plan/arena_search.hpp — exact search for the pooled-arena planner (arena.hpp): a bounded
// branch and bound in the style of MiniMalloc (Moffitt, ASPLOS 2023), which decides whether the
// blocks fit in a pool of `cap` bytes. plan_arena_blocks runs it after the greedy portfolio on
// instances small enough for it: first with the lower bound as the target, then with targets that
// close a quarter of the gap between the best plan so far and the largest size proven infeasible
// (at most 0.8 % of the plan per step). Its cost is counted in `work`, the planner's budget.
//
// The search builds "canonical" plans only: blocks are placed in non-decreasing order of offset,
// each at its floor (the lowest aligned offset above every placed block that overlaps it in time);
// blocks placed at the same offset go in a fixed preorder. At each node the children are the
// unplaced blocks whose floor is at least the last offset placed (and, at that offset, later in the
// preorder), in (floor, preorder) order; a block whose floor is at or above the lowest top
// (floor + size) of the unplaced blocks is skipped, since that block could sit below it instead.
// Time is cut into sections (between consecutive lifetime ends); a section keeps the top of its
// placed blocks (raised to the lowest floor of its unplaced ones) and the bytes still unplaced in
// it. Every unplaced block of a section lies above max(last offset, section top), and they all
// overlap there, so a node is pruned when max(last offset, top) + unplaced bytes > cap for some
// section. A section left with no slack (its unplaced bytes fill the room up to cap exactly, and
// nothing placed reaches above its top) needs a block at exactly its top; the tight sections at one
// height must then be covered by blocks that are disjoint in time and fit at that height, which a
// DP over section boundaries decides (covers(): an exact-cover inference of this planner's own, not
// MiniMalloc's; on exact packings it cuts the nodes of a search at the bound ~100-1000 fold).
//
// When the timeline splits into independent parts (dynamic decomposition), each part's unplaced
// blocks are ranked again with T from their sections' unplaced bytes, as MiniMalloc's SubSolve does
// (rerank()).
//
// Iterative depth-first search with an undo log (no recursion: it also runs in constant
// evaluation). Cost per node: O(N + S + the overlaps of the placed block), N blocks, S sections.
// The pairs of blocks that overlap in time are listed once: build() refuses instances with too
// many (the caller then keeps its greedy plan).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <cstdint>
#include <vector>
#include "arena_util.hpp"  // filled, align_up

namespace ctfx::detail {

struct arena_bnb {
  enum class outcome : std::uint8_t { found, infeasible, aborted };

  // Static data, over the live blocks (lower < upper, size > 0) only; id[k] is the caller's index.
  std::int32_t m = 0, S = 0;
  std::vector<std::int32_t> id;
  std::vector<std::int64_t> size, align;
  std::vector<std::int32_t> sa, sb;            // section range [sa, sb) of each block
  std::vector<std::int32_t> ov_begin, ov;      // the blocks overlapping each block in time (CSR)
  std::vector<std::int32_t> sec_begin, sec;    // the blocks live in each section (CSR)
  std::vector<std::int64_t> total0;            // bytes live in each section
  std::vector<std::int64_t> key_t, key_w, key_a, key_c;  // preorder keys: max section total, lifetime, area, sections
  // Dynamic state.
  std::vector<std::int64_t> off, flo, sfl, stot;
  std::vector<std::int32_t> rank;  // preorder position of each block (the current heuristic)
  struct undo { std::int32_t kind, idx; std::int64_t old; };  // kind 0: flo[idx], 1: sfl[idx], 2: placement, 3: witness[idx], 4: ptop[idx], 5: rank[idx]
  std::vector<undo> log;
  std::vector<std::int32_t> affected, cands, witness;
  std::vector<std::int32_t> wcount;  // per block: the sections it is the witness of
  // A search frame: a part [lo, hi) of time, its candidate blocks cands[begin, end), the next
  // one at pos, the one placed now. A split frame: its parts parts[begin, end) (pairs lo, hi),
  // the next at pos. mark: the log size when the frame was pushed.
  struct frame { bool split, hatless; std::int32_t lo, hi, begin, end, pos, placed; std::size_t mark; };
  std::vector<std::int32_t> parts, cuts, cuts0;  // cuts[c]: unplaced blocks across boundary c | c+1
  std::vector<std::int32_t> by_start, start_at;  // blocks by first section; start_at[s]: first with sa ≥ s
  std::vector<frame> stack;
  std::int64_t nodes = 0;  // nodes expanded by the last search
  // Work done, in the planner's units (arena_options::work): one per block, section or candidate
  // visited. Not reset by search(): the caller's budget spans all the searches, and build() counts
  // the pairs it lists.
  std::int64_t work = 0;
  bool use_covers = true, any_tight = false;
  std::vector<std::int64_t> ptop;   // per section: the top of its placed blocks
  std::vector<std::uint8_t> reach;  // covers()'s DP over section boundaries
  std::vector<std::int64_t> best_off;  // the plan of the last successful search, per caller index

  // Reads the live blocks; false when they overlap in more than max_pairs pairs (or there are
  // none), in which case the search must not be used.
  template <class Block>
  constexpr bool build(const std::vector<Block>& b, std::int64_t max_pairs) {
    const auto n = static_cast<std::int32_t>(b.size());
    for (std::int32_t i = 0; i < n; ++i) {
      const auto& x = b[static_cast<std::size_t>(i)];
      if (x.lower < x.upper && x.size > 0) id.push_back(i);
    }
    m = static_cast<std::int32_t>(id.size());
    if (m == 0) return false;
    std::vector<std::int64_t> times;
    for (auto i : id) { times.push_back(b[static_cast<std::size_t>(i)].lower); times.push_back(b[static_cast<std::size_t>(i)].upper); }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    S = static_cast<std::int32_t>(times.size()) - 1;
    for (auto i : id) {
      const auto& x = b[static_cast<std::size_t>(i)];
      size.push_back(x.size);
      align.push_back(x.align > 1 ? x.align : 1);
      sa.push_back(static_cast<std::int32_t>(std::lower_bound(times.begin(), times.end(), x.lower) - times.begin()));
      sb.push_back(static_cast<std::int32_t>(std::lower_bound(times.begin(), times.end(), x.upper) - times.begin()));
    }
    // Overlapping pairs: blocks by start section; j overlaps i (sa[j] ≥ sa[i]) iff sa[j] < sb[i].
    for (std::int32_t k = 0; k < m; ++k) by_start.push_back(k);
    std::sort(by_start.begin(), by_start.end(), [&](std::int32_t p, std::int32_t q) {
      return sa[static_cast<std::size_t>(p)] != sa[static_cast<std::size_t>(q)] ? sa[static_cast<std::size_t>(p)] < sa[static_cast<std::size_t>(q)] : p < q;
    });
    auto deg = filled<std::int32_t>(static_cast<std::size_t>(m), 0);
    std::int64_t pairs = 0;
    for (std::int32_t u = 0; u < m; ++u) {
      const std::int32_t i = by_start[static_cast<std::size_t>(u)];
      for (std::int32_t v = u + 1; v < m && sa[static_cast<std::size_t>(by_start[static_cast<std::size_t>(v)])] < sb[static_cast<std::size_t>(i)]; ++v) {
        ++deg[static_cast<std::size_t>(i)];
        ++deg[static_cast<std::size_t>(by_start[static_cast<std::size_t>(v)])];
        if (++pairs > max_pairs) { work += pairs; return false; }
      }
    }
    work += 2 * pairs + 4 * static_cast<std::int64_t>(m);
    ov_begin.push_back(0);
    for (std::int32_t k = 0; k < m; ++k) ov_begin.push_back(ov_begin.back() + deg[static_cast<std::size_t>(k)]);
    ov = filled<std::int32_t>(static_cast<std::size_t>(ov_begin.back()), 0);
    std::vector<std::int32_t> fill(ov_begin.begin(), ov_begin.end() - 1);
    for (std::int32_t u = 0; u < m; ++u) {
      const std::int32_t i = by_start[static_cast<std::size_t>(u)];
      for (std::int32_t v = u + 1; v < m && sa[static_cast<std::size_t>(by_start[static_cast<std::size_t>(v)])] < sb[static_cast<std::size_t>(i)]; ++v) {
        const std::int32_t j = by_start[static_cast<std::size_t>(v)];
        ov[static_cast<std::size_t>(fill[static_cast<std::size_t>(i)]++)] = j;
        ov[static_cast<std::size_t>(fill[static_cast<std::size_t>(j)]++)] = i;
      }
    }
    // Section members and totals (Σ spans ≤ 2 · pairs + m: each block spans sections that some
    // other block's ends delimit... bounded by the same cap, checked).
    std::int64_t spans = 0;
    for (std::int32_t k = 0; k < m; ++k) spans += sb[static_cast<std::size_t>(k)] - sa[static_cast<std::size_t>(k)];
    if (spans > 2 * max_pairs + 4 * static_cast<std::int64_t>(m)) return false;
    work += 2 * spans;
    auto cnt = filled<std::int32_t>(static_cast<std::size_t>(S) + 1, 0);
    total0 = filled<std::int64_t>(static_cast<std::size_t>(S), 0);
    for (std::int32_t k = 0; k < m; ++k)
      for (std::int32_t s = sa[static_cast<std::size_t>(k)]; s < sb[static_cast<std::size_t>(k)]; ++s) {
        ++cnt[static_cast<std::size_t>(s)];
        total0[static_cast<std::size_t>(s)] += size[static_cast<std::size_t>(k)];
      }
    sec_begin.push_back(0);
    for (std::int32_t s = 0; s < S; ++s) sec_begin.push_back(sec_begin.back() + cnt[static_cast<std::size_t>(s)]);
    sec = filled<std::int32_t>(static_cast<std::size_t>(sec_begin.back()), 0);
    std::vector<std::int32_t> sfill(sec_begin.begin(), sec_begin.end() - 1);
    for (std::int32_t k = 0; k < m; ++k)
      for (std::int32_t s = sa[static_cast<std::size_t>(k)]; s < sb[static_cast<std::size_t>(k)]; ++s) sec[static_cast<std::size_t>(sfill[static_cast<std::size_t>(s)]++)] = k;
    for (std::int32_t k = 0; k < m; ++k) {
      std::int64_t t = 0;
      for (std::int32_t s = sa[static_cast<std::size_t>(k)]; s < sb[static_cast<std::size_t>(k)]; ++s) t = std::max(t, total0[static_cast<std::size_t>(s)]);
      key_t.push_back(t);
      key_c.push_back(sb[static_cast<std::size_t>(k)] - sa[static_cast<std::size_t>(k)]);
      key_w.push_back(b[static_cast<std::size_t>(id[static_cast<std::size_t>(k)])].upper - b[static_cast<std::size_t>(id[static_cast<std::size_t>(k)])].lower);
      const auto& x = b[static_cast<std::size_t>(id[static_cast<std::size_t>(k)])];
      key_a.push_back(x.size * (x.upper - x.lower));
    }
    for (std::int32_t s = 0, u = 0; s <= S; ++s) {
      while (u < m && sa[static_cast<std::size_t>(by_start[static_cast<std::size_t>(u)])] < s) ++u;
      start_at.push_back(u);
    }
    cuts0 = filled<std::int32_t>(static_cast<std::size_t>(S), 0);
    for (std::int32_t k = 0; k < m; ++k)
      for (std::int32_t c = sa[static_cast<std::size_t>(k)]; c + 1 < sb[static_cast<std::size_t>(k)]; ++c) ++cuts0[static_cast<std::size_t>(c)];
    off = filled<std::int64_t>(static_cast<std::size_t>(m), -1);
    flo = filled<std::int64_t>(static_cast<std::size_t>(m), 0);
    sfl = filled<std::int64_t>(static_cast<std::size_t>(S), 0);
    ptop = sfl;
    reach = filled<std::uint8_t>(static_cast<std::size_t>(S) + 1, 0);
    stot = total0;
    witness = filled<std::int32_t>(static_cast<std::size_t>(S), -1);
    wcount = filled<std::int32_t>(static_cast<std::size_t>(m), 0);
    rank = filled<std::int32_t>(static_cast<std::size_t>(m), 0);
    best_off = filled<std::int64_t>(b.size(), 0);
    return true;
  }

  // Preorder heuristic h: MiniMalloc's WAT, TAW, TWA, then CAT (W = lifetime length, A = area =
  // size × lifetime, T = the largest section total the block lives in, C = sections spanned; all
  // descending, then by index). CAT finds minimalloc H at its lower bound, which the other three
  // miss in 1 s; W as the lifetime rather than the sections spanned finds A, G and K. With noise ≠ 0, the
  // first key of each block is scaled by a pseudo-random factor in [1, 1.25) drawn from that seed
  // (a different but still sensible order, for restarts).
  static constexpr std::int32_t n_heuristics = 4;
  std::vector<std::int64_t> noisy;
  std::int32_t heur = 0;
  std::uint64_t heur_noise = 0;
  bool dynamic_preorder = true;
  constexpr void set_heuristic(std::int32_t h, std::uint64_t noise) {
    heur = h;
    heur_noise = noise;
    const std::vector<std::int64_t>* keys[3] = {&key_w, &key_a, &key_t};
    if (h == 1) { keys[0] = &key_t; keys[1] = &key_a; keys[2] = &key_w; }
    if (h == 2) { keys[0] = &key_t; keys[1] = &key_w; keys[2] = &key_a; }
    if (h == 3) { keys[0] = &key_c; keys[1] = &key_a; keys[2] = &key_t; }
    if (noise != 0) {
      noisy = *keys[0];
      for (auto& v : noisy) {
        std::uint64_t z = (noise += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        v += static_cast<std::int64_t>(static_cast<double>(v) * 0.25 * static_cast<double>(z >> 11) * 0x1.0p-53);
      }
      keys[0] = &noisy;
    }
    std::vector<std::int32_t> o;
    for (std::int32_t k = 0; k < m; ++k) o.push_back(k);
    std::sort(o.begin(), o.end(), [&](std::int32_t p, std::int32_t q) {
      for (const auto* kv : keys)
        if ((*kv)[static_cast<std::size_t>(p)] != (*kv)[static_cast<std::size_t>(q)]) return (*kv)[static_cast<std::size_t>(p)] > (*kv)[static_cast<std::size_t>(q)];
      return p < q;
    });
    for (std::int32_t r = 0; r < m; ++r) rank[static_cast<std::size_t>(o[static_cast<std::size_t>(r)])] = r;
  }

  // MiniMalloc's preorder of a subproblem (SubSolve): when dynamic decomposition starts a part of
  // time, its unplaced blocks are ranked again by the heuristic with T taken from the bytes still
  // unplaced in their sections (stot), not from the whole instance. (MiniMalloc's TWA finds
  // minimalloc E and I at 1 MiB within seconds this way; with the instance-wide T it does not within
  // 15 s — measured with its solver.cc patched to keep T static.) The noise of set_heuristic is kept
  // (the same factor per block). Old ranks go to the log (kind 5).
  std::vector<std::int32_t> rr_blocks, rr_pos, rr_ranks;  // reused (allocations are slow in the compiler)
  std::vector<std::int64_t> rr_t, rr_f0;
  constexpr void rerank(std::int32_t lo, std::int32_t hi) {
    rr_blocks.clear();
    const std::int32_t u0 = start_at[static_cast<std::size_t>(lo)], u1 = start_at[static_cast<std::size_t>(hi)];
    work += 1 + (u1 - u0);
    for (std::int32_t u = u0; u < u1; ++u) {
      const std::int32_t k = by_start[static_cast<std::size_t>(u)];
      if (off[static_cast<std::size_t>(k)] < 0) rr_blocks.push_back(k);
    }
    if (rr_blocks.size() < 2) return;
    if (rr_t.size() != static_cast<std::size_t>(m)) rr_t = filled<std::int64_t>(static_cast<std::size_t>(m), 0);
    for (auto k : rr_blocks) {
      const auto ks = static_cast<std::size_t>(k);
      std::int64_t t = 0;
      for (std::int32_t s = sa[ks]; s < sb[ks]; ++s) t = std::max(t, stot[static_cast<std::size_t>(s)]);
      work += sb[ks] - sa[ks];
      rr_t[ks] = t;
    }
    const std::vector<std::int64_t>* keys[3] = {&key_w, &key_a, &rr_t};
    if (heur == 1) { keys[0] = &rr_t; keys[1] = &key_a; keys[2] = &key_w; }
    if (heur == 2) { keys[0] = &rr_t; keys[1] = &key_w; keys[2] = &key_a; }
    if (heur == 3) { keys[0] = &key_c; keys[1] = &key_a; keys[2] = &rr_t; }
    auto first = [&](std::int32_t k) {
      std::int64_t v = (*keys[0])[static_cast<std::size_t>(k)];
      if (heur_noise != 0) {  // set_heuristic's factor for block k
        std::uint64_t z = heur_noise + 0x9e3779b97f4a7c15ull * (static_cast<std::uint64_t>(k) + 1);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        v += static_cast<std::int64_t>(static_cast<double>(v) * 0.25 * static_cast<double>(z >> 11) * 0x1.0p-53);
      }
      return v;
    };
    auto& f0 = rr_f0;
    auto& pos = rr_pos;
    f0.clear();
    pos.clear();
    for (auto k : rr_blocks) f0.push_back(first(k));
    for (std::int32_t i = 0; i < static_cast<std::int32_t>(rr_blocks.size()); ++i) pos.push_back(i);
    std::sort(pos.begin(), pos.end(), [&](std::int32_t a, std::int32_t c) {
      if (f0[static_cast<std::size_t>(a)] != f0[static_cast<std::size_t>(c)]) return f0[static_cast<std::size_t>(a)] > f0[static_cast<std::size_t>(c)];
      const auto p = static_cast<std::size_t>(rr_blocks[static_cast<std::size_t>(a)]), q = static_cast<std::size_t>(rr_blocks[static_cast<std::size_t>(c)]);
      for (int i = 1; i < 3; ++i)
        if ((*keys[i])[p] != (*keys[i])[q]) return (*keys[i])[p] > (*keys[i])[q];
      return p < q;
    });
    work += 4 * static_cast<std::int64_t>(rr_blocks.size());
    // The part's blocks keep the ranks they had as a set (their order within the part changes), so
    // ranks stay distinct across parts.
    auto& ranks = rr_ranks;
    ranks.clear();
    for (auto k : rr_blocks) ranks.push_back(rank[static_cast<std::size_t>(k)]);
    std::sort(ranks.begin(), ranks.end());
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const auto k = static_cast<std::size_t>(rr_blocks[static_cast<std::size_t>(pos[i])]);
      if (rank[k] != ranks[i]) { log.push_back({5, static_cast<std::int32_t>(k), rank[k]}); rank[k] = ranks[i]; }
    }
  }

  constexpr void set_witness(std::int32_t s, std::int32_t w) {
    auto& old = witness[static_cast<std::size_t>(s)];
    if (old >= 0) --wcount[static_cast<std::size_t>(old)];
    old = w;
    if (w >= 0) ++wcount[static_cast<std::size_t>(w)];
  }

  // Raises sfl[s] to the lowest floor of the unplaced blocks of section s, and picks witness[s]:
  // an unplaced block whose floor is at most sfl[s] — while it stays so, that lowest floor cannot
  // raise sfl[s] — or, when there is none, one with the lowest floor. The scan stops at the first
  // block at or below sfl[s] (most rescans end within a few blocks instead of the whole section).
  constexpr void rescan(std::int32_t s) {
    const auto ss = static_cast<std::size_t>(s);
    std::int64_t lo = -1;
    std::int32_t w = -1, e = sec_begin[ss];
    for (; e < sec_begin[ss + 1]; ++e) {
      const std::int32_t j = sec[static_cast<std::size_t>(e)];
      const auto js = static_cast<std::size_t>(j);
      if (off[js] >= 0) continue;
      if (flo[js] <= sfl[ss]) { lo = flo[js]; w = j; ++e; break; }
      if (lo < 0 || flo[js] < lo) { lo = flo[js]; w = j; }
    }
    work += 1 + e - sec_begin[ss];
    log.push_back({3, s, witness[ss]});
    set_witness(s, w);
    if (lo > sfl[ss]) { log.push_back({1, s, sfl[ss]}); sfl[ss] = lo; }
  }

  // Places block k at its floor; everything it changes goes to the log (kind 2: the placement).
  // False when no unplaced block overlaps k in time (k is "hatless").
  constexpr bool place(std::int32_t k) {
    const auto ks = static_cast<std::size_t>(k);
    const std::int64_t x = flo[ks], h = x + size[ks];
    off[ks] = x;
    log.push_back({2, k, 0});
    affected.clear();  // the blocks whose floor rises
    bool hat = false;
    work += 1 + (ov_begin[ks + 1] - ov_begin[ks]) + 2 * (sb[ks] - sa[ks]);
    for (std::int32_t e = ov_begin[ks]; e < ov_begin[ks + 1]; ++e) {
      const auto j = static_cast<std::size_t>(ov[static_cast<std::size_t>(e)]);
      if (off[j] >= 0) continue;
      hat = true;
      if (flo[j] >= h) continue;
      log.push_back({0, static_cast<std::int32_t>(j), flo[j]});
      flo[j] = align_up(h, align[j]);
      affected.push_back(static_cast<std::int32_t>(j));
    }
    for (std::int32_t s = sa[ks]; s < sb[ks]; ++s) {
      const auto ss = static_cast<std::size_t>(s);
      log.push_back({1, s, sfl[ss]});
      sfl[ss] = std::max(sfl[ss], h);
      log.push_back({4, s, ptop[ss]});
      ptop[ss] = h;  // the placed blocks of s overlap k in time, so they lie below x: h is their top
      stot[ss] -= size[ks];
    }
    for (std::int32_t c = sa[ks]; c + 1 < sb[ks]; ++c) --cuts[static_cast<std::size_t>(c)];
    // A section's floor is at least the lowest floor of its unplaced blocks. witness[s] holds a
    // block whose floor is at most the section's (floors only rise, and so does sfl); only when it
    // rises or is placed can that lowest floor matter again, so only those sections are rescanned.
    // (Most blocks witness no section: wcount skips their spans.)
    for (auto j : affected) {
      const auto js = static_cast<std::size_t>(j);
      if (wcount[js] == 0) continue;
      work += sb[js] - sa[js];
      for (std::int32_t s = sa[js]; s < sb[js] && wcount[js] > 0; ++s)
        if (witness[static_cast<std::size_t>(s)] == j) rescan(s);
    }
    for (std::int32_t s = sa[ks]; s < sb[ks] && wcount[ks] > 0; ++s)
      if (witness[static_cast<std::size_t>(s)] == k) rescan(s);
    return hat;
  }

  // Undoes everything logged after `mark`, placements included.
  constexpr void rollback(std::size_t mark) {
    while (log.size() > mark) {
      const undo u = log.back();
      log.pop_back();
      const auto i = static_cast<std::size_t>(u.idx);
      if (u.kind == 0) flo[i] = u.old;
      else if (u.kind == 1) sfl[i] = u.old;
      else if (u.kind == 3) set_witness(u.idx, static_cast<std::int32_t>(u.old));
      else if (u.kind == 4) ptop[i] = u.old;
      else if (u.kind == 5) rank[i] = static_cast<std::int32_t>(u.old);
      else {
        for (std::int32_t s = sa[i]; s < sb[i]; ++s) stot[static_cast<std::size_t>(s)] += size[i];
        for (std::int32_t c = sa[i]; c + 1 < sb[i]; ++c) ++cuts[static_cast<std::size_t>(c)];
        off[i] = -1;
      }
    }
  }

  // Also notes whether some section is left without slack (any_tight), for covers().
  constexpr bool fits(std::int64_t x, std::int64_t cap, std::int32_t lo, std::int32_t hi) {
    work += hi - lo;
    any_tight = false;
    for (std::int32_t s = lo; s < hi; ++s) {
      const std::int64_t need = std::max(x, sfl[static_cast<std::size_t>(s)]) + stot[static_cast<std::size_t>(s)];
      if (need > cap) return false;
      if (need == cap && stot[static_cast<std::size_t>(s)] > 0) any_tight = true;
    }
    return true;
  }

  // Exact-cover inference. A section s is tight when its unplaced bytes fill exactly the room from
  // its floor to cap and nothing placed reaches above that floor (ptop = sfl): then a block must
  // start exactly at the floor h in s (the last offset x is at most h, see fits), and the blocks at
  // offset h are disjoint in time. So the tight sections at one height h must be covered by
  // disjoint unplaced blocks that fit at h: each lying within the sections around them whose placed
  // top is at most h, and with h + size <= cap. A DP over the section boundaries of that region
  // decides it; false when some run of tight sections cannot be covered (the node has no plan).
  // Only the runs that meet [s0 - 1, s1 + 1) are checked (the sections of the block just placed and
  // their neighbours, where runs change): checking fewer is sound, and it keeps the cost per node
  // near the placed block's span instead of the whole part.
  // At the height x of the block just placed (rank p), a block can still go only if its floor is x
  // and its rank above p (later blocks sit higher: floors rise past x; the preorder breaks ties), so
  // a tight run at x that only lower-ranked blocks could cover has no plan. (Pieces of a later split
  // restart from offset 0, but every plan's own path reaches them with its blocks of this part
  // still in (offset, rank) order, so none is lost.)
  constexpr bool covers(std::int64_t cap, std::int32_t lo, std::int32_t hi, std::int32_t s0, std::int32_t s1, std::int64_t x, std::int32_t p) {
    auto tight = [&](std::int32_t t) {
      const auto ts = static_cast<std::size_t>(t);
      return stot[ts] > 0 && sfl[ts] + stot[ts] == cap && ptop[ts] == sfl[ts];
    };
    std::int32_t a = std::max(lo, s0 - 1);
    while (a > lo && tight(a) && tight(a - 1) && sfl[static_cast<std::size_t>(a - 1)] == sfl[static_cast<std::size_t>(a)]) --a;
    const std::int32_t end = std::min(hi, s1 + 1);
    work += 3 * (end - a + 1);
    while (a < end) {
      if (!tight(a)) { ++a; continue; }
      const std::int64_t h = sfl[static_cast<std::size_t>(a)];
      std::int32_t b = a;
      while (b < hi && tight(b) && sfl[static_cast<std::size_t>(b)] == h) ++b;
      std::int32_t A = a, Bd = b;
      while (A > lo && ptop[static_cast<std::size_t>(A - 1)] <= h) --A;
      while (Bd < hi && ptop[static_cast<std::size_t>(Bd)] <= h) ++Bd;
      work += 6 * (Bd - A) + 3 * (start_at[static_cast<std::size_t>(Bd)] - start_at[static_cast<std::size_t>(A)]);
      for (std::int32_t c = A; c <= Bd; ++c) reach[static_cast<std::size_t>(c)] = 0;
      reach[static_cast<std::size_t>(A)] = 1;
      for (std::int32_t c = A; c < Bd; ++c) {
        if (!reach[static_cast<std::size_t>(c)]) continue;
        if (!(tight(c) && sfl[static_cast<std::size_t>(c)] == h)) reach[static_cast<std::size_t>(c) + 1] = 1;
        for (std::int32_t u = start_at[static_cast<std::size_t>(c)]; u < start_at[static_cast<std::size_t>(c) + 1]; ++u) {
          const auto js = static_cast<std::size_t>(by_start[static_cast<std::size_t>(u)]);
          if (off[js] < 0 && sb[js] <= Bd && flo[js] <= h && h % align[js] == 0 && h + size[js] <= cap &&
              (h != x || (flo[js] == h && rank[js] > p))) reach[static_cast<std::size_t>(sb[js])] = 1;
        }
      }
      if (!reach[static_cast<std::size_t>(Bd)]) return false;
      a = b;
    }
    return true;
  }

  // Pushes a search frame for the part [lo, hi) of time whose children are the canonical next
  // blocks after offset x, preorder rank p; false (nothing pushed) when the part has no unplaced
  // block left.
  constexpr bool expand(std::int32_t lo, std::int32_t hi, std::int64_t x, std::int32_t p) {
    std::int64_t min_top = -1;
    const std::int32_t u0 = start_at[static_cast<std::size_t>(lo)], u1 = start_at[static_cast<std::size_t>(hi)];
    work += 2 * (u1 - u0);
    for (std::int32_t u = u0; u < u1; ++u) {
      const auto ks = static_cast<std::size_t>(by_start[static_cast<std::size_t>(u)]);
      if (off[ks] < 0) {
        const std::int64_t t = flo[ks] + size[ks];
        if (min_top < 0 || t < min_top) min_top = t;
      }
    }
    if (min_top < 0) return false;
    const auto begin = static_cast<std::int32_t>(cands.size());
    for (std::int32_t u = u0; u < u1; ++u) {
      const std::int32_t k = by_start[static_cast<std::size_t>(u)];
      const auto ks = static_cast<std::size_t>(k);
      if (off[ks] >= 0 || flo[ks] >= min_top) continue;
      if (flo[ks] > x || (flo[ks] == x && rank[ks] > p)) cands.push_back(k);
    }
    std::sort(cands.begin() + begin, cands.end(), [&](std::int32_t a, std::int32_t c) {
      const auto as = static_cast<std::size_t>(a), cs = static_cast<std::size_t>(c);
      return flo[as] != flo[cs] ? flo[as] < flo[cs] : rank[as] < rank[cs];
    });
    frame f{};
    f.split = false;
    f.lo = lo;
    f.hi = hi;
    f.begin = begin;
    f.end = static_cast<std::int32_t>(cands.size());
    f.pos = begin;
    f.placed = -1;
    f.mark = log.size();
    stack.push_back(f);
    return true;
  }

  constexpr bool has_unplaced(std::int32_t lo, std::int32_t hi) {
    work += 1 + start_at[static_cast<std::size_t>(hi)] - start_at[static_cast<std::size_t>(lo)];
    for (std::int32_t u = start_at[static_cast<std::size_t>(lo)]; u < start_at[static_cast<std::size_t>(hi)]; ++u)
      if (off[static_cast<std::size_t>(by_start[static_cast<std::size_t>(u)])] < 0) return true;
    return false;
  }

  // Splits [lo, hi) at the boundaries in [c0, c1) that no unplaced block crosses (dynamic
  // decomposition: the pieces are independent subproblems, solved one after the other, each from
  // offset 0). Pushes a split frame and returns true when there is a cut.
  constexpr bool split(std::int32_t lo, std::int32_t hi, std::int32_t c0, std::int32_t c1) {
    const auto pb = static_cast<std::int32_t>(parts.size());
    std::int32_t from = lo;
    bool cut = false;
    for (std::int32_t c = std::max(lo, c0); c < std::min(hi - 1, c1); ++c) {
      if (cuts[static_cast<std::size_t>(c)] != 0) continue;
      cut = true;
      if (has_unplaced(from, c + 1)) { parts.push_back(from); parts.push_back(c + 1); }
      from = c + 1;
    }
    if (!cut) return false;
    if (has_unplaced(from, hi)) { parts.push_back(from); parts.push_back(hi); }
    frame f{};
    f.split = true;
    f.begin = pb;
    f.end = static_cast<std::int32_t>(parts.size());
    f.pos = pb;
    f.mark = log.size();
    stack.push_back(f);
    return true;
  }

  // A part of time is fully placed: its search frames go (their placements stay), up to the
  // split frame that started it.
  constexpr void part_done() {
    while (!stack.empty() && !stack.back().split) {
      cands.erase(cands.begin() + stack.back().begin, cands.end());
      stack.pop_back();
    }
  }

  // Is there a canonical plan within cap bytes? At most node_limit nodes, and aborted as soon as
  // `work` passes work_limit (< 0: no limit). On `found`, best_off holds the plan (caller indices;
  // dead blocks at 0). Deterministic: the same call on the same state gives the same answer.
  constexpr outcome search(std::int64_t cap, std::int64_t node_limit, std::int32_t heuristic, std::uint64_t noise, std::int64_t work_limit = -1) {
    work += 4 * static_cast<std::int64_t>(m) + S;  // set_heuristic and the resets
    set_heuristic(heuristic, noise);
    for (auto& o : off) o = -1;
    for (auto& f : flo) f = 0;
    for (auto& f : sfl) f = 0;
    stot = total0;
    for (auto& t : ptop) t = 0;
    cuts = cuts0;
    for (auto& c : wcount) c = 0;
    for (std::int32_t t = 0; t < S; ++t) {  // every floor is 0: any member is a lowest one
      witness[static_cast<std::size_t>(t)] = -1;
      set_witness(t, sec_begin[static_cast<std::size_t>(t)] < sec_begin[static_cast<std::size_t>(t) + 1] ? sec[static_cast<std::size_t>(sec_begin[static_cast<std::size_t>(t)])] : -1);
    }
    log.clear();
    cands.clear();
    parts.clear();
    stack.clear();
    nodes = 0;
    if (!fits(0, cap, 0, S)) return outcome::infeasible;
    if (!split(0, S, 0, S) && !expand(0, S, 0, -1)) return outcome::infeasible;
    while (!stack.empty()) {
      if (stack.back().split) {
        frame& sp = stack.back();
        if (sp.pos == sp.end) {  // every part placed: so is the part that made this split
          parts.erase(parts.begin() + sp.begin, parts.end());
          stack.pop_back();
          part_done();
          continue;
        }
        const std::int32_t lo = parts[static_cast<std::size_t>(sp.pos)], hi = parts[static_cast<std::size_t>(sp.pos + 1)];
        sp.pos += 2;
        if (dynamic_preorder) rerank(lo, hi);
        if (!expand(lo, hi, 0, -1)) continue;  // (cannot happen: parts hold unplaced blocks)
        continue;
      }
      frame& f = stack.back();
      if (f.placed >= 0) {
        rollback(f.mark);
        f.placed = -1;
        // A block with nothing above it constrained no one: had the others a plan without it
        // there, they have one with it, so its siblings need no try (MiniMalloc's hatless pruning).
        if (f.hatless) f.pos = f.end;
      }
      if (f.pos == f.end) {  // this part has no plan: neither has the split above it
        cands.erase(cands.begin() + f.begin, cands.end());
        stack.pop_back();
        if (!stack.empty() && stack.back().split) {
          rollback(stack.back().mark);
          parts.erase(parts.begin() + stack.back().begin, parts.end());
          stack.pop_back();
        }
        continue;
      }
      const std::int32_t k = cands[static_cast<std::size_t>(f.pos++)];
      if (++nodes > node_limit) return outcome::aborted;
      if (work_limit >= 0 && work > work_limit) return outcome::aborted;
      f.placed = k;
      const std::int32_t lo = f.lo, hi = f.hi;
      const std::int64_t x = flo[static_cast<std::size_t>(k)];
      f.hatless = !place(k);
      if (!fits(x, cap, lo, hi)) continue;
      if (use_covers && any_tight && !covers(cap, lo, hi, sa[static_cast<std::size_t>(k)], sb[static_cast<std::size_t>(k)], x, rank[static_cast<std::size_t>(k)])) continue;
      // f may be invalidated from here on.
      if (split(lo, hi, sa[static_cast<std::size_t>(k)], sb[static_cast<std::size_t>(k)] - 1)) continue;
      if (!expand(lo, hi, x, rank[static_cast<std::size_t>(k)])) part_done();
    }
    // The stack empties on failure of the first part, or when every part has been placed.
    for (std::int32_t j = 0; j < m; ++j)
      if (off[static_cast<std::size_t>(j)] < 0) return outcome::infeasible;
    for (auto& o : best_off) o = 0;
    for (std::int32_t j = 0; j < m; ++j) best_off[static_cast<std::size_t>(id[static_cast<std::size_t>(j)])] = off[static_cast<std::size_t>(j)];
    return outcome::found;
  }
};

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
