// ctfx/graph/fx_modules.hpp — the nested graph modules of an FX text: the `class true_graph_0(
// torch.nn.Module):` blocks that print_readable prints after a forward that calls
// torch.ops.higher_order.cond or while_loop (`true_graph_0 = self.true_graph_0`).
//
// A block is found by its name among the direct children of the text's outermost class: the lines
// from its `class NAME(torch.nn.Module):` line to the next line indented no deeper than it. Its text
// is a whole module of its own (its forward, then its own nested blocks), read by the same parser;
// `line` places it in the whole text, for the errors it reports.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <string_view>

namespace ctfx::fx {

/// A nested graph module of an FX text: its name, its text (from its `class` line) and the line of
/// the whole text where it starts (1-based; 0: not found).
struct module_block {
  std::string_view name{};  ///< the class's name (true_graph_0, while_loop_body_graph_0, ...)
  std::string_view text{};  ///< its lines, from the `class` line to the end of its block
  std::int32_t line = 0;    ///< the whole text's line of its `class` line (0: no such block)
};

// (Not in a namespace `detail`: inside ctfx::fx one would hide ctfx::detail from the parser.)
// The indentation of the line starting at `b` (spaces; a tab counts as one), and whether it is blank.
constexpr std::size_t module_line_indent(std::string_view t, std::size_t b, bool& blank) {
  std::size_t k = b;
  while (k < t.size() && (t[k] == ' ' || t[k] == '\t')) ++k;
  blank = k >= t.size() || t[k] == '\n' || t[k] == '\r' || t[k] == '#';
  return k - b;
}

/// The direct child block `name` of the outermost class of `text` (a whole print_readable text, or a
/// block found before); line 0 when there is none.
constexpr module_block find_module(std::string_view text, std::string_view name) {
  module_block r{};
  std::size_t top = std::string_view::npos, child = std::string_view::npos;
  std::int32_t line = 1;
  std::size_t start = std::string_view::npos;  // the found block's first character
  for (std::size_t b = 0; b < text.size();) {
    std::size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    bool blank = false;
    const std::size_t ind = module_line_indent(text, b, blank);
    const std::string_view body = text.substr(b + ind, e - b - ind);
    if (start != std::string_view::npos && !blank && ind <= child) {
      r.text = text.substr(start, b - start);
      return r;
    }
    if (!blank && body.starts_with("class ")) {
      if (top == std::string_view::npos) top = ind;
      else if (ind > top && (child == std::string_view::npos || ind == child) && start == std::string_view::npos) {
        child = ind;
        const std::size_t open = body.find('(');
        if (open != std::string_view::npos && body.substr(6, open - 6) == name) {
          start = b;
          r.name = body.substr(6, open - 6);
          r.line = line;
        }
      }
    }
    b = e + 1;
    ++line;
  }
  if (start != std::string_view::npos) r.text = text.substr(start);
  return r;
}

}  // namespace ctfx::fx
#include "../core/diagnostics_pop.hpp"
