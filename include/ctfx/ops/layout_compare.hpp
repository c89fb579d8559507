// ctfx/ops/layout_compare.hpp — the comparisons PyTorch's stride-order rules make (x == 0, a >= b,
// a % b == 0, numel < 2), on static extents and strides, and on symbolic ones where they can be
// decided: yes, no, or unknown.
//
// A symbolic extent is a size PyTorch traced with dynamic shapes: a backed symbol (s0) is at least
// 2 there (PyTorch specializes 0 and 1), and so is an unbacked one wherever PyTorch's rules reason
// about sizes (size-oblivious); a derived symbol (s0//2, Mod, Max, Min) is bounded below by what
// its definition gives from its operands' bounds ((s0 + 1)//2 >= 1; Mod >= 0).
// A polynomial is then known to be >= 0 when each negative term is outweighed by a positive
// multiple of it (s1*s2 - s2 >= s2 * (2 - 1)), and a % b == 0 when b divides a term by term
// (s1*s2 by s2). Two strides that are not the same expression are taken to differ (they do at all
// but particular sizes). These are the facts by which the strides PyTorch printed were ordered;
// PyTorch decides what they leave open from the example sizes it traced with, which a graph does
// not hold: there the graph takes the order PyTorch printed, and records the comparisons that order
// needs as `order` symbols of the graph (ops/result_layout.hpp), checked when a run binds its
// sizes. A comparison the facts above leave open is answered by such a symbol when the graph has
// one, and otherwise, while the rule searches for the printed order, by an `order_decider`.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"

namespace ctfx::detail {

enum class tri : std::uint8_t { no, yes, unknown };

constexpr tri tri_of(bool b) { return b ? tri::yes : tri::no; }

// Static extents and strides: every comparison is decided.
struct int_compare {
  constexpr tri eq(index_t a, index_t b) const { return tri_of(a == b); }
  constexpr tri ge(index_t a, index_t b) const { return tri_of(a >= b); }
  constexpr tri ge_distinct(index_t a, index_t b) const { return tri_of(a >= b); }
  constexpr tri divides(index_t a, index_t b) const { return tri_of(b != 0 && a % b == 0); }  // a % b == 0
  constexpr index_t step(index_t s) const { return s > 1 ? s : 1; }  // a dense stride's factor
  constexpr index_t zero() const { return 0; }
};

// The answers to the comparisons a layout rule leaves open, in one run of the rule: answer k is
// bit k of `mask` (0: no), each comparison answered once per run. Every answer the run relied on is
// recorded as a fact, with those the graph's order symbols gave (note). A run that asks more than
// max_facts is `exhausted`.
struct order_decider {
  static constexpr int max_facts = 16;
  struct fact {
    sym_rel rel = sym_rel::eq;
    sym_expr a{}, b{};
  };
  std::uint32_t mask = 0;
  int bits = 0;  // the answers this run took from mask
  int used = 0;  // the facts recorded
  bool exhausted = false;
  fact facts[max_facts]{};

  constexpr void restart(std::uint32_t m) { mask = m; bits = 0; used = 0; exhausted = false; }
  constexpr void note(sym_rel rel, const sym_expr& a, const sym_expr& b) {
    for (int k = 0; k < used; ++k)
      if (facts[k].rel == rel && facts[k].a == a && facts[k].b == b) return;
    if (used >= max_facts) { exhausted = true; return; }
    facts[used++] = {rel, a, b};
  }
  // The answer to "a yes b" (its negation: a no b); `symmetric`: a and b may be swapped (==).
  constexpr tri decide(sym_rel yes, sym_rel no, const sym_expr& a, const sym_expr& b, bool symmetric) {
    for (int k = 0; k < used; ++k) {
      const fact& f = facts[k];
      const bool same = (f.a == a && f.b == b) || (symmetric && f.a == b && f.b == a);
      if (same && (f.rel == yes || f.rel == no)) return tri_of(f.rel == yes);
    }
    if (used >= max_facts || bits >= 31) { exhausted = true; return tri::no; }
    const bool y = (mask >> bits) & 1u;
    ++bits;
    facts[used++] = {y ? yes : no, a, b};
    return tri_of(y);
  }
};

// Symbolic ones. `g` (may be null) tells backed and unbacked symbols from derived ones; a symbol it
// does not list counts as backed. A comparison left open is answered by the graph's `order`
// symbols, else by `decider` (when given), else is unknown.
struct sym_compare {
  const ir* g = nullptr;
  order_decider* decider = nullptr;

  // What the graph's order symbols (or the decider) say of "a yes b", given that what is known of the sizes
  // leaves it open.
  constexpr tri open(sym_rel yes, sym_rel no, const sym_expr& a, const sym_expr& b, bool symmetric) const {
    // (the first set of comparisons of each guard: the one the graph's layouts were derived under)
    if (g)
      for (std::size_t s = 0; s < g->syms.size(); ++s) {
        const symbol& x = g->syms[s];
        if (x.kind != symbol_kind::derived || x.op != sym_op::order || x.alternative != 0 || (x.rel != yes && x.rel != no)) continue;
        if ((x.a == a && x.b == b) || (symmetric && x.a == b && x.b == a)) {
          if (decider) decider->note(x.rel, x.a, x.b);
          return tri_of(x.rel == yes);
        }
      }
    return decider ? decider->decide(yes, no, a, b, symmetric) : tri::unknown;
  }

  // The least value of a symbol: 2 for a backed or unbacked one; for a derived one, what its
  // definition gives from its operands' least values (a // b and Max/Min of them; 0 for a modulo
  // or where the operands' bounds do not tell).
  constexpr index_t least_symbol(int s) const {
    if (!g || static_cast<std::size_t>(s) >= g->syms.size()) return 2;
    const symbol& x = g->syms[static_cast<std::size_t>(s)];
    if (x.kind != symbol_kind::derived) return 2;
    index_t a = 0, b = 0;
    const bool ka = lower_bound(x.a, a) && a >= 0, kb = lower_bound(x.b, b) && b >= 0;
    switch (x.op) {
      case sym_op::floordiv: return ka && x.b.is_static() && x.b.value() > 0 ? a / x.b.value() : 0;
      case sym_op::max: return ka && kb ? (a < b ? b : a) : ka ? a : kb ? b : 0;
      case sym_op::min: return ka && kb ? (a < b ? a : b) : 0;
      default: return 0;
    }
  }
  // The least value of a monomial: the product of its symbols' (all >= 0).
  constexpr index_t least(std::uint64_t mono) const {
    index_t v = 1;
    for (int k = 0; k < sym_max_degree; ++k) {
      const int s = static_cast<int>(sym_term::field(mono, k)) - 1;
      if (s < 0) break;
      v *= least_symbol(s);
    }
    return v;
  }
  // A lower bound of p (false when none is known): each negative term paired with a positive
  // multiple of it, c'*q*m - c*m >= (c'*least(q) - c) * least(m) when c'*least(q) >= c.
  constexpr bool lower_bound(const sym_expr& p, index_t& lb) const {
    if (p.overflow) return false;
    lb = p.c;
    bool used[sym_max_terms]{};
    for (int i = 0; i < p.n; ++i) {
      if (p.t[i].coeff >= 0) continue;
      bool paired = false;
      for (int j = 0; j < p.n && !paired; ++j) {
        std::uint64_t q = 0;
        if (used[j] || p.t[j].coeff <= 0 || !sym_term::mono_quotient(p.t[j].mono, p.t[i].mono, q) || q == 0) continue;
        const index_t gain = p.t[j].coeff * least(q) + p.t[i].coeff;
        if (gain < 0) continue;
        used[j] = paired = true;
        lb += gain * least(p.t[i].mono);
      }
      if (!paired) return false;
    }
    for (int j = 0; j < p.n; ++j)
      if (!used[j] && p.t[j].coeff > 0) lb += p.t[j].coeff * least(p.t[j].mono);
    return true;
  }
  constexpr bool known_positive(const sym_expr& p) const {
    index_t lb = 0;
    return lower_bound(p, lb) && lb > 0;
  }
  constexpr bool known_nonnegative(const sym_expr& p) const {
    index_t lb = 0;
    return lower_bound(p, lb) && lb >= 0;
  }
  constexpr tri eq(const sym_expr& a, const sym_expr& b) const {
    if (a == b && !a.overflow) return tri::yes;
    const sym_expr d = a - b;
    if (d.is_static()) return tri_of(d.value() == 0);
    return known_positive(d) || known_positive(-d) ? tri::no : open(sym_rel::eq, sym_rel::ne, a, b, true);
  }
  constexpr tri ge(const sym_expr& a, const sym_expr& b) const {
    const sym_expr d = a - b;
    if (known_nonnegative(d)) return tri::yes;
    return known_positive(-d) ? tri::no : open(sym_rel::ge, sym_rel::lt, a, b, false);
  }
  // a >= b given a != b: b >= a then means a < b.
  constexpr tri ge_distinct(const sym_expr& a, const sym_expr& b) const {
    if (known_nonnegative(a - b)) return tri::yes;
    return known_nonnegative(b - a) ? tri::no : open(sym_rel::ge, sym_rel::lt, a, b, false);
  }
  constexpr tri divides(const sym_expr& a, const sym_expr& b) const {  // a % b == 0
    if (a.is_static() && b.is_static()) return tri_of(b.value() != 0 && a.value() % b.value() == 0);
    sym_expr q;
    return a.divide_exact(b, q) ? tri::yes : open(sym_rel::divides, sym_rel::not_divides, a, b, false);
  }
  constexpr sym_expr step(const sym_expr& s) const {
    if (s.is_static()) return sym_expr(s.value() > 1 ? s.value() : 1);
    return s;  // a symbolic extent is at least 2 where it orders anything (PyTorch's Max(1, s0) is s0)
  }
  constexpr sym_expr zero() const { return sym_expr(0); }
};

// Both decided and true; either unknown.
constexpr tri tri_and(tri a, tri b) {
  if (a == tri::no || b == tri::no) return tri::no;
  return a == tri::yes && b == tri::yes ? tri::yes : tri::unknown;
}

// The ge(a, b) of torch._prims_common's stride ordering: b == 0, or a != 0 and (a >= b or
// a % b == 0). Strides and extents are non-negative, so a < b with a != 0 rules out a % b == 0.
// `distinct`: a and b are taken to differ (two strides that are not the same expression, as they
// do at all but particular sizes, where PyTorch's own guards took them apart).
template <class C, class V>
constexpr tri order_ge(const C& c, const V& a, const V& b, bool distinct) {
  const tri bz = c.eq(b, c.zero());
  if (bz != tri::no) return bz;
  const tri az = c.eq(a, c.zero());
  if (az != tri::no) return az == tri::yes ? tri::no : tri::unknown;
  const tri g = distinct ? c.ge_distinct(a, b) : c.ge(a, b);
  if (g == tri::yes || c.divides(a, b) == tri::yes) return tri::yes;
  return g;
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
