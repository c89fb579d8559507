// ctfx/exec/compiled.hpp — a graph compiled by the compiler: the reinplacing pipeline and the
// memory plan are constants, and each node's kernel is a template instantiated for that node's op
// and dtypes (static_op<K>, element types fixed), so the elementwise kernels carry no run-time
// dispatch; reductions, cats and fills call their kernels directly. User ops run through the
// program's run-time dispatch. A graph without them, with static extents, runs as a static plan:
// no run-time program at all (exec/static_plan.hpp); its index ops (indices checked before the
// first write into a caller's buffer, a bool mask elementwise) are typed puts and gathers, its
// scatters two typed copies, its list ops a typed kernel per element, its collectives calls of the
// run's communicator. In any other plan index ops, scatters, list ops and collectives also go to
// the dispatch.
//
//   constexpr auto g = ctfx::graph([](ctfx::builder& b) { ... });
//   using plan = ctfx::compiled<decltype(g)>;
//   static_assert(plan::report.all_inplace());            // reinplacing decided in the compiler
//   static_assert(plan::static_buffer_bytes() < 1 << 20);  // the memory plan, in the compiler
//   ctfx::run_status st = plan::run(inputs, outputs);     // validates, then runs
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <array>
#include <initializer_list>
#include <span>
#include <utility>
#include "../passes/pipeline.hpp"
#include "../plan/copy_siblings.hpp"
#include "../kernels/arg_reduce.hpp"
#include "../plan/make_plan.hpp"
#include "../plan/write_backs.hpp"
#include "../kernels/copy_siblings.hpp"
#include "../kernels/fused_static.hpp"
#include "../kernels/row_chain.hpp"
#include "../kernels/scan.hpp"
#include "../kernels/welford.hpp"
#include "inplace_table.hpp"
#include "program.hpp"
#include "static_run.hpp"

namespace ctfx {

namespace detail {
// (static_arithmetic, the ops a static group computes as its typed expression: plan/make_plan.hpp)
// A list op compiled<G> runs in a static plan, element by element (foreach_step).
constexpr bool static_foreach(op_kind k) {
  return k == op_kind::foreach_add || k == op_kind::foreach_mul || k == op_kind::foreach_add_ || k == op_kind::foreach_mul_;
}
// A tensor node compiled<G>'s single_step runs with a kernel of its own (arithmetic runs as a
// static group, even alone: static_arithmetic).
constexpr bool static_single(const node& nd) {
  const op_kind k = nd.op;
  if (!nd.meta.is_tensor()) return false;
  if (nd.nargs > 0 && (k == op_kind::clone || k == op_kind::convert || k == op_kind::copy_)) return true;
  switch (k) {
    case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::prod: case op_kind::mean: case op_kind::cat: case op_kind::argmax: case op_kind::argmin:
    case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp: case op_kind::var: case op_kind::var_mean:
    case op_kind::mm: case op_kind::addmm: case op_kind::bmm: case op_kind::baddbmm:
    case op_kind::zeros: case op_kind::ones: case op_kind::full: case op_kind::fill_: case op_kind::empty: case op_kind::empty_like:
      return true;
    default:
      return false;
  }
}
}  // namespace detail

/// A graph compiled by the C++ compiler: `using plan = ctfx::compiled<decltype(g)>` for a graph
/// `constexpr auto g = ctfx::graph(...)` (or ctfx::fx_graph). The reinplacing pipeline, the fusion
/// and the memory plan are constants of the type, so that their results can be checked with
/// static_assert (`plan::report.all_inplace()`, `plan::static_buffer_bytes()`), and each node's
/// kernel is instantiated for its op and dtypes. run() validates the caller's buffers, then runs;
/// a graph that breaks a rule is a compile error naming the node and the rule.
/// \tparam Source the graph's type (`decltype(g)`)
/// \tparam Table the in-place table reinplacing uses (the executors' by default)
template <class Source, class Table = executor_inplace_table>
struct compiled {
  /// The compile-time pipeline that optimizes the graph (passes/pipeline.hpp).
  using pipeline_type = pipeline<Source, Table>;
  /// The first broken rule of the optimized graph: reported here, before pipeline<> is instantiated,
  /// so that the compiler's instantiation context is this class (not the pipeline's, whose printed
  /// type spells out the Boost.Hana in-place table).
  static constexpr diagnostic diag = detail::final_stage_t<Source, Table>::diag;
  static_assert(detail::report<diag>::value);
  /// The optimized graph as a compile-time constant.
  static constexpr auto& frozen = pipeline_type::final_stage::frozen;
  /// Whether the graph has matrix products (extern kernels: kernels/matmul.hpp).
  static constexpr bool has_products = [] {
    for (const node& nd : frozen.nodes)
      if (is_product(nd.op)) return true;
    return false;
  }();
  /// Whether the graph multiplies floating matrices (mm, addmm, bmm, baddbmm of f32 or f64).
  static constexpr bool has_float_products = [] {
    for (const node& nd : frozen.nodes)
      if (is_product(nd.op) && (nd.meta.dt == dtype::f32 || nd.meta.dt == dtype::f64)) return true;
    return false;
  }();
  static_assert(!diag.ok() || !has_float_products || kernels::host_blas,
                "ctfx: rule blas-available: this graph multiplies f32/f64 matrices (mm, addmm, bmm or baddbmm) and this build "
                "has no BLAS: link ctfx::blas (CMake; it defines CTFX_HAVE_CBLAS and links a CBLAS such as OpenBLAS)");
  /// The optimized graph's number of nodes.
  static constexpr std::size_t node_count = pipeline_type::final_stage::sizes.nodes;
  /// Whether the optimized graph has symbolic extents (its static plan, if any, evaluates them on each call).
  static constexpr bool has_symbols = pipeline_type::final_stage::sizes.syms > 0;
  /// What reinplacing decided (pipeline<G>::report), without the write-backs: see `report`.
  static constexpr auto reinplacing_report = pipeline_type::report;

  /// The optimized graph (thawed from the compile-time constant).
  static constexpr ir graph() { return pipeline_type::get(); }

  /// The kernel grouping, per node.
  struct fusion_arrays {
    /// per node: the node whose kernel computes it (root); the cat whose buffer holds its result, or -1 (into)
    ///@{
    std::array<std::int32_t, node_count> root{}, into{};
    ///@}
  };
  /// Steps that run together, per node.
  struct sibling_arrays {
    /// the node of the next step run with this one, or -1
    std::array<std::int32_t, node_count> next{};
    std::array<bool, node_count> follows{};  ///< computed with the step before it
  };

  /// The graph's number of storages (the static plan's room for them).
  static constexpr std::size_t storage_count = static_cast<std::size_t>(frozen.next_storage);
  /// Index ops, scatters or collectives (the largest count): the room run_plan keeps for them.
  static constexpr std::size_t index_count = [] {
    std::size_t n = 0, m = 0, c = 0;
    for (std::size_t i = 0; i < node_count; ++i) {
      const op_kind k = frozen.nodes[i].op;
      n += is_index_op(k);
      m += is_scatter(k);
      c += facts(k).family == op_family::collective;
    }
    return std::max({n, m, c});
  }();
  /// The operands of cats and index ops (each node once): the room run_plan keeps for the nodes
  /// computed in another's buffer (a cat's slice or a put's row), which are among them.
  static constexpr std::size_t placed_count = [] {
    std::array<bool, node_count> operand{};
    for (std::size_t c = 0; c < node_count; ++c) {
      const node& nd = frozen.nodes[c];
      if (nd.op != op_kind::cat && !is_index_op(nd.op)) continue;
      for (std::int32_t k = 0; k < nd.nargs; ++k)
        if (const std::int32_t a = frozen.args[static_cast<std::size_t>(nd.arg0 + k)]; a >= 0) operand[static_cast<std::size_t>(a)] = true;
    }
    std::size_t n = 0;
    for (const bool b : operand) n += b;
    return n;
  }();
  /// The optimized graph's number of symbols.
  static constexpr std::size_t symbol_count = pipeline_type::final_stage::sizes.syms;
  /// The type of the static plan (exec/static_plan.hpp).
  using static_plan_type = static_plan<node_count, storage_count, index_count, placed_count, symbol_count>;

  // ---- the arena, planned here (plan/make_plan.hpp: plan/slots.hpp, plan/arena.hpp) for the slots
  // the program lays out, and checked overlap-free, so that the program is made without the arena
  // search (which a header-only file then does not compile). Slots of symbolic size sit in lanes
  // above their pool's static region, whose sizes a call evaluates. A slot sized by a
  // data-dependent symbol (a pool of its own, made when the symbol is known), or nvcc (whose
  // constant evaluator gives up on searches this long), leaves it to the run time.
 private:
  struct frozen_pool {
    pool_kind kind = pool_kind::intermediates;
    std::int32_t partition = 0;
    std::int64_t static_bytes = 0, begin = 0, end = 0;
    bool returned = false;
    std::int32_t first_lane = 0, n_lanes = 0;  // its lanes in frozen_arena::lanes
  };
  struct frozen_arena {
    bool planned = false;
    std::size_t n_pools = 0, n_slots = 0, n_lanes = 0;
    std::array<frozen_pool, node_count> pools{};  // (a pool holds a slot, a slot a buffer, a buffer a node's storage)
    std::array<arena_slot, node_count> slots{};
    std::array<sym_expr, has_symbols ? node_count : 0> lanes{};  // (a lane holds a slot)
    std::int64_t peak_bytes = 0, lower_bound = 0, unplanned_peak = 0;
  };
  // The number of write-backs (`update`s whose copy_ the passes kept) in the optimized graph.
  static constexpr std::size_t write_back_count = [] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < node_count; ++i) n += frozen.nodes[i].op == op_kind::copy_;
    return n == 0 ? 0 : count_write_backs(pipeline_type::get());
  }();
  // The plan (plan/make_plan.hpp), frozen: what the compiler decided, as the arrays below read it.
  struct frozen_plan {
    fusion_arrays fusion;
    std::array<std::int32_t, node_count> members{};
    sibling_arrays siblings, chains, copy_group;
    frozen_arena arena;
    std::size_t buffer_bytes = 0;
    std::array<reinplace_candidate, write_back_count> write_backs{};  // (plan/write_backs.hpp)
    diagnostic buffers{};  // the nodes holding buffers, when buffer_bytes > 0 (rule no-planned-buffers)
    static_plan_type run;
  };
  // What compiled<G> asks of make_plan: every decision, the arena searched in the compiler (not
  // under nvcc), its row siblings and chains (chains: not under nvcc, whose plans run through the program).
  static constexpr planner_options plan_opts() {
    planner_options o;
#if defined(__CUDACC__)
    o.arena = false;
#else
    o.arena = diag.ok();
    o.arena_planner = &search_arena;
    o.row_chains = true;
#endif
    o.row_planner = &plan_row_groups;
    return o;
  }
  // Whether step node i runs a kernel compiled for it here, by the frozen plan r.
  static constexpr bool typed_in(const frozen_plan& r, std::int32_t i) {
    const auto u = static_cast<std::size_t>(i);
    const node& nd = frozen.nodes[u];
    return r.siblings.follows[u] || r.siblings.next[u] >= 0 || r.members[u] > 0 ||
           (detail::static_arithmetic(nd.op) && nd.meta.is_tensor()) || detail::static_single(nd) || detail::static_foreach(nd.op);
  }
  // The arena of P, frozen (unplanned when it is left to the run time).
  static constexpr frozen_arena freeze_arena(const graph_plan& P) {
    frozen_arena r;
    if (P.arena_is != arena_state::planned) return r;
    const arena_plan& A = P.arena;
    std::size_t lanes = 0;
    for (const auto& p : A.pools) {
      if (p.kind == pool_kind::unbacked) return r;
      lanes += p.lanes.size();
    }
    if (lanes > r.lanes.size() || A.pools.size() > node_count || A.slots.size() > node_count) return r;
    r.n_pools = A.pools.size();
    r.n_slots = A.slots.size();
    for (std::size_t k = 0; k < r.n_pools; ++k) {
      const arena_pool& p = A.pools[k];
      r.pools[k] = {p.kind, p.partition, p.static_bytes, p.begin, p.end, p.returned, static_cast<std::int32_t>(r.n_lanes),
                    static_cast<std::int32_t>(p.lanes.size())};
      for (const sym_expr& e : p.lanes) r.lanes[r.n_lanes++] = e;
    }
    for (std::size_t k = 0; k < r.n_slots; ++k) r.slots[k] = A.slots[k];
    r.peak_bytes = A.peak_bytes;
    r.lower_bound = A.lower_bound;
    r.unplanned_peak = A.unplanned_peak;
    r.planned = true;
    return r;
  }
  // Copies that run element by element together (copy_group), decided from the static plan's layouts.
  static constexpr void plan_copy_group(const ir& g, frozen_plan& r) {
    const static_plan_type& rp = r.run;
    auto place = [&](std::int32_t s) {
      const storage_place& p = rp.storages[static_cast<std::size_t>(s)];
      const bool in_output = p.home == storage_home::output || p.home == storage_home::held;
      return storage_extent{p.home == storage_home::workspace, static_cast<std::size_t>(p.offset), static_cast<std::size_t>(p.bytes),
                            in_output ? p.index : -1};
    };
    auto disjoint = [&](std::int32_t i, std::int32_t j) {
      return views_disjoint(g[i].meta, g[j].meta, rp.layouts[static_cast<std::size_t>(i)].storage, rp.layouts[static_cast<std::size_t>(j)].storage,
                            place);
    };
    auto member = [&](std::int32_t i) {
      const auto u = static_cast<std::size_t>(i);
      return g[i].op == op_kind::copy_ && r.members[u] == 0 && !r.siblings.follows[u] && r.siblings.next[u] < 0 && !r.chains.follows[u] &&
             r.chains.next[u] < 0;
    };
    auto barrier = [&](std::size_t k) {
      bool checked_here = rp.n_late_checks > 0 && k == rp.agree_at;
      for (std::size_t c = 0; c < rp.n_late_checks; ++c)
        checked_here = checked_here || static_cast<std::size_t>(rp.index_steps[static_cast<std::size_t>(rp.late_checks[c])].check_at) == k;
      return checked_here;
    };
    group_copy_siblings(g, rp.steps.data(), rp.n_steps, member, barrier, disjoint, [&](std::size_t, std::int32_t last, std::int32_t b, int) {
      r.copy_group.next[static_cast<std::size_t>(last)] = b;
      r.copy_group.follows[static_cast<std::size_t>(b)] = true;
    });
  }

 public:
  /// Every decision about the run, made once by the compiler (plan/make_plan.hpp) and frozen: the
  /// arrays below are its fields.
  static constexpr frozen_plan planned = [] {
    frozen_plan r;
    const ir g = pipeline_type::get();
    const graph_plan P = make_plan(g, plan_opts());
    for (std::size_t i = 0; i < node_count; ++i) {
      r.fusion.root[i] = P.fused.root[i];
      r.fusion.into[i] = P.fused.into_of(static_cast<std::int32_t>(i));
      r.members[i] = P.members[i];
      r.siblings.next[i] = P.rows.next[i];
      r.siblings.follows[i] = P.rows.follows[i];
      r.chains.next[i] = P.chains.next[i];
      r.chains.follows[i] = P.chains.follows[i];
      r.copy_group.next[i] = -1;
    }
    for (const sym_expr& bytes : P.slots.bytes) r.buffer_bytes += detail::align_ws(static_cast<index_t>(bytes.value()));
    const std::span<const std::int32_t> held(P.slots.output_of_buffer.data(), P.slots.output_of_buffer.size());
    if constexpr (write_back_count > 0) {
      std::size_t k = 0;
      for_each_write_back(g, P.roots(), P.life, held, [&](const reinplace_candidate& c) { r.write_backs[k++] = c; });
    }
    if (r.buffer_bytes > 0) r.buffers = buffer_holders(g, P.life, r.buffer_bytes, held);
    r.arena = freeze_arena(P);
#if defined(__CUDACC__)
    r.run.why = "the arena is planned at run time under nvcc";
#else
    if (!diag.ok() || !r.arena.planned) {
      r.run.why = !diag.ok() ? "the graph broke a rule" : "the arena is planned at run time (a slot sized by a data-dependent symbol)";
      return r;
    }
    make_static_plan(r.run, g, P, [&](std::int32_t i) { return typed_in(r, i); });
    // (static numbers only: the plan knows every layout and where each storage lives)
    if (r.run.usable && r.run.n_symbols == 0) plan_copy_group(g, r);
#endif
    return r;
  }();

  /// The kernel grouping the compiler made (plan/fusion.hpp): per node, the node whose kernel
  /// computes it, and the cat whose buffer holds its result (or -1).
  static constexpr auto& fusion_plan = planned.fusion;
  /// Per node: the node whose kernel computes it (itself for a kernel of its own).
  static constexpr auto fused_roots = planned.fusion.root;
  /// Per node: the cat whose buffer holds its result, or -1.
  static constexpr auto fused_into = planned.fusion.into;
  /// Per node: how many nodes are fused into it (0: a kernel of its own, or a member).
  static constexpr auto fused_members = planned.members;
  /// The steps that run row by row together (plan/row_siblings.hpp; kernels::static_row_siblings
  /// runs them at the first one's step).
  static constexpr auto& siblings = planned.siblings;
  /// Per node: the node of the next step run row by row with it, or -1.
  static constexpr auto row_sibling = planned.siblings.next;
  /// Per node: the node of the next step when the two run row by row in one chain (plan/row_chain.hpp;
  /// kernels::static_row_chain runs the chain at its first step), else -1. Only chains with an
  /// elementwise kernel over whole rows (with reductions over the last dimension or not); none
  /// under nvcc, whose plans run through the program.
  static constexpr auto& chains = planned.chains;

  /// Per node: a reduction's folded dimensions (bit d: dimension d), a cat's dimension.
  static constexpr auto node_param = [] {
    std::array<std::int64_t, node_count> a{};
    const ir g = pipeline_type::get();
    for (std::int32_t i = 0; i < g.size(); ++i) {
      const node& nd = g[i];
      if (nd.op == op_kind::sum || nd.op == op_kind::amax || nd.op == op_kind::amin || nd.op == op_kind::prod || nd.op == op_kind::mean || nd.op == op_kind::argmax ||
          nd.op == op_kind::argmin || nd.op == op_kind::var || nd.op == op_kind::var_mean)
        a[static_cast<std::size_t>(i)] = reduction_dims(g, i);
      if (nd.op == op_kind::cat && nd.npar > 0) a[static_cast<std::size_t>(i)] = g.iparam(i, 0);
      if (nd.op == op_kind::cumsum || nd.op == op_kind::cumprod || nd.op == op_kind::logcumsumexp) a[static_cast<std::size_t>(i)] = scan_dim(g, i);
    }
    return a;
  }();

  /// The grouping the plan runs with (for listings, plan/listing.hpp, with life()).
  static fusion fused() {
    return fusion{detail::cvec<std::int32_t>(fused_roots.data(), fused_roots.data() + node_count),
                  detail::cvec<std::int32_t>(fused_into.data(), fused_into.data() + node_count)};
  }
  /// The steps in run order and each value's lifetime, as the plan runs them (made again at run
  /// time by make_plan, from the grouping above).
  static liveness life() {
    planner_options o;
    o.fused_roots = fused_roots.data();
    o.fused_into = fused_into.data();
    o.arena = false;
    return make_plan(graph(), o).life;
  }

  /// Bytes of the planned buffers when every extent is static (outputs computed straight into the
  /// caller's buffers excluded, with the buffers that live in them before: plan/outputs.hpp), the
  /// program's slots (plan/slots.hpp), computed by the compiler with the memory plan the program
  /// uses (bind() adds the run's small scratch to get the workspace).
  static constexpr std::size_t static_buffer_bytes() { return planned.buffer_bytes; }

  /// The reinplacing report (ctfx::reinplace_report) with one more candidate per write-back
  /// (plan/write_backs.hpp): "reinplaced" when its value is computed straight into the input (or has
  /// no buffer), else named with the reason. So `static_assert(plan::report.all_inplace())` says
  /// that no in-place op and no update costs a temporary of the tensor's size.
  static constexpr auto report = [] {
    constexpr std::size_t n = decltype(reinplacing_report)::size();
    reinplace_report<n + write_back_count> r{};
    for (std::size_t k = 0; k != n; ++k) r.items[k] = reinplacing_report.items[k];  // (!=: nvcc warns on k < 0)
    for (std::size_t k = 0; k != write_back_count; ++k) r.items[n + k] = planned.write_backs[k];
    r.unused_count = reinplacing_report.unused_count;
    r.unused_listed = reinplacing_report.unused_listed;
    return r;
  }();
  /// The nodes that hold the plan's buffers (rule no-planned-buffers), or ok() when none do.
  static constexpr diagnostic buffers_diag = planned.buffers;
  /// `static_assert(plan::require_no_buffers)`: true when the plan lays out no buffer
  /// (static_buffer_bytes() == 0); otherwise, where it is named, a compile error (rule
  /// no-planned-buffers) that names the node holding the largest buffer, its bytes, the total and
  /// the next holders. (A constant, not a function: the compiler then names the plan's type
  /// briefly in the error's context.)
  static constexpr bool require_no_buffers = detail::report<buffers_diag>::value && buffers_diag.ok();

  /// The kernel families of the steps that the static kernels below leave to the run-time dispatch
  /// (index ops, scatters, list and user ops, collectives): the header-only
  /// program's dispatch compiles only those (exec/program.hpp, kernel_family).
  static constexpr int dispatched_families = [] {
    int m = 0;
    for (std::size_t i = 0; i < node_count; ++i) {
      const node& nd = frozen.nodes[i];  // step<I>'s cases, in its order
      if (siblings.follows[i] || row_sibling[i] >= 0 || fused_members[i] > 0 || (detail::static_arithmetic(nd.op) && nd.meta.is_tensor()))
        continue;
      if (!detail::static_single(nd)) m |= kernel_family::of(nd.op);
    }
    return m;
  }();

  /// The arena the compiler planned for the program's slots (`planned`: false when it is left to the
  /// run time, for a slot sized by a data-dependent symbol or under nvcc): pools with their lanes,
  /// per slot its pool, offset and lane.
  static constexpr auto& planned_arena = planned.arena;
 private:
  static arena_plan thaw_arena() {
    arena_plan a;
    for (std::size_t k = 0; k != planned_arena.n_pools; ++k) {  // (not `<`: nvcc warns that `< 0` is pointless)
      const frozen_pool& p = planned_arena.pools[k];
      arena_pool q;
      q.kind = p.kind;
      q.partition = p.partition;
      q.static_bytes = p.static_bytes;
      q.begin = p.begin;
      q.end = p.end;
      q.returned = p.returned;
      for (std::int32_t l = 0; l < p.n_lanes; ++l) q.lanes.push_back(planned_arena.lanes[static_cast<std::size_t>(p.first_lane + l)]);
      a.pools.push_back(static_cast<arena_pool&&>(q));
    }
    a.slots.assign(planned_arena.slots.begin(), planned_arena.slots.begin() + static_cast<std::ptrdiff_t>(planned_arena.n_slots));
    a.peak_bytes = planned_arena.peak_bytes;
    a.lower_bound = planned_arena.lower_bound;
    a.unplanned_peak = planned_arena.unplanned_peak;
    return a;
  }

 public:
  /// The program this plan runs (its binding, validation and step loop), with the arena planned
  /// in the compiler when it could be (planned_arena). Under CTFX_SEPARATE_RUNTIME its dispatch
  /// is the one compiled once, with every kernel family; header-only, the one with
  /// dispatched_families only, and without the arena planner when the arena came planned.
  static const program& prog() {
    static const arena_plan arena = thaw_arena();
    const program_options o{true, false, false, nullptr, true, true, fused_roots.data(), fused_into.data(),
                            planned_arena.planned ? &arena : nullptr};
#if defined(CTFX_SEPARATE_RUNTIME)
    static const program p(pipeline_type::get(), o);
#else
    static const program p = [&] {
      if constexpr (planned_arena.planned) return program(pipeline_type::get(), o, kernel_family::only<dispatched_families>{}, arena_planned_t{});
      else return program(pipeline_type::get(), o, kernel_family::only<dispatched_families>{});
    }();
#endif
    return p;
  }

  /// Whether step node i runs a kernel compiled for it here (`step<I>` below returns true).
  static constexpr bool typed_step(std::int32_t i) { return typed_in(planned, i); }
  /// The whole run as constant data (exec/static_plan.hpp, made from the plan), when every step has
  /// a typed kernel, every symbol is an input's extent or derived from them and the arena was
  /// planned here: run() then runs it without the run-time program, which the file does not
  /// compile. `run_plan.usable` when run() runs so, else `run_plan.why` says why not.
  static constexpr auto& run_plan = planned.run;

  /// Whether the static plan's numbers are every run's (a plan with symbolic extents evaluates them per call).
  static constexpr bool static_numbers = run_plan.usable && run_plan.n_symbols == 0;

  /// Per node: the node of the next step when the two strided copies run element by element
  /// together (plan/copy_siblings.hpp; kernels::copy_siblings runs them at the first one's step),
  /// else -1. Static numbers only: the plan knows every layout and where each storage lives, so that
  /// the members' disjointness is decided here. Never across a check made during the run (an index
  /// computed in the graph, the ranks' agreement), which must come before the later copy's writes.
  static constexpr auto& copy_group = planned.copy_group;

  /// The static plan as the runner reads it, with the collectives' checks when it has collectives.
  static constexpr static_plan_ref plan_ref() {
    static_plan_ref r = run_plan.ref();
    if constexpr (run_plan.n_collectives > 0) r.check_collectives = &detail::check_static_collectives;
    return r;
  }

  /// What a call with inputs of these shapes and dtypes needs: the outputs' shapes (contiguous), the
  /// workspace bytes (static_buffer_bytes() plus a small scratch) and the symbols' values; a `status`
  /// that says why not when the inputs do not fit.
  static binding bind(std::span<const tensor_desc> inputs) {
    if constexpr (run_plan.usable) return static_runner::bind(plan_ref(), inputs);
    else return prog().bind(inputs);
  }
  /// bind() on a braced list of input descriptions.
  static binding bind(std::initializer_list<tensor_desc> inputs) { return bind(std::span<const tensor_desc>(inputs.begin(), inputs.size())); }

  /// Runs the plan with the caller's buffers: `inputs` in graph-input order, `outputs` in output
  /// order. Every buffer is validated first (dtype, shape, strides, overlap); a refusal leaves every
  /// buffer untouched and says why in the returned ctfx::run_status. `ctx`: the backend (host, omp,
  /// cuda), CUDA stream and communicator; `workspace`: the scratch (at least bind()'s bytes; empty:
  /// the plan allocates its own); `kernels`: the user ops' kernels.
  /// inputs and outputs: braced lists of tensor_ref, vectors, arrays or spans (tensor_refs).
  static run_status run(tensor_refs inputs, tensor_refs outputs,
                        const device_ctx& ctx = {}, std::span<std::byte> workspace = {}, const kernel_table* kernels = nullptr) {
    for (std::size_t i = 0; i < (has_products ? node_count : 0); ++i)  // a BLAS for each product on ctx's backend, before any write
      if (is_product(frozen.nodes[i].op))
        if (std::string e = kernels::product_unavailable(ctx, frozen.nodes[i].meta.dt); !e.empty())
          return detail::product_failure(graph(), static_cast<std::int32_t>(i), e);
    if constexpr (run_plan.usable) return static_runner::run(plan_ref(), inputs, outputs, ctx, workspace, table.data());
    else return prog().run(inputs, outputs, ctx, workspace, kernels, table.data());
  }

  /// The loop nest of the elementwise group whose root is node I, as the compiler made it for a
  /// static plan (its dimensions collapsed; on the host its numbers are constants of the loops).
  template <std::int32_t I>
  static constexpr kernels::fused_nest loop_nest() {
    static_assert(static_numbers, "ctfx: loop_nest<I>() is made for a static plan without symbols (compiled<G>::static_numbers): this graph's layouts are bound at run time");
    static_assert(fused_roots[static_cast<std::size_t>(I)] == I && !is_reduction(frozen.nodes[static_cast<std::size_t>(I)].op),
                  "ctfx: loop_nest<I>(): node I is not the root of an elementwise group (compiled<G>::fused_roots)");
    return kernels::static_group<graph_view, I>::static_shape::nest;
  }

 private:
  // ---- fused kernels, specialized: each group's ops become a type (kernels/fused_static.hpp), so
  // its inner loop is one expression over typed pointers, without memory between the ops.
  struct graph_view {
    static constexpr const auto& nodes() { return frozen.nodes; }
    static constexpr const auto& args() { return frozen.args; }
    static constexpr std::int32_t root_of(std::int32_t i) { return fused_roots[static_cast<std::size_t>(i)]; }
    static constexpr std::int32_t members(std::int32_t i) { return fused_members[static_cast<std::size_t>(i)]; }
    // A static plan's layouts are every run's (the runner checks the inputs' against them; a put's
    // row moves only an offset), so its groups make their loop nests here, in the compiler.
    static constexpr bool static_layouts = static_numbers;
    static constexpr strided shape(std::int32_t i) { return run_plan.layouts[static_cast<std::size_t>(i)].shape(); }
  };

  // Groups computed into one cat's slices, consecutive in the schedule: rows run together.
  template <std::int32_t... Ids>
  static void run_row_siblings(const exec_frame& f) {
    constexpr std::int32_t ids[] = {Ids...};
    constexpr std::int32_t last = ids[sizeof...(Ids) - 1];
    if constexpr (row_sibling[static_cast<std::size_t>(last)] >= 0) {
      run_row_siblings<Ids..., row_sibling[static_cast<std::size_t>(last)]>(f);
    } else {
      kernels::static_row_siblings<graph_view, Ids...>::run(f.ctx, [&](std::int32_t id) { return f.view(id); },
                                                            [&](std::int32_t id) { return f.domain(id); });
    }
  }

  // Strided copies run element by element together (copy_group), at the first one's step.
  template <std::int32_t... Ids>
  static void run_copy_siblings(const exec_frame& f) {
    constexpr std::int32_t ids[] = {Ids...};
    constexpr std::int32_t last = ids[sizeof...(Ids) - 1];
    if constexpr (copy_group.next[static_cast<std::size_t>(last)] >= 0) {
      run_copy_siblings<Ids..., copy_group.next[static_cast<std::size_t>(last)]>(f);
    } else {
      constexpr std::size_t N = sizeof...(Ids);
      constexpr auto dst = [](std::int32_t c) { return frozen.args[static_cast<std::size_t>(frozen.nodes[static_cast<std::size_t>(c)].arg0)]; };
      constexpr auto src = [](std::int32_t c) { return frozen.args[static_cast<std::size_t>(frozen.nodes[static_cast<std::size_t>(c)].arg0 + 1)]; };
      constexpr dtype D = frozen.nodes[static_cast<std::size_t>(dst(ids[0]))].meta.dt;
      strided out[N], in[N];
      for (std::size_t m = 0; m < N; ++m) {
        out[m] = f.view(dst(ids[m]));
        in[m] = f.view(src(ids[m])).broadcast_to(out[m].rank, out[m].size);
      }
      kernels::copy_siblings<D, N>(f.ctx, out, in);
    }
  }

  // A row chain: consecutive steps row by row or block by block (kernels/row_chain.hpp), split
  // where the run's layouts are not row-local, a step left alone running its own kernel.
  template <std::int32_t... Ids>
  static bool run_row_chain(const exec_frame& f) {
    constexpr std::int32_t ids[] = {Ids...};
    constexpr std::int32_t last = ids[sizeof...(Ids) - 1];
    if constexpr (chains.next[static_cast<std::size_t>(last)] >= 0) {
      return run_row_chain<Ids..., chains.next[static_cast<std::size_t>(last)]>(f);
    } else {
      return kernels::static_row_chain<graph_view, Ids...>::run(
          f.ctx, [&](std::int32_t id) { return f.view(id); }, [&](std::int32_t id) { return f.domain(id); },
          [&](auto i) { return step_alone<static_cast<std::size_t>(ids[i])>(f); });
    }
  }

  // (Not with library_kernels: a step that leaves its reduction to the program's dispatch cannot
  // run inside a chain.)
  template <std::size_t I>
  static bool step(const exec_frame& f) {
    if constexpr (!library_kernels && chains.follows[I]) {
      return true;  // computed in the chain of a step before it (run_row_chain)
    } else if constexpr (!library_kernels && chains.next[I] >= 0) {
      return run_row_chain<static_cast<std::int32_t>(I)>(f);
    } else {
      return step_alone<I>(f);
    }
  }

  template <std::size_t I>
  static bool step_alone(const exec_frame& f) {
    constexpr op_kind K = frozen.nodes[I].op;
    constexpr bool arithmetic = detail::static_arithmetic(K);
    if constexpr (copy_group.follows[I]) {
      return true;  // copied with the step before it (run_copy_siblings)
    } else if constexpr (copy_group.next[I] >= 0) {
      run_copy_siblings<static_cast<std::int32_t>(I)>(f);
      return true;
    } else if constexpr (siblings.follows[I]) {
      return true;  // computed with the group of the step before it (run_row_siblings)
    } else if constexpr (row_sibling[I] >= 0) {
      run_row_siblings<static_cast<std::int32_t>(I)>(f);
      return true;
    } else if constexpr (fused_members[I] > 0 || (arithmetic && frozen.nodes[I].meta.is_tensor())) {
      kernels::static_group<graph_view, static_cast<std::int32_t>(I)>::run(f.ctx, [&](std::int32_t id) { return f.view(id); },
                                                                          [&](std::int32_t id) { return f.domain(id); });
      return true;
    } else {
      return single_step<I>(f);
    }
  }

  // Under ctfx::runtime, a plan that runs through the program anyway leaves its reductions, cats
  // and fills to the program's dispatch, compiled once there, rather than compiling them here.
#if defined(CTFX_SEPARATE_RUNTIME)
  static constexpr bool library_kernels = !run_plan.usable;
#else
  static constexpr bool library_kernels = false;
#endif

  // An index op of a static plan: its indices were checked by the runner before the first step
  // (or, for an in-place put that may, are checked here as it writes; indices computed in the graph,
  // once computed), so the put or gather runs typed on x's element type, the operands' numbers from
  // exec/index_operands.hpp; a put with a bool mask is elementwise over x.
  template <std::size_t I>
  static bool index_step(const exec_frame& f) {
    constexpr static_index_step s = [] {
      for (std::size_t k = 0; k < run_plan.n_index_steps; ++k)
        if (run_plan.index_steps[k].op.node == static_cast<std::int32_t>(I)) return run_plan.index_steps[k];
      return static_index_step{};
    }();
    constexpr dtype D = frozen.nodes[static_cast<std::size_t>(s.op.x)].meta.dt;
    if constexpr (s.in_row) {
      return true;  // its values were computed in the row it selects
    } else {
      const std::int32_t dst = s.op.inplace || s.op.gather ? s.op.x : static_cast<std::int32_t>(I);
      if (!s.op.inplace && !s.op.gather) kernels::copy_typed<D, D>(f.ctx, f.view(dst), f.view(s.op.x));
      const bound_layout& dl = f.layouts[dst];
      if constexpr (s.mask) {  // x[mask] = v: elementwise over x
        kernels::masked_put_typed<D>(f.ctx, dl.at(f.bases[dl.storage]), f.view(s.op.index[0]), s.op.dim[0], f.view(s.op.values), s.op.accumulate);
      } else {
        const kernels::index_put_args a = detail::index_args(s.op, f.layouts, f.bases, f.bases[dl.storage], dl);
        if (a.count == 0) return true;
        if constexpr (s.op.gather) {
          kernels::gather_host<D>(a);
        } else {
          if constexpr (s.checked_in_put) {
            if (f.failure && !f.ctx.comm && kernels::index_put_fusable_host(a)) {
              index_t value = 0;
              if (kernels::index_put_checked_typed<D>(a, &value) >= 0)
                *f.failure = detail::index_failure(s.op.node, s.name.view(), s.index_names[0].view(), s.op.dim[0], a.index_extent[0], value);
              return true;
            }
          }
          kernels::index_put_seq_fn<D>{a}(0);
        }
      }
      return true;
    }
  }

  // A scatter of a static plan: its base copied into its result (unless it writes the base in
  // place), then its source into the view it writes (laid out by run_plan), typed on the element
  // type (a scatter's source has its base's).
  template <std::size_t I>
  static bool scatter_step(const exec_frame& f) {
    constexpr std::size_t at = [] {
      for (std::size_t k = 0; k < run_plan.n_scatters; ++k)
        if (run_plan.scatters[k].node == static_cast<std::int32_t>(I)) return k;
      return std::size_t{0};
    }();
    constexpr static_scatter s = run_plan.scatters[at];
    constexpr dtype D = frozen.nodes[I].meta.dt;
    constexpr std::int32_t base = frozen.args[static_cast<std::size_t>(frozen.nodes[I].arg0)];
    constexpr std::int32_t src = frozen.args[static_cast<std::size_t>(frozen.nodes[I].arg0 + 1)];
    if constexpr (s.copy_base) kernels::copy_typed<D, D>(f.ctx, f.view(static_cast<std::int32_t>(I)), f.view(base));
    // (with symbolic extents the view is this call's, bound by the runner)
    const bound_layout& t = run_plan.n_symbols > 0 ? f.scatters[at].target : s.target;
    kernels::copy_typed<D, D>(f.ctx, t.at(f.bases[t.storage]), f.view(src));
    return true;
  }

  // A collective of a static plan: over the run's communicator, checked against its world before
  // the first step; an engine's failure is the step's refusal (the program's words).
  template <std::size_t I>
  static bool collective_step(const exec_frame& f) {
    constexpr static_collective s = [] {
      for (std::size_t k = 0; k < run_plan.n_collectives; ++k)
        if (run_plan.collectives[k].node == static_cast<std::int32_t>(I)) return run_plan.collectives[k];
      return static_collective{};
    }();
    const strided x = f.view(s.x);
    if (std::string e = kernels::run_collective(f.ctx, s.c, x, is_mutating(s.c.op) ? x : f.view(static_cast<std::int32_t>(I)), f.scratch + 64);
        !e.empty())
      *f.failure = detail::collective_run_failure(static_cast<std::int32_t>(I), s.name.view(), f.ctx.comm->engine(), e);
    return true;
  }

  // A matrix product (kernels/matmul.hpp, exec/product_step.hpp): an extern kernel into the node's
  // buffer, its operands and scalars fixed here. A cuBLAS failure is the step's refusal.
  template <std::size_t I>
  static bool product_step(const exec_frame& f) {
    constexpr node nd = frozen.nodes[I];
    constexpr bool acc = nd.op == op_kind::addmm || nd.op == op_kind::baddbmm;
    constexpr std::int32_t c_arg = acc ? frozen.args[static_cast<std::size_t>(nd.arg0)] : -1;
    constexpr std::int32_t a_arg = frozen.args[static_cast<std::size_t>(nd.arg0 + (acc ? 1 : 0))];
    constexpr std::int32_t b_arg = frozen.args[static_cast<std::size_t>(nd.arg0 + (acc ? 2 : 1))];
    constexpr product_scalars s = product_scalars_of(pipeline_type::get(), static_cast<std::int32_t>(I));
    const strided c = acc ? f.view(c_arg) : strided{};
    const std::string e = kernels::run_product(f.ctx, f.view(static_cast<std::int32_t>(I)), acc ? &c : nullptr, f.view(a_arg), f.view(b_arg),
                                               s.beta, s.alpha);
    if (!e.empty()) {
      if (!f.failure) return false;  // (every run has a failure slot; the program's dispatch otherwise)
      *f.failure = detail::product_failure(graph(), static_cast<std::int32_t>(I), e);
    }
    return true;
  }

  // Per list op: the getitem that takes each element of its result list (-1: nobody reads it), all
  // lists in one table (element k of node i's at at[first[i] + k]), made in one pass over the
  // graph, so that a long list costs no search per element.
  struct list_result_table {
    std::array<std::int32_t, node_count> first{};
    std::array<std::int32_t, frozen.args.size()> at{};
  };
  static constexpr list_result_table list_results = [] {
    list_result_table t;
    std::int32_t n = 0;
    for (std::size_t i = 0; i < node_count; ++i) {
      t.first[i] = n;
      if (detail::static_foreach(frozen.nodes[i].op)) n += frozen.nodes[i].aux;
    }
    for (std::int32_t k = 0; k < n; ++k) t.at[static_cast<std::size_t>(k)] = -1;
    for (std::size_t j = 0; j < node_count; ++j)
      if (frozen.nodes[j].op == op_kind::getitem) {
        const std::int32_t list = frozen.args[static_cast<std::size_t>(frozen.nodes[j].arg0)];
        if (detail::static_foreach(frozen.nodes[static_cast<std::size_t>(list)].op))
          t.at[static_cast<std::size_t>(t.first[static_cast<std::size_t>(list)] + frozen.nodes[j].aux)] = static_cast<std::int32_t>(j);
      }
    return t;
  }();

  // A list op of a static plan (_foreach_add / _foreach_mul, functional or in place): element k
  // of its result list is the op on element k of each operand list, a group of one op each with
  // its chunk loops typed here (an element nobody reads is not computed, as in the program's
  // dispatch).
  template <std::size_t I, std::size_t... Ks>
  static bool foreach_step(const exec_frame& f, std::index_sequence<Ks...>) {
    (foreach_element<I, static_cast<std::int32_t>(Ks)>(f), ...);
    return true;
  }
  template <std::size_t I, std::int32_t Kth>
  static void foreach_element(const exec_frame& f) {
    constexpr node nd = frozen.nodes[I];
    constexpr bool inplace = is_mutating(nd.op);
    constexpr std::int32_t a = frozen.args[static_cast<std::size_t>(nd.arg0 + Kth)];
    constexpr std::int32_t b = nd.nargs == 2 * nd.aux ? frozen.args[static_cast<std::size_t>(nd.arg0 + nd.aux + Kth)] : -1;
    constexpr std::int32_t result = list_results.at[static_cast<std::size_t>(list_results.first[I] + Kth)];
    constexpr std::int32_t out_node = inplace ? a : result;
    if constexpr (out_node >= 0) {
      constexpr op_kind E = nd.op == op_kind::foreach_add || nd.op == op_kind::foreach_add_ ? op_kind::add : op_kind::mul;
      constexpr dtype O = frozen.nodes[static_cast<std::size_t>(out_node)].meta.dt;
      constexpr dtype A = frozen.nodes[static_cast<std::size_t>(a)].meta.dt;
      constexpr dtype B = b >= 0 ? frozen.nodes[static_cast<std::size_t>(b)].meta.dt : O;
      const strided va = f.view(a);
      if constexpr (b >= 0) {
        const strided vb = f.view(b);
        kernels::run_binary(f.ctx, kernels::binary_op_typed<E, O, A, B, false>(0), f.view(out_node), va, &vb);
      } else {
        kernels::run_binary(f.ctx, kernels::binary_op_typed<E, O, A, B, true>(nd.scalar), f.view(out_node), va, nullptr);
      }
    }
  }

  template <std::size_t I>
  static bool single_step(const exec_frame& f) {
    constexpr node nd = frozen.nodes[I];
    constexpr op_kind K = nd.op;
    constexpr dtype O = nd.meta.dt;
    if constexpr (detail::static_foreach(K)) {
      if constexpr (run_plan.usable) return foreach_step<I>(f, std::make_index_sequence<static_cast<std::size_t>(nd.aux)>{});
      else return false;  // the program's dispatch
    } else if constexpr (is_index_op(K)) {
      if constexpr (run_plan.usable) return index_step<I>(f);
      else return false;  // the program's dispatch (masks, rows, symbolic extents)
    } else if constexpr (is_scatter(K)) {
      if constexpr (run_plan.usable) return scatter_step<I>(f);
      else return false;  // the program's dispatch
    } else if constexpr (facts(K).family == op_family::collective) {
      if constexpr (run_plan.usable) return collective_step<I>(f);
      else return false;  // the program's dispatch
    } else if constexpr (!detail::static_single(nd)) {
      return false;  // the run-time dispatch (dispatched_families)
    } else {
      constexpr std::int32_t a0 = nd.nargs > 0 ? frozen.args[static_cast<std::size_t>(nd.arg0)] : -1;
      constexpr dtype A = a0 >= 0 ? frozen.nodes[static_cast<std::size_t>(a0)].meta.dt : O;
      if constexpr (K == op_kind::clone || K == op_kind::convert || K == op_kind::copy_) {
        constexpr std::int32_t src = K == op_kind::copy_ ? frozen.args[static_cast<std::size_t>(nd.arg0 + 1)] : a0;
        constexpr dtype S = frozen.nodes[static_cast<std::size_t>(src)].meta.dt;
        const strided out = K == op_kind::copy_ ? f.view(a0) : f.view(static_cast<std::int32_t>(I));
        const strided in = f.view(src).broadcast_to(out.rank, out.size);
        kernels::copy_typed<S, K == op_kind::copy_ ? A : O>(f.ctx, out, in);  // one memcpy, rows of memmove, or a typed loop
        return true;
      } else if constexpr (library_kernels && (K == op_kind::sum || K == op_kind::amax || K == op_kind::amin || K == op_kind::prod || K == op_kind::mean || K == op_kind::cat ||
                                               K == op_kind::argmax || K == op_kind::argmin || K == op_kind::cumsum || K == op_kind::cumprod || K == op_kind::logcumsumexp ||
                                               K == op_kind::var || K == op_kind::var_mean ||
                                               K == op_kind::zeros || K == op_kind::ones || K == op_kind::full || K == op_kind::fill_)) {
        return false;  // the run-time dispatch compiled in ctfx::runtime
      } else if constexpr (K == op_kind::sum || K == op_kind::amax || K == op_kind::amin || K == op_kind::prod || K == op_kind::mean) {
        kernels::reduce_node_typed<A, O>(f.ctx, kernels::fold_of(K), K == op_kind::mean, f.view(static_cast<std::int32_t>(I)), f.view(a0),
                                         static_cast<unsigned>(node_param[I]));
        return true;
      } else if constexpr (K == op_kind::argmax || K == op_kind::argmin) {
        kernels::arg_reduce_typed<A>(f.ctx, kernels::fold_of(K), f.view(static_cast<std::int32_t>(I)), f.view(a0), static_cast<unsigned>(node_param[I]));
        return true;
      } else if constexpr (K == op_kind::var || K == op_kind::var_mean) {
        kernels::welford_typed<A>(f.ctx, K == op_kind::var_mean, nd.scalar.d, f.view(static_cast<std::int32_t>(I)), f.view(a0),
                                  static_cast<unsigned>(node_param[I]));
        return true;
      } else if constexpr (K == op_kind::cumsum || K == op_kind::cumprod || K == op_kind::logcumsumexp) {
        kernels::cumsum_typed<O>(f.ctx, kernels::scan_of(K), f.view(static_cast<std::int32_t>(I)), f.view(a0), static_cast<int>(node_param[I]));
        return true;
      } else if constexpr (K == op_kind::cat) {
        auto operand = [](std::int32_t k) { return frozen.args[static_cast<std::size_t>(frozen.nodes[I].arg0 + k)]; };
        constexpr bool one_type = [&] {  // every operand of the result's element type: copies typed here
          for (std::int32_t k = 0; k < nd.nargs; ++k)
            if (frozen.nodes[static_cast<std::size_t>(operand(k))].meta.dt != O) return false;
          return true;
        }();
        auto copy_part = [&](const strided& part, const strided& s) {
          if constexpr (one_type) kernels::copy_typed<O, O>(f.ctx, part, s);
          else kernels::copy(f.ctx, part, s);
        };
        kernels::cat_into(f.view(static_cast<std::int32_t>(I)), node_param[I], nd.nargs, [&](std::int32_t k) { return f.view(operand(k)); },
                          [&](std::int32_t k) { return fused_into[static_cast<std::size_t>(operand(k))] == static_cast<std::int32_t>(I); }, copy_part);
        return true;
      } else if constexpr (is_product(K)) {
        return product_step<I>(f);
      } else if constexpr (K == op_kind::empty || K == op_kind::empty_like) {
        return true;  // contents unspecified, as in PyTorch
      } else if constexpr (K == op_kind::zeros || K == op_kind::ones || K == op_kind::full || K == op_kind::fill_) {
        kernels::fill_typed<K == op_kind::fill_ ? A : O>(f.ctx, K == op_kind::fill_ ? f.view(a0) : f.view(static_cast<std::int32_t>(I)),
                                                         kernels::fill_value(K, nd.scalar));
        return true;
      } else {
        return false;
      }
    }
  }

  template <std::size_t... I>
  static constexpr std::array<static_node_fn, sizeof...(I)> make_table(std::index_sequence<I...>) {
    return {&step<I>...};
  }
  // (No kernels for a graph that broke a rule: the error above is the one the user reads, and the
  // kernels of a broken graph would only add errors and compile time after it.)
  static constexpr auto table = make_table(std::make_index_sequence<diag.ok() ? node_count : 0>{});
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
