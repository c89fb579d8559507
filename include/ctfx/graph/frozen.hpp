// ctfx/graph/frozen.hpp — an ir frozen into fixed-size arrays, so that it outlives the constant
// evaluation that made it (std::vector may not), and thawed back into an ir.
//
// Freezing also splits the work: nvcc gives up on a single constant evaluation that is long
// ("excessive constexpr function call complexity"), so building a graph, verifying it and each pass
// are separate evaluations that hand a frozen graph to the next (see `stage`).
#pragma once
#include <array>
#include <cstddef>
#include "ir.hpp"

namespace ctfx {

struct ir_sizes {
  std::size_t nodes = 0, args = 0, params = 0, syms = 0, customs = 0;
};

constexpr ir_sizes sizes_of(const ir& g) {
  return {g.nodes.size(), g.args.size(), g.params.size(), g.syms.size(), g.customs.size()};
}

template <ir_sizes S>
struct frozen_ir {
  std::array<node, S.nodes> nodes{};
  std::array<std::int32_t, S.args> args{};
  std::array<sym_expr, S.params> params{};
  std::array<symbol, S.syms> syms{};
  std::array<custom_schema, S.customs> customs{};
  std::int32_t next_storage = 0;
  graph_phase phase = graph_phase::functional;
  diagnostic error{};

  constexpr ir thaw() const {
    ir g;
    g.nodes.reserve(S.nodes);
    for (const auto& n : nodes) g.nodes.push_back(n);
    g.args.reserve(S.args);
    for (auto a : args) g.args.push_back(a);
    g.params.reserve(S.params);
    for (const auto& p : params) g.params.push_back(p);
    for (const auto& s : syms) g.syms.push_back(s);
    for (const auto& c : customs) g.customs.push_back(c);
    g.next_storage = next_storage;
    g.phase = phase;
    g.error = error;
    return g;
  }
};

template <ir_sizes S>
constexpr frozen_ir<S> freeze(const ir& g) {
  frozen_ir<S> f{};
  // Range loops over the arrays: no `i < 0` comparisons for empty pools (an nvcc warning).
  std::size_t i = 0;
  for (auto& x : f.nodes) x = g.nodes[i++];
  i = 0;
  for (auto& x : f.args) x = g.args[i++];
  i = 0;
  for (auto& x : f.params) x = g.params[i++];
  i = 0;
  for (auto& x : f.syms) x = g.syms[i++];
  i = 0;
  for (auto& x : f.customs) x = g.customs[i++];
  f.next_storage = g.next_storage;
  f.phase = g.phase;
  f.error = g.error;
  return f;
}

// A graph computed at compile time: `Make()` gives the ir; the result is frozen once and every
// `get()` thaws it. Source is any type with a static constexpr `get()`; Pass is a constexpr
// function ir -> ir. Stages chain: stage<stage<G, pass1>, pass2>.
template <class Source, auto Pass>
struct stage {
  static constexpr ir make() { return Pass(Source::get()); }
  static constexpr ir_sizes sizes = sizes_of(make());
  static constexpr frozen_ir<sizes> frozen = freeze<sizes>(make());
  static constexpr ir get() { return frozen.thaw(); }
};

}  // namespace ctfx
