// ctfx/plan/make_plan.hpp — every planning decision about an optimized graph, made once, in one
// value that every executor runs: compiled<G> freezes it in the compiler (exec/compiled.hpp),
// make_static_plan lays its static run out from it (exec/static_plan.hpp), basic_program makes it
// when it is built (exec/program.hpp). The order of the decisions, each reading the ones before:
//
//   fused       plan/fusion.hpp       which node's kernel computes each node; the cat or put whose
//                                     buffer holds a result (or a grouping given, compiled<G>'s)
//   life        analysis/liveness.hpp the steps in run order, each buffer's lifetime
//   reuse       plan/reuse.hpp        which buffers take a dead one's memory (or a plan given)
//   direct      plan/outputs.hpp      outputs computed straight into the caller's buffers
//   slots       plan/slots.hpp        the memory slots, and the buffers a caller's output holds
//   arena       plan/arena.hpp        each slot's pool, offset and lane (or an arena given)
//   rows        plan/row_siblings.hpp steps that run row by row together (compiled<G>'s typed
//   chains      plan/row_chain.hpp    groups: planner_options::row_planner)
//
//   const ctfx::graph_plan P = ctfx::make_plan(g, {});   // constexpr, or at run time
//   P.life.steps, P.slots.bytes, P.arena.pools ...
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <span>
#include "../analysis/liveness.hpp"
#include "../detail/cvec.hpp"
#include "../graph/ir.hpp"
#include "arena.hpp"
#include "fusion.hpp"
#include "outputs.hpp"
#include "reuse.hpp"
#include "row_chain.hpp"
#include "row_siblings.hpp"
#include "slots.hpp"

namespace ctfx {

namespace detail {
// An op compiled<G> computes as a typed expression in a group (kernels/fused_static.hpp): a unary
// other than convert, a binary, a ternary. Its row siblings and chains are made of those.
constexpr bool static_arithmetic(op_kind k) { return (is_unary(k) && k != op_kind::convert) || is_binary(k) || is_ternary(k); }
}  // namespace detail

struct graph_plan;
struct planner_options;
/// A step of planning that an executor may leave out of its code (planner_options::arena_planner,
/// row_planner): a program given its arena (compiled<G>'s) then compiles no arena search.
using plan_step = void (*)(const ir&, const planner_options&, graph_plan&);

/// What make_plan decides and what it is given.
struct planner_options {
  bool fuse = true;                            ///< group kernels (plan/fusion.hpp); false: a kernel per node
  const std::int32_t* fused_roots = nullptr;   ///< (fuse) a grouping given, per node (null: planned here)
  const std::int32_t* fused_into = nullptr;    ///< (fuse, with fused_roots) the cats and puts given, per node, or null
  bool reuse = true;                           ///< buffers take dead ones' memory (plan/reuse.hpp)
  const reuse_plan* memory_plan = nullptr;     ///< a reuse plan given (then `reuse` is not read)
  bool arena = true;                           ///< lay the slots out in pools (false: back to back)
  const arena_plan* given_arena = nullptr;     ///< (arena) an arena planned already for these slots
  /// (arena, none given) the search, search_arena; null: none, the plan says so (arena_state::no_planner)
  plan_step arena_planner = nullptr;
  arena_options arena_opt{arena_work_per_second / 50};  ///< the search's budget (~20 ms at run time)
  /// compiled<G>'s row siblings, and with row_chains its row chains (plan_row_groups); null: none
  plan_step row_planner = nullptr;
  bool row_chains = false;                     ///< (row_planner) decide row chains too
};

/// How the arena of a plan came to be.
enum class arena_state : std::uint8_t {
  off,             ///< not asked for (planner_options::arena false)
  planned,         ///< searched here, and checked overlap-free
  given,           ///< given (planner_options::given_arena), with as many slots as the plan lays out
  slots_differ,    ///< given, for another number of slots (arena_given_slots)
  overlap,         ///< searched, and two live slots share bytes of pool arena_overlap_pool (a planner bug)
  no_planner,      ///< asked for, neither given nor searchable (planner_options::arena_planner null)
};

/// Steps that run together, per node (row siblings, row chains).
struct step_links {
  detail::cvec<std::int32_t> next;     ///< the node of the next step run with this one, or -1
  detail::cvec<std::uint8_t> follows;  ///< computed with the step before it
};

/// One plan: every decision about a graph's run, in the order make_plan makes them.
struct graph_plan {
  fusion fused;                        ///< the kernel grouping (root empty without fusion)
  detail::cvec<std::int32_t> members;  ///< per node: how many nodes are fused into it (fusion only)
  liveness life;                       ///< the steps and the buffers' lifetimes
  reuse_plan reuse;                    ///< the reuse lines (empty without reuse)
  bool reused = false;                 ///< slots follow `reuse`
  detail::cvec<std::int32_t> direct;   ///< per output: the storage computed in the caller's buffer, or -1
  slot_plan slots;                     ///< the slots, and the buffers held in the caller's outputs
  arena_plan arena;                    ///< per slot its pool, offset and lane (arena_state planned or given)
  arena_state arena_is = arena_state::off;
  std::int32_t arena_overlap_pool = -1;  ///< (overlap) the pool
  std::size_t arena_given_slots = 0;     ///< (slots_differ) the slots of the arena given
  step_links rows;                     ///< (row_planner) cat slices written row by row together
  step_links chains;                   ///< (row_planner, row_chains) row chains: maps over whole rows, folds among them
  constexpr const std::int32_t* roots() const { return fused.root.empty() ? nullptr : fused.root.data(); }
  constexpr const std::int32_t* into() const { return fused.into.empty() ? nullptr : fused.into.data(); }
  constexpr bool arena_usable() const { return arena_is == arena_state::planned || arena_is == arena_state::given; }
};

/// compiled<G>'s steps that run row by row (planner_options::row_planner): cat slices written
/// together (plan/row_siblings.hpp), chains of folds and maps over whole rows, or of maps only
/// (plan/row_chain.hpp).
constexpr void plan_row_groups(const ir& g, const planner_options& o, graph_plan& P) {
  using detail::cvec;
  using detail::static_arithmetic;
  const auto n = static_cast<std::size_t>(g.size());
  P.rows = {cvec<std::int32_t>(n, -1), cvec<std::uint8_t>(n, 0)};
  P.chains = {cvec<std::int32_t>(n, -1), cvec<std::uint8_t>(n, 0)};
  if (P.fused.root.empty()) return;
  const std::int32_t* into = P.into();
  const liveness& L = P.life;
  int placed = 0;  // (row siblings need two results computed in cat slices)
  for (std::size_t i = 0; into && i < n; ++i) placed += into[i] >= 0;
  if (placed >= 2) {
    auto groupable = [&](std::int32_t i) {
      const node& nd = g[i];
      return nd.meta.is_tensor() && is_fusible_elementwise(nd.op) && (static_arithmetic(nd.op) || P.members[static_cast<std::size_t>(i)] > 0);
    };
    for (std::size_t s = 0; s + 1 < L.steps.size(); ++s) {
      if (!row_siblings(g, into, L, s, groupable)) continue;
      P.rows.next[static_cast<std::size_t>(L.steps[s])] = L.steps[s + 1];
      P.rows.follows[static_cast<std::size_t>(L.steps[s + 1])] = 1;
    }
  }
  if (!o.row_chains) return;
  auto kind = [&](std::int32_t i) {
    const node& nd = g[i];
    const auto u = static_cast<std::size_t>(i);
    if (is_row_fold(g, i)) return row_step::fold;
    // (a copy_ with members: a group's value stored straight into the tensor it writes back)
    const bool copy_root = nd.op == op_kind::copy_ && P.members[u] > 0;
    const bool map = nd.meta.is_tensor() && (is_fusible_elementwise(nd.op) || copy_root) && (!into || into[u] < 0) &&
                     (static_arithmetic(nd.op) || P.members[u] > 0);
    return map ? row_step::map : row_step::other;
  };
  for (std::size_t s = 0; s < L.steps.size();) {
    const row_chain_span c = row_chain_from(g, L, s, kind);  // steps s to c.last
    if (c.last > s && c.wide_map)
      for (std::size_t k = s; k < c.last; ++k) {
        P.chains.next[static_cast<std::size_t>(L.steps[k])] = L.steps[k + 1];
        P.chains.follows[static_cast<std::size_t>(L.steps[k + 1])] = 1;
      }
    s = c.last + 1;
  }
}

/// The arena search (planner_options::arena_planner): plan/arena.hpp's plan_arena over the slots'
/// lives, checked overlap-free (a planner bug otherwise: arena_state::overlap).
constexpr void search_arena(const ir& g, const planner_options& o, graph_plan& P) {
  const liveness SL = slot_liveness(P.life, P.slots);
  P.arena = plan_arena(g, SL, o.arena_opt);
  P.arena_overlap_pool = arena_overlap(P.arena, SL);
  P.arena_is = P.arena_overlap_pool >= 0 ? arena_state::overlap : arena_state::planned;
}

namespace detail {
// The arena of P's slots: given, searched, or why not.
constexpr void plan_slot_arena(const ir& g, const planner_options& o, graph_plan& P) {
  if (!o.arena) return;
  if (o.given_arena) {
    if (o.given_arena->slots.size() != P.slots.bytes.size()) {
      P.arena_is = arena_state::slots_differ;
      P.arena_given_slots = o.given_arena->slots.size();
      return;
    }
    P.arena = *o.given_arena;
    P.arena_is = arena_state::given;
    return;
  }
  if (!o.arena_planner) {
    P.arena_is = arena_state::no_planner;
    return;
  }
  o.arena_planner(g, o, P);
}
}  // namespace detail

/// Every decision about optimized graph `g`'s run, made once (see the map above). Constexpr: the
/// compiler makes it for compiled<G>, a program at run time.
constexpr graph_plan make_plan(const ir& g, const planner_options& o) {
  graph_plan P;
  const auto n = static_cast<std::size_t>(g.size());
  if (o.fuse) {
    if (o.fused_roots) {
      P.fused.root = detail::cvec<std::int32_t>(o.fused_roots, o.fused_roots + n);
      if (o.fused_into) P.fused.into = detail::cvec<std::int32_t>(o.fused_into, o.fused_into + n);
    } else {
      P.fused = plan_fusion(g);
    }
    P.members.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (P.fused.root[i] != static_cast<std::int32_t>(i)) ++P.members[static_cast<std::size_t>(P.fused.root[i])];
  }
  P.life = compute_liveness(g, P.roots(), P.into());
  if (o.memory_plan) P.reuse = *o.memory_plan;
  else if (o.reuse) P.reuse = plan_reuse(P.life);
  P.reused = o.reuse || o.memory_plan;
  P.direct = direct_outputs(g, P.life);
  P.slots = plan_slots(P.life, P.reused ? &P.reuse : nullptr, std::span<const std::int32_t>(P.direct.data(), P.direct.size()));
  detail::plan_slot_arena(g, o, P);
  if (o.row_planner) o.row_planner(g, o, P);
  return P;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
