// ctfx/plan/arena.hpp — the pooled-arena planner: given blocks with half-open lifetimes
// [lower, upper) and byte sizes, give each an offset in one pool so that no two blocks that are
// live at the same time share a byte, and keep the pool small. One planner, two times: the same
// constexpr code plans ctfx graphs in the compiler (plan_arena, below) and external traces at run
// time (plan_arena_blocks; tools/ctfx_plan).
//
// Algorithm (Inductor's memory_planning.py does first fit in one order; this does better):
//   0. the floor: greedy by size with best fit, exactly as TFLite's ArenaPlanner/SimpleMemoryArena
//      (arena_greedy_by_size); it always runs first and always completes, and the result is never
//      larger than it;
//   1. a portfolio of greedy orders — size desc, lifetime length desc, area desc, start time —
//      each placed twice, best fit (the smallest gap that holds the block, TFLite's rule) and
//      first fit (the lowest gap), into the gaps left by the already-placed blocks that overlap in
//      time; on ≥ 1,024 blocks instead only contention (the largest live total over the block's
//      lifetime, then lifetime; best fit) and the peak order (the blocks live at the peak time
//      first, by size, then the others by lifetime; first fit), leaving the budget to step 3;
//   2. on instances whose blocks overlap in time in at most arena_options::search_max_pairs pairs
//      (the minimalloc set, resnet50: hundreds to a thousand blocks), an exact branch and bound in
//      the style of MiniMalloc (arena_search.hpp) with shrinking targets, for the rest of the budget;
//   3. otherwise a bounded "squeaky wheel" search: the blocks that end above the lower bound in the
//      best plan so far move earlier in the order by a random amount (deterministic PRNG), and the
//      greedy runs again; after a few rounds without progress it restarts from the best order with
//      noise.
//   Budget: counted in units of work (arena_options::work at run time, ::compile_work in constant
//   evaluation; see arena_work_per_second), never in seconds: every decision depends on the input,
//   the options and the work done so far only, so the same input gives the same plan on any
//   machine and under any load, and the compiler and the run time agree for the same budget.
//
// Complexity. Times are compressed to T ≤ 2N points, the leaves of a segment tree. Each node keeps
// two unions of taken offset intervals (sorted, disjoint, touching runs merged): `cover` (blocks
// for which the node is canonical) and `part` (blocks with a canonical node in its subtree). The
// bytes taken over a block's lifetime are the union of `part` of its O(log T) canonical nodes and
// `cover` of the nodes on the two boundary paths; these are merged pairwise (coalescing) and the
// gaps walked. A placement costs O(m log log T) where m is the total length of the unions read —
// short, because a union counts runs of taken bytes, not blocks (iopddl_Y_1: k = 2,900 overlapping
// placed blocks per placement on average, m = 300) — plus O(log T) union insertions, each stopping
// its climb as soon as an ancestor already holds the interval. One greedy run on iopddl_Y_1
// (N = 62,185) takes ~0.35 s of CPU (the former per-placement sort of the k blocks: ~7 s). Worst
// case (unions as fragmented as the blocks) it is no worse than the former O(Σ k_i log k_i).
// The lower bound (max over time of the live bytes) and the checker are sweeps, O(N log N).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>
#include "arena_search.hpp"  // detail::arena_bnb
#include "arena_util.hpp"  // detail::filled, detail::align_up
#include "reuse.hpp"  // liveness, detail::sym_less

namespace ctfx {

struct arena_block {
  std::int64_t lower = 0, upper = 0;  // half-open lifetime
  std::int64_t size = 0;              // bytes
  std::int64_t align = 1;             // the offset must be a multiple of this
  friend constexpr bool operator==(const arena_block&, const arena_block&) = default;
};

// Work: the planner's budget is counted in units of work, not in seconds, so that the same input
// gives the same plan on any machine, under any load, at run time and in the compiler (a unit is
// about one span of a union read or updated by the greedy placer, or one block, section or
// candidate visited by the exact search; see arena_placer::work and arena_bnb::work).
// arena_work_per_second is about how many units this planner does in one second of one core of the
// reference machine (2-core x86-64 VM shared with other builds, g++ 12): 650 M to 900 M units per
// CPU second over the traces and exact packings of bench/memplan (the exact search's instances at
// the low end). The default budget is the low end, so that it stays within about 1 s of CPU on each.
inline constexpr std::int64_t arena_work_per_second = 650'000'000;

struct arena_options {
  std::int64_t work = arena_work_per_second;  // run time: the budget, ~1 s on the reference machine
  // Constant evaluation: the budget in the compiler (~40 greedy runs of a 100-buffer graph).
  std::int64_t compile_work = 250'000;
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  bool improve = true;                        // false: the greedy portfolio only
  // The exact search (arena_search.hpp) runs when the live blocks overlap in time in at most this
  // many pairs (0: never) and the budget left covers listing them; it then gets the rest of it.
  std::int64_t search_max_pairs = 2'000'000;
};

struct arena_result {
  std::vector<std::int64_t> offset;  // per block
  std::int64_t pool_bytes = 0;       // max over blocks of offset + size
  std::int64_t lower_bound = 0;      // max over time of the live bytes
  // No plan is smaller than this: the lower bound, raised by what the exact search proved
  // impossible (rounded up to the gcd of the sizes and alignments, which divides every canonical
  // plan's peak). pool_bytes == proven_bound: the plan is optimal.
  std::int64_t proven_bound = 0;
  std::int64_t greedy_bytes = 0;     // the floor: greedy by size, best fit (TFLite); pool_bytes ≤ it
  std::int64_t work = 0;             // units of work spent (≤ the budget, plus the floor run)
  std::int32_t runs = 0;             // greedy runs and searches made (floor, portfolio, search)
  std::int32_t best_run = -1;        // which run gave the result (0: the floor, then as counted)
  constexpr bool optimal() const { return pool_bytes <= proven_bound; }
};

struct arena_conflict {
  std::int32_t a = -1, b = -1;  // two blocks that overlap in time and space, or -1
  constexpr bool ok() const { return a < 0; }
};

namespace detail {


struct splitmix {  // deterministic PRNG, the same at compile time and at run time
  std::uint64_t s;
  constexpr std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  constexpr std::int64_t below(std::int64_t n) { return n <= 1 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

// Offset intervals [begin, end), sorted and disjoint (touching ones are merged): the union of the
// bytes taken by a set of blocks. Unions stay short — a few runs of taken bytes with holes between —
// however many blocks they hold, which is what makes the placer fast.
struct span { std::int64_t begin, end; };

// Adds [x.begin, x.end) to the union v; false when it was already inside (nothing changed).
constexpr bool add_span(std::vector<span>& v, span x) {
  auto it = std::lower_bound(v.begin(), v.end(), x.begin, [](const span& p, std::int64_t b) { return p.end < b; });
  if (it != v.end() && it->begin <= x.begin && x.end <= it->end) return false;
  auto jt = it;
  while (jt != v.end() && jt->begin <= x.end) {
    x.begin = std::min(x.begin, jt->begin);
    x.end = std::max(x.end, jt->end);
    ++jt;
  }
  if (it == jt) v.insert(it, x);
  else { *it = x; v.erase(it + 1, jt); }
  return true;
}

// The greedy placer, with its interval structures kept between runs.
//
// A segment tree over the compressed time points (a power of two of leaves). A placed block is
// recorded, as its offset interval, in two unions per node:
//   cover[x]: blocks for which x is a canonical node (they live over all of x's time range);
//   part[x]:  blocks with a canonical node in x's subtree (so part[parent] ⊇ part[child]).
// The blocks overlapping [lo, hi) in time are then exactly part[c] for the canonical nodes c of
// [lo, hi), plus cover[a] for the ancestors a of those nodes, which all lie on the paths from the
// leaves lo and hi - 1 to the root. A query reads O(log T) short unions instead of the k placed
// blocks it overlaps; an insertion adds to O(log T) unions, and stops climbing as soon as an
// ancestor's part already holds the interval.
struct arena_placer {
  const std::vector<arena_block>* blocks = nullptr;
  std::int32_t n = 0, nt = 1, leaves = 1;     // blocks, compressed time points, tree leaves (2^k ≥ nt)
  std::vector<std::int32_t> lo, hi;           // compressed lifetimes
  std::vector<std::vector<span>> cover, part;
  std::vector<std::int32_t> touched;          // nodes whose unions are not empty (for reset)
  std::vector<std::int64_t> off;
  std::vector<span> found;  // collect(i): the taken intervals, sorted and disjoint
  // Work done so far, in the planner's units (arena_options::work): `unit` per list read and per
  // span of it, per collect, and per union touched by a put. A span costs about 12 times what the
  // exact search counts as one (a block, section or candidate visited) on this machine; the weight
  // keeps a unit near the same time in both.
  static constexpr std::int64_t unit = 12;
  std::int64_t work = 0;

  constexpr explicit arena_placer(const std::vector<arena_block>& b) : blocks(&b), n(static_cast<std::int32_t>(b.size())) {
    std::vector<std::int64_t> times;
    times.reserve(2 * b.size());
    for (const auto& x : b) { times.push_back(x.lower); times.push_back(x.upper); }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    nt = std::max<std::int32_t>(1, static_cast<std::int32_t>(times.size()));
    while (leaves < nt) leaves *= 2;
    lo.reserve(b.size());
    hi.reserve(b.size());
    for (const auto& x : b) {
      lo.push_back(static_cast<std::int32_t>(std::lower_bound(times.begin(), times.end(), x.lower) - times.begin()));
      hi.push_back(static_cast<std::int32_t>(std::lower_bound(times.begin(), times.end(), x.upper) - times.begin()));
    }
    cover.reserve(static_cast<std::size_t>(2 * leaves));
    part.reserve(static_cast<std::size_t>(2 * leaves));
    for (std::int32_t i = 0; i < 2 * leaves; ++i) { cover.emplace_back(); part.emplace_back(); }
    off = filled<std::int64_t>(b.size(), -1);
  }

  constexpr void reset() {
    for (auto x : touched) { cover[static_cast<std::size_t>(x)].clear(); part[static_cast<std::size_t>(x)].clear(); }
    touched.clear();
    for (auto& o : off) o = -1;
  }

  constexpr bool live(std::int32_t i) const {
    return lo[static_cast<std::size_t>(i)] < hi[static_cast<std::size_t>(i)] && (*blocks)[static_cast<std::size_t>(i)].size > 0;
  }

  // Fills `found` with the union of the offset intervals taken by the placed blocks that overlap
  // block i in time: sorted, disjoint. The O(log T) unions read are merged pairwise (a merge sort
  // over sorted runs, coalescing as it goes, so duplicates shrink away at the first levels).
  std::vector<const std::vector<span>*> lists;
  std::vector<span> buf;
  std::vector<std::size_t> bounds, bounds2;
  static constexpr void merge_into(const span* a, const span* ae, const span* b, const span* be, std::vector<span>& out) {
    const std::size_t mark = out.size();
    while (a != ae || b != be) {
      const span* x = (b == be || (a != ae && a->begin <= b->begin)) ? a++ : b++;
      if (out.size() > mark && out.back().end >= x->begin) out.back().end = std::max(out.back().end, x->end);
      else out.push_back(*x);
    }
  }
  constexpr void collect(std::int32_t i) {
    found.clear();
    if (!live(i)) return;
    lists.clear();
    auto take = [&](const std::vector<span>& v) { if (!v.empty()) lists.push_back(&v); };
    const std::int32_t l0 = lo[static_cast<std::size_t>(i)] + leaves, r0 = hi[static_cast<std::size_t>(i)] - 1 + leaves;
    for (std::int32_t l = l0, r = r0 + 1; l < r; l /= 2, r /= 2) {  // canonical nodes
      if (l & 1) take(part[static_cast<std::size_t>(l++)]);
      if (r & 1) take(part[static_cast<std::size_t>(--r)]);
    }
    for (std::int32_t a = l0, c = r0; a >= 1; a /= 2, c /= 2) {  // ancestors: the two boundary paths
      take(cover[static_cast<std::size_t>(a)]);
      if (c != a) take(cover[static_cast<std::size_t>(c)]);
    }
    std::int64_t spans = 1 + static_cast<std::int64_t>(lists.size());
    for (const auto* v : lists) spans += static_cast<std::int64_t>(v->size());
    work += unit * spans;
    if (lists.empty()) return;
    if (lists.size() == 1) { found = *lists[0]; return; }
    // Level 0: the lists pairwise into `found`; then runs pairwise between `found` and `buf`.
    bounds.clear();
    bounds.push_back(0);
    for (std::size_t k = 0; k < lists.size(); k += 2) {
      const auto& A = *lists[k];
      if (k + 1 < lists.size()) {
        const auto& B = *lists[k + 1];
        merge_into(A.data(), A.data() + A.size(), B.data(), B.data() + B.size(), found);
      } else {
        for (const auto& x : A) found.push_back(x);
      }
      bounds.push_back(found.size());
    }
    while (bounds.size() > 2) {
      buf.clear();
      bounds2.clear();
      bounds2.push_back(0);
      for (std::size_t k = 0; k + 1 < bounds.size(); k += 2) {
        const span* a = found.data() + bounds[k];
        const span* ae = found.data() + bounds[k + 1];
        if (k + 2 < bounds.size()) merge_into(a, ae, ae, found.data() + bounds[k + 2], buf);
        else for (; a != ae; ++a) buf.push_back(*a);
        bounds2.push_back(buf.size());
      }
      std::swap(found, buf);
      std::swap(bounds, bounds2);
    }
  }

  // The offset block i would get: best fit (the smallest gap that holds it) or first fit (the
  // lowest), else on top of everything it overlaps. Reads `found` (collect(i) first).
  // Best fit is TFLite's SimpleMemoryArena::Allocate to the letter, so that the greedy-by-size
  // floor (arena_greedy_by_size) plans exactly as TFLite does: a gap is taken when the block fits
  // at the aligned start and the aligned gap is smaller than the best one's (recorded unaligned);
  // ties keep the lowest gap. Touching runs are merged in `found`, which changes no gap.
  constexpr std::int64_t choose(std::int32_t i, bool best_fit) const {
    const arena_block& b = (*blocks)[static_cast<std::size_t>(i)];
    std::int64_t cur = 0, best = -1, best_gap = 0;
    for (const auto& s : found) {
      const std::int64_t at = align_up(cur, b.align);
      if (s.begin > cur && at + b.size <= s.begin) {
        if (best < 0 || s.begin - at < best_gap) { best = at; best_gap = s.begin - cur; }
        if (!best_fit) break;
      }
      cur = std::max(cur, s.end);
    }
    return best < 0 ? align_up(cur, b.align) : best;
  }

  // Records block i at offset o.
  constexpr void put(std::int32_t i, std::int64_t o) {
    off[static_cast<std::size_t>(i)] = o;
    if (!live(i)) return;
    const span x{o, o + (*blocks)[static_cast<std::size_t>(i)].size};
    auto mark = [&](std::int32_t c) {
      work += unit;
      if (cover[static_cast<std::size_t>(c)].empty() && part[static_cast<std::size_t>(c)].empty()) touched.push_back(c);
      add_span(cover[static_cast<std::size_t>(c)], x);
      if (!add_span(part[static_cast<std::size_t>(c)], x)) return;
      for (std::int32_t a = c / 2; a >= 1; a /= 2) {
        work += unit;
        if (part[static_cast<std::size_t>(a)].empty() && cover[static_cast<std::size_t>(a)].empty()) touched.push_back(a);
        if (!add_span(part[static_cast<std::size_t>(a)], x)) break;
      }
    };
    for (std::int32_t l = lo[static_cast<std::size_t>(i)] + leaves, r = hi[static_cast<std::size_t>(i)] + leaves; l < r; l /= 2, r /= 2) {
      if (l & 1) mark(l++);
      if (r & 1) mark(--r);
    }
  }

  constexpr void place(std::int32_t i, bool best_fit) {
    collect(i);
    put(i, choose(i, best_fit));
  }

  // Places the blocks in this order; returns the peak, or -1 when `work` passed `work_limit`
  // (< 0: no limit) before the end.
  constexpr std::int64_t run(const std::vector<std::int32_t>& order, bool best_fit, std::int64_t work_limit = -1) {
    reset();
    std::int64_t peak = 0;
    for (auto i : order) {
      if (work_limit >= 0 && work > work_limit) return -1;
      place(i, best_fit);
      peak = std::max(peak, off[static_cast<std::size_t>(i)] + (*blocks)[static_cast<std::size_t>(i)].size);
    }
    return peak;
  }
};

}  // namespace detail

// Max over time of the summed sizes of the live blocks (a sweep; frees before allocations at equal
// times, since lifetimes are half-open).
constexpr std::int64_t arena_lower_bound(const std::vector<arena_block>& b) {
  struct ev { std::int64_t t, d; };
  std::vector<ev> e;
  e.reserve(2 * b.size());
  for (const auto& x : b)
    if (x.lower < x.upper) { e.push_back({x.lower, x.size}); e.push_back({x.upper, -x.size}); }
  std::sort(e.begin(), e.end(), [](const ev& p, const ev& q) { return p.t != q.t ? p.t < q.t : p.d < q.d; });
  std::int64_t cur = 0, peak = 0;
  for (const auto& x : e) { cur += x.d; peak = std::max(peak, cur); }
  return peak;
}

// Checks that no two blocks overlap in both time and space, and that offsets are aligned and
// non-negative. Sweep over time; the live blocks are kept sorted by offset, so each new block is
// compared with its neighbours only: O(N log N) comparisons (plus the vector insertions).
constexpr arena_conflict arena_check(const std::vector<arena_block>& b, const std::vector<std::int64_t>& off) {
  const auto n = static_cast<std::int32_t>(b.size());
  if (off.size() != b.size()) return {0, 0};
  struct ev { std::int64_t t; int alloc; std::int32_t i; };
  std::vector<ev> e;
  e.reserve(2 * b.size());
  for (std::int32_t i = 0; i < n; ++i) {
    const auto& x = b[static_cast<std::size_t>(i)];
    if (off[static_cast<std::size_t>(i)] < 0 || (x.align > 1 && off[static_cast<std::size_t>(i)] % x.align != 0)) return {i, i};
    if (x.lower >= x.upper || x.size == 0) continue;
    e.push_back({x.lower, 1, i});
    e.push_back({x.upper, 0, i});
  }
  std::sort(e.begin(), e.end(), [](const ev& p, const ev& q) { return p.t != q.t ? p.t < q.t : p.alloc < q.alloc; });
  std::vector<std::int32_t> live;  // sorted by offset; disjoint in space by induction
  auto by_off = [&](std::int32_t p, std::int32_t q) { return off[static_cast<std::size_t>(p)] != off[static_cast<std::size_t>(q)] ? off[static_cast<std::size_t>(p)] < off[static_cast<std::size_t>(q)] : p < q; };
  for (const auto& x : e) {
    auto it = std::lower_bound(live.begin(), live.end(), x.i, by_off);
    if (!x.alloc) { if (it != live.end() && *it == x.i) live.erase(it); continue; }
    const std::int64_t o = off[static_cast<std::size_t>(x.i)], end = o + b[static_cast<std::size_t>(x.i)].size;
    if (it != live.end() && off[static_cast<std::size_t>(*it)] < end) return {*it, x.i};
    if (it != live.begin()) {
      auto p = *(it - 1);
      if (off[static_cast<std::size_t>(p)] + b[static_cast<std::size_t>(p)].size > o) return {p, x.i};
    }
    live.insert(it, x.i);
  }
  return {};
}

// The Inductor-like baseline: blocks in start order, each at the lowest gap that holds it.
constexpr arena_result arena_first_fit(const std::vector<arena_block>& b) {
  arena_result r;
  std::vector<std::int32_t> order;
  order.reserve(b.size());
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(b.size()); ++i) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) {  // std::stable_sort is not constexpr
    return b[static_cast<std::size_t>(p)].lower != b[static_cast<std::size_t>(q)].lower ? b[static_cast<std::size_t>(p)].lower < b[static_cast<std::size_t>(q)].lower : p < q;
  });
  detail::arena_placer P(b);
  r.pool_bytes = P.run(order, false);
  r.offset = P.off;
  r.lower_bound = arena_lower_bound(b);
  r.proven_bound = r.lower_bound;
  r.runs = 1;
  r.best_run = 0;
  return r;
}

namespace detail {
// TFLite's greedy-by-size order (ArenaPlanner::CreateTensorAllocationVector): blocks that live
// over the whole trace (TFLite: allocated at node 0, never freed) first, by index; then size
// descending, then first use ascending. TFLite's std::sort leaves the remaining ties unspecified;
// here they go by index, so the order (and the plan) is a function of the input.
constexpr std::vector<std::int32_t> greedy_by_size_order(const std::vector<arena_block>& b) {
  std::int64_t t0 = 0, t1 = 0;
  bool any = false;
  for (const auto& x : b)
    if (x.lower < x.upper) {
      t0 = any ? std::min(t0, x.lower) : x.lower;
      t1 = any ? std::max(t1, x.upper) : x.upper;
      any = true;
    }
  auto whole = [&](std::int32_t i) { const auto& x = b[static_cast<std::size_t>(i)]; return x.lower == t0 && x.upper == t1; };
  std::vector<std::int32_t> order;
  order.reserve(b.size());
  for (std::int32_t i = 0; i < static_cast<std::int32_t>(b.size()); ++i) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) {
    const auto& x = b[static_cast<std::size_t>(p)];
    const auto& y = b[static_cast<std::size_t>(q)];
    if (whole(p) != whole(q)) return whole(p);
    if (whole(p)) return p < q;
    if (x.size != y.size) return x.size > y.size;
    if (x.lower != y.lower) return x.lower < y.lower;
    return p < q;
  });
  return order;
}
}  // namespace detail

// The floor: greedy by size with best fit, as TFLite's ArenaPlanner + SimpleMemoryArena plan a
// model's tensors (the order above, each block in the smallest gap among the placed blocks that
// overlap it in time, else on top). plan_arena_blocks always runs it first and never returns a
// larger plan.
constexpr arena_result arena_greedy_by_size(const std::vector<arena_block>& b) {
  arena_result r;
  detail::arena_placer P(b);
  r.pool_bytes = P.run(detail::greedy_by_size_order(b), true);
  r.offset = P.off;
  r.lower_bound = arena_lower_bound(b);
  r.proven_bound = r.lower_bound;
  r.greedy_bytes = r.pool_bytes;
  r.work = P.work;
  r.runs = 1;
  r.best_run = 0;
  return r;
}

// Plans the blocks within the budget (opt.work at run time, opt.compile_work in the compiler; the
// floor run always completes). Every step is a function of the input, the options and the work
// spent so far — no clock — so the plan is the same on every machine and in the compiler as at
// run time for the same budget.
constexpr arena_result plan_arena_blocks(const std::vector<arena_block>& b, arena_options opt = {}) {
  arena_result r;
  const auto n = static_cast<std::int32_t>(b.size());
  r.lower_bound = arena_lower_bound(b);
  r.proven_bound = r.lower_bound;
  r.offset = detail::filled<std::int64_t>(b.size(), 0);
  if (n == 0) return r;
  // Note: `std::is_constant_evaluated()` must be tested in the `if` itself (stored in a const
  // local, it would be manifestly constant-evaluated and always true).
  std::int64_t budget = opt.work;
  if (std::is_constant_evaluated()) budget = opt.compile_work;
  detail::arena_placer P(b);
  detail::arena_bnb B;
  auto spent = [&] { return P.work + B.work; };
  auto out_of_budget = [&] { return spent() >= budget; };
  std::vector<std::int32_t> order, best_order;
  order.reserve(b.size());
  auto len = [&](std::int32_t i) { return b[static_cast<std::size_t>(i)].upper - b[static_cast<std::size_t>(i)].lower; };
  auto sz = [&](std::int32_t i) { return b[static_cast<std::size_t>(i)].size; };
  // By value, r moved out (every caller returns it): nvcc warns on a lambda returning a reference to r.
  auto finish = [&]() -> arena_result { r.work = spent(); return static_cast<arena_result&&>(r); };
  auto try_order = [&](bool best_fit) {
    // The floor run always completes (there must be a plan); later ones stop at the budget.
    const std::int64_t peak = P.run(order, best_fit, r.best_run < 0 ? -1 : budget - B.work);
    if (peak < 0) return;  // out of budget
    if (r.best_run < 0 || peak < r.pool_bytes) {
      r.pool_bytes = peak;
      r.offset = P.off;
      r.best_run = r.runs;
      best_order = order;
    }
    ++r.runs;
  };
  // 1. The floor: greedy by size, best fit, exactly as TFLite (arena_greedy_by_size).
  order = detail::greedy_by_size_order(b);
  try_order(true);
  r.greedy_bytes = r.pool_bytes;
  if (r.pool_bytes == r.lower_bound) return finish();  // optimal
  // Large instances (n ≥ 1024) run the contention and peak orders (below) first, while the budget
  // still covers them; small ones (the compiler's graphs) keep this sequence and their plans.
  const bool use_contention = n >= 1024;
  // The same order with first fit (iopddl_Y_1: 1.0036 × the lower bound, the floor 1.0042).
  if (!use_contention) {
    if (out_of_budget()) return finish();
    try_order(false);
    if (r.pool_bytes == r.lower_bound) return finish();
  }
  // 2. The portfolio: other orders, best fit and first fit. The first is the floor's order with
  // sizes in classes of ×1.3 (first use decides within a class): on iopddl_S_1 it plans 1.0150 ×
  // the lower bound where the floor plans 1.0158.
  std::vector<std::int32_t> size_class = detail::filled<std::int32_t>(b.size(), 0);
  for (std::int32_t i = 0; i < n; ++i)
    for (std::int64_t v = 1; v <= sz(i) / 13 * 10 + (sz(i) % 13) * 10 / 13; v = std::max(v + 1, v * 13 / 10)) ++size_class[static_cast<std::size_t>(i)];
  auto cls = [&](std::int32_t i) { return size_class[static_cast<std::size_t>(i)]; };
  // Contention (TelaMalloc's and MiniMalloc's "T"): the largest live total over a block's lifetime,
  // by a sweep and a sparse table of range maxima over the compressed times. Order k = 4 places the
  // most contended blocks first, the longest-lived first among equals: on iopddl_S_1 it plans
  // 1.0026 × the lower bound with best fit (the orders above: 1.0150 at best).
  // Only on large instances (n ≥ 1024; the compiler's small graphs keep their plans and compile
  // time).
  std::vector<std::int64_t> contention = detail::filled<std::int64_t>(b.size(), 0);
  std::int64_t peak_at = 0;  // the first time (compressed) where the live bytes reach the lower bound
  if (use_contention) {
    std::vector<std::int64_t> times;
    for (const auto& x : b) { times.push_back(x.lower); times.push_back(x.upper); }
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    const auto T = times.size();
    auto at = [&](std::int64_t v) { return static_cast<std::size_t>(std::lower_bound(times.begin(), times.end(), v) - times.begin()); };
    std::vector<std::int64_t> live = detail::filled<std::int64_t>(T + 1, 0);
    for (const auto& x : b)
      if (x.lower < x.upper && x.size > 0) { live[at(x.lower)] += x.size; live[at(x.upper)] -= x.size; }
    for (std::size_t t = 1; t < T; ++t) live[t] += live[t - 1];
    for (std::size_t t = 1; t < T; ++t)
      if (live[t] > live[static_cast<std::size_t>(peak_at)]) peak_at = static_cast<std::int64_t>(t);
    std::size_t levels = 1;
    while ((std::size_t{1} << levels) <= T) ++levels;
    // mx[j * T + t]: the max of live[t, t + 2^j) (one allocation: they are slow in the compiler)
    std::vector<std::int64_t> mx = detail::filled<std::int64_t>(levels * T, 0);
    for (std::size_t t = 0; t < T; ++t) mx[t] = live[t];
    for (std::size_t j = 1; j < levels; ++j)
      for (std::size_t t = 0; t + (std::size_t{1} << j) <= T; ++t)
        mx[j * T + t] = std::max(mx[(j - 1) * T + t], mx[(j - 1) * T + t + (std::size_t{1} << (j - 1))]);
    P.work += 4 * static_cast<std::int64_t>(T) * static_cast<std::int64_t>(levels) + 8 * static_cast<std::int64_t>(n);
    for (std::int32_t i = 0; i < n; ++i) {
      const auto& x = b[static_cast<std::size_t>(i)];
      if (!(x.lower < x.upper)) continue;
      const std::size_t lo = at(x.lower), hi = at(x.upper);
      std::size_t j = 0;
      while ((std::size_t{1} << (j + 1)) <= hi - lo) ++j;
      contention[static_cast<std::size_t>(i)] = std::max(mx[j * T + lo], mx[j * T + hi - (std::size_t{1} << j)]);
    }
  }
  auto con = [&](std::int32_t i) { return contention[static_cast<std::size_t>(i)]; };
  // The peak order (k = 5): the blocks live at the peak time first, by size (placed first, they
  // tile the peak from 0 without a hole, so the plan's top there is the lower bound), then the
  // others by lifetime, longest first, around them. On somas pangu_2.6B (one peak instant, 547
  // blocks live there) first fit plans 1.0038 × the lower bound where every order above stays at
  // the floor's 1.0076: the floor leaves a 42 MB staircase of 1.25 MiB blocks that live to the end
  // above the peak, which the blocks fixed at the peak first no longer leave room for.
  auto at_peak = [&](std::int32_t i) {
    return P.live(i) && P.lo[static_cast<std::size_t>(i)] <= peak_at && peak_at < P.hi[static_cast<std::size_t>(i)];
  };
  // The sequence of (order k, best fit?) runs: small instances as
  // before (k = -1..3, best fit then first fit, after the floor's order with first fit above);
  // large ones the contention order with best fit (iopddl_Y_1: 1.0000, optimal, where the floor's
  // order with first fit, formerly next, gives 1.0036 and left no budget for it; S_1 1.0026) and
  // the peak order with first fit, then straight to the squeaky wheel (step 4), which starts from
  // the better of them: pangu_2.6B reaches the lower bound in its 7th round, at 0.42 G units of
  // work; with the other orders of the portfolio first, the budget ran out before it (they never
  // gave the best plan on the large traces).
  constexpr int small_runs[] = {-1, 1, -1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 2, 1, 2, 0, 3, 1, 3, 0};
  constexpr int large_runs[] = {4, 1, 5, 0};
  const int* runs = use_contention ? large_runs : small_runs;
  const int n_runs = use_contention ? static_cast<int>(sizeof(large_runs) / sizeof(int)) / 2 : static_cast<int>(sizeof(small_runs) / sizeof(int)) / 2;
  for (int run = 0; run < n_runs; ++run) {
    const int k = runs[2 * run];
    const bool best_fit = runs[2 * run + 1] == 1;
    order.clear();
    for (std::int32_t i = 0; i < n; ++i) order.push_back(i);
    auto cmp = [&](std::int32_t p, std::int32_t q) {
      switch (k) {
        case 5:
          if (at_peak(p) != at_peak(q)) return at_peak(p);
          if (at_peak(p)) return sz(p) > sz(q);
          return len(p) > len(q);
        case -1:
          if (cls(p) != cls(q)) return cls(p) > cls(q);
          if (b[static_cast<std::size_t>(p)].lower != b[static_cast<std::size_t>(q)].lower) return b[static_cast<std::size_t>(p)].lower < b[static_cast<std::size_t>(q)].lower;
          return sz(p) > sz(q);
        case 0: if (sz(p) != sz(q)) return sz(p) > sz(q); return len(p) > len(q);
        case 1: if (len(p) != len(q)) return len(p) > len(q); return sz(p) > sz(q);
        case 2: if (sz(p) * len(p) != sz(q) * len(q)) return sz(p) * len(p) > sz(q) * len(q); return sz(p) > sz(q);
        case 4: if (con(p) != con(q)) return con(p) > con(q); return len(p) > len(q);
        default: if (b[static_cast<std::size_t>(p)].lower != b[static_cast<std::size_t>(q)].lower) return b[static_cast<std::size_t>(p)].lower < b[static_cast<std::size_t>(q)].lower; return sz(p) > sz(q);
      }
    };
    std::sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) { return cmp(p, q) || (!cmp(q, p) && p < q); });
    if (out_of_budget()) return finish();
    try_order(best_fit);
    if (r.pool_bytes == r.lower_bound) return finish();
  }
  if (!opt.improve) return finish();
  // 3. The exact search (arena_search.hpp), on instances with few enough overlapping pairs (and
  // budget left to list them); it gets the rest of the budget. Each round tries the smallest size
  // not proven impossible (the lower bound at first), then tightens: target = best - min(best -
  // proven, best / 32) / 4 (steps of at most 0.8 % of the plan: with steps of a quarter of the
  // gap, targets of a plan 20 % above the bound failed where smaller ones succeed — on exact
  // packings 1.16-1.21 × instead of 1.16-1.23, minimalloc D, E, I, J 1.045-1.10 × instead of
  // 1.047-1.13), again after each success, until a target fails; each of the four preorders is
  // tried per target (with pseudo-random noise on the first key after round 0). A search that runs
  // out of nodes fails for this round; the next round doubles the node limit (2 · blocks at
  // first). (Bisection between the lower bound and the best plan did worse on the minimalloc set:
  // most midpoints fail and cost the full node limit.)
  if (opt.search_max_pairs > 0 && !out_of_budget() &&
      B.build(b, std::min(opt.search_max_pairs, (budget - spent()) / 2))) {
    // Every offset of a canonical plan is a multiple of g, the gcd of the sizes and alignments.
    std::int64_t g = 0;
    for (std::int32_t k = 0; k < B.m; ++k)
      g = std::gcd(std::gcd(g, B.size[static_cast<std::size_t>(k)]), B.align[static_cast<std::size_t>(k)]);
    if (g <= 0) g = 1;
    std::int64_t proven = (r.lower_bound + g - 1) / g * g;  // no plan is smaller than this
    r.proven_bound = proven;
    std::int64_t limit = 2 * static_cast<std::int64_t>(B.m);
    std::uint64_t round = 0;
    bool stop = false;
    // One target: true when a plan within it was found (and taken).
    auto attempt = [&](std::int64_t target) {
      for (std::int32_t hh = 0; hh <= detail::arena_bnb::n_heuristics && !stop; ++hh) {
        // After round 0, at the smallest size not proven impossible, TWA (h = 2) once more without
        // noise and with twice the node limit: MiniMalloc's round robin keeps its preorders
        // noise-free, and with its subproblem preorders (arena_bnb::rerank) TWA finds minimalloc I
        // at 1 MiB in ~20 k nodes and E in ~510 k, where no noisy restart did. At the default
        // budget: I 1.1035 -> 1.0000 (optimal); with 5 x: E 1.0615 -> 1.0000. Exact packings: the
        // same ones found (noise-free TWA in every attempt, or the 4 preorders noise-free too,
        // cost 2-4 of them their budget).
        const bool det = hh == detail::arena_bnb::n_heuristics;
        if (det && (round == 0 || target != proven)) break;
        const std::int32_t h = det ? 2 : hh;
        const std::uint64_t noise = round == 0 || det ? 0 : opt.seed ^ (round * 8 + static_cast<std::uint64_t>(h));
        const auto res = B.search(target, det ? 2 * limit : limit, h, noise, budget - P.work);
        if (res == detail::arena_bnb::outcome::found) {
          std::int64_t peak = 0;
          for (std::int32_t i = 0; i < n; ++i)
            if (b[static_cast<std::size_t>(i)].lower < b[static_cast<std::size_t>(i)].upper && sz(i) > 0)
              peak = std::max(peak, B.best_off[static_cast<std::size_t>(i)] + sz(i));
          if (peak < r.pool_bytes && arena_check(b, B.best_off).ok()) {
            r.pool_bytes = peak;
            r.offset = B.best_off;
            r.best_run = r.runs;
          }
          ++r.runs;
          return true;
        }
        ++r.runs;
        if (res == detail::arena_bnb::outcome::infeasible) {
          proven = std::max(proven, target + g);
          r.proven_bound = std::max(r.proven_bound, proven);
          return false;
        }
        if (out_of_budget()) stop = true;
      }
      return false;
    };
    while (!stop && r.pool_bytes > proven) {
      if (attempt(proven)) continue;  // optimal
      while (!stop && r.pool_bytes > proven) {
        const std::int64_t step = std::max(g, std::min(r.pool_bytes - proven, r.pool_bytes / 32) / 4 / g * g);
        if (!attempt(std::max(proven, r.pool_bytes - step))) break;
      }
      limit *= 2;
      ++round;
    }
    return finish();
  }
  // 4. Squeaky wheel: blocks that end above the lower bound move earlier in the order.
  detail::splitmix rng{opt.seed};
  std::vector<std::int64_t> prio = detail::filled<std::int64_t>(b.size(), 0);
  auto from_order = [&](const std::vector<std::int32_t>& o, std::int64_t noise) {
    for (std::size_t p = 0; p < o.size(); ++p)
      prio[static_cast<std::size_t>(o[p])] = static_cast<std::int64_t>(o.size() - p) * 16 + rng.below(noise);
  };
  from_order(best_order, 1);
  std::int32_t stale = 0;
  const std::int64_t scale = 16 * static_cast<std::int64_t>(n);
  // P.off holds the last complete run's plan; replay the best order so that the blame starts there.
  order = best_order;
  P.run(order, true, budget - B.work);
  while (!out_of_budget()) {
    // Blame: the blocks of the current plan that reach above the lower bound.
    for (std::int32_t i = 0; i < n; ++i)
      if (P.off[static_cast<std::size_t>(i)] + sz(i) > r.lower_bound) prio[static_cast<std::size_t>(i)] += 1 + rng.below(scale / 4);
    order.clear();
    for (std::int32_t i = 0; i < n; ++i) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) {
      return prio[static_cast<std::size_t>(p)] != prio[static_cast<std::size_t>(q)] ? prio[static_cast<std::size_t>(p)] > prio[static_cast<std::size_t>(q)] : p < q;
    });
    const std::int64_t before = r.pool_bytes;
    try_order(true);
    if (r.pool_bytes == r.lower_bound) break;
    if (r.pool_bytes < before) stale = 0;
    else if (++stale >= 24) {  // restart from the best order, shaken
      from_order(best_order, 16 * std::max<std::int64_t>(1, n / 8));
      stale = 0;
    }
  }
  return finish();
}

// ---------------------------------------------------------------------------------------------
// Graph integration: the buffers of a ctfx graph (analysis/liveness.hpp) in pools.
//
//   - Each partition has its own pools: no two buffers of different partitions share memory.
//   - Static-size intermediates: the partition's intermediates pool, at static offsets planned by
//     plan_arena_blocks (64-byte aligned, Inductor's alignment).
//   - Graph outputs and buffers that a later partition reads (the partition's outputs,
//     pytorch#165514) live until their last use (outputs: to the end) and are never freed by the
//     plan. By default they sit in the partition's pool with the intermediates (the planner sees
//     their whole lifetime, so an output may take memory that died before it started, and the peak
//     can reach the lower bound); with separate_outputs they go to an outputs pool of their own,
//     as Inductor's default memory_pool="intermediates" does, so that the pool handed to the
//     caller holds nothing else.
//   - Sizes symbolic in backed symbols: after the static region of their pool, in lanes. Buffers
//     with the same byte expression whose lifetimes are disjoint share a lane (interval
//     partitioning by start time, N log N); lanes are stacked, so a buffer's offset is the static
//     region plus the aligned sizes of the lanes below it — a sum evaluated at run time. Sound
//     because lanes never overlap in space, whatever the symbols' values.
//   - Sizes that depend on an unbacked (data-dependent) symbol: one pool per lane, created when its
//     first buffer is allocated — after the symbol is known (Inductor's earliest_available). Never
//     in a pool that exists earlier.
// ---------------------------------------------------------------------------------------------

inline constexpr std::int64_t arena_alignment = 64;

enum class pool_kind : std::uint8_t { intermediates, outputs, unbacked };

struct arena_pool {
  pool_kind kind = pool_kind::intermediates;
  std::int32_t partition = 0;
  std::int64_t static_bytes = 0;     // the static region: offsets [0, static_bytes)
  std::vector<sym_expr> lanes;       // symbolic region: lane k at static_bytes + Σ_{j<k} align(lanes[j])
  std::int64_t begin = 0, end = 0;   // half-steps: created at begin (its first block), freed at end
  bool returned = false;             // holds graph or partition outputs: never freed by the plan
};

struct arena_slot {
  std::int32_t pool = -1;
  std::int64_t offset = 0;           // static part of the byte offset
  std::int32_t lane = -1;            // symbolic buffers: offset += Σ_{j<lane} align(lanes[j])
};

struct arena_plan {
  std::vector<arena_pool> pools;
  std::vector<arena_slot> slots;     // per liveness buffer
  std::int64_t peak_bytes = 0;       // max over time of the static bytes of the live pools
  std::int64_t lower_bound = 0;      // max over time of the live static (aligned) buffer bytes
  std::int64_t unplanned_peak = 0;   // the same with no reuse at all: Σ of every static buffer
  constexpr std::int64_t pool_bytes(std::int32_t p) const { return pools[static_cast<std::size_t>(p)].static_bytes; }
  constexpr std::int32_t n_pools() const { return static_cast<std::int32_t>(pools.size()); }

  // Run time: the byte offset of buffer b and the size of pool p, given the symbols' values.
  template <class Values>
  constexpr std::int64_t offset_of(std::int32_t b, const Values& v) const {
    const arena_slot& s = slots[static_cast<std::size_t>(b)];
    std::int64_t o = s.offset;
    for (std::int32_t j = 0; j < s.lane; ++j) o += detail::align_up(pools[static_cast<std::size_t>(s.pool)].lanes[static_cast<std::size_t>(j)].eval(v), arena_alignment);
    return o;
  }
  template <class Values>
  constexpr std::int64_t pool_size(std::int32_t p, const Values& v) const {
    const arena_pool& q = pools[static_cast<std::size_t>(p)];
    std::int64_t o = q.static_bytes;
    for (const auto& e : q.lanes) o += detail::align_up(e.eval(v), arena_alignment);
    return o;
  }
};

constexpr arena_plan plan_arena(const ir& g, const liveness& L_in, arena_options opt = {}, bool separate_outputs = false) {
  // A buffer whose life starts at 2s+1 (an elementwise result that may take the memory of an
  // input dying at step s) may share that input's bytes only at the same offset, which a packing
  // cannot promise: it could shift the result against the input and overwrite elements not yet
  // read. So blocks start at their defining step (Inductor's same-offset reuse is plan/reuse.hpp's,
  // and the executors pack those reuse slots; found by the differential fuzzer).
  liveness L = L_in;
  for (auto& b : L.buffers) b.begin -= b.begin & 1;
  (void)g;
  arena_plan A;
  const auto nb = static_cast<std::int32_t>(L.buffers.size());
  A.slots = detail::filled<arena_slot>(L.buffers.size(), arena_slot{});
  auto returned = [&](const buffer_life& b) { return b.is_output || b.crosses_partition; };

  // Buffers grouped by (partition, kind): a counting sort, linear.
  std::vector<std::int32_t> order;
  order.reserve(L.buffers.size());
  for (std::int32_t i = 0; i < nb; ++i) order.push_back(i);
  auto group = [&](std::int32_t i) {
    const auto& b = L.buffers[static_cast<std::size_t>(i)];
    return 2 * b.partition + (separate_outputs && returned(b) ? 1 : 0);
  };
  std::sort(order.begin(), order.end(), [&](std::int32_t p, std::int32_t q) { return group(p) != group(q) ? group(p) < group(q) : p < q; });

  std::vector<arena_block> all_static;  // for the lower bound
  std::size_t k = 0;
  while (k < order.size()) {
    const std::int32_t grp = group(order[k]);
    std::size_t e = k;
    while (e < order.size() && group(order[e]) == grp) ++e;
    const std::int32_t part = grp / 2;
    const bool ret = grp % 2 == 1;
    // Static blocks: one arena.
    std::vector<arena_block> blocks;
    std::vector<std::int32_t> ids;
    std::int64_t pb = INT64_MAX, pe = 0;
    for (std::size_t j = k; j < e; ++j) {
      const auto& b = L.buffers[static_cast<std::size_t>(order[j])];
      if (!b.bytes.is_static()) continue;
      blocks.push_back({b.begin, b.end, detail::align_up(b.bytes.value(), arena_alignment), arena_alignment});
      ids.push_back(order[j]);
    }
    // Symbolic blocks: lanes by (expression, start time). Unbacked lanes become pools of their own.
    std::vector<std::int32_t> sym;
    for (std::size_t j = k; j < e; ++j)
      if (!L.buffers[static_cast<std::size_t>(order[j])].bytes.is_static()) sym.push_back(order[j]);
    std::sort(sym.begin(), sym.end(), [&](std::int32_t p, std::int32_t q) {
      const auto& x = L.buffers[static_cast<std::size_t>(p)];
      const auto& y = L.buffers[static_cast<std::size_t>(q)];
      if (x.unbacked != y.unbacked) return y.unbacked;
      if (detail::sym_less(x.bytes, y.bytes)) return true;
      if (detail::sym_less(y.bytes, x.bytes)) return false;
      return x.begin != y.begin ? x.begin < y.begin : p < q;
    });
    std::vector<arena_pool> unbacked_pools;
    struct lane_end { std::int64_t end; std::int32_t lane; };
    auto later = [](const lane_end& a, const lane_end& b) { return a.end > b.end; };  // min-heap by end
    std::vector<lane_end> heap;
    std::vector<sym_expr> lanes;            // this group's backed lanes
    std::vector<std::int32_t> lane_of_buf;  // parallel to sym: lane index
    std::size_t s = 0;
    while (s < sym.size()) {
      const auto& first = L.buffers[static_cast<std::size_t>(sym[s])];
      std::size_t t = s;
      while (t < sym.size() && L.buffers[static_cast<std::size_t>(sym[t])].unbacked == first.unbacked &&
             L.buffers[static_cast<std::size_t>(sym[t])].bytes == first.bytes) ++t;
      heap.clear();
      for (std::size_t j = s; j < t; ++j) {
        const std::int32_t bi = sym[j];
        const auto& b = L.buffers[static_cast<std::size_t>(bi)];
        const std::int64_t bend = b.end;
        std::int32_t lane = -1;
        if (!heap.empty() && heap.front().end <= b.begin) {
          std::pop_heap(heap.begin(), heap.end(), later);
          lane = heap.back().lane;
          heap.pop_back();
        }
        if (first.unbacked) {
          if (lane < 0) {
            lane = static_cast<std::int32_t>(unbacked_pools.size());
            arena_pool q;
            q.kind = pool_kind::unbacked;
            q.partition = part;
            q.lanes.push_back(first.bytes);
            q.begin = b.begin;
            unbacked_pools.push_back(q);
          }
          auto& q = unbacked_pools[static_cast<std::size_t>(lane)];
          q.end = std::max(q.end, bend);
          q.returned = q.returned || returned(b);
          A.slots[static_cast<std::size_t>(bi)] = {-2 - lane, 0, 0};  // fixed up below
        } else {
          if (lane < 0) { lane = static_cast<std::int32_t>(lanes.size()); lanes.push_back(first.bytes); }
          A.slots[static_cast<std::size_t>(bi)] = {-1, 0, lane};
          pb = std::min(pb, b.begin);
          pe = std::max(pe, bend);
        }
        heap.push_back({bend, lane});
        std::push_heap(heap.begin(), heap.end(), later);
      }
      s = t;
    }
    if (!blocks.empty() || !lanes.empty()) {
      arena_pool q;
      q.kind = ret ? pool_kind::outputs : pool_kind::intermediates;
      q.partition = part;
      for (std::size_t j = k; j < e; ++j)
        if (A.slots[static_cast<std::size_t>(order[j])].pool >= -1 && returned(L.buffers[static_cast<std::size_t>(order[j])])) q.returned = true;
      const arena_result r = plan_arena_blocks(blocks, opt);
      q.static_bytes = r.pool_bytes;
      q.lanes = lanes;
      for (const auto& x : blocks) { pb = std::min(pb, x.lower); pe = std::max(pe, x.upper); all_static.push_back(x); }
      q.begin = pb;
      q.end = pe;
      const auto pid = static_cast<std::int32_t>(A.pools.size());
      for (std::size_t j = 0; j < ids.size(); ++j) A.slots[static_cast<std::size_t>(ids[j])] = {pid, r.offset[j], -1};
      for (auto bi : sym)
        if (A.slots[static_cast<std::size_t>(bi)].pool == -1) {
          A.slots[static_cast<std::size_t>(bi)].pool = pid;
          A.slots[static_cast<std::size_t>(bi)].offset = q.static_bytes;
        }
      A.pools.push_back(q);
    }
    const auto base = static_cast<std::int32_t>(A.pools.size());
    for (auto bi : sym) {
      auto& sl = A.slots[static_cast<std::size_t>(bi)];
      if (sl.pool <= -2) sl = {base + (-2 - sl.pool), 0, 0};
    }
    for (auto& q : unbacked_pools) A.pools.push_back(q);
    k = e;
  }
  // Peaks: pools and buffers are live over half-open intervals; a sweep over each.
  std::vector<arena_block> pool_life;
  for (const auto& q : A.pools) pool_life.push_back({q.begin, q.end, q.static_bytes, 1});
  A.peak_bytes = arena_lower_bound(pool_life);
  A.lower_bound = arena_lower_bound(all_static);
  for (const auto& x : all_static) A.unplanned_peak += x.size;
  return A;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
