// ctfx/graph/data_dependent.hpp — values read from tensors (PyTorch's item(), _local_scalar_dense)
// and the run-time assertions on them (_assert_scalar, torch._check).
//
// A value read from a tensor is an unbacked symbol (PyTorch's u0): a size, a slice bound or an
// index known only when the call runs. It is one integer element of a graph input (through views:
// `lens[1].item()`, `tolist()`), whose symbol records the input and the element, or of a tensor the
// graph computes, whose symbol records the node (exec/computed_values.hpp computes it ahead). A
// call binds every such value with the symbols of the input shapes (exec/input_values.hpp), so
// every check on it (slice and select bounds, assertions) runs before anything is written.
//
// An assertion is a relation of two size expressions; it becomes a guard of the graph
// (graph/sym_ops.hpp), which a call whose values break it fails (rule symbolic-guard).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string_view>
#include "builder.hpp"
#include "sym_ops.hpp"

namespace ctfx {

/// A comparison PyTorch prints in a Sym annotation (`u1 >= 0`, `Eq(u1, 4)`).
enum class sym_relation_op : std::uint8_t { ge, gt, le, lt, eq, ne };

/// `a op b`: a boolean of sizes (what `ge: "Sym(u1 >= 1)" = u >= 1` holds).
struct sym_relation {
  sym_relation_op op = sym_relation_op::eq;  ///< the comparison
  sym_expr a{};  ///< the left operand
  sym_expr b{};  ///< the right operand
};

/// The comparison spelled `text` (">=", "Eq", ...), or false.
constexpr bool sym_relation_of(std::string_view text, sym_relation_op& op) {
  if (text == ">=" || text == "Ge" || text == "GreaterThan") op = sym_relation_op::ge;
  else if (text == ">" || text == "Gt" || text == "StrictGreaterThan") op = sym_relation_op::gt;
  else if (text == "<=" || text == "Le" || text == "LessThan") op = sym_relation_op::le;
  else if (text == "<" || text == "Lt" || text == "StrictLessThan") op = sym_relation_op::lt;
  else if (text == "==" || text == "Eq") op = sym_relation_op::eq;
  else if (text == "!=" || text == "Ne") op = sym_relation_op::ne;
  else return false;
  return true;
}

/// Records that `r` must hold at run time (PyTorch's _assert_scalar): a guard of the graph unless
/// it is known to hold; false when it is known not to (no call can satisfy it).
constexpr bool sym_assert(ir& g, const sym_relation& r) {
  switch (r.op) {
    case sym_relation_op::ge: return sym_guard_le(g, r.b, r.a);
    case sym_relation_op::gt: return sym_guard_le(g, r.b + sym_expr(1), r.a);
    case sym_relation_op::le: return sym_guard_le(g, r.a, r.b);
    case sym_relation_op::lt: return sym_guard_le(g, r.a + sym_expr(1), r.b);
    case sym_relation_op::eq: return sym_guard_equal(g, r.a, r.b);
    case sym_relation_op::ne: {  // |a - b| >= 1
      const sym_expr d = r.a - r.b;
      if (d.is_static()) return d.value() != 0;
      return sym_guard_le(g, sym_expr(1), sym_max(g, d, -d));
    }
  }
  return false;
}

/// Whether symbol `s` is a value read from an input tensor (item()), bound from its data.
constexpr bool is_input_value(const symbol& s) { return s.kind == symbol_kind::unbacked && s.input >= 0; }
/// Whether symbol `s` is a value read with item() from a tensor the graph computes (node s.dim of
/// the functional graph), computed ahead of the run from the inputs (exec/computed_values.hpp).
constexpr bool is_computed_value(const symbol& s) { return s.kind == symbol_kind::unbacked && s.input < 0 && s.dim >= 0; }
/// Whether symbol `s` is a value read with item() (from an input or a computed tensor).
constexpr bool is_read_value(const symbol& s) { return is_input_value(s) || is_computed_value(s); }

/// Makes unbacked symbol `s` the value of `x.item()`, where `x` must be a one-element integral (or
/// bool) graph input or a view of one (`lens[1].item()`, `tolist()`); anything else is refused on
/// the node (rule valid-argument), false. The symbol records the input position (symbol::input)
/// and the element's offset from the input's first element (symbol::dim).
constexpr bool read_by_item(ir& g, tensor x, int s) {
  if (x.id < 0 || x.id >= g.size() || s < 0 || static_cast<std::size_t>(s) >= g.syms.size()) {
    g.fail(rule::undefined_node, -1, "item(): the tensor or the symbol is not of this graph");
    return false;
  }
  const node& n = g[x.id];
  text_buf<200> m;
  m << "node '" << n.name.view() << "': item() ";
  std::int32_t base = x.id;  // the input the value is read from, through views
  while (is_view_op(g[base].op) && g[base].nargs > 0) base = g.arg(base, 0);
  const tensor_meta& t = n.meta;
  if (g[base].op != op_kind::placeholder) {  // a value the graph computes: node x.id's element
    const sym_expr numel = t.numel();
    if (!numel.is_static() || numel.value() != 1 || (t.dt != dtype::i64 && t.dt != dtype::i32 && t.dt != dtype::i8 && t.dt != dtype::b8)) {
      m << "reads a value the graph computes (" << name_of(n.op) << "): it must be one integer (or bool) element";
      g.fail(rule::bad_argument, x.id, m.view());
      return false;
    }
    symbol& y = g.syms[static_cast<std::size_t>(s)];
    y.kind = symbol_kind::unbacked;
    y.input = -1;
    y.dim = x.id;
    return true;
  }
  const sym_expr delta = t.offset - g[base].meta.offset;
  bool static_strides = true;
  for (int d = 0; d < g[base].meta.rank; ++d) static_strides = static_strides && g[base].meta.stride[d].is_static();
  if (!delta.is_static() || !static_strides) {
    m << "reads an element of input '" << g[base].name.view() << "' whose position is symbolic: make its extents static";
    g.fail(rule::bad_argument, x.id, m.view());
    return false;
  }
  const sym_expr numel = t.numel();
  if (!numel.is_static() || numel.value() != 1) {
    m << "needs a tensor of one element";
    g.fail(rule::bad_argument, x.id, m.view());
    return false;
  }
  if (t.dt != dtype::i64 && t.dt != dtype::i32 && t.dt != dtype::i8 && t.dt != dtype::b8) {
    m << "of a " << name_of(t.dt) << " tensor is a float: ctfx takes integer values (sizes, positions) only";
    g.fail(rule::bad_argument, x.id, m.view());
    return false;
  }
  symbol& y = g.syms[static_cast<std::size_t>(s)];
  y.kind = symbol_kind::unbacked;
  y.input = g[base].aux;
  y.dim = static_cast<std::int32_t>(delta.value());
  return true;
}

/// `x.item()` of a one-element integral (or bool) graph input: a new unbacked symbol `name`, bound
/// at each call from the input's value (see read_by_item).
constexpr sym_expr item(builder& b, tensor x, std::string_view name) {
  const sym_expr u = b.unbacked(name);
  if (!read_by_item(b.g, x, u.as_symbol())) return sym_expr();
  return u;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
