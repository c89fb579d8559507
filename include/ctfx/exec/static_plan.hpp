// ctfx/exec/static_plan.hpp — a graph's whole run as constant data, made in the compiler: every
// node's layout, where each storage lives (an input, the workspace at a fixed offset, or an
// output's buffer), the steps, which inputs the graph writes, the workspace size, the outputs'
// shapes. compiled<G> makes one for a graph whose every step has a kernel of its own, and runs it
// with static_runner (exec/static_run.hpp): the checks, then the steps, without the run-time
// program (planners, dispatch), which such a user's file then does not compile. Every number here
// is what that program computes for the same graph (test/unit/exec_static_plan_test.cpp holds them
// side by side). A graph with symbolic extents keeps its layouts, storage sizes and workspace
// offsets as expressions in its symbols (static_symbols_ref), which the runner evaluates from the
// inputs' shapes on each call; every decision (steps, storages, the arena's pools and lanes) is
// still made here.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
#include "../analysis/liveness.hpp"
#include "../analysis/order.hpp"
#include "../graph/fingerprint.hpp"
#include "../plan/make_plan.hpp"
#include "../kernels/collectives.hpp"
#include "../ops/scatters.hpp"
#include "index_operands.hpp"
#include "layouts.hpp"
#include "run_checks.hpp"

namespace ctfx {

/// Where a storage's memory comes from during a run of a static plan.
enum class storage_home : std::uint8_t {
  unused,     ///< nothing reads or writes it
  input,      ///< the caller's input `index`
  workspace,  ///< the workspace, `offset` bytes in
  output,     ///< the caller's output `index` (computed in place there)
  held,       ///< the caller's output `index` too, holding this storage before the output is computed
};
/// Where one storage lives during a run of a static plan.
struct storage_place {
  storage_home home = storage_home::unused;  ///< input, workspace, output, held, or unused
  std::int32_t index = -1;  ///< the input or output position (home input, output or held)
  std::int64_t offset = 0;  ///< the byte offset in the workspace (home workspace)
  std::int64_t bytes = 0;   ///< the bytes its views reach
};

/// An index op among a static plan's steps, its index values checked as the run-time program checks
/// them: indices that are inputs the graph does not write before it, before the first step (or, by
/// an in-place put that may, as it writes, before its first write); indices computed in the graph,
/// once computed, before steps[check_at]: its own step, or (hoisted) the first step that writes a
/// caller's buffer, when it comes after that.
struct static_index_step {
  index_operands op;             ///< its operands
  std::int32_t step = -1;        ///< its position in the graph's schedule (liveness steps)
  bool in_row = false;           ///< a put whose values were computed in the row it selects: it writes nothing itself
  bool checked_in_put = false;   ///< an in-place put that may check its indices as it writes (when its form allows)
  bool mask = false;             ///< a put whose one index is a bool mask (x[mask] = v: elementwise, nothing to check)
  bool computed = false;         ///< its indices are computed in the graph: checked during the run
  bool hoisted = false;          ///< (computed) checked ahead of its own step, before the first caller write
  std::int32_t check_at = -1;    ///< (computed) the position in the plan's steps it is checked before
  name_t name;                   ///< the op's node name
  std::array<name_t, max_rank> index_names{};  ///< each index tensor's node name
};
/// A scatter among a static plan's steps (slice, select, diagonal, as_strided or a chain of views):
/// its result is its base copied (unless it writes the base in place), then its source copied into
/// the view it writes, laid out here.
struct static_scatter {
  std::int32_t node = -1;  ///< the scatter
  bool copy_base = true;   ///< the base is copied into the result first (false: generalized_scatter_, in place)
  bound_layout target;     ///< the view written, in the result's storage (or the base's, in place)
};
/// A collective or halo exchange among a static plan's steps: checked against the run's world with
/// the other checks, run over the context's communicator (kernels/collectives.hpp).
struct static_collective {
  std::int32_t node = -1;       ///< the collective
  std::int32_t x = -1;          ///< its argument (for an in-place op, also what it writes)
  kernels::collective_node c{};  ///< its op, reduce op or source rank, and parameters
  name_t name;                  ///< the node's name (for messages)
};
/// A node computed straight into an index put's row: its layout is moved to the row that the put's
/// (checked) index selects, on every run.
struct static_row {
  std::int32_t node = -1;   ///< the node computed there
  std::int32_t index = -1;  ///< the put's index node (its first element selects the row)
  index_t extent = 0;       ///< the indexed dimension's extent (a negative index counts back from it)
  index_t stride = 0;       ///< the indexed dimension's stride in x, in elements
};

/// The indexed dimension of a put whose row holds a result (static_row's extent and stride), in the
/// symbols of a plan with symbolic extents.
struct symbolic_row {
  sym_expr extent;  ///< the indexed dimension's extent
  sym_expr stride;  ///< its stride in x, in elements
};

/// Where a storage of a plan with symbolic extents lives, in numbers a call evaluates: the bytes
/// its views reach, and (home workspace) its place as the arena gives it (plan/arena.hpp): in pool
/// `pool`, `offset` bytes in, above the aligned lanes below `lane` of the pool's symbolic region.
struct symbolic_storage {
  std::int32_t pool = -1;   ///< (home workspace) its pool
  std::int64_t offset = 0;  ///< (home workspace) the static part of its offset in the pool
  std::int32_t lane = -1;   ///< (home workspace) its lane in the pool's symbolic region, or -1
  sym_expr bytes;           ///< the bytes its views reach (home workspace, output, held)
};
/// A workspace pool of a plan with symbolic extents: its static region, then its lanes
/// (lanes[first_lane, first_lane + n_lanes) of the plan), each aligned to arena_alignment.
struct symbolic_pool {
  std::int64_t static_bytes = 0;  ///< the static region: offsets [0, static_bytes)
  std::int32_t first_lane = 0;    ///< its first lane in the plan's lanes
  std::int32_t n_lanes = 0;       ///< its lanes
};
/// What a plan with symbolic extents keeps as expressions (empty spans, n_symbols 0: a plan whose
/// numbers are all static). Every symbol is the extent of an input dimension or derived from
/// those (floor division, modulo, Max, Min, a guard), as `table` defines it.
struct static_symbols_ref {
  std::size_t n_symbols = 0;                   ///< the graph's symbols (0: a static plan)
  std::span<const symbol> table;               ///< the graph's symbol table
  std::span<const tensor_meta> layouts;        ///< per node: its layout, in the symbols
  std::span<const name_t> names;               ///< per node: its name (for messages)
  std::span<const symbolic_storage> storages;  ///< per storage: its bytes and workspace place
  std::span<const symbolic_pool> pools;        ///< the workspace's pools, back to back
  std::span<const sym_expr> lanes;             ///< the pools' lanes (their bytes)
  std::span<const tensor_meta> scatters;       ///< per scatter (as static_plan_ref::scatters): the view it writes
  std::span<const symbolic_row> rows;          ///< per row (as static_plan_ref::rows): its put's indexed dimension
};

struct static_plan_ref;
/// Checks a plan's collectives against the run's world (detail::check_static_collectives,
/// exec/static_run.hpp): compiled<G> sets it only for a plan that has collectives, so a file whose
/// graph has none does not compile those checks.
using static_collective_check = run_status (*)(const static_plan_ref&, const device_ctx&, const bound_layout*, std::byte* const*);

/// A static plan without its capacity: what static_runner reads.
struct static_plan_ref {
  std::int32_t output_node = -1;               ///< the graph's output node
  std::span<const bound_layout> layouts;       ///< per node: its layout
  std::span<const std::int32_t> input_nodes;   ///< per input position: its node
  std::span<const name_t> input_names;         ///< per input position: its name (for messages)
  std::span<const bool> input_written;         ///< per input position: whether the graph writes it
  std::span<const std::int32_t> output_nodes;  ///< per output position: its node
  std::span<const tensor_desc> outputs;        ///< per output position: dense, as binding::outputs
  std::span<const storage_place> storages;     ///< per storage id: where it lives
  std::span<const std::int32_t> steps;         ///< the nodes that run a kernel, in order
  std::span<const static_index_step> index_steps;  ///< the index ops among them, in node order
  std::span<const static_row> rows;            ///< nodes computed in a put's row, in node order
  std::span<const static_scatter> scatters;    ///< the scatters among the steps, in node order
  std::span<const static_collective> collectives;  ///< the collectives among the steps, in node order
  std::span<const std::int32_t> late_checks;   ///< index_steps checked during the run, in the order they are checked
  std::size_t agree_at = 0;                    ///< across ranks: the position in steps before which ranks agree
  std::size_t workspace_bytes = 0;             ///< as binding::workspace_bytes
  std::size_t scratch_offset = 0;              ///< where the run's scratch starts in the workspace (a halo exchange packs there)
  static_symbols_ref symbols{};                ///< a plan with symbolic extents: what a call evaluates (layouts, storages, workspace)
  std::uint64_t graph_hash = 0;                ///< the graph's fingerprint (ranks compare it before a run)
  static_collective_check check_collectives = nullptr;  ///< checks the collectives (null: the plan has none)
};

/// A graph's run, for a graph of at most N nodes, S storages, X index ops, scatters or collectives
/// (of each), R nodes computed in a put's row and Y symbols (static_symbols_ref). `usable` false:
/// the run-time program runs it, for the reason `why` (a step without a typed kernel, a symbol no
/// input's extent binds, ...).
template <std::size_t N, std::size_t S, std::size_t X = 0, std::size_t R = 0, std::size_t Y = 0>
struct static_plan {
  static constexpr std::size_t NY = Y > 0 ? N : 0;  ///< room of the per-node symbolic arrays (0 without symbols)
  static constexpr std::size_t SY = Y > 0 ? S : 0;  ///< room of sym_storages (0 without symbols)
  static constexpr std::size_t XY = Y > 0 ? X : 0;  ///< room of sym_scatters (0 without symbols)
  static constexpr std::size_t RY = Y > 0 ? R : 0;  ///< room of sym_rows (0 without symbols)
  bool usable = false;         ///< whether compiled<G> runs this plan (else the run-time program)
  const char* why = "not made";  ///< why not, when not usable
  std::int32_t output_node = -1;  ///< the graph's output node
  std::size_t n_inputs = 0;    ///< inputs used of input_nodes, input_names, input_written
  std::size_t n_outputs = 0;   ///< outputs used of output_nodes, outputs
  std::size_t n_storages = 0;  ///< storages used of storages
  std::size_t n_steps = 0;     ///< steps used of steps
  std::size_t n_index_steps = 0;  ///< index ops used of index_steps
  std::size_t n_rows = 0;      ///< rows used of rows
  std::size_t n_scatters = 0;  ///< scatters used of scatters
  std::size_t n_collectives = 0;  ///< collectives used of collectives
  std::size_t n_late_checks = 0;  ///< entries used of late_checks
  std::size_t agree_at = 0;    ///< across ranks: the position in steps before which ranks agree (after the checks there)
  std::array<bound_layout, N> layouts{};  ///< per node: its layout
  std::array<std::int32_t, N> input_nodes{};   ///< per input position: its node
  std::array<std::int32_t, N> output_nodes{};  ///< per output position: its node
  std::array<std::int32_t, N> steps{};         ///< the nodes that run a kernel, in order
  std::array<name_t, N> input_names{};  ///< per input position: its name
  std::array<bool, N> input_written{};  ///< per input position: whether the graph writes it
  std::array<tensor_desc, N> outputs{};  ///< per output position: dense, as binding::outputs
  std::array<storage_place, S> storages{};  ///< per storage id: where it lives
  std::array<static_index_step, X> index_steps{};  ///< the index ops among the steps, in node order
  std::array<static_row, R> rows{};  ///< nodes computed in a put's row, in node order
  std::array<static_scatter, X> scatters{};  ///< the scatters among the steps, in node order
  std::array<static_collective, X> collectives{};  ///< the collectives among the steps, in node order
  std::array<std::int32_t, X> late_checks{};  ///< index_steps whose indices are computed, in the order they are checked
  std::size_t workspace_bytes = 0;  ///< as binding::workspace_bytes
  std::size_t scratch_offset = 0;   ///< where the run's scratch starts in the workspace
  std::uint64_t graph_hash = 0;     ///< the graph's fingerprint (ranks compare it before a run)
  // With symbolic extents (n_symbols > 0): what a call evaluates. layouts, storages and outputs
  // then hold each one's element type, rank, storage and home only.
  std::size_t n_symbols = 0;   ///< the graph's symbols
  std::size_t n_pools = 0;     ///< pools used of sym_pools
  std::size_t n_lanes = 0;     ///< lanes used of sym_lanes
  std::array<symbol, Y> sym_table{};                ///< the graph's symbol table
  std::array<tensor_meta, NY> sym_layouts{};        ///< per node: its layout, in the symbols
  std::array<name_t, NY> sym_names{};               ///< per node: its name
  std::array<symbolic_storage, SY> sym_storages{};  ///< per storage: its bytes and workspace place
  std::array<symbolic_pool, NY> sym_pools{};        ///< the workspace's pools
  std::array<sym_expr, NY> sym_lanes{};             ///< the pools' lanes
  std::array<tensor_meta, XY> sym_scatters{};       ///< per scatter: the view it writes
  std::array<symbolic_row, RY> sym_rows{};          ///< per row: its put's indexed dimension

  /// The plan as static_runner reads it (spans over this plan's arrays).
  constexpr static_plan_ref ref() const {
    return {output_node,
            {layouts.data(), N},
            {input_nodes.data(), n_inputs},
            {input_names.data(), n_inputs},
            {input_written.data(), n_inputs},
            {output_nodes.data(), n_outputs},
            {outputs.data(), n_outputs},
            {storages.data(), n_storages},
            {steps.data(), n_steps},
            {index_steps.data(), n_index_steps},
            {rows.data(), n_rows},
            {scatters.data(), n_scatters},
            {collectives.data(), n_collectives},
            {late_checks.data(), n_late_checks},
            agree_at,
            workspace_bytes,
            scratch_offset,
            {n_symbols,
             {sym_table.data(), n_symbols},
             {sym_layouts.data(), n_symbols ? N : 0},
             {sym_names.data(), n_symbols ? N : 0},
             {sym_storages.data(), n_symbols ? n_storages : 0},
             {sym_pools.data(), n_pools},
             {sym_lanes.data(), n_lanes},
             {sym_scatters.data(), n_symbols ? n_scatters : 0},
             {sym_rows.data(), n_symbols ? n_rows : 0}},
            graph_hash};
  }
};

namespace detail {
constexpr bound_layout bound_static(const tensor_meta& m) {
  bound_layout b;
  b.dt = m.dt;
  b.rank = m.rank;
  b.storage = m.storage;
  for (int d = 0; d < m.rank; ++d) {
    b.size[d] = m.size[d].value();
    b.stride[d] = m.stride[d].value();
  }
  b.offset = m.offset.value();
  return b;
}
constexpr index_t layout_extent(const bound_layout& l) {  // bound_layout::extent, in constant evaluation
  index_t hi = l.offset;
  for (int d = 0; d < l.rank; ++d) {
    if (l.size[d] == 0) return 0;
    hi += (l.size[d] - 1) * l.stride[d];
  }
  return hi + 1;
}
// A run's scratch for layouts L: the CUDA index check's flag (not used on the host, but every
// plan reserves it), or what the largest halo exchange packs its edges into, as the program's
// scratch_bytes sizes it.
constexpr std::size_t static_scratch_bytes(std::span<const static_collective> collectives, const bound_layout* L) {
  std::size_t scratch = 64;
  for (const static_collective& c : collectives) {
    if (c.c.op != op_kind::halo_exchange && c.c.op != op_kind::halo_exchange_) continue;
    const bound_layout& x = L[static_cast<std::size_t>(c.x)];
    const std::size_t need = 64 + kernels::halo_scratch_bytes(c.c, x.size[0], x.size[1], x.dt);
    scratch = need > scratch ? need : scratch;
  }
  return static_cast<std::size_t>(align_ws(static_cast<index_t>(scratch)));
}
}  // namespace detail

/// Makes the static plan of graph `g` (optimized) from its plan `P` (plan/make_plan.hpp: the
/// grouping, the schedule, the slots and their arena); `typed(i)` says whether step node i runs a kernel compiled for it
/// (index ops and scatters are taken on their own terms: compiled<G> types them from this plan).
/// With room for Y symbols, a graph whose symbols are inputs' extents and symbols derived from
/// them gets a plan whose numbers a call evaluates (static_symbols_ref). Unusable (with the
/// reason) for anything the run-time program must do.
/// `p` (default-made) is made in place: the constant evaluation copies no plan.
template <std::size_t N, std::size_t S, std::size_t X = 0, std::size_t Rows = 0, std::size_t Y = 0, class Typed>
constexpr void make_static_plan(static_plan<N, S, X, Rows, Y>& p, const ir& g, const graph_plan& P, Typed&& typed) {
  auto refuse = [&](const char* why) { p.why = why; };
  if (!g.error.ok()) return refuse("the graph broke a rule");
  p.graph_hash = fingerprint(g);
  if (static_cast<std::size_t>(g.size()) > N || static_cast<std::size_t>(g.next_storage) > S) return refuse("more nodes or storages than planned");
  const auto inputs = detail::input_nodes_of(g);
  const bool symbolic = !g.syms.empty();
  if (symbolic) {
    if (g.syms.size() > Y) return refuse("more symbols than planned");
    // Every symbol an input's extent (bound from the call's shapes) or derived from them, as the
    // runner binds them; data-dependent ones are the program's.
    for (std::size_t s = 0; s < g.syms.size(); ++s) {
      if (g.syms[s].kind == symbol_kind::unbacked) return refuse("a data-dependent symbol (the run-time program binds it)");
      if constexpr (Y > 0) p.sym_table[s] = g.syms[s];
      if (g.syms[s].kind == symbol_kind::derived) continue;
      bool bound = false;
      for (const std::int32_t i : inputs)
        for (int d = 0; d < g.meta(i).rank; ++d) bound = bound || g.meta(i).size[d].as_symbol() == static_cast<int>(s);
      if (!bound) return refuse("a symbol that no input's extent is (the run-time program reports it)");
    }
    p.n_symbols = g.syms.size();
  }
  if (!P.arena_usable()) return refuse("the arena is planned at run time");
  const liveness& L = P.life;
  const std::int32_t* into = P.into();
  std::vector<std::int32_t> input_of_storage(static_cast<std::size_t>(g.next_storage), -1);
  for (std::size_t k = 0; k < inputs.size(); ++k) input_of_storage[static_cast<std::size_t>(g[inputs[k]].meta.storage)] = static_cast<std::int32_t>(k);
  // The index put whose row holds node i's result (through cat slices), or -1.
  auto row_put = [&](std::int32_t i) {
    std::int32_t h = i;
    while (into && into[h] >= 0) h = into[h];
    return h != i && is_index_op(g[h].op) ? h : -1;
  };
  // The first step that writes each storage (a kernel computing a put's row writes x's), and the
  // first that writes a caller's input: what the program's index checks are planned from.
  std::vector<std::int32_t> first_write(static_cast<std::size_t>(g.next_storage), -1);
  std::int32_t first_caller_write = -1;
  for (std::size_t step = 0; step < L.steps.size(); ++step) {
    auto wrote = [&](std::int32_t st) {
      if (st < 0) return;
      if (first_write[static_cast<std::size_t>(st)] < 0) first_write[static_cast<std::size_t>(st)] = static_cast<std::int32_t>(step);
      if (input_of_storage[static_cast<std::size_t>(st)] >= 0 && first_caller_write < 0) first_caller_write = static_cast<std::int32_t>(step);
    };
    if (const std::int32_t h = row_put(L.steps[step]); h >= 0) wrote(g.meta(g.arg(h, 0)).storage);
    for_each_write(g, L.steps[step], wrote);
  }
  // Indices computed in the graph are checked where the program checks them (its
  // plan_computed_index_checks): at their op's step when that comes no later than the barrier (the
  // first step that writes a caller's buffer), else just before the barrier, which needs them
  // computed by then (passes/hoist_computed_indices.hpp sees to it where it can).
  const auto n_lsteps = static_cast<std::int32_t>(L.steps.size());
  std::int32_t barrier = first_caller_write < 0 ? n_lsteps : first_caller_write;
  for (std::size_t step = 0; step < L.steps.size(); ++step)  // (or the first exchange with other ranks)
    if (facts(g[L.steps[step]].op).family == op_family::collective && static_cast<std::int32_t>(step) < barrier) barrier = static_cast<std::int32_t>(step);
  std::vector<std::int32_t> check_lstep(static_cast<std::size_t>(g.size()), -1);  // per computed index op: the schedule step it is checked at
  std::vector<std::int32_t> pos_of_lstep(L.steps.size() + 1, 0);                  // per schedule step: its position in p.steps (or the next one's)
  order_deps deps;
  bool have_deps = false;
  for (std::size_t step = 0; step < L.steps.size(); ++step) {
    pos_of_lstep[step] = static_cast<std::int32_t>(p.n_steps);
    const std::int32_t i = L.steps[step];
    const op_kind k = g[i].op;
    if (k == op_kind::empty || k == op_kind::empty_like) continue;  // no kernel: contents unspecified
    if (is_index_op(k)) {
      bool computed = false;
      int n_index = 0, n_mask = 0;
      for (std::int32_t q = first_index_arg(k); q < g[i].nargs; ++q) {
        const std::int32_t x = g.arg(i, q);
        if (x < 0) continue;
        ++n_index;
        if (g.meta(x).dt == dtype::b8) {  // a mask has no values to check (its shape is the indexed dimensions')
          ++n_mask;
          continue;
        }
        const auto st = static_cast<std::size_t>(g.meta(x).storage);
        if (input_of_storage[st] < 0 || (first_write[st] >= 0 && first_write[st] < static_cast<std::int32_t>(step))) computed = true;
      }
      if (n_mask > 0 && (k == op_kind::index || n_index != 1))
        return refuse("an index op with a bool mask and other indices (the run-time program's masked put)");
      if (computed) {
        const auto at = static_cast<std::int32_t>(step);
        if (at <= barrier) {
          check_lstep[static_cast<std::size_t>(i)] = at;
        } else {
          if (!have_deps) {
            deps = order_of(g);
            have_deps = true;
          }
          if (index_values_ready(g, L, deps, i) >= barrier) return refuse("an index op whose indices are computed after a write into a caller's buffer (the run-time program refuses it)");
          check_lstep[static_cast<std::size_t>(i)] = barrier;
        }
      }
      p.steps[p.n_steps++] = i;
      continue;
    }
    if (is_scatter(k)) {  // two typed copies
      if (into && into[i] >= 0) return refuse("a scatter computed in another node's buffer");
      p.steps[p.n_steps++] = i;
      continue;
    }
    if (facts(k).family == op_family::collective) {  // over the run's communicator
      if (p.n_collectives == X) return refuse("more collectives than planned");
      kernels::collective_node c{k, g[i].aux, {}};
      for (std::int32_t q = 0; q < g[i].npar && q < 3; ++q) c.param[q] = g.iparam(i, q);
      p.collectives[p.n_collectives++] = {i, g.arg(i, 0), c, g[i].name};
      p.steps[p.n_steps++] = i;
      continue;
    }
    if (k == op_kind::custom || k == op_kind::auto_functionalized || !typed(i))
      return refuse("a step runs through the run-time dispatch (a user op)");
    p.steps[p.n_steps++] = i;
  }
  pos_of_lstep[L.steps.size()] = static_cast<std::int32_t>(p.n_steps);
  for (std::int32_t i = 0; i < g.size(); ++i) {
    if (!is_index_op(g[i].op)) continue;
    if (L.step_of[static_cast<std::size_t>(i)] < 0) return refuse("an index op that is not a step");
    if (p.n_index_steps == X) return refuse("more index ops than planned");
    static_index_step& s = p.index_steps[p.n_index_steps++];
    s.op = index_operands_of(g, i);
    s.step = L.step_of[static_cast<std::size_t>(i)];
    s.in_row = !s.op.gather && into && into[s.op.values] == i;
    s.mask = s.op.n_index == 1 && g.meta(s.op.index[0]).dt == dtype::b8;
    s.name = g[i].name;
    for (int k = 0; k < s.op.n_index; ++k) s.index_names[static_cast<std::size_t>(k)] = g[s.op.index[k]].name;
    if (const std::int32_t c = check_lstep[static_cast<std::size_t>(i)]; c >= 0) {
      if (s.in_row) return refuse("a put's row selected by an index computed in the graph");
      s.computed = true;
      s.hoisted = c != s.step;
      s.check_at = pos_of_lstep[static_cast<std::size_t>(c)];
      p.late_checks[p.n_late_checks++] = static_cast<std::int32_t>(p.n_index_steps - 1);
    }
  }
  // The program's order: by position; at the barrier the hoisted checks (in node order), then its
  // own op's. Ranks agree after them (or, with none, once the checks before the first step passed).
  std::sort(p.late_checks.begin(), p.late_checks.begin() + static_cast<std::ptrdiff_t>(p.n_late_checks), [&](std::int32_t a, std::int32_t b) {
    const static_index_step &x = p.index_steps[static_cast<std::size_t>(a)], &y = p.index_steps[static_cast<std::size_t>(b)];
    if (x.check_at != y.check_at) return x.check_at < y.check_at;
    if (x.hoisted != y.hoisted) return x.hoisted;
    return x.op.node < y.op.node;
  });
  if (p.n_late_checks > 0) p.agree_at = static_cast<std::size_t>(pos_of_lstep[static_cast<std::size_t>(barrier)]);
  // Scatters: the view each one writes (as the program lays it out: exec/program.hpp).
  {
    ir scratch;  // (scatter_view_meta reports into a graph: a copy, made only when there is a scatter)
    for (std::int32_t i = 0; i < g.size(); ++i) {
      const op_kind k = g[i].op;
      if (!is_scatter(k)) continue;
      if (L.step_of[static_cast<std::size_t>(i)] < 0) return refuse("a scatter that is not a step");
      if (p.n_scatters == X) return refuse("more scatters than planned");
      if (scratch.size() == 0) scratch = g;
      const tensor_meta& on = k == op_kind::generalized_scatter_ ? g.meta(g.arg(i, 0)) : g[i].meta;
      tensor_meta target{};
      if (!detail::scatter_view_meta(scratch, i, k, on, g.params_of(g[i]), target) || !scratch.error.ok()) return refuse("a scatter's view broke a rule");
      bool fixed = target.offset.is_static();
      for (int d = 0; d < target.rank; ++d) fixed = fixed && target.size[d].is_static() && target.stride[d].is_static();
      if (!fixed && !symbolic) return refuse("a scatter's view without numbers");
      if constexpr (Y > 0)
        if (symbolic) p.sym_scatters[p.n_scatters] = target;  // (evaluated per call; the plan keeps its element type, rank and storage)
      p.scatters[p.n_scatters++] = {i, k != op_kind::generalized_scatter_, detail::bound_static(target)};
    }
  }
  // Layouts: a result computed in a cat's slice is laid out as that slice (consumers come later,
  // so from the last node back each cat's own layout is known before its operands').
  std::vector<tensor_meta> meta(static_cast<std::size_t>(g.size()));
  for (std::int32_t i = g.size() - 1; i >= 0; --i) {
    const std::int32_t c = into ? into[i] : -1;
    if (c < 0) meta[static_cast<std::size_t>(i)] = g[i].meta;
    else if (g[c].op == op_kind::cat) meta[static_cast<std::size_t>(i)] = cat_slice_meta(g, c, i, &meta[static_cast<std::size_t>(c)]);
    else meta[static_cast<std::size_t>(i)] = row_put_meta(g, c);  // at the row's start: moved to the row on each run
    if (meta[static_cast<std::size_t>(i)].is_tensor()) p.layouts[static_cast<std::size_t>(i)] = detail::bound_static(meta[static_cast<std::size_t>(i)]);
  }
  if constexpr (Y > 0)
    if (symbolic)
      for (std::int32_t i = 0; i < g.size(); ++i) {
        p.sym_layouts[static_cast<std::size_t>(i)] = meta[static_cast<std::size_t>(i)];
        p.sym_names[static_cast<std::size_t>(i)] = g[i].name;
      }
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const std::int32_t h = row_put(i);
    if (h < 0) continue;
    if (p.n_rows == Rows) return refuse("more results computed in a put's row than planned");
    std::int32_t ix = -1;
    const int d = row_put_dim(g, h, &ix);
    const bound_layout& x = p.layouts[static_cast<std::size_t>(g.arg(h, 0))];
    if constexpr (Y > 0)
      if (symbolic) {
        const tensor_meta& xm = meta[static_cast<std::size_t>(g.arg(h, 0))];
        p.sym_rows[p.n_rows] = {xm.size[d], xm.stride[d]};
      }
    p.rows[p.n_rows++] = {i, ix, x.size[d], x.stride[d]};
  }
  // Inputs, outputs, and where every storage lives.
  p.n_inputs = inputs.size();
  p.n_storages = static_cast<std::size_t>(g.next_storage);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    p.input_nodes[k] = inputs[k];
    p.input_names[k] = g[inputs[k]].name;
    const bound_layout& l = p.layouts[static_cast<std::size_t>(inputs[k])];
    p.storages[static_cast<std::size_t>(l.storage)] = {storage_home::input, static_cast<std::int32_t>(k), 0, detail::layout_extent(l) * size_of(l.dt)};
  }
  p.output_node = g.output_node();
  if (p.output_node >= 0)
    for (const std::int32_t a : g.args_of(p.output_node))
      if (a >= 0 && g.meta(a).is_tensor()) {
        const bound_layout& l = p.layouts[static_cast<std::size_t>(a)];
        tensor_desc d;
        d.dt = l.dt;
        d.rank = l.rank;
        for (int k = 0; k < l.rank; ++k) d.size[k] = l.size[k];
        d.set_contiguous();
        p.output_nodes[p.n_outputs] = a;
        p.outputs[p.n_outputs++] = d;
      }
  const auto& direct = P.direct;
  const slot_plan& sp = P.slots;
  const arena_plan& arena = P.arena;
  if (sp.bytes.size() != arena.slots.size()) return refuse("the arena was planned for other slots");
  if (arena.pools.size() > N) return refuse("more pools than planned");
  std::array<std::int64_t, N> pool_base{};
  std::size_t buffers = 0, lanes = 0;
  for (std::size_t q = 0; q < arena.pools.size(); ++q) {
    if (!arena.pools[q].lanes.empty() && !symbolic) return refuse("a pool with lanes in a graph without symbols");
    pool_base[q] = static_cast<std::int64_t>(buffers);
    buffers += detail::align_ws(arena.pools[q].static_bytes);
    lanes += arena.pools[q].lanes.size();
  }
  if constexpr (Y > 0)
    if (symbolic) {  // (pools back to back as the program lays them out; a call adds up their lanes)
      if (lanes > N) return refuse("more pools or lanes than planned");
      p.n_pools = arena.pools.size();
      for (std::size_t q = 0; q < p.n_pools; ++q) {
        p.sym_pools[q] = {arena.pools[q].static_bytes, static_cast<std::int32_t>(p.n_lanes), static_cast<std::int32_t>(arena.pools[q].lanes.size())};
        for (const sym_expr& e : arena.pools[q].lanes) p.sym_lanes[p.n_lanes++] = e;
      }
    }
  for (std::size_t b = 0; b < L.buffers.size(); ++b) {
    const auto s = static_cast<std::size_t>(L.buffers[b].storage);
    const std::int32_t k = sp.slot_of_buffer[b];
    if (k >= 0) {
      const arena_slot& a = arena.slots[static_cast<std::size_t>(k)];
      if (a.lane >= 0 && !symbolic) return refuse("a slot of symbolic size");
      const sym_expr& bytes = sp.bytes[static_cast<std::size_t>(k)];
      p.storages[s] = {storage_home::workspace, -1, pool_base[static_cast<std::size_t>(a.pool)] + a.offset, bytes.is_static() ? bytes.value() : 0};
      if constexpr (Y > 0)
        if (symbolic) p.sym_storages[s] = {a.pool, a.offset, a.lane, bytes};
      continue;
    }
    const std::int32_t j = sp.output_of_buffer[b];
    if (j < 0) return refuse("a buffer without a slot");
    const sym_expr& bytes = L.buffers[b].bytes;
    p.storages[s] = {direct[static_cast<std::size_t>(j)] == static_cast<std::int32_t>(s) ? storage_home::output : storage_home::held, j, 0,
                     bytes.is_static() ? bytes.value() : 0};
    if constexpr (Y > 0)
      if (symbolic) p.sym_storages[s].bytes = bytes;
  }
  // The scratch (with symbols, the halo exchanges' part is sized per call: exec/static_run.hpp).
  p.scratch_offset = buffers;
  p.workspace_bytes = buffers + detail::static_scratch_bytes({p.collectives.data(), symbolic ? 0 : p.n_collectives}, p.layouts.data());
  // The first step that writes a caller's output buffer (computing the output, or a buffer it holds before).
  const std::int32_t first_output = first_caller_output_step(L, std::span<const std::int32_t>(sp.output_of_buffer.data(), sp.output_of_buffer.size()));
  // In-place puts that may check their indices as they write (the program's fused checks,
  // exec/program.hpp): nothing before them writes a caller buffer (an input, or an output computed
  // in the caller's buffer), so a failed check there still leaves every caller buffer untouched.
  for (std::size_t k = 0; k < p.n_index_steps; ++k) {
    static_index_step& s = p.index_steps[k];
    if (!s.op.inplace || s.in_row || s.computed) continue;
    // The form kernels::index_put_fusable_host takes (x[i] (+)= v: x 1-D within the shadow's bytes,
    // one 1-D i64 index); whether x shares bytes with the values or the index is seen at run time.
    const tensor_meta& xm = g.meta(s.op.x);
    const tensor_meta& im = g.meta(s.op.index[0]);
    if (xm.rank != 1 || s.op.n_index != 1 || im.dt != dtype::i64 || im.rank != 1 || !im.size[0].is_static() || !xm.size[0].is_static() ||
        im.size[0].value() == 0 ||
        xm.size[0].value() * size_of(xm.dt) > static_cast<index_t>(kernels::index_put_shadow_bytes))
      continue;
    bool ok = (first_caller_write < 0 || first_caller_write >= s.step) && (first_output < 0 || first_output >= s.step);
    for (const std::int32_t st : direct)
      if (st >= 0 && first_write[static_cast<std::size_t>(st)] >= 0 && first_write[static_cast<std::size_t>(st)] < s.step) ok = false;
    s.checked_in_put = ok;
  }
  // Which inputs the graph writes: their buffers are then refused as aliases of any other.
  for (std::size_t k = 0; k < p.n_steps; ++k)
    for_each_write(g, p.steps[k], [&](std::int32_t s) {
      if (s >= 0 && p.storages[static_cast<std::size_t>(s)].home == storage_home::input)
        p.input_written[static_cast<std::size_t>(p.storages[static_cast<std::size_t>(s)].index)] = true;
    });
  // Every view inside its storage (the run-time program checks it on every run; here it is the
  // same on every run, so a plan that would fail it is left to that program to report). With
  // symbols, the runner checks it on each call (detail::bind_static_symbols).
  for (std::int32_t i = 0; i < g.size() && !symbolic; ++i) {
    const bound_layout& l = p.layouts[static_cast<std::size_t>(i)];
    if (!g[i].meta.is_tensor() || detail::layout_extent(l) == 0) continue;
    const auto s = static_cast<std::size_t>(l.storage);
    if (p.storages[s].home == storage_home::unused) continue;
    if (l.offset < 0 || detail::layout_extent(l) * size_of(l.dt) > p.storages[s].bytes) return refuse("a view outside its storage");
  }
  for (std::size_t k = 0; k < p.n_scatters && !symbolic; ++k) {
    const bound_layout& l = p.scatters[k].target;
    const storage_place& q = p.storages[static_cast<std::size_t>(l.storage)];
    if (detail::layout_extent(l) != 0 && (l.offset < 0 || detail::layout_extent(l) * size_of(l.dt) > q.bytes)) return refuse("a view outside its storage");
  }
  p.usable = true;
  p.why = "";
}

/// The plan in words, a line per input, output, storage used and step (nodes named from graph `g`):
/// for listings and tests. A plan with symbolic extents prints them in the graph's symbols, and
/// a storage's place as pool, offset in it and lane.
inline std::string to_text(const static_plan_ref& p, const ir& g) {
  auto name = [&](std::int32_t i) { return std::string(g[i].name.view()); };
  const static_symbols_ref& y = p.symbols;
  auto expr = [&](const sym_expr& e) {
    detail::msg m;
    detail::put_expr(m, g, e);
    return std::string(m.view());
  };
  auto shape = [&](const tensor_meta& m) {
    std::string r = "[";
    for (int d = 0; d < m.rank; ++d) r += (d ? ", " : "") + expr(m.size[d]);
    return r + "]";
  };
  std::string t;
  for (std::size_t k = 0; k < p.input_nodes.size(); ++k)
    t += "input " + std::to_string(k) + ": " + name(p.input_nodes[k]) + (p.input_written[k] ? " (written)" : "") + "\n";
  for (std::size_t j = 0; j < p.output_nodes.size(); ++j) {
    t += "output " + std::to_string(j) + ": " + name(p.output_nodes[j]) + " ";
    if (y.n_symbols == 0) {
      t += detail::shape_text(p.outputs[j].size, p.outputs[j].rank);
    } else {
      t += shape(y.layouts[static_cast<std::size_t>(p.output_nodes[j])]);
    }
    t += "\n";
  }
  for (std::size_t s = 0; s < p.storages.size(); ++s) {
    const storage_place& q = p.storages[s];
    if (q.home == storage_home::unused) continue;
    t += "storage " + std::to_string(s) + ": ";
    switch (q.home) {
      case storage_home::unused: break;
      case storage_home::input: t += "input " + std::to_string(q.index); break;
      case storage_home::workspace:
        if (y.n_symbols == 0) {
          t += "workspace +" + std::to_string(q.offset);
        } else {
          const symbolic_storage& w = y.storages[s];
          t += "workspace pool " + std::to_string(w.pool) + " +" + std::to_string(w.offset) +
               (w.lane >= 0 ? " lane " + std::to_string(w.lane) : std::string()) + ", " + expr(w.bytes) + " bytes";
        }
        break;
      case storage_home::output: t += "output " + std::to_string(q.index); break;
      case storage_home::held: t += "output " + std::to_string(q.index) + ", before it"; break;
    }
    t += "\n";
  }
  for (const std::int32_t i : p.steps) t += "step: " + name(i) + "\n";
  for (const static_index_step& s : p.index_steps) {
    t += "index: " + name(s.op.node) + " (indices:";
    for (int k = 0; k < s.op.n_index; ++k) t += (k ? ", " : " ") + name(s.op.index[k]);
    t += s.mask             ? "; a bool mask: elementwise over x, nothing to check)\n"
         : s.in_row         ? "; its values computed in its row)\n"
         : s.checked_in_put ? "; checked as it writes)\n"
         : !s.computed      ? "; checked before the first step)\n"
         : "; computed in the graph, checked before step " + std::to_string(s.check_at) + (s.hoisted ? ", ahead of its own)\n" : ")\n");
  }
  for (const static_row& r : p.rows) t += "row: " + name(r.node) + " in the row of index '" + name(r.index) + "'\n";
  for (const static_collective& c : p.collectives) t += "collective: " + name(c.node) + " (checked against the run's world before the first step)\n";
  for (std::size_t k = 0; k < p.scatters.size(); ++k) {
    const static_scatter& s = p.scatters[k];
    t += "scatter: " + name(s.node) + (s.copy_base ? " (its base copied, then" : " (in place:") + " its source into ";
    if (y.n_symbols == 0) {
      t += detail::shape_text(s.target.size, s.target.rank) + " at element " + std::to_string(s.target.offset);
    } else {
      t += shape(y.scatters[k]) + " at element " + expr(y.scatters[k].offset);
    }
    t += " of storage " + std::to_string(s.target.storage) + ")\n";
  }
  if (y.n_symbols > 0) {
    for (std::size_t q = 0; q < y.pools.size(); ++q) {
      t += "pool " + std::to_string(q) + ": " + std::to_string(y.pools[q].static_bytes) + " bytes";
      for (std::int32_t l = 0; l < y.pools[q].n_lanes; ++l) t += ", lane " + std::to_string(l) + " " + expr(y.lanes[static_cast<std::size_t>(y.pools[q].first_lane + l)]) + " bytes";
      t += "\n";
    }
    bool halo = false;
    for (const static_collective& c : p.collectives) halo = halo || c.c.op == op_kind::halo_exchange || c.c.op == op_kind::halo_exchange_;
    return t + "workspace: the pools, then " + std::to_string(p.workspace_bytes - p.scratch_offset) + " bytes of scratch" +
           (halo ? " or the halo exchanges' edges, the larger\n" : "\n");
  }
  return t + "workspace: " + std::to_string(p.workspace_bytes) + " bytes\n";
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
