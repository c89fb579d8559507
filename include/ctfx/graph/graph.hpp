// ctfx/graph/graph.hpp — ctfx::graph(lambda): a graph defined in user code, checked by the compiler.
//
//   constexpr auto g = ctfx::graph([](ctfx::builder& b) { ... });
//
// The result is an empty object whose type remembers the lambda; `g.get()` gives the ir (built
// once in the compiler, frozen, and thawed on each call; also usable at run time). Instantiating the type builds and verifies the graph
// once at compile time: a broken rule becomes a compile error whose text names the node and the
// rule (in full under g++ and nvcc; clang 14 abbreviates the text but names the rule).
#pragma once
#include "builder.hpp"
#include "frozen.hpp"
#include "verify.hpp"

namespace ctfx {

namespace detail {
template <diagnostic D> inline constexpr bool graph_is_valid = D.ok();
// One static_assert per rule, so that every compiler prints the rule's name in the message.
#define CTFX_RULE_ASSERT(R, TEXT) \
  static_assert(D.r != rule::R, "ctfx::graph: rule '" TEXT "' is broken; the node and the fix are named in 'graph_error<ctfx::diagnostic{...}>' above");
template <diagnostic D>
struct graph_error {
  CTFX_RULE_ASSERT(broadcast_shapes, "broadcast-shapes")
  CTFX_RULE_ASSERT(dtype_mismatch, "dtype-mismatch")
  CTFX_RULE_ASSERT(scatter_source_shape, "scatter-source-fits-view")
  CTFX_RULE_ASSERT(index_out_of_range, "static-index-in-range")
  CTFX_RULE_ASSERT(index_dtype, "index-dtype")
  CTFX_RULE_ASSERT(undefined_node, "undefined-node")
  CTFX_RULE_ASSERT(use_before_definition, "use-before-definition")
  CTFX_RULE_ASSERT(mutation_outside_epilogue, "functional-except-epilogue")
  CTFX_RULE_ASSERT(epilogue_target, "epilogue-writes-an-input")
  CTFX_RULE_ASSERT(bad_dimension, "dimension-in-range")
  CTFX_RULE_ASSERT(view_shape, "view-shape")
  CTFX_RULE_ASSERT(rank_limit, "rank-limit")
  CTFX_RULE_ASSERT(symbolic_limit, "symbolic-expression-limit")
  CTFX_RULE_ASSERT(metadata_inconsistent, "metadata-consistent")
  CTFX_RULE_ASSERT(list_arguments, "list-arguments")
  CTFX_RULE_ASSERT(custom_schema, "custom-op-schema")
  CTFX_RULE_ASSERT(duplicate_name, "unique-names")
  CTFX_RULE_ASSERT(bad_argument, "valid-argument")
  CTFX_RULE_ASSERT(require_inplace, "require-inplace")
  CTFX_RULE_ASSERT(aliasing, "no-new-aliasing")
  static constexpr bool value = D.ok();
};
#undef CTFX_RULE_ASSERT
}  // namespace detail

/// A graph defined by a captureless lambda (what ctfx::graph returns): built, verified and frozen by the compiler; a broken rule is a compile error.
template <class F>
struct graph_def {
  /// Builds the ir by running the user's lambda on a fresh builder.
  static constexpr ir build() {
    builder b;
    F{}(b);
    return static_cast<builder&&>(b).finish();
  }
  /// Built once at compile time and frozen (a separate constant evaluation from the checks).
  struct checked {
    ir_sizes sizes;   ///< the graph's sizes
    diagnostic diag;  ///< the verifier's verdict
  };
  /// Builds and verifies the graph.
  static constexpr checked check() {
    ir g = build();
    return {sizes_of(g), verify(static_cast<ir&&>(g), verify_level::structure)};
  }
  static constexpr checked info = check();  ///< the build's sizes and verdict
  static constexpr ir_sizes sizes = info.sizes;  ///< the graph's sizes
  static constexpr diagnostic diag = info.diag;  ///< the first broken rule (a compile error when not ok)
  static_assert(detail::graph_error<diag>::value);
  static constexpr frozen_ir<sizes> frozen = freeze<sizes>(build());  ///< the graph, frozen
  /// A thaw of the frozen graph, never a build at run time: C++ leaves the order in which function
  /// arguments are evaluated open, and g++ builds `f(g.clone(a), g.clone(b))` in one order in
  /// constant evaluation and in the other at run time, so a run-time build could number and name
  /// the nodes differently from the graph the compiler checked and planned.
  static constexpr ir get() { return frozen.thaw(); }
  /// The lambda's type.
  using lambda_type = F;
};

// Defines a graph from a captureless lambda taking a ctfx::builder&.
// (graph_def<F> is named only for a captureless F, so that a capturing lambda gets this one message
// rather than the errors of building it first.)
template <class F>
constexpr auto graph(F) {
  if constexpr (std::is_empty_v<F>) {
    return graph_def<F>{};
  } else {
    static_assert(std::is_empty_v<F>, "ctfx::graph(f): f must be a captureless lambda (its type is the graph's identity)");
    return 0;
  }
}

// Builds and verifies a graph at run time (for graphs assembled by a program).
template <class F>
constexpr ir build_checked(F f, diagnostic* d = nullptr) {
  builder b;
  f(b);
  ir g = static_cast<builder&&>(b).finish();
  if (d) *d = verify(g);
  return g;
}

}  // namespace ctfx
