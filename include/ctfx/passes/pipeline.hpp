// ctfx/passes/pipeline.hpp — Inductor's post-grad order, with the verifier after every pass:
//   remove_noop_ops -> canonicalize_view_scatter_ops -> masked_puts_as_where
//     -> reinplace_inplaceable_ops_core -> decompose_generalized_scatter -> dce
//     -> schedule_updates -> hoist_computed_indices
// (masked_puts_as_where is Inductor's index_put_as_masked_fill lowering, run before reinplacing so
// that a masked fill of a mutated input becomes an elementwise update, fused with its write-back;
// schedule_updates is ctfx's: it moves a write-back whose value has other readers to where the
// value is computed, so that the value is computed into the caller's buffer; passes/schedule_updates.hpp;
// the last one is ctfx's too: it fixes the step order so that indices the graph computes are checked
// before the first write into a caller buffer; passes/hoist_computed_indices.hpp)
//
// At compile time the passes run in the compiler: under g++ and clang as one constant evaluation
// (detail::fused_pipeline), under nvcc as one evaluation per pass (ctfx::stage: nvcc refuses long
// evaluations); either way each pass is followed by the verifier (in the fused evaluation its
// structural checks, with every node's metadata re-derived after the last pass and, when anything
// fails, after each pass again to name the pass), and a broken rule — including a require_inplace
// node left functional — is a compile error naming the node and the rule (detail::report, as
// for graphs):
//
//   using P = ctfx::pipeline<decltype(my_graph)>;          // or pipeline<G, decltype(my_table)>
//   static_assert(P::report.all_inplace());
//   std::puts(ctfx::to_text(P::get()).c_str());
//
// At run time: ctfx::run_pipeline(g, &log) returns the final graph, whose `error` names the first
// broken rule (and the pass after which it was found).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <array>
#include <type_traits>
#include "../graph/graph.hpp"
#include "hoist_computed_indices.hpp"
#include "masked_puts_as_where.hpp"
#include "reinplace.hpp"
#include "report.hpp"
#include "schedule_updates.hpp"

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

/// Whether every pass is built in (false only in a build that leaves some out: they are identities then).
inline constexpr bool pipeline_complete = CTFX_PIPELINE_COMPLETE != 0;

namespace detail {
constexpr ir verified(ir g, std::string_view after, verify_level level = verify_level::full) {
  diagnostic d = verify_keeping(g, level);  // in place: verify(g) would copy the graph
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

/// The whole pipeline at run time (also constexpr). `log` receives the reinplacing decisions.
/// `between`: how much the verifier checks after the first four passes (after dce it always checks
/// everything, and again after hoist_computed_indices when that moved anything). `full` — every
/// node's metadata re-derived after every pass — names the pass that broke a rule; `structure` and
/// `links` cost less (a fifth of the compile time of a large graph, and 4% more), and `links` is
/// what the compile-time pipeline runs first (it reruns with `full` when anything failed, to name
/// the pass).
/// The log also lists the program's unused values (found on `g` before the first pass).
template <class Table = builtin_inplace_table>
constexpr ir run_pipeline(ir g, reinplace_log* log = nullptr, verify_level between = verify_level::full) {
  // Each subgraph first, through the whole pipeline, as Inductor runs its post-grad passes on a
  // subgraph before its parent (a subgraph never writes its placeholders: it is functional, and
  // the control node passes it its operands read-only; exec/control_step.hpp checks it).
  // A loop body whose carried values can be updated where they live gets its in-place form too,
  // named by the node's second parameter (ops/control.hpp: carried_in_place); the executors run
  // that one.
  for (std::int32_t i = 0; i < g.size(); ++i) {
    if (g[i].op != op_kind::while_loop || g[i].npar != 1) continue;
    ir b = detail::carried_in_place(g.subgraphs[static_cast<std::size_t>(g[i].aux + 1)], carried_count(g, i));
    if (b.size() == 0) continue;
    const sym_expr p[2] = {g.param(i, 0), sym_expr(static_cast<index_t>(g.subgraphs.size()))};
    g.subgraphs.push_back(static_cast<ir&&>(b));
    node& n = g[i];
    n.par0 = static_cast<std::int32_t>(g.params.size());
    n.npar = 2;
    g.params.append(p, p + 2);
  }
  for (std::size_t k = 0; k < g.subgraphs.size(); ++k) {
    ir sub = run_pipeline<Table>(static_cast<ir&&>(g.subgraphs[k]), nullptr, between);
    if (!sub.error.ok()) {
      for (std::int32_t i = 0; i < g.size(); ++i)
        if (is_control_op(g[i].op) && (g[i].aux == static_cast<std::int32_t>(k) || g[i].aux + 1 == static_cast<std::int32_t>(k) ||
                                       (g[i].npar >= 2 && g.iparam(i, 1) == static_cast<index_t>(k)))) {
          auto t = detail::about(g, i);
          t << "in its " << detail::subgraph_role(g[i].op, g[i].aux == static_cast<std::int32_t>(k) ? 0 : 1) << ": " << sub.error.message();
          detail::fail(g, i, sub.error.r, t);
          break;
        }
      if (g.error.ok()) g.error = sub.error;
      return g;
    }
    g.subgraphs[k] = static_cast<ir&&>(sub);
  }
  std::vector<unused_value> unused;
  if (log) find_unused_values(g, unused);
  g = detail::verified(remove_noop_ops(static_cast<ir&&>(g)), "remove_noop_ops", between);
  if (!g.error.ok()) return g;
  g = detail::verified(canonicalize_view_scatter_ops(static_cast<ir&&>(g)), "canonicalize_view_scatter_ops", between);
  if (!g.error.ok()) return g;
  if (has_masked_fill(g)) {  // (most graphs have none: no rebuild, no verify)
    g = detail::verified(masked_puts_as_where(static_cast<ir&&>(g)), "masked_puts_as_where", between);
    if (!g.error.ok()) return g;
  }
  reinplace_log tmp;
  g = detail::verified(reinplace_with_log<Table>(g, log ? *log : tmp), "reinplace_inplaceable_ops_core", between);
  if (log) log->unused = static_cast<std::vector<unused_value>&&>(unused);
  if (!g.error.ok()) return g;
  g = detail::verified(decompose_generalized_scatter(static_cast<ir&&>(g)), "decompose_generalized_scatter", between);
  if (!g.error.ok()) return g;
  // dce's result gets the full check (the last pass's, when hoisting moves nothing: most graphs).
  g = detail::verified(dce(static_cast<ir&&>(g)), "dce");
  if (!g.error.ok()) return g;
  bool scheduled = false;
  g = schedule_updates_moved(static_cast<ir&&>(g), scheduled);
  if (scheduled) g = detail::verified(static_cast<ir&&>(g), "schedule_updates");
  if (!g.error.ok()) return g;
  bool moved = false;
  ir h = hoist_computed_indices_moved(static_cast<ir&&>(g), moved);
  if (!moved) return h;
  return detail::verified(static_cast<ir&&>(h), "hoist_computed_indices");
}

namespace detail {

// A verified stage (stage<..., true>): a failed verify is a compile error naming the rule. In the
// fused pipeline (g++, clang) pipeline<> reports it instead, from a context the compiler prints in
// fewer lines (one report per failure either way).
template <class Stage>
struct checked_stage : Stage {
  /// The stage's verdict (a member of this class: g++ 12 cannot take a dependent base's member as a
  /// reference template argument).
  static constexpr diagnostic diag = Stage::diag;
  static_assert(report<diag, diag.ok() || !verify_separately>::value);
};

// A stage whose one evaluation also keeps the reinplacing report (the report used to cost two more
// runs, one for its size and one for its items). Run(g, log) gives the result graph and fills the
// log; ReportSource is the graph reinplacing is given, for the rare report that does not fit.
// VerifyAfter: verify the result in this evaluation (or, under nvcc, in its own); otherwise the
// verdict is the result's own error (Run verified as it went).
template <class Source, class Table, auto Run, bool VerifyAfter, class ReportSource>
struct reporting_stage {
  static constexpr ir_sizes capacity = headroom(source_sizes<Source>());
  // At most one candidate per node, except user ops (one per mutated argument): a graph with more
  // falls back to a second run for the report.
  static constexpr std::size_t report_capacity = source_sizes<Source>().nodes + 16;
  struct result {
    stage_result<capacity> stage{};
    std::size_t n_items = 0;
    std::array<reinplace_candidate, report_capacity> items{};
    std::int32_t n_unused = 0;
    std::array<unused_value, max_listed_unused> unused{};
  };
  static constexpr result evaluate() {
    result r{};
    reinplace_log log;
    ir g = Run(source_graph<Source>(), log);
    if constexpr (VerifyAfter) {
      settle<true>(r.stage, g);
    } else {
      settle<false>(r.stage, g);
      r.stage.diag = g.error;  // the first broken rule, with the pass after which it was found
    }
    r.n_items = log.items.size();
    if (r.n_items <= report_capacity)
      for (std::size_t k = 0; k < r.n_items; ++k) r.items[k] = log.items[k];
    r.n_unused = static_cast<std::int32_t>(log.unused.size());
    for (std::size_t k = 0; k < log.unused.size() && k < max_listed_unused; ++k) r.unused[k] = log.unused[k];
    return r;
  }
  static constexpr result once = evaluate();
  static constexpr ir_sizes sizes = once.stage.sizes;
  static constexpr ir make() {
    reinplace_log log;
    return Run(source_graph<Source>(), log);
  }

 private:
  template <bool Fits, class = void>
  struct pick { static constexpr const frozen_ir<capacity>& value = once.stage.frozen; };
  template <class Dummy>
  struct pick<false, Dummy> { static constexpr frozen_ir<sizes> value = freeze<sizes>(make()); };
  static constexpr auto make_report() {
    if constexpr (once.n_items <= report_capacity) {
      reinplace_report<once.n_items> r{};
      // (`!=`: with no items, nvcc would warn that `k < 0` is a pointless comparison.)
      for (std::size_t k = 0; k != once.n_items; ++k) r.items[k] = once.items[k];
      r.unused_count = once.n_unused;
      r.unused_listed = once.unused;
      return r;
    } else {
      auto r = reinplace_report_of<ReportSource, Table>();
      r.unused_count = once.n_unused;  // found on the source graph, before the passes
      r.unused_listed = once.unused;
      return r;
    }
  }
  static constexpr diagnostic check() {
    if constexpr (VerifyAfter && verify_separately) return verify(get());
    else return once.stage.diag;
  }

 public:
  static constexpr const auto& frozen = pick<once.stage.fits>::value;
  static constexpr ir get() { return frozen.thaw(); }
  static constexpr diagnostic diag = check();
  // What reinplacing decided, on the graph it was given (node names of ReportSource).
  static constexpr auto report = make_report();
};

// The fused compile-time pipeline: structural checks (no name table) between passes, every rule
// after the last.
// Any failure reruns the pipeline with the full verifier after each pass (only a failing compile
// pays for it), so the error names the same pass and node as the staged pipeline's.
template <class Table, class Source>
constexpr ir pipeline_logged(ir g, reinplace_log& log) {
#if defined(CTFX_VERIFY_EACH_PASS) && CTFX_VERIFY_EACH_PASS
  constexpr verify_level between = verify_level::full;
#else
  constexpr verify_level between = verify_level::links;
#endif
  ir r = run_pipeline<Table>(static_cast<ir&&>(g), &log, between);
  if (r.error.ok() || between == verify_level::full) return r;
  log = reinplace_log{};
  return run_pipeline<Table>(source_graph<Source>(), &log, verify_level::full);
}

// Reinplacing as a verified stage that also keeps its report.
template <class Source, class Table>
using reinplace_stage_with_report = reporting_stage<Source, Table, &reinplace_with_log<Table>, true, Source>;

// g++ and clang: the whole pipeline as ONE constant evaluation — take the source's graph once, run
// the eight passes with the verifier after each (pipeline_logged), keep the report, freeze once. A
// stage per pass thaws and freezes the graph five times; the fused form costs less compile time
// (bench/RESULTS.md §1). nvcc gives up on one evaluation that long ("excessive constexpr function
// call complexity"), so there each pass stays its own stage.
template <class Source, class Table>
using fused_pipeline =
    reporting_stage<Source, Table, &pipeline_logged<Table, Source>, false,
                    stage<stage<stage<Source, &remove_noop_ops>, &canonicalize_view_scatter_ops>, &masked_puts_as_where>>;

// The staged pipeline's report takes the unused values from the program's own graph: the passes
// before reinplacing leave dead nodes of their own for dce.
template <class Source, std::size_t N>
constexpr reinplace_report<N> with_unused_of(reinplace_report<N> r) {
  std::vector<unused_value> u;
  find_unused_values(source_graph<Source>(), u);
  set_unused(r, u);
  return r;
}

template <class Source, class Table>
struct staged_pipeline {
  using noop = checked_stage<stage<Source, &remove_noop_ops, true>>;
  using canonical = checked_stage<stage<noop, &canonicalize_view_scatter_ops, true>>;
  using masked_fills = checked_stage<stage<canonical, &masked_puts_as_where, true>>;
  using reinplaced = checked_stage<reinplace_stage_with_report<masked_fills, Table>>;
  using decomposed = checked_stage<stage<reinplaced, &decompose_generalized_scatter, true>>;
  using dced = checked_stage<stage<decomposed, &dce, true>>;
  using scheduled = checked_stage<stage<dced, &schedule_updates, true>>;
  using final_stage = checked_stage<stage<scheduled, &hoist_computed_indices, true>>;
};

// The final graph's stage (pipeline<>::final_stage), nameable without instantiating pipeline<>: a
// user such as compiled<G> reports a broken rule from its own, shorter instantiation context.
template <class Source, class Table>
using final_stage_t = std::conditional_t<verify_separately, typename staged_pipeline<Source, Table>::final_stage,
                                         checked_stage<fused_pipeline<Source, Table>>>;
}  // namespace detail

/// The pipeline over a graph source (a graph_def, a stage, anything with a static constexpr get()).
/// `noop` ... `final_stage` name the graph after each pass (each its own verified evaluation,
/// instantiated only when named); `get()` and `report` come from one fused evaluation under g++ and
/// clang, and from the per-pass stages under nvcc.
template <class Source, class Table = builtin_inplace_table>
struct pipeline {
  /// The per-pass stages (each a verified compile-time graph, instantiated when named).
  using stages = detail::staged_pipeline<Source, Table>;
  /// The graph after remove_noop_ops.
  using noop = typename stages::noop;
  /// The graph after canonicalize_view_scatter_ops.
  using canonical = typename stages::canonical;
  /// The graph after masked_puts_as_where.
  using masked_fills = typename stages::masked_fills;
  /// The graph after reinplacing.
  using reinplaced = typename stages::reinplaced;
  /// The graph after decompose_generalized_scatter.
  using decomposed = typename stages::decomposed;
  /// The graph after dce.
  using dced = typename stages::dced;
  /// The graph after schedule_updates.
  using scheduled = typename stages::scheduled;
  /// The final graph (after hoist_computed_indices).
  using final_stage = detail::final_stage_t<Source, Table>;
  /// The first broken rule of the final graph (a compile error when not ok).
  static constexpr diagnostic diag = final_stage::diag;
  static_assert(detail::report<diag>::value);

 private:
  static constexpr auto make_report() {
    if constexpr (detail::verify_separately) return detail::with_unused_of<Source>(reinplaced::report);
    else return final_stage::report;
  }

 public:
  /// What reinplacing decided, on the graph it was given (node names of `masked_fills`), and the
  /// program's unused values (node names of Source).
  static constexpr auto report = make_report();
  /// The optimized graph.
  static constexpr ir get() { return final_stage::get(); }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
