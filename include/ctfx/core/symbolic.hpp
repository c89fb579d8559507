// ctfx/core/symbolic.hpp — extents that are static numbers or polynomials in symbols.
//
// A symbol is either bound at run time from an input's shape ("backed", like PyTorch's s0), is
// data-dependent ("unbacked", like u0), or stands for an operation PyTorch's sizes use that is not
// a polynomial — floor division, modulo, Max, Min — over other expressions ("derived": the graph's
// symbol table holds its definition, graph/sym_ops.hpp makes it, the binder evaluates it).
// Sizes, strides and offsets are polynomials in symbols in a canonical form (terms sorted by
// monomial, like monomials merged, no zero coefficient), so equal sizes compare equal: a constant
// plus up to sym_max_terms terms, each an integer coefficient times a product of up to
// sym_max_degree symbols. Anything larger is reported as an error naming the node, never
// truncated. The bound is deliberate: a node is copied many times in constant evaluation, and
// every scalar in it counts against the compilers' constexpr budgets; a term is two scalars (the
// monomial is packed into one integer) so that four terms cost about what two did unpacked.
#pragma once
#include "diagnostics_push.hpp"
#include <cstdint>
#include "config.hpp"

namespace ctfx {

/// The most terms (besides the constant) and the most symbols in one term of a sym_expr.
inline constexpr int sym_max_terms = 4;
/// The most symbols in one term of a sym_expr (s0*s1*s2*s3).
inline constexpr int sym_max_degree = 4;

/// Python's floor division and modulo (the result of `%` has the divisor's sign); b != 0.
constexpr index_t floor_div(index_t a, index_t b) {
  index_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
/// Python's a % b (the sign of b); b != 0.
constexpr index_t floor_mod(index_t a, index_t b) { return a - floor_div(a, b) * b; }

/// One term of a symbolic expression: coeff times a product of up to sym_max_degree symbols.
struct sym_term {
  index_t coeff = 0;  ///< the coefficient
  /// The monomial: symbol ids + 1 in 16-bit fields, ascending from the high field, 0 = unused. One
  /// integer, not an array: in constant evaluation each subobject is one more thing to build and
  /// copy, and comparing monomials is one comparison (lexicographic in the symbols: s0 < s0*s1 < s1).
  std::uint64_t mono = 0;

  /// Field k (k = 0 the high one) of a monomial: symbol id + 1, or 0.
  static constexpr std::uint64_t field(std::uint64_t m, int k) { return (m >> (48 - 16 * k)) & 0xffffu; }
  /// Symbol k (0 .. sym_max_degree - 1) of the monomial, or -1.
  constexpr int sym(int k) const { return static_cast<int>(field(mono, k)) - 1; }
  /// The number of symbols in the monomial.
  constexpr int degree() const {
    int d = 0;
    while (d < sym_max_degree && field(mono, d) != 0) ++d;
    return d;
  }
  /// Whether the two terms have the same monomial (they may be added).
  constexpr bool same_monomial(const sym_term& o) const { return mono == o.mono; }
  /// A fixed order of monomials (terms are kept sorted by it).
  constexpr bool monomial_less(const sym_term& o) const { return mono < o.mono; }
  /// Whether symbol `s` divides the monomial.
  constexpr bool has(int s) const {
    for (int k = 0; k < sym_max_degree; ++k) if (sym(k) == s) return true;
    return false;
  }
  /// The monomial of one symbol.
  static constexpr std::uint64_t mono_of(int s) { return static_cast<std::uint64_t>(s + 1) << 48; }
  /// The product of two monomials (symbols merged in ascending order); false past sym_max_degree.
  static constexpr bool mono_product(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    out = 0;
    int i = 0, j = 0, k = 0;
    while (true) {
      const std::uint64_t x = i < sym_max_degree ? field(a, i) : 0, y = j < sym_max_degree ? field(b, j) : 0;
      if (x == 0 && y == 0) return true;
      if (k == sym_max_degree) return false;
      std::uint64_t take;
      if (y == 0 || (x != 0 && x <= y)) { take = x; ++i; } else { take = y; ++j; }
      out |= take << (48 - 16 * k++);
    }
  }
  /// The monomial a / b when b divides a (multiset difference); false otherwise.
  static constexpr bool mono_quotient(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
    out = 0;
    int j = 0, k = 0;
    for (int i = 0; i < sym_max_degree && field(a, i) != 0; ++i) {
      const std::uint64_t x = field(a, i), y = j < sym_max_degree ? field(b, j) : 0;
      if (y != 0 && y < x) return false;  // b has a symbol a lacks
      if (y == x) { ++j; continue; }
      out |= x << (48 - 16 * k++);
    }
    return j == sym_max_degree || field(b, j) == 0;
  }
};

/// constant + Σ terms. `overflow` records that an operation produced more than fits; the builder
/// turns it into an error that names the node.
struct sym_expr {
  index_t c = 0;  ///< the constant
  sym_term t[sym_max_terms]{};  ///< the terms, sorted by monomial
  std::int8_t n = 0;  ///< the number of terms used
  bool overflow = false;  ///< an operation produced more terms or a higher degree than fit

  constexpr sym_expr() = default;
  constexpr sym_expr(index_t v) : c(v) {}  ///< NOLINT: static extents convert implicitly
  /// The expression `1 * symbol id`.
  static constexpr sym_expr symbol(int id) {
    sym_expr e;
    e.n = 1;
    e.t[0].coeff = 1;
    e.t[0].mono = sym_term::mono_of(id);
    return e;
  }
  /// Whether the expression is a constant (no symbol, no overflow).
  constexpr bool is_static() const { return n == 0 && !overflow; }
  constexpr index_t value() const { return c; }  ///< meaningful when is_static()
  /// The symbol id when the expression is exactly one symbol, else -1.
  constexpr int as_symbol() const {
    return n == 1 && c == 0 && !overflow && t[0].coeff == 1 && (t[0].mono & 0xffffffffffffu) == 0 ? static_cast<int>(t[0].mono >> 48) - 1
                                                                                                  : -1;
  }

  /// Equal expressions (same constant and terms: the form is canonical).
  friend constexpr bool operator==(const sym_expr& a, const sym_expr& b) {
    if (a.n == 0 && b.n == 0) return a.c == b.c && a.overflow == b.overflow;
    if (a.c != b.c || a.n != b.n || a.overflow != b.overflow) return false;
    for (int i = 0; i < a.n; ++i)
      if (a.t[i].coeff != b.t[i].coeff || a.t[i].mono != b.t[i].mono) return false;
    return true;
  }
  /// A total order of expressions (for sorting the operands of commutative operations).
  friend constexpr bool canonical_less(const sym_expr& a, const sym_expr& b) {
    if (a.n != b.n) return a.n < b.n;
    if (a.c != b.c) return a.c < b.c;
    for (int i = 0; i < a.n; ++i) {
      if (a.t[i].mono != b.t[i].mono) return a.t[i].mono < b.t[i].mono;
      if (a.t[i].coeff != b.t[i].coeff) return a.t[i].coeff < b.t[i].coeff;
    }
    return a.overflow < b.overflow;
  }

  /// Adds a term to the polynomial, keeping terms sorted and merged.
  constexpr void add_term(const sym_term& m) {
    if (m.coeff == 0) return;
    int pos = 0;
    while (pos < n && t[pos].mono < m.mono) ++pos;
    if (pos < n && t[pos].mono == m.mono) {
      t[pos].coeff += m.coeff;
      if (t[pos].coeff == 0) {
        for (int j = pos; j + 1 < n; ++j) t[j] = t[j + 1];
        t[--n] = sym_term{};
      }
      return;
    }
    if (n == sym_max_terms) { overflow = true; return; }
    for (int j = n; j > pos; --j) t[j] = t[j - 1];
    t[pos] = m;
    ++n;
  }

  /// The sum (overflow when more than sym_max_terms distinct monomials remain).
  friend constexpr sym_expr operator+(sym_expr a, const sym_expr& b) {
    a.c += b.c;
    if (b.n == 0 && !b.overflow) return a;  // the common, static case
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

  /// The product (overflow past sym_max_degree or sym_max_terms).
  friend constexpr sym_expr operator*(const sym_expr& a, const sym_expr& b) {
    if (a.n == 0 && b.n == 0 && !a.overflow && !b.overflow) return sym_expr(a.c * b.c);
    sym_expr r(a.c * b.c);
    r.overflow = a.overflow || b.overflow;
    for (int i = 0; i < a.n; ++i) r.add_term(sym_term{a.t[i].coeff * b.c, a.t[i].mono});
    for (int j = 0; j < b.n; ++j) r.add_term(sym_term{b.t[j].coeff * a.c, b.t[j].mono});
    for (int i = 0; i < a.n; ++i)
      for (int j = 0; j < b.n; ++j) {
        sym_term m{a.t[i].coeff * b.t[j].coeff, 0};
        if (!sym_term::mono_product(a.t[i].mono, b.t[j].mono, m.mono)) { r.overflow = true; continue; }
        r.add_term(m);
      }
    return r;
  }

  /// The exact quotient by a constant or a single term that divides every term and the constant
  /// (s0*s1*4 / 4*s1 = s0); false when the division is not exact in the polynomials.
  constexpr bool divide_exact(const sym_expr& d, sym_expr& q) const {
    if (overflow || d.overflow || !(d.n == 0 ? d.c != 0 : d.n == 1 && d.c == 0)) return false;
    const index_t k = d.n == 0 ? d.c : d.t[0].coeff;
    const std::uint64_t dm = d.n == 0 ? 0 : d.t[0].mono;
    q = sym_expr();
    if (c % k != 0 || (dm != 0 && c != 0)) return false;
    q.c = c / k;
    for (int i = 0; i < n; ++i) {
      sym_term m{t[i].coeff / k, 0};
      if (t[i].coeff % k != 0 || !sym_term::mono_quotient(t[i].mono, dm, m.mono)) return false;
      if (m.mono == 0) q.c += m.coeff; else q.add_term(m);
    }
    return true;
  }

  /// Evaluates with the symbols' values (indexed by symbol id).
  template <class Values>
  constexpr index_t eval(const Values& v) const {
    index_t r = c;
    for (int i = 0; i < n; ++i) {
      index_t m = t[i].coeff;
      for (std::uint64_t mono = t[i].mono; mono != 0; mono = (mono << 16) & ~std::uint64_t{0})
        m *= v[static_cast<std::size_t>((mono >> 48) - 1)];
      r += m;
    }
    return r;
  }
  /// Whether symbol `sym` appears in the expression.
  constexpr bool uses(int sym) const {
    for (int i = 0; i < n; ++i)
      if (t[i].has(sym)) return true;
    return false;
  }
};

/// Three-valued comparisons: symbols are non-negative sizes, but nothing more is assumed.
constexpr bool known_equal(const sym_expr& a, const sym_expr& b) { return a == b; }
/// Whether a <= b for every value of the symbols (false when it cannot be decided).
constexpr bool known_le(const sym_expr& a, const sym_expr& b) {
  sym_expr d = b - a;
  return d.is_static() && d.value() >= 0;
}

}  // namespace ctfx
#include "diagnostics_pop.hpp"
