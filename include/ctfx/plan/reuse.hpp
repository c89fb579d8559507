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
#include <algorithm>
#include <vector>
#include "../analysis/liveness.hpp"

namespace ctfx {

enum class line_kind : std::uint8_t { allocate, reuse, free, dropped };

struct plan_line {
  line_kind kind = line_kind::allocate;
  std::int32_t buffer = -1;  // index into liveness::buffers
  std::int32_t from = -1;    // reuse: the buffer whose memory is taken
  std::int64_t time = 0;     // half-step at which the line runs
};

namespace detail {

// Range-add / range-max segment tree over half-step times (for the peak veto).
struct max_tree {
  std::int64_t n = 1;
  std::vector<std::int64_t> mx, add;
  constexpr explicit max_tree(std::int64_t size) {
    while (n < size) n *= 2;
    mx.reserve(static_cast<std::size_t>(2 * n));
    add.reserve(static_cast<std::size_t>(2 * n));
    for (std::int64_t i = 0; i < 2 * n; ++i) { mx.push_back(0); add.push_back(0); }
  }
  constexpr void update(std::int64_t l, std::int64_t r, std::int64_t v, std::int64_t x, std::int64_t lo, std::int64_t hi) {
    if (r <= lo || hi <= l) return;
    auto ux = static_cast<std::size_t>(x);
    if (l <= lo && hi <= r) { mx[ux] += v; add[ux] += v; return; }
    std::int64_t mid = (lo + hi) / 2;
    update(l, r, v, 2 * x, lo, mid);
    update(l, r, v, 2 * x + 1, mid, hi);
    mx[ux] = std::max(mx[static_cast<std::size_t>(2 * x)], mx[static_cast<std::size_t>(2 * x + 1)]) + add[ux];
  }
  constexpr std::int64_t query(std::int64_t l, std::int64_t r, std::int64_t x, std::int64_t lo, std::int64_t hi) const {
    if (r <= lo || hi <= l) return INT64_MIN / 4;
    auto ux = static_cast<std::size_t>(x);
    if (l <= lo && hi <= r) return mx[ux];
    std::int64_t mid = (lo + hi) / 2;
    return std::max(query(l, r, 2 * x, lo, mid), query(l, r, 2 * x + 1, mid, hi)) + add[ux];
  }
  constexpr void add_range(std::int64_t l, std::int64_t r, std::int64_t v) { if (l < r) update(l, r, v, 1, 0, n); }
  constexpr std::int64_t max_in(std::int64_t l, std::int64_t r) const { return l < r ? query(l, r, 1, 0, n) : 0; }
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

constexpr reuse_plan plan_reuse(const liveness& L) {
  reuse_plan R;
  const auto nb = static_cast<std::int32_t>(L.buffers.size());
  // Key ids: buffers sorted by (dtype, bytes), equal keys get equal ids (N log N).
  std::vector<std::int32_t> order;
  order.reserve(static_cast<std::size_t>(nb));
  for (std::int32_t i = 0; i < nb; ++i) order.push_back(i);
  auto key_less = [&](std::int32_t a, std::int32_t b) {
    const auto& x = L.buffers[static_cast<std::size_t>(a)];
    const auto& y = L.buffers[static_cast<std::size_t>(b)];
    if (x.dt != y.dt) return x.dt < y.dt;
    return detail::sym_less(x.bytes, y.bytes);
  };
  std::sort(order.begin(), order.end(), key_less);
  std::vector<std::int32_t> key;
  key.reserve(static_cast<std::size_t>(nb));
  for (std::int32_t i = 0; i < nb; ++i) key.push_back(0);
  std::int32_t nkeys = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && key_less(order[k - 1], order[k])) ++nkeys;
    key[static_cast<std::size_t>(order[k])] = nkeys;
  }
  if (nb > 0) ++nkeys;

  // The timeline without reuse holds, for the veto.
  std::int64_t horizon = 2 * static_cast<std::int64_t>(L.steps.size()) + 2;
  detail::max_tree live(horizon);
  for (const auto& b : L.buffers)
    if (b.bytes.is_static()) live.add_range(b.begin, b.end, b.bytes.value());
  const std::int64_t peak = live.max_in(0, horizon);

  // Events: (time, is_alloc, buffer). Frees sort before allocations at equal times.
  struct event { std::int64_t t; int alloc; std::int32_t b; };
  std::vector<event> ev;
  ev.reserve(static_cast<std::size_t>(2 * nb));
  for (std::int32_t i = 0; i < nb; ++i) {
    const auto& b = L.buffers[static_cast<std::size_t>(i)];
    ev.push_back({b.begin, 1, i});
    if (!b.is_output) ev.push_back({b.end, 0, i});
  }
  std::sort(ev.begin(), ev.end(), [](const event& a, const event& b) {
    return a.t != b.t ? a.t < b.t : a.alloc != b.alloc ? a.alloc < b.alloc : a.b < b.b;
  });
  std::vector<std::size_t> free_line;  // per buffer: the index of its free line
  free_line.reserve(static_cast<std::size_t>(nb));
  for (std::int32_t i = 0; i < nb; ++i) free_line.push_back(0);
  std::vector<std::vector<std::int32_t>> free_list;
  free_list.reserve(static_cast<std::size_t>(nkeys));
  for (std::int32_t k = 0; k < nkeys; ++k) free_list.emplace_back();
  std::int32_t partition = 0;
  for (const auto& e : ev) {
    const auto& b = L.buffers[static_cast<std::size_t>(e.b)];
    if (e.alloc && b.partition != partition) {  // a new partition starts with nothing to reuse
      for (auto& fl : free_list) fl.clear();
      partition = b.partition;
    }
    auto& fl = free_list[static_cast<std::size_t>(key[static_cast<std::size_t>(e.b)])];
    if (!e.alloc) {
      // A buffer handed from one partition to another is an input of its reader: freed, not reused.
      if (!b.crosses_partition) fl.push_back(e.b);
      free_line[static_cast<std::size_t>(e.b)] = R.lines.size();
      R.lines.push_back({line_kind::free, e.b, -1, e.t});
      continue;
    }
    bool reused = false;
    if (!fl.empty()) {
      std::int32_t old = fl.back();
      const auto& o = L.buffers[static_cast<std::size_t>(old)];
      bool ok = o.end == b.begin || !b.bytes.is_static() ||
                live.max_in(o.end, b.begin) + b.bytes.value() <= peak;
      if (ok) {
        fl.pop_back();
        if (b.bytes.is_static()) live.add_range(o.end, b.begin, b.bytes.value());
        // The free line of `old` becomes part of the reuse line (free-if-not-reused).
        R.lines[free_line[static_cast<std::size_t>(old)]].kind = line_kind::dropped;
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
  std::erase_if(R.lines, [](const plan_line& l) { return l.kind == line_kind::dropped; });
  return R;
}

}  // namespace ctfx
