// ctfx/analysis/overlap.hpp — may two layouts on one storage touch a common element?
//
// Inductor asks fake tensors (`compute_overlapping_tensors`) and assumes overlap when that raises a
// data-dependent error. ctfx answers from the static layouts alone:
//   - a symbolic size, stride or offset: assume overlap;
//   - disjoint address intervals [lo, hi]: no overlap;
//   - otherwise, when the strides of both layouts nest (each stride divides the next larger one),
//     every address has unique digits in that mixed radix, each layout is a box of digit ranges plus
//     a residue modulo the smallest stride, and two boxes overlap iff every range meets and the
//     residues agree. That separates x[:, 0:2] from x[:, 2:4] and x[::2] from x[1::2];
//   - anything else: assume overlap.
// Constant time per pair (at most 2·max_rank strides).
#pragma once
#include "../core/diagnostics_push.hpp"
#include "../core/layout.hpp"

namespace ctfx {

namespace detail {

struct addr_range { index_t lo = 0, hi = 0; bool empty = false; };

constexpr addr_range address_range(const tensor_meta& m) {
  addr_range r{m.offset.value(), m.offset.value(), false};
  for (int i = 0; i < m.rank; ++i) {
    index_t n = m.size[i].value(), s = m.stride[i].value();
    if (n == 0) { r.empty = true; return r; }
    if (s >= 0) r.hi += (n - 1) * s; else r.lo += (n - 1) * s;
  }
  return r;
}

// The layout as digit ranges over a shared radix of strides t[0] > t[1] > ... > t[k-1]: digit d
// spans [lo[d], hi[d]] and the residue modulo t[k-1] is `res`. False when the layout does not fit
// the radix without carries (then nothing is concluded).
struct digit_box { index_t lo[2 * max_rank]{}, hi[2 * max_rank]{}; index_t res = 0; };

constexpr bool to_box(const tensor_meta& m, const index_t* t, int k, digit_box& b) {
  index_t off = m.offset.value();
  if (off < 0) return false;
  b.res = off % t[k - 1];
  off /= t[k - 1];
  // Digits of the offset, least significant first, in units of the smallest stride.
  for (int d = k - 1; d >= 0; --d) {
    index_t unit = t[d] / t[k - 1];
    index_t radix = d > 0 ? t[d - 1] / t[d] : 0;  // 0: the top digit is unbounded
    index_t v = off / unit;
    if (radix) v %= radix;
    b.lo[d] = b.hi[d] = v;
    off -= v * unit;
  }
  for (int i = 0; i < m.rank; ++i) {
    index_t n = m.size[i].value(), s = m.stride[i].value();
    if (n == 1) continue;
    int d = 0;
    while (d < k && t[d] != s) ++d;
    if (d == k || b.hi[d] != b.lo[d]) return false;  // two dimensions on one digit: give up
    b.hi[d] = b.lo[d] + n - 1;
    if (d > 0 && b.hi[d] >= t[d - 1] / t[d]) return false;  // a carry into the next digit
  }
  return true;
}

}  // namespace detail

// True unless the two layouts provably touch no common element (they are assumed to share a storage).
constexpr bool may_overlap(const tensor_meta& a, const tensor_meta& b) {
  using namespace detail;
  if (!a.is_static() || !b.is_static()) return true;
  addr_range ra = address_range(a), rb = address_range(b);
  if (ra.empty || rb.empty) return false;
  if (ra.hi < rb.lo || rb.hi < ra.lo) return false;
  // The radix: the distinct strides of the non-trivial dimensions of both, descending.
  index_t t[2 * max_rank]{};
  int k = 0;
  auto add = [&](const tensor_meta& m) {
    for (int i = 0; i < m.rank; ++i) {
      if (m.size[i].value() == 1) continue;
      index_t s = m.stride[i].value();
      if (s <= 0) return false;
      int p = 0;
      while (p < k && t[p] > s) ++p;
      if (p < k && t[p] == s) continue;
      for (int q = k; q > p; --q) t[q] = t[q - 1];
      t[p] = s;
      ++k;
    }
    return true;
  };
  if (!add(a) || !add(b)) return true;
  if (k == 0) return ra.lo == rb.lo;  // two single elements
  for (int d = 1; d < k; ++d)
    if (t[d - 1] % t[d] != 0) return true;
  digit_box ba{}, bb{};
  if (!to_box(a, t, k, ba) || !to_box(b, t, k, bb)) return true;
  if (ba.res != bb.res) return false;
  for (int d = 0; d < k; ++d)
    if (ba.hi[d] < bb.lo[d] || bb.hi[d] < ba.lo[d]) return false;
  return true;
}

// A layout that reaches one element twice (an expanded dimension): writing it in place is a race.
constexpr bool has_internal_overlap(const tensor_meta& m) {
  for (int i = 0; i < m.rank; ++i)
    if (m.stride[i] == sym_expr(0) && !(m.size[i] == sym_expr(1)) && !(m.size[i] == sym_expr(0))) return true;
  return false;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
