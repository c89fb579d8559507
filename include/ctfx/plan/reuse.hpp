// ctfx/plan/reuse.hpp — Inductor's default buffer reuse (codegen/wrapper.py's memory_plan_reuse),
// as a list of wrapper lines: allocate, reuse (`buf2 = buf0; del buf0  # reuse`), free-if-not-reused.
//
// A freed buffer may be taken by a later allocation with the same key (dtype, symbolic byte size),
// most recently freed first. A reuse holds the freed memory across the gap until the new buffer
// starts; it is vetoed when that would raise the peak (the gap's peak plus the size above the
// overall peak), as Inductor's EfficientPeakEstimate does. Graph outputs are never freed. Events
// are processed in half-step time order, frees before allocations at equal times, so the lifetime
// rule of analysis/liveness.hpp decides everything. Reuse never crosses a graph partition: each
// partition is its own function, and a buffer that a later partition reads is an output of its
// partition (pytorch#165514), freed only after its last use.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <vector>
#include "../analysis/liveness.hpp"
#include "../detail/cvec.hpp"
#include "../detail/fnv.hpp"

namespace ctfx {

enum class line_kind : std::uint8_t { allocate, reuse, free, dropped };

struct plan_line {
  line_kind kind = line_kind::allocate;
  std::int32_t buffer = -1;  // index into liveness::buffers
  std::int32_t from = -1;    // reuse: the buffer whose memory is taken
  std::int64_t time = 0;     // half-step at which the line runs
};

namespace detail {

// Range-add / range-max over half-step times (for the peak veto): a bottom-up segment tree,
// without recursion (nvcc's front end charges every call against its constexpr budget), built in
// O(n) from the timeline's initial values. t[p] is the max of p's leaves plus the adds pending at p
// (d[p], for inner nodes). Every loop works through raw pointers with no call inside: in g++'s
// constant evaluation a call (operator[], std::max, a helper) costs more than the arithmetic.
struct max_tree {
  std::int64_t n = 1;
  int h = 0;
  cvec<std::int64_t> t, d;
  constexpr max_tree(const std::int64_t* init, std::int64_t size) {
    while (n < size) { n *= 2; ++h; }
    t.resize(static_cast<std::size_t>(2 * n));
    d.resize(static_cast<std::size_t>(n));
    std::int64_t* T = t.data();
    for (std::int64_t i = 0; i < size; ++i) T[n + i] = init[i];
    for (std::int64_t p = n - 1; p > 0; --p) T[p] = T[2 * p] > T[2 * p + 1] ? T[2 * p] : T[2 * p + 1];
  }
  constexpr void rebuild_up(std::int64_t p) {  // p's ancestors from their children
    std::int64_t* T = t.data();
    const std::int64_t* D = d.data();
    for (p >>= 1; p > 0; p >>= 1) T[p] = (T[2 * p] > T[2 * p + 1] ? T[2 * p] : T[2 * p + 1]) + D[p];
  }
  constexpr void push_down(std::int64_t p) {  // the adds pending above leaf p, onto its path
    std::int64_t* T = t.data();
    std::int64_t* D = d.data();
    for (int s = h; s > 0; --s) {
      const std::int64_t i = p >> s;
      const std::int64_t v = D[i];
      if (v == 0) continue;
      const std::int64_t c = 2 * i;
      T[c] += v;
      T[c + 1] += v;
      if (c < n) { D[c] += v; D[c + 1] += v; }
      D[i] = 0;
    }
  }
  constexpr void add_range(std::int64_t l, std::int64_t r, std::int64_t v) {
    if (l >= r) return;
    l += n; r += n;
    const std::int64_t l0 = l, r0 = r;
    std::int64_t* T = t.data();
    std::int64_t* D = d.data();
    for (; l < r; l >>= 1, r >>= 1) {
      if (l & 1) { T[l] += v; if (l < n) D[l] += v; ++l; }
      if (r & 1) { --r; T[r] += v; if (r < n) D[r] += v; }
    }
    rebuild_up(l0);
    rebuild_up(r0 - 1);
  }
  constexpr std::int64_t max_in(std::int64_t l, std::int64_t r) {
    if (l >= r) return 0;
    l += n; r += n;
    push_down(l);
    push_down(r - 1);
    const std::int64_t* T = t.data();
    std::int64_t res = INT64_MIN / 4;
    for (; l < r; l >>= 1, r >>= 1) {
      if (l & 1) { if (T[l] > res) res = T[l]; ++l; }
      if (r & 1) { --r; if (T[r] > res) res = T[r]; }
    }
    return res;
  }
};

constexpr bool sym_less(const sym_expr& a, const sym_expr& b) {
  if (a.n != b.n) return a.n < b.n;
  if (a.c != b.c) return a.c < b.c;
  for (int i = 0; i < a.n; ++i) {
    if (a.t[i].coeff != b.t[i].coeff) return a.t[i].coeff < b.t[i].coeff;
    if (!a.t[i].same_monomial(b.t[i])) return a.t[i].monomial_less(b.t[i]);
  }
  return false;
}

}  // namespace detail

struct reuse_plan {
  std::vector<plan_line> lines;
  std::int32_t reuses = 0;
  std::int32_t vetoed = 0;
  std::int64_t peak_static_bytes = 0;  // peak of the static-size buffers with the chosen reuses
};

namespace detail {

// Key ids: buffers with equal (dtype, bytes) get equal ids, through an open-addressing hash of the
// key (linear; the ids' order does not matter, only which buffers share one).
constexpr std::uint64_t key_hash(dtype dt, const sym_expr& e) {
  std::uint64_t h = fnv_basis;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * fnv_prime; };
  mix(static_cast<std::uint64_t>(dt));
  mix(static_cast<std::uint64_t>(e.c));
  mix(static_cast<std::uint64_t>(e.n) | (e.overflow ? 0x100u : 0u));
  for (int i = 0; i < e.n; ++i) {
    mix(static_cast<std::uint64_t>(e.t[i].coeff));
    mix(e.t[i].mono);
  }
  return h;
}
constexpr std::int32_t key_ids(const buffer_life* B, std::int32_t nb, std::int32_t* key) {
  std::size_t cap = 16;
  while (cap < 2 * static_cast<std::size_t>(nb)) cap *= 2;
  cvec<std::int32_t> slot(cap, -1);  // a buffer holding the slot's key
  std::int32_t* S = slot.data();
  std::int32_t nkeys = 0;
  for (std::int32_t i = 0; i < nb; ++i) {
    std::size_t h = static_cast<std::size_t>(key_hash(B[i].dt, B[i].bytes)) & (cap - 1);
    while (S[h] >= 0 && !(B[S[h]].dt == B[i].dt && B[S[h]].bytes == B[i].bytes)) h = (h + 1) & (cap - 1);
    if (S[h] < 0) { S[h] = i; key[i] = nkeys++; } else key[i] = key[S[h]];
  }
  return nkeys;
}

}  // namespace detail

// Per buffer (of `nb`): the buffer whose memory it takes along R's reuse lines, or -1 (all -1
// without R).
constexpr detail::cvec<std::int32_t> reuse_sources(const reuse_plan* R, std::size_t nb) {
  detail::cvec<std::int32_t> from(nb, -1);
  if (R)
    for (const auto& ln : R->lines)
      if (ln.kind == line_kind::reuse && ln.buffer >= 0 && static_cast<std::size_t>(ln.buffer) < nb) from[static_cast<std::size_t>(ln.buffer)] = ln.from;
  return from;
}

// Hot loops go through raw pointers: nvcc's front end charges each accessor call against its
// constexpr budget, and g++ pays for each too.
constexpr reuse_plan plan_reuse(const liveness& L) {
  reuse_plan R;
  const auto nb = static_cast<std::int32_t>(L.buffers.size());
  const buffer_life* B = L.buffers.data();
  detail::cvec<std::int32_t> key_of(static_cast<std::size_t>(nb));
  std::int32_t* key = key_of.data();
  const std::int32_t nkeys = detail::key_ids(B, nb, key);

  // The timeline without reuse (a difference array summed once), for the veto.
  std::int64_t horizon = 2 * static_cast<std::int64_t>(L.steps.size()) + 2;
  for (std::int32_t i = 0; i < nb; ++i)
    if (B[i].end + 1 > horizon) horizon = B[i].end + 1;  // (a liveness built by hand)
  detail::cvec<std::int64_t> held(static_cast<std::size_t>(horizon + 1));
  std::int64_t* H = held.data();
  for (std::int32_t i = 0; i < nb; ++i)
    if (B[i].bytes.is_static()) {
      H[B[i].begin] += B[i].bytes.value();
      H[B[i].end] -= B[i].bytes.value();
    }
  std::int64_t peak = std::max<std::int64_t>(0, H[0]);
  for (std::int64_t t = 1; t < horizon; ++t) {
    H[t] += H[t - 1];
    if (H[t] > peak) peak = H[t];
  }
  detail::max_tree live(H, horizon);

  // Events: (time, is_alloc, buffer), frees before allocations at equal times, then by buffer:
  // a counting sort on 2·time + is_alloc (stable, and buffers are visited in index order).
  struct event { std::int64_t t; int alloc; std::int32_t b; };
  detail::cvec<std::int32_t> slot_off(static_cast<std::size_t>(2 * horizon + 3));
  std::int32_t* O = slot_off.data() + 1;  // O[2t + alloc]: first event of that slot, after the sum
  for (std::int32_t i = 0; i < nb; ++i) {
    ++O[2 * B[i].begin + 1];
    if (!B[i].is_output) ++O[2 * B[i].end];
  }
  --O;
  for (std::int64_t k = 1; k < 2 * horizon + 3; ++k) O[k] += O[k - 1];
  detail::cvec<event> events(static_cast<std::size_t>(O[2 * horizon + 2]));
  event* E = events.data();
  for (std::int32_t i = 0; i < nb; ++i) {
    E[O[2 * B[i].begin + 1]++] = {B[i].begin, 1, i};
    if (!B[i].is_output) E[O[2 * B[i].end]++] = {B[i].end, 0, i};
  }

  // Per key, a stack of freed buffers (most recently freed on top), threaded through next_free.
  detail::cvec<std::int32_t> top_of(static_cast<std::size_t>(nkeys), -1), next_of(static_cast<std::size_t>(nb), -1);
  detail::cvec<std::size_t> free_line_of(static_cast<std::size_t>(nb));  // per buffer: its free line
  std::int32_t* top = top_of.data();
  std::int32_t* next_free = next_of.data();
  std::size_t* free_line = free_line_of.data();
  R.lines.reserve(events.size());
  std::int32_t partition = 0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    const event& e = E[k];
    const buffer_life& b = B[e.b];
    if (e.alloc && b.partition != partition) {  // a new partition starts with nothing to reuse
      for (std::int32_t q = 0; q < nkeys; ++q) top[q] = -1;
      partition = b.partition;
    }
    std::int32_t& fl = top[key[e.b]];
    if (!e.alloc) {
      // A buffer handed from one partition to another is an input of its reader: freed, not reused.
      if (!b.crosses_partition) { next_free[e.b] = fl; fl = e.b; }
      free_line[e.b] = R.lines.size();
      R.lines.push_back({line_kind::free, e.b, -1, e.t});
      continue;
    }
    bool reused = false;
    if (fl >= 0) {
      const std::int32_t old = fl;
      const buffer_life& o = B[old];
      bool ok = o.end == b.begin || !b.bytes.is_static() ||
                live.max_in(o.end, b.begin) + b.bytes.value() <= peak;
      if (ok) {
        fl = next_free[old];
        if (b.bytes.is_static()) live.add_range(o.end, b.begin, b.bytes.value());
        // The free line of `old` becomes part of the reuse line (free-if-not-reused).
        R.lines[free_line[old]].kind = line_kind::dropped;
        R.lines.push_back({line_kind::reuse, e.b, old, e.t});
        ++R.reuses;
        reused = true;
      } else {
        ++R.vetoed;
      }
    }
    if (!reused) {
      R.lines.push_back({line_kind::allocate, e.b, -1, e.t});
      // A pointwise output that got fresh memory is allocated before its kernel runs, while its
      // inputs are still held: it is live from 2s, not 2s+1.
      if ((b.begin & 1) && b.bytes.is_static()) live.add_range(b.begin - 1, b.begin, b.bytes.value());
    }
  }
  R.peak_static_bytes = live.max_in(0, horizon);
  // Drop the free lines that became part of a reuse.
  plan_line* P = R.lines.data();
  std::size_t kept = 0;
  for (std::size_t k = 0; k < R.lines.size(); ++k)
    if (P[k].kind != line_kind::dropped) P[kept++] = P[k];
  R.lines.resize(kept);
  return R;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
