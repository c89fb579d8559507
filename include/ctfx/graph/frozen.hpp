// ctfx/graph/frozen.hpp — an ir frozen into fixed-size arrays, so that it outlives the constant
// evaluation that made it (std::vector may not), and thawed back into an ir.
//
// Freezing also splits the work: nvcc gives up on a single constant evaluation that is long
// ("excessive constexpr function call complexity"), so building a graph and each pass (with the
// verify after it) are separate evaluations that hand a frozen graph to the next (see `stage`).
// Each evaluation costs: thawing its input, running the pass once, and freezing the result.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <cstddef>
#include <vector>
#include "ir.hpp"
#include "verify.hpp"

namespace ctfx {

struct ir_sizes {
  std::size_t nodes = 0, args = 0, params = 0, syms = 0, customs = 0;
};

constexpr ir_sizes sizes_of(const ir& g) {
  return {g.nodes.size(), g.args.size(), g.params.size(), g.syms.size(), g.customs.size()};
}

// Room for a pass's result: passes grow a graph by a bounded factor (decomposing a scatter chain
// adds its views), so one evaluation can freeze the result into a buffer of this capacity
// without first running the pass to learn its exact sizes.
constexpr ir_sizes headroom(const ir_sizes& s) {
  return {2 * s.nodes + 64, 2 * s.args + 128, 2 * s.params + 128, s.syms + 8, s.customs + 8};
}
constexpr bool fits_in(const ir_sizes& s, const ir_sizes& cap) {
  return s.nodes <= cap.nodes && s.args <= cap.args && s.params <= cap.params && s.syms <= cap.syms &&
         s.customs <= cap.customs;
}

/// The arrays have capacity S; the graph is the prefix `used` (S itself unless the graph was frozen
/// into a larger buffer, as a stage does).
template <ir_sizes S>
struct frozen_ir {
  std::array<node, S.nodes> nodes{};
  std::array<std::int32_t, S.args> args{};
  std::array<sym_expr, S.params> params{};
  std::array<symbol, S.syms> syms{};
  std::array<custom_schema, S.customs> customs{};
  ir_sizes used = S;
  std::int32_t next_storage = 0;
  graph_phase phase = graph_phase::functional;
  diagnostic error{};

  constexpr ir thaw() const {
    ir g;
    // Range constructions: one allocation and one copy per element (push_back costs more calls
    // per element in constant evaluation).
    g.nodes = detail::cvec<node>(nodes.data(), nodes.data() + used.nodes);
    g.args = detail::cvec<std::int32_t>(args.data(), args.data() + used.args);
    g.params = detail::cvec<sym_expr>(params.data(), params.data() + used.params);
    g.syms = detail::cvec<symbol>(syms.data(), syms.data() + used.syms);
    g.customs = detail::cvec<custom_schema>(customs.data(), customs.data() + used.customs);
    g.next_storage = next_storage;
    g.phase = phase;
    g.error = error;
    return g;
  }
};

// Copies g into f (g must fit: fits_in(sizes_of(g), S)).
template <ir_sizes S>
constexpr void freeze_into(frozen_ir<S>& f, const ir& g) {
  f.used = sizes_of(g);
  // Through pointers: a call per element (operator[] on both sides) would cost more than the copy.
  auto put = [](auto* to, const auto& from) {
    for (const auto *p = from.data(), *e = p + from.size(); p != e; ++p) *to++ = *p;
  };
  put(f.nodes.data(), g.nodes);
  put(f.args.data(), g.args);
  put(f.params.data(), g.params);
  put(f.syms.data(), g.syms);
  put(f.customs.data(), g.customs);
  f.next_storage = g.next_storage;
  f.phase = g.phase;
  f.error = g.error;
}

template <ir_sizes S>
constexpr frozen_ir<S> freeze(const ir& g) {
  frozen_ir<S> f{};
  freeze_into(f, g);
  return f;
}

namespace detail {
// nvcc's evaluator gives up on long evaluations ("excessive constexpr function call complexity"),
// so there a verify is its own evaluation; g++ and clang verify in the pass's evaluation.
#if defined(__CUDACC__)
inline constexpr bool verify_separately = true;
#else
inline constexpr bool verify_separately = false;
#endif

template <class Source>
constexpr ir_sizes source_sizes() {
  if constexpr (requires { Source::sizes; }) return Source::sizes;
  else return sizes_of(Source::get());
}

// The source's graph inside a stage's evaluation: a thaw of its frozen graph. For a graph
// definition (ctfx::graph, fx_graph) that frozen graph is made by its own evaluation (a build), which
// every program that asks the definition for its graph at run time — a reference run, a printout:
// the examples and the compile benchmarks all do — pays anyway; building the graph again here was a
// third build (g++ at 250 nodes: halo 0.37 G of 5.1 G instructions above an empty program,
// scatter_chain 0.20 G of 4.7 G). A program that never asks pays a freeze and a thaw instead
// (+0.19 G and +0.31 G there; cc1plus instructions counted by callgrind).
template <class Source>
constexpr ir source_graph() {
  return Source::get();
}
}  // namespace detail

/// What one evaluation of a stage leaves: the result's sizes, the verifier's verdict (ok when the
/// stage does not verify), and the result frozen into a buffer of capacity Cap when it fits.
template <ir_sizes Cap>
struct stage_result {
  ir_sizes sizes{};
  diagnostic diag{};
  bool fits = false;
  frozen_ir<Cap> frozen{};
};

// Fills r from a pass's result g (g's error is kept as the pass left it).
template <bool Verify, ir_sizes Cap>
constexpr void settle(stage_result<Cap>& r, ir& g) {
  r.sizes = sizes_of(g);
  if constexpr (Verify && !detail::verify_separately) r.diag = verify_keeping(g);
  r.fits = fits_in(r.sizes, Cap);
  if (r.fits) freeze_into(r.frozen, g);
}

/// A graph computed at compile time: `Make()` gives the ir. The pass runs once, in one constant
/// evaluation that also measures, verifies (Verify = true: verify() after the pass, its verdict in
/// `diag`) and freezes the result; every `get()` thaws it. Source is any type with a static constexpr
/// `get()`; Pass is a constexpr function ir -> ir. Stages chain: stage<stage<G, pass1>, pass2>.
/// Only a pass that more than doubles the graph (beyond headroom()) runs a second time, to freeze
/// into exact sizes.
template <class Source, auto Pass, bool Verify = false>
struct stage {
  static constexpr ir make() { return Pass(detail::source_graph<Source>()); }
  static constexpr ir_sizes capacity = headroom(detail::source_sizes<Source>());
  static constexpr stage_result<capacity> evaluate() {
    stage_result<capacity> r{};
    ir g = make();
    settle<Verify>(r, g);
    return r;
  }
  static constexpr stage_result<capacity> once = evaluate();
  static constexpr ir_sizes sizes = once.sizes;

 private:
  template <bool Fits, class = void>
  struct pick { static constexpr const frozen_ir<capacity>& value = once.frozen; };
  template <class Dummy>
  struct pick<false, Dummy> { static constexpr frozen_ir<sizes> value = freeze<sizes>(make()); };

 public:
  static constexpr const auto& frozen = pick<once.fits>::value;
  static constexpr ir get() { return frozen.thaw(); }

 private:
  static constexpr diagnostic check() {
    if constexpr (Verify && detail::verify_separately) return verify(get());
    else return once.diag;
  }

 public:
  static constexpr diagnostic diag = check();
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
