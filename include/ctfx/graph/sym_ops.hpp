// ctfx/graph/sym_ops.hpp — the integer operations of PyTorch's sizes that are not polynomials:
// floor division, modulo (Python's: the result has the divisor's sign), Max and Min, and the
// guards PyTorch relied on. Each is simplified where the answer is known (constants, exact
// division, equal or ordered operands); otherwise it becomes a derived symbol of the graph's
// symbol table, made once per distinct (op, a, b) so that the same expression compares equal,
// and evaluated at run time after the input symbols (eval_derived).
#pragma once
#include "../core/diagnostics_push.hpp"
#include "ir.hpp"

namespace ctfx {

namespace detail {
// The derived symbol (op, a, b): an existing one with the same definition, or a new one.
constexpr sym_expr derive(ir& g, sym_op op, const sym_expr& a, const sym_expr& b) {
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    const symbol& x = g.syms[s];
    if (x.kind == symbol_kind::derived && x.op == op && x.a == a && x.b == b) return sym_expr::symbol(static_cast<int>(s));
  }
  symbol s{};
  s.kind = symbol_kind::derived;
  s.op = op;
  s.a = a;
  s.b = b;
  g.syms.push_back(s);
  sym_expr r = sym_expr::symbol(static_cast<int>(g.syms.size()) - 1);
  r.overflow = a.overflow || b.overflow;
  return r;
}
}  // namespace detail

/// a // b (Python's floor division). b must not be 0 (a static 0 gives an overflowed expression:
/// the builder reports it on the node).
constexpr sym_expr sym_floordiv(ir& g, const sym_expr& a, const sym_expr& b) {
  if (b.is_static() && b.value() == 0) { sym_expr r; r.overflow = true; return r; }
  if (a.is_static() && b.is_static()) return sym_expr(floor_div(a.value(), b.value()));
  if (a == b) return sym_expr(1);
  sym_expr q;
  if (a.divide_exact(b, q)) return q;
  // (k*p + r) // k = p + r // k for a polynomial p with integer values and a constant k > 0.
  if (b.is_static() && b.value() > 0) {
    sym_expr rest = a;
    rest.c = 0;
    if (rest.divide_exact(b, q)) return q + sym_expr(floor_div(a.c, b.value()));
  }
  return detail::derive(g, sym_op::floordiv, a, b);
}

/// a % b (Python's modulo: the result has the sign of b).
constexpr sym_expr sym_mod(ir& g, const sym_expr& a, const sym_expr& b) {
  if (b.is_static() && b.value() == 0) { sym_expr r; r.overflow = true; return r; }
  if (a.is_static() && b.is_static()) return sym_expr(floor_mod(a.value(), b.value()));
  if (a == b || (b.is_static() && (b.value() == 1 || b.value() == -1))) return sym_expr(0);
  sym_expr q;
  if (b.is_static() && b.value() > 0) {
    sym_expr rest = a;
    rest.c = 0;
    if (rest.divide_exact(b, q)) return sym_expr(floor_mod(a.c, b.value()));
  } else if (a.divide_exact(b, q)) {
    return sym_expr(0);
  }
  return detail::derive(g, sym_op::mod, a, b);
}

/// Max(a, b) / Min(a, b): known where the difference is a constant; otherwise a derived symbol
/// with its operands in a fixed order (Max(s0, 1) is Max(1, s0)).
constexpr sym_expr sym_max(ir& g, const sym_expr& a, const sym_expr& b) {
  if (known_le(a, b)) return b;
  if (known_le(b, a)) return a;
  return canonical_less(b, a) ? detail::derive(g, sym_op::max, b, a) : detail::derive(g, sym_op::max, a, b);
}
/// Min(a, b), as sym_max.
constexpr sym_expr sym_min(ir& g, const sym_expr& a, const sym_expr& b) {
  if (known_le(a, b)) return a;
  if (known_le(b, a)) return b;
  return canonical_less(b, a) ? detail::derive(g, sym_op::min, b, a) : detail::derive(g, sym_op::min, a, b);
}

/// Records that a == b must hold at run time (a PyTorch guard ctfx cannot prove, such as
/// (s0//2)*2 == s0 behind a view); returns false when it is known false.
constexpr bool sym_guard_equal(ir& g, const sym_expr& a, const sym_expr& b) {
  if (a == b) return true;
  const sym_expr d = a - b;
  if (d.is_static()) return false;
  const bool swap = canonical_less(b, a);
  detail::derive(g, sym_op::guard, swap ? b : a, swap ? a : b);
  return true;
}

/// Records that a <= b must hold at run time (as Max(a, b) == b) unless it is known; false when it
/// is known false.
constexpr bool sym_guard_le(ir& g, const sym_expr& a, const sym_expr& b) {
  if (known_le(a, b)) return true;
  const sym_expr d = b - a;
  if (d.is_static()) return false;
  return sym_guard_equal(g, sym_max(g, a, b), b);
}

/// Whether an expression uses a derived symbol (its value is not a polynomial in the inputs').
constexpr bool uses_derived(const ir& g, const sym_expr& e) {
  for (int i = 0; i < e.n; ++i)
    for (int k = 0; k < sym_max_degree; ++k) {
      const int s = e.t[i].sym(k);
      if (s >= 0 && static_cast<std::size_t>(s) < g.syms.size() && g.syms[static_cast<std::size_t>(s)].kind == symbol_kind::derived)
        return true;
    }
  return false;
}

/// The value of derived symbol `s` from the values of the symbols before it; false for a division
/// by zero or a guard that does not hold. (G: the graph, or anything with its symbol table as `syms`.)
template <class Values, class G = ir>
constexpr bool eval_derived(const G& g, std::size_t s, Values& v) {
  const symbol& x = g.syms[s];
  const index_t a = x.a.eval(v), b = x.b.eval(v);
  switch (x.op) {
    case sym_op::floordiv: if (b == 0) return false; v[s] = floor_div(a, b); return true;
    case sym_op::mod: if (b == 0) return false; v[s] = floor_mod(a, b); return true;
    case sym_op::max: v[s] = a < b ? b : a; return true;
    case sym_op::min: v[s] = a < b ? a : b; return true;
    case sym_op::guard: v[s] = a == b; return a == b;
    case sym_op::order: {
      bool holds = false;
      switch (x.rel) {
        case sym_rel::eq: holds = a == b; break;
        case sym_rel::ne: holds = a != b; break;
        case sym_rel::ge: holds = a >= b; break;
        case sym_rel::lt: holds = a < b; break;
        case sym_rel::divides: holds = b != 0 && floor_mod(a, b) == 0; break;
        case sym_rel::not_divides: holds = b == 0 || floor_mod(a, b) != 0; break;
      }
      v[s] = holds;
      return holds;
    }
    case sym_op::none: break;
  }
  return false;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
