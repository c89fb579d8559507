// ctfx/graph/fx_print.hpp — a graph printed back as PyTorch's readable GraphModule code, the format
// graph/fx_parse.hpp reads: `to_fx(parse_fx(t).graph)` re-parses into the same graph, cond and
// while_loop with their graph modules nested as print_readable nests them. Run-time only
// (std::string). Symbols print by name inside the type annotations and size lists (`"f32[s0, 8]..."`);
// no Sym placeholders are printed, since the parser binds symbols from the tensor inputs.
// Ops with no functional FX spelling (the generalized scatter of a reinplaced graph) print as a
// comment holding ctfx's own line.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <charconv>
#include <cmath>
#include <span>
#include <string>
#include "fx_opmap.hpp"
#include "fx_parse.hpp"
#include "print.hpp"

namespace ctfx {

namespace fx {

inline std::string torch_dtype(dtype d) {
  switch (d) {
    case dtype::b8: return "torch.bool";
    case dtype::i8: return "torch.int8";
    case dtype::i32: return "torch.int32";
    case dtype::i64: return "torch.int64";
    case dtype::f16: return "torch.float16";
    case dtype::bf16: return "torch.bfloat16";
    case dtype::f32: return "torch.float32";
    case dtype::f64: return "torch.float64";
  }
  return "?";
}

// Python's repr of a float: the shortest text that reads back to the same double.
inline std::string py_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}
// A scalar as Python prints it: an int exactly, a bool as True/False, a float as its repr.
inline std::string py_scalar(const scalar_value& v) {
  if (v.kind == scalar_kind::boolean) return v.i ? "True" : "False";
  if (v.kind == scalar_kind::integral) return std::to_string(v.i);
  return py_float(v.d);
}

inline std::string type_of(const ir& g, const tensor_meta& m) {
  std::string s = std::string(name_of(m.dt)) + "[";
  for (int d = 0; d < m.rank; ++d) s += (d ? ", " : "") + to_string(g, m.size[d]);
  s += "][";
  for (int d = 0; d < m.rank; ++d) s += (d ? ", " : "") + to_string(g, m.stride[d]);
  return s + "]cpu";
}

inline std::string name_ref(const ir& g, std::int32_t a) { return a < 0 ? "None" : std::string(g[a].name.view()); }
inline std::string sizes(const ir& g, std::span<const sym_expr> p) {
  std::string s = "[";
  for (std::size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + to_string(g, p[i]);
  return s + "]";
}
inline std::string refs(const ir& g, std::span<const std::int32_t> a) {
  std::string s = "[";
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + name_ref(g, a[i]);
  return s + "]";
}
inline std::string param(const ir& g, const sym_expr& e) {
  return e == sym_expr(end_of_dim) ? std::string("9223372036854775807") : to_string(g, e);
}

// The right-hand side of node i, or "" when it has no FX spelling.
inline std::string fx_call(const ir& g, std::int32_t i, std::span<const fx_custom> customs) {
  const node& n = g[i];
  auto a = g.args_of(i);
  auto p = g.params_of(n);
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : ", ") + x; };
  auto op = [&](std::string_view name) { return "torch.ops." + std::string(name) + "(" + s + ")"; };
  switch (n.op) {
    case op_kind::getitem: return name_ref(g, a[0]) + "[" + std::to_string(n.aux + getitem_offset(g, a[0])) + "]";
    case op_kind::slice: case op_kind::slice_scatter: case op_kind::select: case op_kind::select_scatter:
    case op_kind::diagonal: case op_kind::diagonal_scatter: case op_kind::transpose: case op_kind::unsqueeze:
    case op_kind::squeeze: case op_kind::sym_size:
      for (auto x : a) add(name_ref(g, x));
      for (const auto& x : p) add(param(g, x));
      return op(aten_name(n.op));
    case op_kind::as_strided: case op_kind::as_strided_scatter: {
      for (auto x : a) add(name_ref(g, x));
      auto r = static_cast<std::size_t>(p[0].value());
      add(sizes(g, p.subspan(1, r)));
      add(sizes(g, p.subspan(1 + r, r)));
      add(to_string(g, p[1 + 2 * r]));
      return op(aten_name(n.op));
    }
    case op_kind::view: case op_kind::expand: case op_kind::permute:
      add(name_ref(g, a[0]));
      add(sizes(g, p));
      return op(aten_name(n.op));
    case op_kind::index_put: case op_kind::index_put_: case op_kind::unsafe_index_put: case op_kind::unsafe_index_put_:
      add(name_ref(g, a[0]));
      add(refs(g, a.subspan(2)));
      add(name_ref(g, a[1]));
      if (n.aux) add("True");
      return op(aten_name(n.op));
    case op_kind::index:
      add(name_ref(g, a[0]));
      add(refs(g, a.subspan(1)));
      return op(aten_name(n.op));
    case op_kind::gather:
      add(name_ref(g, a[0]));
      add(to_string(g, p[0]));
      add(name_ref(g, a[1]));
      return op(aten_name(n.op));
    case op_kind::scatter: case op_kind::scatter_:
      add(name_ref(g, a[0]));
      add(to_string(g, p[0]));
      add(name_ref(g, a[2]));
      add(name_ref(g, a[1]));
      if (n.aux == 1) return op(n.op == op_kind::scatter ? "aten.scatter_add.default" : "aten.scatter_add_.default");
      if (n.aux != 0) {  // scatter_reduce: its combine by name, include_self when False
        constexpr const char* how[] = {"", "sum", "prod", "amax", "amin", "", "", ""};
        add(std::string("'") + how[n.aux & scatter_reduce_mask] + "'");
        if (n.aux & scatter_without_self) add("include_self = False");
        return op(n.op == op_kind::scatter ? "aten.scatter_reduce.two" : "aten.scatter_reduce_.two");
      }
      return op(aten_name(n.op));
    case op_kind::prod:  // prod.dim_int (one dim) or prod.default (every dim)
      add(name_ref(g, a[0]));
      if (!p.empty()) add(to_string(g, p[0]));
      if (!p.empty() && (n.aux & 1)) add("True");
      if (n.aux & sum_in_input_dtype) add("dtype = " + torch_dtype(n.meta.dt));
      return op(p.empty() ? "aten.prod.default" : "aten.prod.dim_int");
    case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::mean:
      add(name_ref(g, a[0]));
      add(sizes(g, p));
      if (n.aux & 1) add("True");
      if (n.aux & sum_in_input_dtype) add("dtype = " + torch_dtype(n.meta.dt));
      return op(aten_name(n.op));
    case op_kind::var: case op_kind::var_mean: {  // var_mean's: element [0] or [1] of the call (to_fx prints the call)
      add(name_ref(g, a[0]));
      add(p.empty() ? std::string("None") : sizes(g, p));
      add("correction = " + py_float(n.scalar.d));
      if (n.aux & 1) add("keepdim = True");
      return op(n.op == op_kind::var && (n.aux & 2) == 0 ? "aten.var.correction" : "aten.var_mean.correction");
    }
    case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp:
      add(name_ref(g, a[0]));
      add(to_string(g, p[0]));
      return op(aten_name(n.op));
    case op_kind::argmax: case op_kind::argmin:  // (x), (x, dim), (x, dim, True) or (x, None, True)
      add(name_ref(g, a[0]));
      if (!p.empty() || n.aux) add(p.empty() ? std::string("None") : to_string(g, p[0]));
      if (n.aux) add("True");
      return op(aten_name(n.op));
    case op_kind::cat:
      add(refs(g, a));
      add(to_string(g, p[0]));
      return op(aten_name(n.op));
    case op_kind::addmm: case op_kind::baddbmm: {  // beta and alpha, keyword-only, where not 1
      for (auto x : a) add(name_ref(g, x));
      const product_scalars ps = product_scalars_of(g, i);
      if (ps.beta != 1) add("beta = " + py_scalar(scalar_value(ps.beta)));
      if (ps.alpha != 1) add("alpha = " + py_scalar(scalar_value(ps.alpha)));
      return op(aten_name(n.op));
    }
    case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_: {
      auto k = static_cast<std::size_t>(n.aux);
      add(refs(g, a.subspan(0, k)));
      std::string name(aten_name(n.op));
      if (a.size() == 2 * k) add(refs(g, a.subspan(k, k)));
      else {
        add(py_scalar(n.scalar));
        name = name.substr(0, name.size() - 4) + "Scalar";
      }
      return op(name);
    }
    case op_kind::all_reduce: case op_kind::all_reduce_:
      add(name_ref(g, a[0]));
      add(std::string("'") + name_of(static_cast<reduce_op>(n.aux)) + "'");
      add("'0'");
      return op(aten_name(n.op));
    case op_kind::broadcast: case op_kind::broadcast_:
      add(name_ref(g, a[0]));
      add(std::to_string(n.aux));
      add("'0'");
      return op(aten_name(n.op));
    case op_kind::all_gather:
      add(name_ref(g, a[0]));
      add(to_string(g, p[0]));
      add("'0'");
      return op(aten_name(n.op));
    case op_kind::reduce_scatter:
      add(name_ref(g, a[0]));
      add(std::string("'") + name_of(static_cast<reduce_op>(n.aux)) + "'");
      add(to_string(g, p[0]));
      add("'0'");
      return op(aten_name(n.op));
    case op_kind::halo_exchange: case op_kind::halo_exchange_:
    case op_kind::all_gather_blocks: case op_kind::all_gather_blocks_:
    case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_:
      return {};  // ctfx's own ops: no PyTorch spelling
    case op_kind::empty: case op_kind::zeros: case op_kind::ones: case op_kind::full:
      add(sizes(g, p));
      if (n.op == op_kind::full) add(py_scalar(n.scalar));
      add("dtype = " + torch_dtype(static_cast<dtype>(n.aux)));
      return op(aten_name(n.op));
    case op_kind::clone:
      add(name_ref(g, a[0]));
      if (n.aux == 1) add("memory_format = torch.contiguous_format");
      return op(aten_name(n.op));
    case op_kind::convert:
      add(name_ref(g, a[0]));
      add(torch_dtype(static_cast<dtype>(n.aux)));
      return op(aten_name(n.op));
    case op_kind::fill_:
      add(name_ref(g, a[0]));
      add(py_scalar(n.scalar));
      return op(aten_name(n.op));
    case op_kind::custom: case op_kind::auto_functionalized: {
      const custom_schema& cs = g.customs[static_cast<std::size_t>(n.aux)];
      std::string q(cs.name.view());
      if (auto cc = q.find("::"); cc != std::string::npos) q.replace(cc, 2, ".");
      std::string_view sig{};
      for (const auto& c : customs) if (c.schema.name == cs.name) sig = c.signature;
      s = "torch.ops." + q + ".default";
      for (std::size_t k = 0; k < a.size(); ++k) {
        std::string_view an = tensor_arg_name(sig, static_cast<int>(k));
        s += ", " + (an.empty() ? "arg" + std::to_string(k) : std::string(an)) + " = " + name_ref(g, a[k]);
      }
      return op("higher_order.auto_functionalized");
    }
    case op_kind::generalized_scatter: case op_kind::generalized_scatter_: case op_kind::placeholder:
    case op_kind::output:
      return {};
    default: break;
  }
  for (auto x : a) add(name_ref(g, x));
  std::string_view name = aten_name(n.op);
  if (is_binary(n.op) && n.aux != 0) {
    add(py_scalar(n.scalar));
    if (!aten_scalar_name(n.op).empty()) name = aten_scalar_name(n.op);
  }
  if (n.op == op_kind::trunc_divide) add("rounding_mode = 'trunc'");
  return name.empty() ? std::string() : op(name);
}

// The var_mean node that pairs with var node i as the FX importer makes them from one call <c>:
// i is var_mean's var (aux bit 1) named <c>_var, the next node var_mean of the same input, dims,
// correction and keepdim, named <c>_mean. -1 otherwise (each is printed as its own call).
inline std::int32_t var_mean_partner(const ir& g, std::int32_t i) {
  const node& v = g[i];
  if (v.op != op_kind::var || (v.aux & 2) == 0 || i + 1 >= g.size()) return -1;
  const node& m = g[i + 1];
  if (m.op != op_kind::var_mean || m.aux != (v.aux & 1) || m.nargs != v.nargs || g.arg(i, 0) != g.arg(i + 1, 0) ||
      m.scalar.d != v.scalar.d || m.npar != v.npar)
    return -1;
  for (std::int32_t k = 0; k < v.npar; ++k)
    if (!(g.params_of(v)[static_cast<std::size_t>(k)] == g.params_of(m)[static_cast<std::size_t>(k)])) return -1;
  const std::string_view vn = v.name.view(), mn = m.name.view();
  if (vn.size() <= 4 || !vn.ends_with("_var") || mn != std::string(vn.substr(0, vn.size() - 4)) + "_mean") return -1;
  return i + 1;
}

}  // namespace fx

namespace fx {

// Graph g as the class `name` whose `class` line is indented by `indent` spaces: its forward, then
// the graph modules its cond and while_loop nodes call, as print_readable nests them (one level
// deeper, each module named after its role and the node's position among them: true_graph_0,
// while_loop_body_graph_1, ...).
inline std::string fx_module(const ir& g, std::span<const fx_custom> customs, const std::string& name, std::size_t indent) {
  const std::string pad(indent, ' '), body = pad + "        ";
  std::string s = pad + "class " + name + "(torch.nn.Module):\n" + pad + "    def forward(self";
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == op_kind::placeholder)
      s += ", " + std::string(g[i].name.view()) + ": \"" + fx::type_of(g, g[i].meta) + "\"";
  s += "):\n";
  std::string nested;  // the modules the control-flow nodes call
  int n_control = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    if (n.op == op_kind::placeholder) continue;
    if (n.op == op_kind::output) {
      auto a = g.args_of(i);
      s += body + "return (";
      for (std::size_t k = 0; k < a.size(); ++k) s += (k ? ", " : "") + fx::name_ref(g, a[k]);
      s += a.size() == 1 ? ",)\n" : ")\n";
      continue;
    }
    if (n.op == op_kind::cond || n.op == op_kind::while_loop) {
      // `true_graph_0 = self.true_graph_0` for each module, then the call on operand tuples.
      const std::string k = std::to_string(n_control++);
      const bool c = n.op == op_kind::cond;
      const std::string m0 = (c ? "true_graph_" : "while_loop_cond_graph_") + k, m1 = (c ? "false_graph_" : "while_loop_body_graph_") + k;
      auto tuple = [&](std::span<const std::int32_t> a) {
        std::string t = "(";
        for (std::size_t j = 0; j < a.size(); ++j) t += (j ? ", " : "") + fx::name_ref(g, a[j]);
        return t + (a.size() == 1 ? ",)" : ")");
      };
      const auto a = g.args_of(i);
      s += body + m0 + " = self." + m0 + "\n" + body + m1 + " = self." + m1 + "\n";
      s += body + std::string(n.name.view()) + " = torch.ops.higher_order." + (c ? "cond(" + fx::name_ref(g, a[0]) + ", " : std::string("while_loop(")) +
           m0 + ", " + m1 + ", ";
      if (c) s += tuple(a.subspan(1)) + ")\n";
      else {
        const auto carried = static_cast<std::size_t>(carried_count(g, i));
        s += tuple(a.subspan(0, carried)) + ", " + tuple(a.subspan(carried)) + ")\n";
      }
      nested += "\n" + fx_module(g.subgraphs[static_cast<std::size_t>(n.aux)], customs, m0, indent + 4);
      nested += "\n" + fx_module(g.subgraphs[static_cast<std::size_t>(n.aux + 1)], customs, m1, indent + 4);
      continue;
    }
    std::string rhs = fx::fx_call(g, i, customs);
    if (rhs.empty()) { s += body + "# no FX form: " + node_text(g, i) + "\n"; continue; }
    if (const std::int32_t m = fx::var_mean_partner(g, i); m >= 0) {
      // var_mean's two nodes <c>_var, <c>_mean as PyTorch writes them: one call <c>, then its
      // elements [0] and [1] (parsed back, the same two nodes with the same names)
      const std::string_view vn = n.name.view();
      const std::string c(vn.substr(0, vn.size() - 4));
      s += body + c + " = " + rhs + "\n";
      s += body + std::string(vn) + ": \"" + fx::type_of(g, n.meta) + "\" = " + c + "[0]\n";
      s += body + std::string(g[m].name.view()) + ": \"" + fx::type_of(g, g[m].meta) + "\" = " + c + "[1]\n";
      i = m;
      continue;
    }
    if (n.op == op_kind::var_mean || (n.op == op_kind::var && (n.aux & 2) != 0)) {  // the tuple's call, then its element
      s += body + std::string(n.name.view()) + "_pair = " + rhs + "\n";
      rhs = std::string(n.name.view()) + (n.op == op_kind::var ? "_pair[0]" : "_pair[1]");
    }
    s += body + std::string(n.name.view());
    if (n.op == op_kind::sym_size) {
      const tensor_meta& x = g.meta(g.arg(i, 0));
      auto d = g.iparam(i, 0);
      s += ": \"Sym(" + to_string(g, x.size[d < 0 ? d + x.rank : d]) + ")\"";
    } else if (n.meta.is_tensor()) {
      s += ": \"" + fx::type_of(g, n.meta) + "\"";
    }
    s += " = " + rhs + "\n";
  }
  return s + nested;
}

}  // namespace fx

/// The whole graph as `class GraphModule(torch.nn.Module): def forward(self, ...): ...`, followed
/// by the graph modules its cond and while_loop nodes call (nested classes, as print_readable
/// prints them). `customs` gives the keyword names of user-op arguments (otherwise arg0, arg1, ...).
inline std::string to_fx(const ir& g, std::span<const fx_custom> customs = {}) { return fx::fx_module(g, customs, "GraphModule", 0); }

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
