// ctfx/ops/schema.hpp — op tags as types. Each tag carries its op_kind and its PyTorch-style
// signature, whose alias annotations (`Tensor(a!)` mutated, `Tensor(a)` aliased) are read at compile
// time and checked against the value-side op table (ops/registry.hpp), so the two cannot drift.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <string_view>
#include "../core/name.hpp"
#include "op_kind.hpp"

namespace ctfx {

/// Position of the first argument annotated `(x!)` in a signature, or -1.
constexpr int schema_mutated_arg(std::string_view sig) {
  std::size_t open = sig.find('('), close = sig.find(") ->");
  if (open == std::string_view::npos || close == std::string_view::npos) return -1;
  int arg = 0, depth = 0;
  for (std::size_t i = open + 1; i < close; ++i) {
    char c = sig[i];
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if (c == ',' && depth == 0) ++arg;
    else if (c == '!' && depth == 1) return arg;
  }
  return -1;
}
/// True when the result is annotated as an alias of an argument: "-> Tensor(a)".
constexpr bool schema_returns_alias(std::string_view sig) {
  std::size_t arrow = sig.find("-> ");
  return arrow != std::string_view::npos && sig.substr(arrow).find("Tensor(") != std::string_view::npos &&
         sig.substr(arrow).find('!') == std::string_view::npos;
}

/// The type of a built-in op (`ctfx::ops::add_t`, `ctfx::ops::slice_scatter_t`, ...): its kind and
/// its PyTorch schema, from which the mutated argument and the view-ness are read.
template <op_kind K, fixed_string Sig>
struct op_tag {
  static constexpr op_kind kind = K;                                      ///< the op
  static constexpr std::string_view name = facts(K).name;                ///< its ATen name
  static constexpr std::string_view signature = Sig.view();              ///< its schema, as PyTorch writes it
  static constexpr int mutated_arg = schema_mutated_arg(Sig.view());     ///< the `Tensor(a!)` argument, or -1
  static constexpr bool is_view = schema_returns_alias(Sig.view());      ///< the result aliases an argument (`-> Tensor(a)`)
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
