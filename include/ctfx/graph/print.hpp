// ctfx/graph/print.hpp — FX-like text of a graph, one line per node:
//   %y : f32[10, 1004] = slice_scatter(%x, %src, dim=0, start=0, end=10)
// and the printers for the compile-time structures it is made of (sym_expr, tensor_meta,
// diagnostic). Run-time only: returns std::string.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <charconv>
#include <string>
#include "../comm/types.hpp"
#include "../ops/control.hpp"
#include "../ops/products.hpp"
#include "../ops/scatters.hpp"

namespace ctfx {

/// A size as PyTorch prints it ("2*s0 + 1").
inline std::string to_string(const ir& g, const sym_expr& e) {
  detail::msg m;
  detail::put_expr(m, g, e);
  return std::string(m.view());
}
/// A tensor's type as PyTorch's graph dumps print it: "f32[4, s0]".
inline std::string to_string(const ir& g, const tensor_meta& t) {
  detail::msg m;
  detail::put_type(m, g, t);
  return std::string(m.view());
}
/// "f32[4, 8][8, 1]+0" — with strides and offset, as PyTorch's graph dumps print them.
inline std::string layout_string(const ir& g, const tensor_meta& t) {
  std::string s = to_string(g, t) + "[";
  for (int i = 0; i < t.rank; ++i) s += (i ? ", " : "") + to_string(g, t.stride[i]);
  s += "]";
  if (!(t.offset == sym_expr(0))) s += "+" + to_string(g, t.offset);
  return s;
}
/// The error message ("ok" when there is none).
inline std::string to_string(const diagnostic& d) {
  return d.ok() ? std::string("ok") : std::string(d.message());
}

namespace detail {

// A scalar exactly: an int as its digits, a float as the shortest text that reads back to it.
inline std::string fmt_num(const scalar_value& v) {
  if (v.exact_int()) return std::to_string(v.i);
  if (v.d != v.d) return "nan";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v.d);
  return std::string(buf, r.ptr);
}
// Separators and references are appended, never prepended (`", " + std::string(...)`): g++ 12 at -O2
// and above reports a false -Wrestrict overlap inside libstdc++'s insert-at-front for that pattern.
// A scatter's combine as the listing shows it (nothing for an assignment; "reduce=add" for a sum).
inline std::string scatter_reduce_text(std::int32_t aux) {
  constexpr const char* how[] = {"", "add", "prod", "amax", "amin", "?", "?", "?"};
  if (aux == 0) return "";
  return std::string(", reduce=") + how[aux & scatter_reduce_mask] + ((aux & scatter_without_self) ? ", include_self=False" : "");
}
inline std::string ref(const ir& g, std::int32_t a) {
  if (a < 0) return "None";
  std::string s(1, '%');
  s += g[a].name.view();
  return s;
}
inline std::string int_list(const ir& g, std::span<const sym_expr> p) {
  std::string s = "[";
  for (std::size_t i = 0; i < p.size(); ++i) { if (i) s += ", "; s += to_string(g, p[i]); }
  return s + "]";
}

// The keyword parameters of a view (shared by views, scatters and the generalized scatter's chain).
inline std::string view_params(const ir& g, op_kind k, std::span<const sym_expr> p) {
  auto e = [&](std::size_t i) { return to_string(g, p[i]); };
  switch (k) {
    case op_kind::slice:
      return "dim=" + e(0) + ", start=" + e(1) + ", end=" + (p[2] == sym_expr(end_of_dim) ? std::string("None") : e(2)) +
             (p[3] == sym_expr(1) ? std::string() : ", step=" + e(3));
    case op_kind::select: return "dim=" + e(0) + ", index=" + e(1);
    case op_kind::diagonal: return "offset=" + e(0) + ", dim1=" + e(1) + ", dim2=" + e(2);
    case op_kind::as_strided: {
      auto r = static_cast<std::size_t>(p[0].value());
      return "size=" + int_list(g, p.subspan(1, r)) + ", stride=" + int_list(g, p.subspan(1 + r, r)) +
             ", storage_offset=" + e(1 + 2 * r);
    }
    case op_kind::view: case op_kind::expand: return "size=" + int_list(g, p);
    case op_kind::permute: return "dims=" + int_list(g, p);
    case op_kind::transpose: return "dim0=" + e(0) + ", dim1=" + e(1);
    case op_kind::unsqueeze: case op_kind::squeeze: return "dim=" + e(0);
    default: return {};
  }
}

inline std::string call_text(const ir& g, std::int32_t i) {
  const node& n = g[i];
  auto a = g.args_of(i);
  auto p = g.params_of(n);
  std::string s;
  auto sep = [&] { if (!s.empty()) s += ", "; };
  auto args_list = [&](std::size_t from, std::size_t to) {
    std::string l = "[";
    for (std::size_t k = from; k < to; ++k) { if (k > from) l += ", "; l += ref(g, a[k]); }
    return l + "]";
  };
  switch (n.op) {
    case op_kind::getitem: s = ref(g, a[0]) + ", " + std::to_string(n.aux); break;
    case op_kind::empty: case op_kind::zeros: case op_kind::ones: case op_kind::full:
      s = int_list(g, p);
      if (n.op == op_kind::full) s += ", " + fmt_num(n.scalar);
      s += std::string(", dtype=") + std::string(name_of(static_cast<dtype>(n.aux)));
      break;
    case op_kind::fill_: s = ref(g, a[0]) + ", " + fmt_num(n.scalar); break;
    case op_kind::clone: s = ref(g, a[0]) + (n.aux == 1 ? ", memory_format=contiguous_format" : ""); break;
    case op_kind::convert: s = ref(g, a[0]) + ", " + std::string(name_of(static_cast<dtype>(n.aux))); break;
    case op_kind::index_put: case op_kind::index_put_: case op_kind::unsafe_index_put: case op_kind::unsafe_index_put_:
      s = ref(g, a[0]) + ", " + args_list(2, a.size()) + ", " + ref(g, a[1]) + (n.aux ? ", accumulate=True" : "");
      break;
    case op_kind::index: s = ref(g, a[0]) + ", " + args_list(1, a.size()); break;
    case op_kind::gather: s = ref(g, a[0]) + ", " + to_string(g, p[0]) + ", " + ref(g, a[1]); break;
    case op_kind::scatter: case op_kind::scatter_:
      s = ref(g, a[0]) + ", " + to_string(g, p[0]) + ", " + ref(g, a[2]) + ", " + ref(g, a[1]) + scatter_reduce_text(n.aux);
      break;
    case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::prod: case op_kind::mean:
      s = ref(g, a[0]) + ", " + int_list(g, p) + ((n.aux & 1) ? ", keepdim=True" : "") +
          ((n.aux & sum_in_input_dtype) ? ", dtype=" + std::string(name_of(n.meta.dt)) : "");
      break;
    case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp: s = ref(g, a[0]) + ", " + to_string(g, p[0]); break;
    case op_kind::var: case op_kind::var_mean:
      s = ref(g, a[0]) + ", " + int_list(g, p) + ", correction=" + fmt_num(n.scalar) + ((n.aux & 1) ? ", keepdim=True" : "") +
          ((n.aux & 2) ? ", of var_mean" : "");
      break;
    case op_kind::argmax: case op_kind::argmin:
      s = ref(g, a[0]) + ", " + (p.empty() ? std::string("None") : to_string(g, p[0])) + (n.aux ? ", keepdim=True" : "");
      break;
    case op_kind::cat: s = args_list(0, a.size()) + ", dim=" + to_string(g, p[0]); break;
    case op_kind::addmm: case op_kind::baddbmm: {
      const product_scalars ps = product_scalars_of(g, i);
      s = ref(g, a[0]) + ", " + ref(g, a[1]) + ", " + ref(g, a[2]);
      if (ps.beta != 1) s += ", beta=" + fmt_num(scalar_value(ps.beta));
      if (ps.alpha != 1) s += ", alpha=" + fmt_num(scalar_value(ps.alpha));
      break;
    }
    case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_: {
      auto k = static_cast<std::size_t>(n.aux);
      s = args_list(0, k) + ", " + (a.size() == 2 * k ? args_list(k, 2 * k) : fmt_num(n.scalar));
      break;
    }
    case op_kind::generalized_scatter: case op_kind::generalized_scatter_: {
      s = ref(g, a[0]) + ", " + ref(g, a[1]) + ", [";
      bool first = true;
      for (chain_cursor c{p}; !c.done(); c.next()) {
        s += (first ? "" : ", ") + std::string(name_of(c.kind())) + "(" + view_params(g, c.kind(), c.params()) + ")";
        first = false;
      }
      s += "]";
      break;
    }
    case op_kind::custom: case op_kind::auto_functionalized: {
      const custom_schema& cs = g.customs[static_cast<std::size_t>(n.aux)];
      s = std::string(cs.name.view());
      for (auto x : a) s += ", " + ref(g, x);
      if (n.clone_mask) {
        s += ", _clone=[";
        bool first = true;
        for (int b = 0; b < 32; ++b)
          if ((n.clone_mask >> b) & 1u) { if (!first) s += ", "; s += ref(g, a[static_cast<std::size_t>(b)]); first = false; }
        s += "]";
      }
      break;
    }
    case op_kind::sym_size: s = ref(g, a[0]) + ", " + to_string(g, p[0]); break;
    case op_kind::cond: case op_kind::while_loop: {
      // cond(%pred, subgraph_0, subgraph_1, (%operands...)); while_loop(subgraph_0, subgraph_1,
      // (%carried...), (%additional...)): as torch.ops.higher_order.cond and while_loop print
      auto tuple = [&](std::size_t from, std::size_t to) {
        std::string l = "(";
        for (std::size_t k = from; k < to; ++k) { if (k > from) l += ", "; l += ref(g, a[k]); }
        return l + (to - from == 1 ? ",)" : ")");
      };
      const std::string subs = "subgraph_" + std::to_string(n.aux) + ", subgraph_" + std::to_string(n.aux + 1);
      if (n.op == op_kind::cond) {
        s = ref(g, a[0]) + ", " + subs + ", " + tuple(1, a.size());
      } else {
        const auto c = static_cast<std::size_t>(carried_count(g, i));
        s = subs + ", " + tuple(0, c) + ", " + tuple(c, a.size());
        if (n.npar >= 2) s += ", in_place_body=subgraph_" + std::to_string(p[1].value());
      }
      break;
    }
    default:
      for (auto x : a) { sep(); s += ref(g, x); }
      if (is_binary(n.op) && n.aux != 0) {  // a float scalar prints as PyTorch does: 1.0, not 1
        sep();
        std::string v = fmt_num(n.scalar);
        if (n.aux == 1 && v.find_first_of(".ein") == std::string::npos) v += ".0";
        s += v;
      }
      if (is_view_op(n.op) || is_view_scatter(n.op)) {
        std::string v = view_params(g, is_view_op(n.op) ? n.op : facts(n.op).twin, p);
        if (!v.empty()) { sep(); s += v; }
      }
      if (n.op == op_kind::all_reduce || n.op == op_kind::all_reduce_ || n.op == op_kind::reduce_scatter ||
          n.op == op_kind::reduce_scatter_blocks || n.op == op_kind::reduce_scatter_blocks_) {
        sep(); s += std::string("'") + name_of(static_cast<reduce_op>(n.aux)) + "'";
      }
      if (n.op == op_kind::broadcast || n.op == op_kind::broadcast_) { sep(); s += "src=" + std::to_string(n.aux); }
      if (meets_in_blocks(n.op)) {
        sep(); s += "group_size=" + std::to_string(p[0].value());
      }
      if (n.op == op_kind::halo_exchange || n.op == op_kind::halo_exchange_) {
        sep();
        s += "halo=" + std::to_string(p[0].value()) + ", ranks=" + std::to_string(p[1].value()) + "x" +
             std::to_string(p[2].value()) + ((n.aux & 1) ? ", periodic_x" : "") + ((n.aux & 2) ? ", periodic_y" : "");
      }
  }
  return std::string(name_of(n.op)) + "(" + s + ")";
}

}  // namespace detail

/// One line for node i (without the leading indentation).
inline std::string node_text(const ir& g, std::int32_t i) {
  const node& n = g[i];
  std::string lhs(1, '%');  // appended, not prepended: see detail::ref
  lhs += n.name.view();
  if (n.meta.is_tensor()) lhs += " : " + to_string(g, n.meta);
  if (n.op == op_kind::output) {
    std::string s = "return (";
    auto a = g.args_of(i);
    for (std::size_t k = 0; k < a.size(); ++k) { if (k) s += ", "; s += detail::ref(g, a[k]); }
    return s + (a.size() == 1 ? ",)" : ")");
  }
  return lhs + " = " + detail::call_text(g, i);
}

/// The whole graph: a header with the inputs, then one indented line per node.
inline std::string to_text(const ir& g) {
  std::string s = "graph(";
  bool first = true;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == op_kind::placeholder) {
      s += (first ? "" : ", ") + std::string("%") + std::string(g[i].name.view()) + " : " + to_string(g, g[i].meta);
      first = false;
    }
  s += "):\n";
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op != op_kind::placeholder) s += "  " + node_text(g, i) + "\n";
  // The subgraphs of control-flow nodes, each as a graph of its own, indented under its number.
  for (std::size_t k = 0; k < g.subgraphs.size(); ++k) {
    s += "subgraph_" + std::to_string(k) + " = ";
    const std::string sub = to_text(g.subgraphs[k]);
    for (std::size_t b = 0; b < sub.size();) {
      const std::size_t e = sub.find('\n', b);
      s += (b ? "  " : "") + sub.substr(b, e - b + 1);
      b = e + 1;
    }
  }
  return s;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
