// ctfx/core/symbolic.hpp — extents that are static numbers or polynomials in symbols.
//
// A symbol is either bound at run time from an input's shape ("backed", like PyTorch's s0) or is
// data-dependent ("unbacked", like u0). Sizes, strides and offsets are small polynomials in
// symbols: constant + up to two terms, each an integer coefficient times a product of up to two
// symbols. That covers contiguous strides and numels of shapes with two symbolic extents, and
// slicing by constants (s0 - 1, s0*s1 - s1). Anything larger is reported as an error naming the
// node, never truncated. The bound is deliberate: a node is copied many times in constant
// evaluation, and every scalar in it counts against the compilers' constexpr budgets.
#pragma once
#include <cstdint>
#include "config.hpp"

namespace ctfx {

/// One term of a symbolic expression: coeff times the product of up to two symbols.
struct sym_term {
  index_t coeff = 0;  ///< the coefficient
  /// The monomial's symbols, sorted ascending, -1 = unused slot. Two fields, not an array: a node
  /// holds 26 terms, and in constant evaluation each nested array is one more object to build and
  /// copy (a tensor_meta copy costs ~40% less in g++ 12; bench/RESULTS.md §1).
  std::int16_t s0 = -1;  ///< first symbol, or -1
  std::int16_t s1 = -1;  ///< second symbol, or -1
  /// Symbol k (0 or 1) of the monomial, or -1.
  constexpr std::int16_t sym(int k) const { return k == 0 ? s0 : s1; }
  /// Sets symbol k of the monomial.
  constexpr void set_sym(int k, std::int16_t v) { (k == 0 ? s0 : s1) = v; }
  /// The number of symbols in the monomial (0, 1 or 2).
  constexpr int degree() const { return (s0 >= 0) + (s1 >= 0); }
  /// Whether the two terms have the same monomial (they may be added).
  constexpr bool same_monomial(const sym_term& o) const { return s0 == o.s0 && s1 == o.s1; }
  /// A fixed order of monomials (terms are kept sorted by it).
  constexpr bool monomial_less(const sym_term& o) const { return s0 != o.s0 ? s0 < o.s0 : s1 < o.s1; }
};

/// constant + Σ terms. `overflow` records that an operation produced more than fits; the builder
/// turns it into an error that names the node.
struct sym_expr {
  index_t c = 0;  ///< the constant
  sym_term t[2]{};  ///< the terms (at most two), sorted by monomial
  std::int8_t n = 0;  ///< the number of terms used
  bool overflow = false;  ///< an operation produced more terms than fit

  constexpr sym_expr() = default;
  constexpr sym_expr(index_t v) : c(v) {}  ///< NOLINT: static extents convert implicitly
  /// The expression `1 * symbol id`.
  static constexpr sym_expr symbol(int id) {
    sym_expr e;
    e.n = 1;
    e.t[0].coeff = 1;
    e.t[0].s0 = static_cast<std::int16_t>(id);
    return e;
  }
  /// Whether the expression is a constant (no symbol, no overflow).
  constexpr bool is_static() const { return n == 0 && !overflow; }
  constexpr index_t value() const { return c; }  ///< meaningful when is_static()

  /// Equal expressions (same constant and terms).
  friend constexpr bool operator==(const sym_expr& a, const sym_expr& b) {
    if (a.n == 0 && b.n == 0) return a.c == b.c && a.overflow == b.overflow;
    if (a.c != b.c || a.n != b.n || a.overflow != b.overflow) return false;
    for (int i = 0; i < a.n; ++i)
      if (a.t[i].coeff != b.t[i].coeff || !a.t[i].same_monomial(b.t[i])) return false;
    return true;
  }

  /// Adds k·m to the polynomial, keeping terms sorted and merged.
  constexpr void add_term(const sym_term& m) {
    if (m.coeff == 0) return;
    for (int i = 0; i < n; ++i)
      if (t[i].same_monomial(m)) {
        t[i].coeff += m.coeff;
        if (t[i].coeff == 0) {
          for (int j = i; j + 1 < n; ++j) t[j] = t[j + 1];
          t[--n] = sym_term{};
        }
        return;
      }
    if (n == 2) { overflow = true; return; }
    int pos = n;
    while (pos > 0 && m.monomial_less(t[pos - 1])) { t[pos] = t[pos - 1]; --pos; }
    t[pos] = m;
    ++n;
  }

  /// The sum (overflow when more than two distinct monomials remain).
  friend constexpr sym_expr operator+(sym_expr a, const sym_expr& b) {
    if (b.n == 0 && !b.overflow) { a.c += b.c; return a; }  // the common, static case
    a.c += b.c;
    a.overflow = a.overflow || b.overflow;
    for (int i = 0; i < b.n; ++i) a.add_term(b.t[i]);
    return a;
  }
  /// The negation.
  friend constexpr sym_expr operator-(const sym_expr& a) {
    sym_expr r = a;
    r.c = -r.c;
    for (int i = 0; i < r.n; ++i) r.t[i].coeff = -r.t[i].coeff;
    return r;
  }
  /// The difference.
  friend constexpr sym_expr operator-(const sym_expr& a, const sym_expr& b) { return a + (-b); }

  /// The product (overflow past degree two or two terms).
  friend constexpr sym_expr operator*(const sym_expr& a, const sym_expr& b) {
    if (a.n == 0 && b.n == 0 && !a.overflow && !b.overflow) return sym_expr(a.c * b.c);
    sym_expr r(a.c * b.c);
    r.overflow = a.overflow || b.overflow;
    auto scaled = [](sym_term m, index_t k) { m.coeff *= k; return m; };
    for (int i = 0; i < a.n; ++i) r.add_term(scaled(a.t[i], b.c));
    for (int j = 0; j < b.n; ++j) r.add_term(scaled(b.t[j], a.c));
    for (int i = 0; i < a.n; ++i)
      for (int j = 0; j < b.n; ++j) {
        if (a.t[i].degree() + b.t[j].degree() > 2) { r.overflow = true; continue; }
        sym_term m;
        m.coeff = a.t[i].coeff * b.t[j].coeff;
        int k = 0;
        for (int x = 0; x < a.t[i].degree() && k < 2; ++x) m.set_sym(k++, a.t[i].sym(x));
        for (int x = 0; x < b.t[j].degree() && k < 2; ++x) m.set_sym(k++, b.t[j].sym(x));
        if (k == 2 && m.s1 < m.s0) { auto tmp = m.s0; m.s0 = m.s1; m.s1 = tmp; }
        r.add_term(m);
      }
    return r;
  }

  /// Evaluates with the symbols' values (indexed by symbol id).
  template <class Values>
  constexpr index_t eval(const Values& v) const {
    index_t r = c;
    for (int i = 0; i < n; ++i) {
      index_t m = t[i].coeff;
      for (int k = 0; k < t[i].degree(); ++k) m *= v[static_cast<std::size_t>(t[i].sym(k))];
      r += m;
    }
    return r;
  }
  /// Whether symbol `sym` appears in the expression.
  constexpr bool uses(int sym) const {
    for (int i = 0; i < n; ++i)
      if (t[i].s0 == sym || t[i].s1 == sym) return true;
    return false;
  }
};

// Three-valued comparisons: symbols are positive sizes, but nothing more is assumed.
constexpr bool known_equal(const sym_expr& a, const sym_expr& b) { return a == b; }
constexpr bool known_le(const sym_expr& a, const sym_expr& b) {
  sym_expr d = b - a;
  return d.is_static() && d.value() >= 0;
}

}  // namespace ctfx
