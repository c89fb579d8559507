// ctfx/passes/pipeline.hpp — Inductor's post-grad order, with the verifier after every pass:
//   remove_noop_ops -> canonicalize_view_scatter_ops -> reinplace_inplaceable_ops_core
//     -> decompose_generalized_scatter -> dce
//
// At compile time each pass is its own constant evaluation (ctfx::stage, which nvcc needs), and so
// is each verify; a broken rule — including a require_inplace node left functional — is a compile
// error naming the node and the rule (detail::graph_error, as for graphs):
//
//   using P = ctfx::pipeline<decltype(my_graph)>;          // or pipeline<G, decltype(my_table)>
//   static_assert(P::report.all_inplace());
//   std::puts(ctfx::to_text(P::get()).c_str());
//
// At run time: ctfx::run_pipeline(g, &log) returns the final graph, whose `error` names the first
// broken rule (and the pass after which it was found).
#pragma once
#include "../graph/graph.hpp"
#include "reinplace.hpp"
#include "report.hpp"

#if __has_include("remove_noop_ops.hpp") && __has_include("canonicalize_view_scatter_ops.hpp") && \
    __has_include("decompose_generalized_scatter.hpp") && __has_include("dce.hpp")
#include "canonicalize_view_scatter_ops.hpp"
#include "dce.hpp"
#include "decompose_generalized_scatter.hpp"
#include "remove_noop_ops.hpp"
#define CTFX_PIPELINE_COMPLETE 1
#else
// Built before the other passes exist: they are identities here, and pipeline_complete says so.
#define CTFX_PIPELINE_COMPLETE 0
namespace ctfx {
constexpr ir remove_noop_ops(ir g) { return g; }
constexpr ir canonicalize_view_scatter_ops(ir g) { return g; }
constexpr ir decompose_generalized_scatter(ir g) { return g; }
constexpr ir dce(ir g) { return g; }
}  // namespace ctfx
#endif

namespace ctfx {

inline constexpr bool pipeline_complete = CTFX_PIPELINE_COMPLETE != 0;

namespace detail {
constexpr ir verified(ir g, std::string_view after) {
  diagnostic d = verify(g);
  if (!d.ok() && g.error.ok()) {
    // Keep the verifier's sentence, and say which pass produced the graph.
    msg m;
    m << d.message() << " (after " << after << ")";
    g.error = diagnostic{};
    g.fail(d.r, d.node, m.view());
  }
  return g;
}
}  // namespace detail

// The whole pipeline at run time (also constexpr). `log` receives the reinplacing decisions.
template <class Table = builtin_inplace_table>
constexpr ir run_pipeline(ir g, reinplace_log* log = nullptr) {
  g = detail::verified(remove_noop_ops(static_cast<ir&&>(g)), "remove_noop_ops");
  if (!g.error.ok()) return g;
  g = detail::verified(canonicalize_view_scatter_ops(static_cast<ir&&>(g)), "canonicalize_view_scatter_ops");
  if (!g.error.ok()) return g;
  reinplace_log tmp;
  g = detail::verified(reinplace_with_log<Table>(g, log ? *log : tmp), "reinplace_inplaceable_ops_core");
  if (!g.error.ok()) return g;
  g = detail::verified(decompose_generalized_scatter(static_cast<ir&&>(g)), "decompose_generalized_scatter");
  if (!g.error.ok()) return g;
  return detail::verified(dce(static_cast<ir&&>(g)), "dce");
}

namespace detail {
template <class Table> constexpr ir reinplace_stage(ir g) { return reinplace_inplaceable_ops_core<Table>(static_cast<ir&&>(g)); }
// One verify per stage, in its own constant evaluation; a failure is a compile error naming the rule.
template <class Stage>
struct checked_stage : Stage {
  static constexpr diagnostic diag = verify(Stage::get());
  static_assert(graph_error<diag>::value);
};
}  // namespace detail

// The pipeline over a graph source (a graph_def, a stage, anything with a static constexpr get()).
template <class Source, class Table = builtin_inplace_table>
struct pipeline {
  using noop = detail::checked_stage<stage<Source, &remove_noop_ops>>;
  using canonical = detail::checked_stage<stage<noop, &canonicalize_view_scatter_ops>>;
  using reinplaced = detail::checked_stage<stage<canonical, &detail::reinplace_stage<Table>>>;
  using decomposed = detail::checked_stage<stage<reinplaced, &decompose_generalized_scatter>>;
  using final_stage = detail::checked_stage<stage<decomposed, &dce>>;
  static_assert(noop::diag.ok() && canonical::diag.ok() && reinplaced::diag.ok() && decomposed::diag.ok() &&
                final_stage::diag.ok());

  // What reinplacing decided, on the graph it was given (node names of `canonical`).
  static constexpr auto report = reinplace_report_of<canonical, Table>();
  static constexpr ir get() { return final_stage::get(); }
};

}  // namespace ctfx
