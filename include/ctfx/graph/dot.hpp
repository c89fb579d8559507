// ctfx/graph/dot.hpp — Graphviz text of a graph: one box per node labelled with its op, its type
// and, for views and view scatters, the view's bounds (dim, start, end, step, ...); an edge per
// argument (labelled with its position); inputs and the output highlighted; ops that write in place
// drawn in red, and a dashed red edge "after write" from such a write to each later node that reads
// the storage it wrote (the order a run must keep, which no data edge shows).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string>
#include <vector>
#include "print.hpp"

namespace ctfx {

namespace detail {
/// The storages node i writes in place: argument 0 of a mutating op (the first `aux` arguments of
/// a mutating foreach), and each mutated argument that is not cloned for a direct user-op call.
inline std::vector<std::int32_t> written_storages(const ir& g, std::int32_t i) {
  const node& n = g[i];
  auto a = g.args_of(i);
  std::vector<std::int32_t> w;
  auto add = [&](std::size_t k) {
    if (k < a.size() && a[k] >= 0 && g[a[k]].meta.storage >= 0) w.push_back(g[a[k]].meta.storage);
  };
  if (n.op == op_kind::custom) {
    const custom_schema& cs = g.customs[static_cast<std::size_t>(n.aux)];
    for (int b = 0; b < cs.n_args; ++b)
      if (((cs.mutates >> b) & 1u) && !((n.clone_mask >> b) & 1u)) add(static_cast<std::size_t>(b));
  } else if (is_mutating(n.op)) {
    const std::size_t k = is_list_op(n.op) ? static_cast<std::size_t>(n.aux) : 1;
    for (std::size_t j = 0; j < k; ++j) add(j);
  }
  return w;
}
}  // namespace detail

/// Graphviz (dot) text of a graph, for `dot -Tsvg`: see the header comment for what it shows.
inline std::string to_dot(const ir& g, std::string_view title = "ctfx") {
  auto esc = [](std::string s) {
    std::string r;
    for (char c : s) { if (c == '"' || c == '\\') r += '\\'; r += c; }
    return r;
  };
  std::string s = "digraph \"" + esc(std::string(title)) + "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    std::string label = esc(std::string(n.name.view())) + "\\n" + std::string(name_of(n.op));
    if (n.meta.is_tensor()) label += "\\n" + esc(to_string(g, n.meta));
    if (is_view_op(n.op) || is_view_scatter(n.op)) {
      const std::string v = detail::view_params(g, is_view_op(n.op) ? n.op : facts(n.op).twin, g.params_of(n));
      if (!v.empty()) label += "\\n" + esc(v);
    }
    std::string style;
    if (n.op == op_kind::placeholder) style = ", style=filled, fillcolor=lightblue";
    else if (n.op == op_kind::output) style = ", style=filled, fillcolor=lightgrey";
    else if (is_mutating(n.op) || n.op == op_kind::custom) style = ", color=red";
    s += "  n" + std::to_string(i) + " [label=\"" + label + "\"" + style + "];\n";
  }
  for (std::int32_t i = 0; i < g.size(); ++i) {
    auto a = g.args_of(i);
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k] >= 0) s += "  n" + std::to_string(a[k]) + " -> n" + std::to_string(i) + " [label=\"" + std::to_string(k) + "\"];\n";
  }
  // Order edges: the last in-place write of a storage before each node that reads it (views only
  // read metadata, so their readers get the edge instead).
  std::vector<std::int32_t> last_writer(static_cast<std::size_t>(g.next_storage > 0 ? g.next_storage : 0), -1);
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    auto a = g.args_of(i);
    if (!is_view_op(n.op) && n.op != op_kind::output) {
      std::vector<std::int32_t> from;
      for (auto x : a) {
        if (x < 0) continue;
        const std::int32_t st = g[x].meta.storage;
        if (st < 0 || static_cast<std::size_t>(st) >= last_writer.size()) continue;
        const std::int32_t w = last_writer[static_cast<std::size_t>(st)];
        if (w < 0 || w == x) continue;
        bool seen = false;
        for (auto f : from) seen = seen || f == w;
        for (auto y : a) seen = seen || y == w;  // already a data edge
        if (!seen) from.push_back(w);
      }
      for (auto w : from)
        s += "  n" + std::to_string(w) + " -> n" + std::to_string(i) + " [style=dashed, color=red, label=\"after write\"];\n";
    }
    for (auto st : detail::written_storages(g, i))
      if (static_cast<std::size_t>(st) < last_writer.size()) last_writer[static_cast<std::size_t>(st)] = i;
  }
  return s + "}\n";
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
