// ctfx/ops/meta_util.hpp — helpers shared by the metadata rules: error sentences that name the
// node and the rule, shape text, dimension normalization and broadcasting.
#pragma once
#include "../core/diagnostics_push.hpp"
#include "../core/layout.hpp"
#include "../graph/ir.hpp"
#include "../graph/sym_ops.hpp"

namespace ctfx::detail {

using msg = text_buf<200>;

// Storage marker for "a fresh buffer": the caller of infer_meta assigns the actual id.
inline constexpr std::int32_t fresh = -2;

// (G: the graph, or anything with its symbol table as `syms`: exec/static_plan.hpp's.)
template <class Buf, class G = ir>
constexpr void put_expr(Buf& m, const G& g, const sym_expr& e, std::size_t below = ~std::size_t{0});
// A symbol: its name, or a derived one as PyTorch prints it: (a//b), Mod(a, b), Max(a, b), Min(a, b).
// A derived symbol's operands use only earlier symbols (`below`): a table that breaks this (a
// scratch graph's) prints s<id>, never loops.
template <class Buf, class G = ir>
constexpr void put_symbol(Buf& m, const G& g, std::size_t id, std::size_t below = ~std::size_t{0}) {
  if (id >= g.syms.size() || id >= below) { m << 's' << static_cast<int>(id); return; }
  const symbol& s = g.syms[id];
  if (s.kind != symbol_kind::derived) { m << s.name.view(); return; }
  if (s.op == sym_op::floordiv) {
    auto operand = [&](const sym_expr& x) {
      const bool wrap = x.n + (x.c != 0) > 1 || (x.n == 1 && (x.t[0].coeff != 1 || x.t[0].degree() > 1));
      if (wrap) m << '(';
      put_expr(m, g, x, id);
      if (wrap) m << ')';
    };
    m << '(';
    operand(s.a);
    m << "//";
    operand(s.b);
    m << ')';
    return;
  }
  if (s.op == sym_op::order) {  // a comparison a layout was taken under: "s1 >= 3"
    const bool mod = s.rel == sym_rel::divides || s.rel == sym_rel::not_divides;
    if (mod) m << "Mod(";
    put_expr(m, g, s.a, id);
    m << (mod ? ", " : s.rel == sym_rel::eq ? " == " : s.rel == sym_rel::ne ? " != " : s.rel == sym_rel::ge ? " >= " : " < ");
    put_expr(m, g, s.b, id);
    if (mod) m << (s.rel == sym_rel::divides ? ") == 0" : ") != 0");
    return;
  }
  m << (s.op == sym_op::mod ? "Mod(" : s.op == sym_op::max ? "Max(" : s.op == sym_op::min ? "Min(" : "Eq(");
  put_expr(m, g, s.a, id);
  m << ", ";
  put_expr(m, g, s.b, id);
  m << ')';
}
template <class Buf, class G>
constexpr void put_expr(Buf& m, const G& g, const sym_expr& e, std::size_t below) {
  if (e.overflow) { m << "<overflow>"; return; }
  bool first = true;
  for (int i = 0; i < e.n; ++i) {
    index_t c = e.t[i].coeff;
    if (!first) m << (c < 0 ? " - " : " + ");
    else if (c < 0) m << '-';
    index_t a = c < 0 ? -c : c;
    if (a != 1) m << static_cast<long long>(a) << '*';
    for (int k = 0; k < e.t[i].degree(); ++k) {
      if (k) m << '*';
      put_symbol(m, g, static_cast<std::size_t>(e.t[i].sym(k)), below);
    }
    first = false;
  }
  if (e.n == 0) m << static_cast<long long>(e.c);
  else if (e.c != 0) m << (e.c < 0 ? " - " : " + ") << static_cast<long long>(e.c < 0 ? -e.c : e.c);
}

constexpr void put_type(msg& m, const ir& g, const tensor_meta& t) {
  m << name_of(t.dt) << '[';
  for (int i = 0; i < t.rank; ++i) {
    if (i) m << ", ";
    put_expr(m, g, t.size[i]);
  }
  m << ']';
}

// "node 'y' (slice_scatter): " — every message starts by naming the node.
constexpr msg about(const ir& g, std::int32_t id) {
  msg m;
  m << "node '" << g[id].name.view() << "' (" << name_of(g[id].op) << "): ";
  return m;
}
constexpr void fail(ir& g, std::int32_t id, rule r, msg m) {
  // A long sentence is cut ("...") so that the rule's name always survives at its end.
  const std::size_t tail = 8 + name_of(r).size();  // " [rule " + name + "]"
  if (m.n + tail > sizeof(m.s) - 1) { m.n = sizeof(m.s) - 1 - tail - 3; m << "..."; }
  m << " [rule " << name_of(r) << ']';
  g.fail(r, id, m.view());
}
// Name of an argument node for messages.
constexpr std::string_view arg_name(const ir& g, std::int32_t a) {
  return a >= 0 && a < g.size() ? g[a].name.view() : std::string_view("<none>");
}

// Normalizes dim ∈ [-rank, rank) (rank+1 for unsqueeze); returns -1 after reporting an error.
constexpr int norm_dim(ir& g, std::int32_t id, index_t dim, int rank) {
  if (dim < -rank || dim >= rank || rank == 0) {
    auto m = about(g, id);
    m << "dimension " << static_cast<long long>(dim) << " is out of range for a tensor of rank " << rank;
    fail(g, id, rule::bad_dimension, m);
    return -1;
  }
  return static_cast<int>(dim < 0 ? dim + rank : dim);
}

constexpr tensor_meta contiguous_like(const tensor_meta& x, dtype dt) {
  tensor_meta r;
  r.dt = dt;
  r.rank = x.rank;
  for (int i = 0; i < x.rank; ++i) r.size[i] = x.size[i];
  r.set_contiguous();
  r.storage = fresh;
  return r;
}

// Broadcasts b into the running shape a (numpy rules). Returns false when they do not broadcast.
// Given the graph, sizes that differ through floor division or modulo (x[0::2] + x[1::2]:
// ((s0 + 1)//2) and (s0//2)) broadcast under PyTorch's guard that they are equal, checked at run time.
constexpr bool broadcast_into(tensor_meta& a, const tensor_meta& b, ir* g = nullptr) {
  int r = a.rank > b.rank ? a.rank : b.rank;
  tensor_meta out = a;
  out.rank = static_cast<std::int8_t>(r);
  for (int i = 0; i < r; ++i) {
    int ia = a.rank - r + i, ib = b.rank - r + i;
    sym_expr sa = ia >= 0 ? a.size[ia] : sym_expr(1);
    sym_expr sb = ib >= 0 ? b.size[ib] : sym_expr(1);
    if (sa == sb || sb == sym_expr(1)) out.size[i] = sa;
    else if (sa == sym_expr(1)) out.size[i] = sb;
    else if (g && (uses_derived(*g, sa) || uses_derived(*g, sb)) && sym_guard_equal(*g, sa, sb)) out.size[i] = sa;
    else return false;
  }
  a = out;
  return true;
}

constexpr bool rank_ok(ir& g, std::int32_t id, int rank) {
  if (rank > max_rank) {
    auto m = about(g, id);
    m << "a result of rank " << rank << " exceeds ctfx::max_rank = " << max_rank;
    fail(g, id, rule::rank_limit, m);
    return false;
  }
  return true;
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
