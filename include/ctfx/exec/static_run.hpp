// ctfx/exec/static_run.hpp — running a static plan (exec/static_plan.hpp): the run-time program's
// checks in its order and words (exec/run_checks.hpp), the workspace, then one typed kernel per step
// (compiled<G>'s table), then the outputs not computed in place copied out. Nothing is planned or
// dispatched here; a plan with symbolic extents has its symbols bound from the inputs' shapes and
// its expressions evaluated first. Nothing is written before every check has passed (across ranks:
// before every rank has learned that every rank passed them).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>
#include "program.hpp"
#include "run_checks.hpp"
#include "static_plan.hpp"

namespace ctfx {

namespace detail {
// Whether the inputs are what the plan takes: the checks below pass exactly when this holds. A call
// asks this first, without building a name or a message (a fifth of a small call's setup, before).
template <class T>
bool static_inputs_match(const static_plan_ref& p, std::span<const T> inputs) {
  if (inputs.size() != p.input_nodes.size()) return false;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const bound_layout& l = p.layouts[static_cast<std::size_t>(p.input_nodes[k])];
    if (!input_matches(l.dt, l.rank, l.size, l.stride, inputs[k])) return false;
  }
  return true;
}

// Inputs (tensor_desc or tensor_ref) against the plan: count, dtype and rank, then extents and strides.
template <class T>
run_status check_static_inputs(const static_plan_ref& p, std::span<const T> inputs) {
  if (static_inputs_match(p, inputs)) return {};
  if (auto st = check_input_count(p.input_nodes.size(), inputs.size()); !st) return st;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int32_t i = p.input_nodes[k];
    const bound_layout& l = p.layouts[static_cast<std::size_t>(i)];
    if (auto st = check_input_kind(i, p.input_names[k].view(), k, l.dt, l.rank, inputs[k]); !st) return st;
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int32_t i = p.input_nodes[k];
    const bound_layout& l = p.layouts[static_cast<std::size_t>(i)];
    if (auto st = check_input_layout(i, p.input_names[k].view(), k, l.size, l.stride, l.rank, inputs[k]); !st) return st;
  }
  return {};
}

// Storages and outputs of a run: on the stack for the common sizes, else on the heap. Only the n
// elements a run uses are initialized: a plan without rows takes none of `moved`'s sixteen layouts
// (2.4 KiB, a memset on every run otherwise). (`data` may point into the object: not copyable.)
template <class T, std::size_t Stack>
struct run_array {
  static_assert(std::is_trivially_destructible_v<T>);
  alignas(T) std::byte stack[sizeof(T) * Stack];
  std::vector<T> heap;
  explicit run_array(std::size_t n)
      : data(n <= Stack ? std::uninitialized_value_construct_n(reinterpret_cast<T*>(stack), n), std::launder(reinterpret_cast<T*>(stack))
                        : (heap.resize(n), heap.data())) {}
  // A copy of src[0, n) (not zeroed first).
  run_array(const T* src, std::size_t n)
      : data(n <= Stack ? std::uninitialized_copy_n(src, n, reinterpret_cast<T*>(stack)), std::launder(reinterpret_cast<T*>(stack))
                        : (heap.assign(src, src + n), heap.data())) {}
  run_array(const run_array&) = delete;
  run_array& operator=(const run_array&) = delete;
  T* data;
  T& operator[](std::size_t i) { return data[i]; }
};

// A plan with symbolic extents bound to one call's inputs: its numbers evaluated, and `ref`, the
// plan with them (a static plan_ref, which the runner then runs as any other).
struct bound_static_plan {
  std::vector<index_t> values;          // per symbol: its value
  std::vector<bound_layout> layouts;    // per node
  std::vector<storage_place> storages;  // per storage
  std::vector<tensor_desc> outputs;     // per output: dense
  std::vector<static_scatter> scatters;  // per scatter: with the view it writes
  std::vector<static_row> rows;         // per result computed in a put's row: the put's dimension
  static_plan_ref ref;
};

// Binds plan p's symbols from the inputs' extents and evaluates its layouts, storages, outputs and
// workspace (the program's bind_symbols, evaluate_layouts and check_views, in its words): the
// inputs' element types and ranks, then the derived symbols and guards, then every node's extents
// non-negative, then every view inside its storage. The inputs' extents and strides are checked
// against the bound layouts by the runner's checks, as for any plan. Writes nothing the caller
// passed.
template <class T>
run_status bind_static_symbols(const static_plan_ref& p, std::span<const T> inputs, bound_static_plan& b) {
  const static_symbols_ref& y = p.symbols;
  if (auto st = check_input_count(p.input_nodes.size(), inputs.size()); !st) return st;
  b.values.assign(y.n_symbols, -1);
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::int32_t i = p.input_nodes[k];
    const tensor_meta& m = y.layouts[static_cast<std::size_t>(i)];
    if (auto st = check_input_kind(i, p.input_names[k].view(), k, m.dt, m.rank, inputs[k]); !st) return st;
    for (int d = 0; d < m.rank; ++d)
      if (const int s = m.size[d].as_symbol(); s >= 0 && b.values[static_cast<std::size_t>(s)] < 0) b.values[static_cast<std::size_t>(s)] = inputs[k].size[d];
  }
  // Derived symbols and guards, in the program's words.
  if (auto st = bind_derived(symbol_table_ref{y.table, y.names}, b.values); !st) return st;
  b.layouts.assign(p.layouts.begin(), p.layouts.end());
  for (std::size_t i = 0; i < y.layouts.size(); ++i) {
    if (!y.layouts[i].is_tensor()) continue;
    b.layouts[i] = evaluate(y.layouts[i], b.values);
    for (int d = 0; d < b.layouts[i].rank; ++d)
      if (b.layouts[i].size[d] < 0)
        return run_status::failure(static_cast<std::int32_t>(i), "rule extent-non-negative: node '" + std::string(y.names[i].view()) + "' has extent " +
                                                                     std::to_string(b.layouts[i].size[d]) + " in dimension " + std::to_string(d) +
                                                                     " for these input shapes");
  }
  // The workspace: the pools back to back, each its static region and then its aligned lanes.
  auto lane_bytes = [&](std::size_t l) { return static_cast<std::size_t>(detail::align_up(std::max<index_t>(y.lanes[l].eval(b.values), 0), arena_alignment)); };
  std::vector<std::size_t> pool_base(y.pools.size());
  std::size_t buffers = 0;
  for (std::size_t q = 0; q < y.pools.size(); ++q) {
    pool_base[q] = buffers;
    std::size_t bytes = static_cast<std::size_t>(y.pools[q].static_bytes);
    for (std::int32_t l = 0; l < y.pools[q].n_lanes; ++l) bytes += lane_bytes(static_cast<std::size_t>(y.pools[q].first_lane + l));
    buffers += detail::align_ws(static_cast<index_t>(bytes));
  }
  b.storages.assign(p.storages.begin(), p.storages.end());
  for (std::size_t s = 0; s < b.storages.size(); ++s) {
    storage_place& q = b.storages[s];
    const symbolic_storage& w = y.storages[s];
    if (q.home == storage_home::input) {
      const bound_layout& l = b.layouts[static_cast<std::size_t>(p.input_nodes[static_cast<std::size_t>(q.index)])];
      q.bytes = l.extent() * size_of(l.dt);
    } else if (q.home != storage_home::unused) {
      q.bytes = std::max<index_t>(w.bytes.eval(b.values), 0);
    }
    if (q.home == storage_home::workspace) {
      const symbolic_pool& pool = y.pools[static_cast<std::size_t>(w.pool)];
      std::size_t off = pool_base[static_cast<std::size_t>(w.pool)] + static_cast<std::size_t>(w.offset);
      for (std::int32_t l = 0; l < w.lane; ++l) off += lane_bytes(static_cast<std::size_t>(pool.first_lane + l));
      q.offset = static_cast<std::int64_t>(off);
    }
  }
  // Every view inside its storage (a storage without a home is an unused result's), and the view
  // each scatter writes.
  auto inside = [&](std::int32_t i, const bound_layout& l, const char* what) -> run_status {
    if (l.numel() == 0 || b.storages[static_cast<std::size_t>(l.storage)].home == storage_home::unused) return {};
    const auto bytes = static_cast<std::size_t>(b.storages[static_cast<std::size_t>(l.storage)].bytes);
    const auto hi = static_cast<std::size_t>(l.extent()) * static_cast<std::size_t>(size_of(l.dt));
    if (l.offset >= 0 && hi <= bytes) return {};
    return run_status::failure(i, "rule view-in-storage: node '" + std::string(y.names[static_cast<std::size_t>(i)].view()) + "' " + what +
                                      " byte " + std::to_string(hi) + " of a storage of " + std::to_string(bytes) + " bytes for these input shapes");
  };
  for (std::size_t i = 0; i < b.layouts.size(); ++i)
    if (y.layouts[i].is_tensor())
      if (auto st = inside(static_cast<std::int32_t>(i), b.layouts[i], "reaches"); !st) return st;
  b.scatters.assign(p.scatters.begin(), p.scatters.end());
  for (std::size_t k = 0; k < b.scatters.size(); ++k) {
    b.scatters[k].target = evaluate(y.scatters[k], b.values);
    if (auto st = inside(b.scatters[k].node, b.scatters[k].target, "writes a view that reaches"); !st) return st;
  }
  // The dimensions the puts' rows are selected in.
  b.rows.assign(p.rows.begin(), p.rows.end());
  for (std::size_t k = 0; k < b.rows.size(); ++k) {
    b.rows[k].extent = y.rows[k].extent.eval(b.values);
    b.rows[k].stride = y.rows[k].stride.eval(b.values);
  }
  b.outputs.clear();
  for (const std::int32_t a : p.output_nodes) {
    tensor_desc d = b.layouts[static_cast<std::size_t>(a)].desc();
    d.set_contiguous();
    b.outputs.push_back(d);
  }
  b.ref = p;
  b.ref.symbols = {};
  b.ref.layouts = {b.layouts.data(), b.layouts.size()};
  b.ref.storages = {b.storages.data(), b.storages.size()};
  b.ref.outputs = {b.outputs.data(), b.outputs.size()};
  b.ref.scatters = {b.scatters.data(), b.scatters.size()};
  b.ref.rows = {b.rows.data(), b.rows.size()};
  // The scratch, with the halo exchanges' edges at these extents.
  b.ref.scratch_offset = buffers;
  b.ref.workspace_bytes = buffers + static_scratch_bytes(p.collectives, b.layouts.data());
  return {};
}

// Plan p's collectives against the run's world (the program's words: the rule, the node, the reason).
inline run_status check_static_collectives(const static_plan_ref& p, const device_ctx& ctx, const bound_layout* L, std::byte* const* base) {
  for (const static_collective& c : p.collectives) {
    const bound_layout& x = L[c.x];
    if (std::string e = kernels::check_collective(ctx, c.c, x.at(base[x.storage])); !e.empty())
      return collective_check_failure(c.node, c.name.view(), e);
  }
  return {};
}

// What a run of plan p is about to post, as ranks compare it (comm/agreement.hpp).
inline run_digest static_digest(const static_plan_ref& p, const bound_layout* L) {
  std::vector<collective_record> records;
  records.reserve(p.collectives.size());
  for (const static_collective& c : p.collectives) records.push_back(kernels::record_of(c.node, c.name, c.c, L[c.x].shape()));
  return run_digest::of(p.graph_hash, static_cast<std::vector<collective_record>&&>(records));
}

// Index step s's values against x's extents (the program's host check and words).
inline run_status check_static_index(const static_index_step& s, const bound_layout* L, std::byte* const* base) {
  const bound_layout& x = L[s.op.x];
  if (const bad_index b = first_bad_index_host(s.op, L, base, x); b.at >= 0)
    return index_failure(s.op.node, s.name.view(), s.index_names[static_cast<std::size_t>(b.which)].view(), s.op.dim[b.which],
                         x.size[s.op.dim[b.which]], b.value);
  return {};
}

// Every check, the workspace, every storage's address and the layouts of results computed in a
// put's row (moved in `moved`, a copy of the plan's layouts, when the plan has such rows); writes
// nothing the caller passed.
inline run_status prepare_static_run(const static_plan_ref& p, std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs,
                                     const device_ctx& ctx, std::span<std::byte> workspace, std::unique_ptr<std::byte[]>& owned,
                                     std::vector<std::unique_ptr<std::byte[]>>& temporaries, std::byte** base, std::uint8_t* direct,
                                     bound_layout* moved, std::byte*& scratch) {
  if (auto st = check_backend(ctx); !st) return st;
  if (auto st = check_static_inputs(p, inputs); !st) return st;
  if (auto st = check_outputs(p.output_node, p.output_nodes, p.outputs, outputs); !st) return st;
  if (auto st = check_input_data(p.input_nodes, inputs); !st) return st;
  if (auto st = check_caller_aliasing(inputs, outputs, [&](std::size_t k) { return p.input_written[k]; },
                                      [&](std::size_t k) { return p.input_names[k].view(); });
      !st)
    return st;
  if (auto st = check_workspace(p.workspace_bytes, workspace); !st) return st;
  std::byte* ws = nullptr;
  if (auto st = take_workspace(ctx, p.workspace_bytes, workspace, owned, ws); !st) return st;
  scratch = ws + p.scratch_offset;
  for (std::size_t s = 0; s < p.storages.size(); ++s) {
    const storage_place& q = p.storages[s];
    const auto k = static_cast<std::size_t>(q.index);
    base[s] = nullptr;
    if (q.home == storage_home::input) {
      const bound_layout& l = p.layouts[static_cast<std::size_t>(p.input_nodes[k])];
      base[s] = static_cast<std::byte*>(inputs[k].data) - l.offset * size_of(l.dt);
    } else if (q.home == storage_home::workspace) {
      base[s] = ws + q.offset;
    } else if (q.home == storage_home::output) {
      bool dense = false;
      if (auto st = place_direct_output(ctx, k, p.output_nodes[k], outputs[k], static_cast<std::size_t>(q.bytes), base[s], dense, temporaries); !st)
        return st;
      direct[k] = dense;
    }
  }
  // Storages held in an output's memory before it is computed: that output's address.
  for (std::size_t s = 0; s < p.storages.size(); ++s)
    if (p.storages[s].home == storage_home::held)
      base[s] = base[static_cast<std::size_t>(p.layouts[static_cast<std::size_t>(p.output_nodes[static_cast<std::size_t>(p.storages[s].index)])].storage)];
  // Index values, op by op in node order: all of them now, except an in-place put's that checks
  // them as it writes and indices computed in the graph (checked during the run): the program's
  // order, so a refusal names the same node.
  const bound_layout* L = p.layouts.data();
  for (const static_index_step& s : p.index_steps) {
    if (s.computed || s.mask) continue;
    const bound_layout& x = L[s.op.x];
    if (s.checked_in_put && !ctx.comm && ctx.where != backend::cuda &&
        kernels::index_put_fusable_host(index_args(s.op, L, base, base[x.storage], x)))
      continue;
    if (auto st = check_static_index(s, L, base); !st) return st;
  }
  // Results computed in a put's row: laid out at the row the (checked) index selects.
  for (const static_row& r : p.rows) {
    const bound_layout& il = L[r.index];
    moved[r.node].offset += row_shift_host(base[il.storage] + il.offset * size_of(il.dt), il.dt, r.extent, r.stride);
  }
  if (p.check_collectives)
    if (auto st = p.check_collectives(p, ctx, L, base); !st) return st;
  return {};
}
}  // namespace detail

/// Binds and runs static plans. A class template with one instance, as the run-time program is
/// (exec/program.hpp): header-only by default; under CTFX_SEPARATE_RUNTIME compiled once, in
/// ctfx/exec/instantiate.hpp, so that a user's file only calls it.
template <int Instance = 0>
struct basic_static_runner {
  /// What a call of plan `p` needs: its inputs checked, the outputs' shapes, the workspace size.
  CTFX_RUNTIME_ENTRY static binding bind(const static_plan_ref& p, std::span<const tensor_desc> inputs) {
    if (p.symbols.n_symbols > 0) {
      detail::bound_static_plan q;
      if (run_status st = detail::bind_static_symbols(p, inputs, q); !st) {
        binding b;
        b.status = static_cast<run_status&&>(st);
        return b;
      }
      binding b = bind(q.ref, inputs);
      b.symbols = static_cast<std::vector<index_t>&&>(q.values);
      return b;
    }
    binding b;
    b.status = detail::check_static_inputs(p, inputs);
    if (!b.status) return b;
    b.outputs.assign(p.outputs.begin(), p.outputs.end());
    b.workspace_bytes = p.workspace_bytes;
    return b;
  }

  /// Runs plan `p` with `kernels[i]`, the kernel of step node i (each returns true: the plan has no
  /// step without one; an in-place put that checks its indices as it writes records a refusal in
  /// the frame's `failure`, before writing).
  CTFX_RUNTIME_ENTRY static run_status run(const static_plan_ref& p, std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs,
                                           const device_ctx& ctx, std::span<std::byte> workspace, const static_node_fn* kernels) {
    if (p.symbols.n_symbols > 0) {  // its numbers for these inputs, then the plan with them
      detail::bound_static_plan q;
      if (run_status st = detail::bind_static_symbols(p, inputs, q); !st)
        return ctx.comm ? detail::agree_run(*ctx.comm, static_cast<run_status&&>(st), run_digest::of(p.graph_hash, {})) : st;
      return run(q.ref, inputs, outputs, ctx, workspace, kernels);
    }
    std::unique_ptr<std::byte[]> owned;
    std::vector<std::unique_ptr<std::byte[]>> temporaries;  // outputs computed in a strided caller buffer
    detail::run_array<std::byte*, 32> base(p.storages.size());
    detail::run_array<std::uint8_t, 8> direct(outputs.size());
    detail::run_array<bound_layout, 16> moved(p.layouts.data(), p.rows.empty() ? 0 : p.layouts.size());  // (rows move on every run)
    const bound_layout* layouts = p.rows.empty() ? p.layouts.data() : moved.data;
    std::byte* scratch = nullptr;
    run_status st = detail::prepare_static_run(p, inputs, outputs, ctx, workspace, owned, temporaries, base.data, direct.data, moved.data, scratch);
    // Across ranks every rank agrees once: after the checks, or, when indices computed in the graph
    // are checked during the run, after the last of them (before the first write into a caller's
    // buffer); a rank that fails earlier agrees there, with its failure.
    bool agreed = !ctx.comm;
    auto digest = [&] { return detail::static_digest(p, layouts); };
    if (!agreed && (!st || p.late_checks.empty())) {
      agreed = true;
      st = detail::agree_run(*ctx.comm, static_cast<run_status&&>(st), digest());
    }
    if (!st) return st;
    const exec_frame frame{layouts, base.data, ctx, &st, scratch, p.scatters.data()};
    std::size_t next = 0;  // the next of late_checks
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
      for (; next < p.late_checks.size() && static_cast<std::size_t>(p.index_steps[static_cast<std::size_t>(p.late_checks[next])].check_at) == k; ++next)
        if (st = detail::check_static_index(p.index_steps[static_cast<std::size_t>(p.late_checks[next])], layouts, base.data); !st)
          return agreed ? st : detail::agree_run(*ctx.comm, static_cast<run_status&&>(st), digest());
      if (!agreed && k == p.agree_at) {
        agreed = true;
        if (st = detail::agree_run(*ctx.comm, {}, digest()); !st) return st;
      }
      if (kernels[p.steps[k]](frame); !st) return st;  // an in-place put's own index check (nothing written)
    }
    if (!agreed)
      if (st = detail::agree_run(*ctx.comm, {}, digest()); !st) return st;
    for (std::size_t j = 0; j < outputs.size(); ++j)
      if (!direct[j]) {
        const bound_layout& l = layouts[static_cast<std::size_t>(p.output_nodes[j])];
        detail::copy_to_caller(ctx, outputs[j], l.at(base[static_cast<std::size_t>(l.storage)]));
      }
    return {};
  }
};

/// Binds and runs static plans (see basic_static_runner).
using static_runner = basic_static_runner<>;
#if defined(CTFX_SEPARATE_RUNTIME)
extern template struct basic_static_runner<0>;
#endif

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
