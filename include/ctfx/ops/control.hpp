// ctfx/ops/control.hpp — the control-flow nodes, cond and while_loop, and their signature rules.
//
// A control-flow node holds whole graphs (ir::subgraphs), each with its own placeholders and
// output, as torch.ops.higher_order.cond / while_loop hold their graph modules:
//
//   cond(pred, operands...)                 aux: then-graph (aux + 1: else-graph)
//   while_loop(carried..., additional...)   aux: condition graph (aux + 1: body); params[0]: the
//                                           number of carried values
//
// Both return a tuple read with getitem: cond's element k is output k of the branch taken,
// while_loop's the k-th carried value after the last trip. Each result is a fresh buffer, laid out
// row-major: the executors run each subgraph as its own plan, which writes its outputs into the
// caller's buffers (exec/control_step.hpp).
//
// The signature rule (checked as every node's metadata rule, so by every verify): a 0-d (or
// one-element) b8 predicate; each subgraph has one placeholder per operand, of its dtype and
// extents; both branches return as many tensors, of equal dtypes and extents; the condition graph
// returns one one-element b8 tensor; the body returns one tensor per carried value, of its dtype and
// extents. Subgraph extents are compared as they are written: a subgraph's symbols are its own, so
// a symbolic extent in a subgraph is refused (static extents only, for now).
#pragma once
#include "../core/diagnostics_push.hpp"
#include "meta_util.hpp"

namespace ctfx {

/// Whether `k` is a control-flow op (it holds subgraphs).
constexpr bool is_control_op(op_kind k) { return k == op_kind::cond || k == op_kind::while_loop; }

/// The number of values a while_loop node carries (its first arguments; the rest are additional).
constexpr std::int32_t carried_count(const ir& g, std::int32_t i) {
  return g[i].npar > 0 ? static_cast<std::int32_t>(g.iparam(i, 0)) : 0;
}

/// The operands a control-flow node passes to its subgraphs, in their placeholder order: cond's
/// arguments after the predicate, all of while_loop's.
constexpr std::int32_t first_operand(const ir& g, std::int32_t i) { return g[i].op == op_kind::cond ? 1 : 0; }

namespace detail {

// Placeholder k of graph s (by input position), or -1.
constexpr std::int32_t placeholder_at(const ir& s, std::int32_t k) {
  for (std::int32_t j = 0; j < s.size(); ++j)
    if (s[j].op == op_kind::placeholder && s[j].aux == k) return j;
  return -1;
}
constexpr std::int32_t placeholder_count(const ir& s) {
  std::int32_t c = 0;
  for (std::int32_t j = 0; j < s.size(); ++j) c += s[j].op == op_kind::placeholder;
  return c;
}
// Output k of graph s (a node id, -1 for None), or -2 when s has no output or fewer outputs.
constexpr std::int32_t subgraph_output(const ir& s, std::int32_t k) {
  const std::int32_t o = s.output_node();
  if (o < 0 || k >= s[o].nargs) return -2;
  return s.arg(o, k);
}
constexpr std::int32_t output_count(const ir& s) {
  const std::int32_t o = s.output_node();
  return o < 0 ? 0 : s[o].nargs;
}
constexpr bool same_dtype_extents(const tensor_meta& a, const tensor_meta& b) {
  if (a.dt != b.dt || a.rank != b.rank) return false;
  for (int d = 0; d < a.rank; ++d)
    if (!(a.size[d] == b.size[d])) return false;
  return true;
}
constexpr bool static_extents(const tensor_meta& a) {
  for (int d = 0; d < a.rank; ++d)
    if (!a.size[d].is_static()) return false;
  return true;
}
constexpr bool one_bool(const tensor_meta& m) {
  if (m.dt != dtype::b8 || !static_extents(m)) return false;
  for (int d = 0; d < m.rank; ++d)
    if (m.size[d].value() != 1) return false;
  return true;
}
constexpr const char* subgraph_role(op_kind k, int which) {
  if (k == op_kind::cond) return which == 0 ? "then-graph" : "else-graph";
  return which == 0 ? "condition graph" : "body graph";
}

// Subgraph `which` of control node `id` takes the node's operands: one placeholder each, of the
// operand's dtype and extents.
constexpr bool check_operands(ir& g, std::int32_t id, int which) {
  const node& n = g[id];
  const ir& s = g.subgraphs[static_cast<std::size_t>(n.aux + which)];
  const std::int32_t first = first_operand(g, id), count = n.nargs - first;
  if (placeholder_count(s) != count) {
    auto m = about(g, id);
    m << "its " << subgraph_role(n.op, which) << " takes " << placeholder_count(s) << " inputs, the node passes " << count
      << "; pass one operand per placeholder of each subgraph";
    fail(g, id, rule::bad_argument, m);
    return false;
  }
  for (std::int32_t k = 0; k < count; ++k) {
    const std::int32_t a = g.arg(id, first + k);
    const std::int32_t p = placeholder_at(s, k);
    if (a < 0 || p < 0 || !g.meta(a).is_tensor()) {
      auto m = about(g, id); m << "operand " << k << " of its " << subgraph_role(n.op, which) << " is not a tensor";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    if (!static_extents(s[p].meta)) {
      auto m = about(g, id);
      m << "input '" << s[p].name.view() << "' of its " << subgraph_role(n.op, which)
        << " has a symbolic extent; subgraphs take static extents";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    if (!same_dtype_extents(g.meta(a), s[p].meta)) {
      auto m = about(g, id);
      m << "operand " << k << " '" << g[a].name.view() << "' is ";
      put_type(m, g, g.meta(a));
      m << ", input '" << s[p].name.view() << "' of its " << subgraph_role(n.op, which) << " is ";
      put_type(m, s, s[p].meta);
      fail(g, id, rule::bad_argument, m);
      return false;
    }
  }
  return true;
}

// Output k of subgraph `which` against `want` (what the other branch returns, or the carried value).
constexpr bool check_result(ir& g, std::int32_t id, int which, std::int32_t k, const tensor_meta& want, const char* against) {
  const node& n = g[id];
  const ir& s = g.subgraphs[static_cast<std::size_t>(n.aux + which)];
  const std::int32_t o = subgraph_output(s, k);
  if (o < 0 || !s.meta(o).is_tensor() || !same_dtype_extents(s.meta(o), want)) {
    auto m = about(g, id);
    m << "output " << k << " of its " << subgraph_role(n.op, which) << " is ";
    if (o < 0) m << "not a tensor";
    else put_type(m, s, s.meta(o));
    m << ", " << against << " is ";
    put_type(m, g, want);
    fail(g, id, rule::bad_argument, m);
    return false;
  }
  return true;
}

// Whether each of the first `count` placeholders of `s` is laid out as the row-major buffers the
// node's results are (so the in-place body updates them where they live).
constexpr bool row_major_inputs(const ir& s, std::int32_t count) {
  for (std::int32_t k = 0; k < count; ++k) {
    const std::int32_t p = placeholder_at(s, k);
    if (p < 0) return false;
    const tensor_meta& m = s[p].meta;
    if (!m.offset.is_static() || m.offset.value() != 0) return false;
    index_t want = 1;
    for (int d = m.rank - 1; d >= 0; --d) {
      if (!m.size[d].is_static() || !m.stride[d].is_static()) return false;
      if (m.size[d].value() > 1 && m.stride[d].value() != want) return false;
      want *= m.size[d].value();
    }
  }
  return true;
}

/// The metadata rule of a cond or while_loop node: its signature (see the file's comment); the node
/// itself is a tuple.
constexpr bool control_meta(ir& g, std::int32_t id, tensor_meta& out) {
  const node& n = g[id];
  if (n.aux < 0 || static_cast<std::size_t>(n.aux) + 2 > g.subgraphs.size()) {
    auto m = about(g, id); m << "names subgraphs " << n.aux << " and " << n.aux + 1 << ", the graph holds " << static_cast<int>(g.subgraphs.size());
    fail(g, id, rule::bad_argument, m);
    return false;
  }
  if (n.op == op_kind::cond) {
    if (n.nargs < 1 || g.arg(id, 0) < 0 || !one_bool(g.meta(g.arg(id, 0)))) {
      auto m = about(g, id); m << "its predicate must be a one-element b8 tensor";
      if (n.nargs >= 1 && g.arg(id, 0) >= 0) { m << ", it is "; put_type(m, g, g.meta(g.arg(id, 0))); }
      m << " (compare to get one: x.sum() > 0)";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    if (!check_operands(g, id, 0) || !check_operands(g, id, 1)) return false;
    const ir& t = g.subgraphs[static_cast<std::size_t>(n.aux)];
    const ir& e = g.subgraphs[static_cast<std::size_t>(n.aux + 1)];
    if (output_count(t) != output_count(e)) {
      auto m = about(g, id); m << "its then-graph returns " << output_count(t) << " values, its else-graph " << output_count(e)
                               << "; both branches must return the same values";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    for (std::int32_t k = 0; k < output_count(t); ++k) {
      const std::int32_t o = subgraph_output(t, k);
      if (o < 0 || !t.meta(o).is_tensor()) {
        auto m = about(g, id); m << "output " << k << " of its then-graph is not a tensor";
        fail(g, id, rule::bad_argument, m);
        return false;
      }
      if (!check_result(g, id, 1, k, t.meta(o), "the then-graph's")) return false;
    }
  } else {
    const std::int32_t carried = carried_count(g, id);
    if (carried < 0 || carried > n.nargs) {
      auto m = about(g, id); m << "carries " << carried << " values of its " << n.nargs << " arguments";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    if (!check_operands(g, id, 0) || !check_operands(g, id, 1)) return false;
    const ir& c = g.subgraphs[static_cast<std::size_t>(n.aux)];
    const std::int32_t co = subgraph_output(c, 0);
    if (output_count(c) != 1 || co < 0 || !one_bool(c.meta(co))) {
      auto m = about(g, id); m << "its condition graph must return one one-element b8 tensor";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    const ir& b = g.subgraphs[static_cast<std::size_t>(n.aux + 1)];
    if (output_count(b) != carried) {
      auto m = about(g, id); m << "its body graph returns " << output_count(b) << " values, the loop carries " << carried
                               << "; the body returns the next value of each carried value";
      fail(g, id, rule::bad_argument, m);
      return false;
    }
    for (std::int32_t k = 0; k < carried; ++k)
      if (!check_result(g, id, 1, k, g.meta(g.arg(id, k)), "the carried value")) return false;
  }
  out = tensor_meta{};
  out.storage = -1;  // a tuple, read with getitem
  return true;
}

/// Element `k` of a control node's tuple: a fresh row-major tensor of the branch output's (cond) or
/// the carried value's (while_loop) dtype and extents; false when k is out of range.
constexpr bool control_result_meta(const ir& g, std::int32_t tup, std::int32_t k, tensor_meta& out) {
  const node& p = g[tup];
  if (k < 0) return false;
  if (p.op == op_kind::cond) {
    if (p.aux < 0 || static_cast<std::size_t>(p.aux) >= g.subgraphs.size()) return false;
    const ir& t = g.subgraphs[static_cast<std::size_t>(p.aux)];
    const std::int32_t o = subgraph_output(t, k);
    if (o < 0) return false;
    out = contiguous_like(t.meta(o), t.meta(o).dt);
    return true;
  }
  if (k >= carried_count(g, tup)) return false;
  const tensor_meta& c = g.meta(g.arg(tup, k));
  out = contiguous_like(c, c.dt);
  return true;
}

/// The body of a while_loop in its in-place form, or an empty graph when it has none: the same
/// nodes, its outputs written back into its carried placeholders by a copy_ epilogue (as a program
/// updates its inputs), and no outputs. Reinplacing then writes each carried value where it lives
/// when nothing in the body reads the old value after the write (a Jacobi sweep whose neighbours
/// are read before the write), and copies it in where something does (the convergence test that
/// subtracts the old value): a second buffer only where the body needs one. Only for a body whose
/// every output is a fresh value (not a placeholder, nor a view of one): an output that is another
/// carried input (a swap) would read a value its own epilogue overwrote.
constexpr ir carried_in_place(const ir& body, std::int32_t carried) {
  const std::int32_t o = body.output_node();
  if (o < 0 || o != body.size() - 1 || body[o].nargs != carried || carried == 0) return {};
  for (std::int32_t k = 0; k < carried; ++k) {
    const std::int32_t v = body.arg(o, k);
    if (v < 0 || !body.meta(v).is_tensor()) return {};
    for (std::int32_t j = 0; j < body.size(); ++j)
      if (body[j].op == op_kind::placeholder && body[j].meta.storage == body.meta(v).storage) return {};
  }
  ir b = body;
  const node out = b.nodes.data()[o];
  b.nodes.pop_back();
  for (std::int32_t k = 0; k < carried; ++k) {
    node c{};
    c.op = op_kind::copy_;
    c.name = with_suffix(name_t("copy__carried"), 13, k + 1);
    const std::int32_t a[2] = {placeholder_at(b, k), body.arg(o, k)};
    if (a[0] < 0) return {};
    const std::int32_t id = b.append(c, std::span<const std::int32_t>(a, 2), {});
    b[id].meta = b.meta(a[0]);  // copy_'s rule: the destination's (the signature rule matched the extents)
  }
  node end = out;
  b.append(end, {}, {});
  return b;
}

/// The subgraph a while_loop node runs as its body: its in-place form (the pipeline's, node
/// parameter 1) where it has one whose carried inputs are row-major as the node's result buffers
/// are (then the body updates them where they live), else the body as written.
constexpr std::int32_t body_to_run(const ir& g, std::int32_t i) {
  const node& n = g[i];
  if (n.npar >= 2) {
    const auto k = static_cast<std::int32_t>(g.iparam(i, 1));
    if (row_major_inputs(g.subgraphs[static_cast<std::size_t>(k)], carried_count(g, i))) return k;
  }
  return n.aux + 1;
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
