// ctfx/graph/dot.hpp — Graphviz text of a graph: one box per node labelled with its op and type,
// an edge per argument (labelled with its position), inputs and the output highlighted, mutating
// ops drawn in red.
#pragma once
#include <string>
#include "print.hpp"

namespace ctfx {

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
  return s + "}\n";
}

}  // namespace ctfx
