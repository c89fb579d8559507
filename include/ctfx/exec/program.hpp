// ctfx/exec/program.hpp — a graph made runnable: its memory plan turned into workspace slots, and
// the loop that runs its nodes in order with the kernels of include/ctfx/kernels.
//
// The same program runs the reference (the functional graph, every buffer its own slot: a fresh
// buffer for every functional op) and the optimized plan (the reinplaced graph, slots shared as
// plan/reuse.hpp decided). A run is: bind symbols -> evaluate layouts -> validate everything ->
// only then write: workspace first, then caller buffers. So a failed run returns a run_status and
// leaves every caller buffer bit-identical. Indices the graph computes are checked once computed,
// at their user's step or, for a user after the first caller-buffer write, just before that write
// (see plan_computed_index_checks). (One refinement on the host: an in-place 1-D scatter
// that no caller-buffer write precedes checks its indices inside its put, into a private copy of its
// destination written back only after the last check: still before any caller-buffer write, with
// the indices read once. See plan_fused_checks.)
//
// Rules a run checks (each failure names the node or input and the rule):
//   input-count, input-dtype, input-rank, input-shape, input-strides, symbol-bound  (binding)
//   extent-non-negative, view-in-storage                                             (layouts)
//   output-count, output-dtype, output-shape, output-buffer-size                     (outputs)
//   no-caller-aliasing: caller buffers that the graph writes overlap no other caller buffer
//   workspace-size, index-in-range, custom-kernel, backend
//   comm-world, comm-backend, collective-dtype, collective-dense, halo-size  (kernels/collectives.hpp)
//   comm-agree: every rank about to post the same collectives        (comm/agreement.hpp)
//
// Across ranks (a communicator in the context): before the first step that writes a caller buffer
// or communicates, every rank learns whether any rank's validation failed, and whether every rank
// is about to post the same collectives (one reduction); then every rank returns the failure of
// the lowest failing rank, or the first rank whose collectives differ from rank 0's, named by rank,
// and no rank writes a caller buffer or posts a collective.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include "../analysis/liveness.hpp"
#include "../analysis/order.hpp"
#include "../graph/fingerprint.hpp"
#include "../kernels/arg_reduce.hpp"
#include "../kernels/collectives.hpp"
#include "product_step.hpp"
#include "../kernels/copy_siblings.hpp"
#include "../kernels/fused.hpp"
#include "../kernels/fused_reduce.hpp"
#include "../kernels/gather.hpp"
#include "../kernels/index_put.hpp"
#include "index_operands.hpp"
#include "../kernels/pointwise.hpp"
#include "../kernels/reduce.hpp"
#include "../kernels/scan.hpp"
#include "../kernels/welford.hpp"
#include "../ops/meta.hpp"
#include "../plan/copy_siblings.hpp"
#include "../plan/make_plan.hpp"
#include "computed_values.hpp"
#include "control_step.hpp"
#include "kernel_table.hpp"
#include "layouts.hpp"
#include "run_checks.hpp"

namespace ctfx {

#if defined(__CUDACC__)
namespace detail {
struct bad_index_fn {
  kernels::index_put_args a;
  unsigned long long* flag;
  __device__ void operator()(index_t j) const {
    for (int k = 0; k < a.n_index; ++k) {
      const index_t v = kernels::load_dyn<index_t>(a.index[k].dt, a.index[k].at(j));
      if (v < (a.nonneg ? 0 : -a.index_extent[k]) || v >= a.index_extent[k]) {
        atomicMin(flag, static_cast<unsigned long long>(j) * max_rank + static_cast<unsigned long long>(k));
        return;
      }
    }
  }
};
// The first out-of-range position on the device (-1 if none); the flag lives in the workspace.
inline index_t first_bad_index_cuda(const kernels::index_put_args& a, const device_ctx& ctx, std::byte* scratch, int* which,
                                    index_t* value) {
  auto stream = static_cast<cudaStream_t>(ctx.stream);
  auto* flag = reinterpret_cast<unsigned long long*>(scratch);
  const unsigned long long none = ~0ull;
  cudaMemcpyAsync(flag, &none, sizeof none, cudaMemcpyHostToDevice, stream);
  parallel_for(ctx, a.count, bad_index_fn{a, flag});
  unsigned long long got = none;
  cudaMemcpyAsync(&got, flag, sizeof got, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  if (got == none) return -1;
  const auto j = static_cast<index_t>(got / max_rank);
  *which = static_cast<int>(got % max_rank);
  index_t v = 0;
  const std::byte* p = a.index[*which].at(j);
  if (a.index[*which].dt == dtype::i32) { std::int32_t w = 0; cudaMemcpy(&w, p, 4, cudaMemcpyDeviceToHost); v = w; }
  else if (a.index[*which].dt == dtype::i64) cudaMemcpy(&v, p, 8, cudaMemcpyDeviceToHost);
  *value = v;
  return j;
}
}  // namespace detail
#endif

struct program_options {
  bool reuse = true;             // share slots as plan/reuse.hpp decides (false: one per buffer)
  bool check_lifetimes = false;  // debug: fail if a step touches a buffer outside its planned life
  bool atomic_index_put = false; // CUDA: accumulate with atomics (fast, order not fixed)
  // A memory plan to use instead of plan/reuse.hpp's (its lines name liveness buffers). It is
  // trusted: run with check_lifetimes to have every access checked against it.
  const reuse_plan* memory_plan = nullptr;
  // Lay buffers out in pooled arenas (plan/arena.hpp: offsets planned near the lower bound)
  // instead of one slot per reuse line. The arena is verified overlap-free when the program is
  // made; with check_lifetimes every access is also checked against its buffer's planned life.
  bool arena = false;
  // Fuse chains of elementwise ops into one kernel each (plan/fusion.hpp); the fused values get no
  // buffer. `fused_roots`, when given, is that grouping already made (by the compiler, for
  // compiled<G>): one entry per node.
  bool fuse = false;
  const std::int32_t* fused_roots = nullptr;
  // With fused_roots: per node, the cat whose buffer holds its result (fusion::into), or null.
  const std::int32_t* fused_into = nullptr;
  // With arena: the arena already planned for this graph's slots (plan/slots.hpp), by the
  // compiler for compiled<G> and checked overlap-free there; null: planned when the program is made.
  const arena_plan* planned_arena = nullptr;
};

/// Tag: a program whose arena comes planned (program_options::planned_arena), made without the
/// arena planner.
struct arena_planned_t {};

/// What a call with given inputs will need, from `runtime_plan::bind(inputs)` before any run: the
/// outputs' shapes (contiguous, to allocate them), the workspace a caller-supplied buffer must
/// hold, and the values bound to the graph's symbols. `status` says why binding failed (an input
/// whose dtype, rank or extents the graph does not accept), naming the node and the rule.
struct binding {
  run_status status;  ///< ok, or the first rule the inputs break
  std::vector<tensor_desc> outputs;  ///< each output's dtype and extents, contiguous
  std::size_t workspace_bytes = 0;  ///< bytes of the workspace a run with these inputs uses
  std::vector<index_t> symbols;  ///< each symbol's value, in the graph's symbol order
};

struct static_scatter;  // (exec/static_plan.hpp)

// What a node's kernel sees during a run: every node's bound layout and every storage's address.
struct exec_frame {
  const bound_layout* layouts;  // per node
  std::byte* const* bases;      // per storage
  device_ctx ctx;
  // Where a step that checks its input as it writes (an in-place put of the static runner,
  // exec/static_run.hpp) records a refusal; null: every check ran before the steps.
  run_status* failure = nullptr;
  // The run's scratch (the static runner's: a halo exchange packs its edges 64 bytes in).
  std::byte* scratch = nullptr;
  // A static plan's scatters, in plan order, with the views they write bound for this call (a
  // plan with symbolic extents evaluates them per call).
  const static_scatter* scatters = nullptr;
  strided view(std::int32_t id) const {
    const bound_layout& l = layouts[id];
    return l.at(bases[l.storage]);
  }
  // Node id's dtype and extents, row-major, without memory: the loop domain of a fused value.
  strided domain(std::int32_t id) const {
    const bound_layout& l = layouts[id];
    strided s;
    s.dt = l.dt;
    s.rank = l.rank;
    index_t st = 1;
    for (int d = l.rank - 1; d >= 0; --d) {
      s.size[d] = l.size[d];
      s.stride[d] = st;
      st *= l.size[d];
    }
    return s;
  }
};
// A kernel instantiated for one node (or one fused group, at its root) of a compile-time plan
// (exec/compiled.hpp); it returns false when that node runs through the run-time dispatch instead.
using static_node_fn = bool (*)(const exec_frame&);

/// The kernel families of a program's run-time dispatch (the steps without a static kernel). A
/// program made from a graph alone dispatches to them all (compiled once, with the rest of the
/// executor, under CTFX_SEPARATE_RUNTIME); a header-only compiled<G> makes its program with
/// `only<its families>`, so a user's file compiles no kernel its graphs never dispatch.
namespace kernel_family {
inline constexpr int copy = 1 << 0;        ///< copies, clones, conversions, scatters' copies, cat
inline constexpr int fill = 1 << 1;        ///< zeros, ones, full, fill_
inline constexpr int collective = 1 << 2;  ///< communication
inline constexpr int index_put = 1 << 3;   ///< index_put and masked puts
inline constexpr int index = 1 << 4;       ///< gathers
inline constexpr int reduce = 1 << 5;      ///< sum, amax, amin, mean, argmax, argmin, cumsum, cumprod, logcumsumexp, var
inline constexpr int pointwise = 1 << 6;   ///< unary, binary, where, foreach (run-time dtypes)
inline constexpr int custom = 1 << 7;      ///< user ops
inline constexpr int groups = 1 << 8;      ///< fused groups run as chunked loops
inline constexpr int product = 1 << 9;     ///< matrix products (kernels/matmul.hpp: BLAS, cuBLAS)
inline constexpr int all = copy | fill | collective | index_put | index | reduce | pointwise | custom | groups | product;  ///< every family
/// The families in `families`, named and comma-separated ("none" for 0): for listings and messages.
inline std::string to_text(int families) {
  constexpr std::pair<int, const char*> names[] = {{copy, "copy"}, {fill, "fill"}, {collective, "collective"},
                                                   {index_put, "index_put"}, {index, "index"}, {reduce, "reduce"},
                                                   {pointwise, "pointwise"}, {custom, "custom"}, {groups, "groups"},
                                                   {product, "product"}};
  std::string t;
  for (const auto& [bit, name] : names)
    if (families & bit) t += (t.empty() ? "" : ", ") + std::string(name);
  return t.empty() ? "none" : t;
}
/// Makes a program whose dispatch compiles the families in `Families` only (a step of another
/// family fails with `rule executable-op`).
template <int Families>
struct only {};
/// The family whose kernels run a step of op `k` through the run-time dispatch (0: none).
constexpr int of(op_kind k) {
  switch (k) {
    case op_kind::copy_: case op_kind::copy: case op_kind::clone: case op_kind::convert: case op_kind::cat:
    case op_kind::slice_scatter: case op_kind::select_scatter: case op_kind::diagonal_scatter:
    case op_kind::as_strided_scatter: case op_kind::generalized_scatter: case op_kind::generalized_scatter_:
      return copy;
    case op_kind::zeros: case op_kind::ones: case op_kind::full: case op_kind::fill_: return fill;
    case op_kind::index_put: case op_kind::unsafe_index_put: case op_kind::index_put_: case op_kind::unsafe_index_put_:
    case op_kind::scatter: case op_kind::scatter_:
      return index_put;
    case op_kind::index: case op_kind::gather: return index;
    case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::prod: case op_kind::mean: case op_kind::argmax: case op_kind::argmin:
    case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp: case op_kind::var: case op_kind::var_mean:
      return reduce;
    case op_kind::custom: case op_kind::auto_functionalized: return custom;
    case op_kind::cond: case op_kind::while_loop: return custom;  // subgraphs' plans: exec/control_step.hpp
    case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_:
      return pointwise;
    default: break;
  }
  if (facts(k).family == op_family::collective) return collective;
  if (is_product(k)) return product;
  return is_unary(k) || is_binary(k) || is_ternary(k) ? pointwise : 0;  // others have no kernel: views, inputs, ...
}
}  // namespace kernel_family

// The run-time half of ctfx: making a program (its plan) and running it. Header-only by default;
// a build that defines CTFX_SEPARATE_RUNTIME compiles it once, in the translation unit that
// includes ctfx/exec/instantiate.hpp (CMake: link ctfx::runtime), and every other file only calls
// it: the optimizer then spends its time on the graph's own kernels, not on the generic executor.
// (A class template with one instance, so that `extern template` can say so; its entry points are
// noinline, so that no file instantiates them to inline them.)
#if defined(__GNUC__) || defined(__clang__)
#define CTFX_RUNTIME_ENTRY __attribute__((noinline))
#else
#define CTFX_RUNTIME_ENTRY
#endif

template <int Instance = 0>
class basic_program {
 public:

  basic_program() = default;
  basic_program(ir g, program_options o = {}) : g_(static_cast<ir&&>(g)), opt_(o), dispatch_(dispatch_all()) { prepare(); }
  /// The same, its run-time dispatch compiled for the kernel families in `Families` only.
  template <int Families>
  basic_program(ir g, program_options o, kernel_family::only<Families>)
      : g_(static_cast<ir&&>(g)), opt_(o), dispatch_(dispatch_for<Families>()) {
    prepare();
  }
  /// The same, without the arena planner: `o.planned_arena` is the plan (compiled<G>'s, made in
  /// the compiler), so the search is neither run nor compiled.
  template <int Families>
  basic_program(ir g, program_options o, kernel_family::only<Families>, arena_planned_t)
      : g_(static_cast<ir&&>(g)), opt_(o), dispatch_(dispatch_for<Families, false>()) {
    prepare();
  }

  const ir& graph() const { return g_; }
  const liveness& life() const { return life_; }
  const reuse_plan& memory_plan() const { return reuse_; }
  // The pooled arena of the reuse slots (when program_options::arena).
  const arena_plan& arena() const { return arena_; }
  const run_status& error() const { return prepare_error_; }
  const std::vector<std::int32_t>& input_nodes() const { return inputs_; }
  // Input positions the graph writes (its copy_ epilogue, or in-place ops after reinplacing).
  const std::vector<std::int32_t>& mutated_inputs() const { return mutated_inputs_; }
  std::int32_t slot_count() const { return static_cast<std::int32_t>(slots_.size()); }
  // The kernel grouping (empty unless program_options::fuse): per node, the node whose kernel computes it.
  const fusion& fused() const { return fusion_; }
  // Strided copies run element by element together (a graph without symbols): per node, the node of
  // the next step run with it, else -1 (listing_options::copy_siblings); empty when none are.
  const std::vector<std::int32_t>& copy_siblings_next() const { return copy_next_; }

  // `data`: the inputs themselves (host memory), for a graph that reads values from them (item());
  // `kernels`: the user ops' kernels, for a value computed with one.
  CTFX_RUNTIME_ENTRY binding bind(std::span<const tensor_desc> inputs, std::span<const tensor_ref> data = {},
                                  const kernel_table* kernels = nullptr) const {
    binding b;
    if (!prepare_error_.ok) { b.status = prepare_error_; return b; }
    std::vector<computed_value> computed;
    if (!cones_.empty() && !data.empty()) {
      b.status = compute_values(data, computed, kernels);
      if (!b.status) return b;
    }
    b.status = bind_symbols(g_, inputs_, inputs, b.symbols, data, computed);
    // A check on a value read with item() fails here, when the call binds: before any write.
    if (!b.status && !data.empty() && reads_input_values(g_)) b.status.message += " (checked when the call binds: nothing was written)";
    if (!b.status) return b;
    if (static_) {  // no symbols: what follows was computed when the program was made
      b.outputs = static_outputs_;
      b.workspace_bytes = static_workspace_;
      return b;
    }
    for (auto a : out_args_) {
      bound_layout l = evaluate(g_.meta(a), b.symbols);
      tensor_desc d = l.desc();
      d.set_contiguous();
      b.outputs.push_back(d);
    }
    b.workspace_bytes = buffer_region_bytes(b.symbols) + scratch_bytes(b.symbols);
    return b;
  }

  // `static_kernels`, when given, holds one entry per node (nullptr = run-time dispatch).
  CTFX_RUNTIME_ENTRY run_status run(std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs,
                                    const device_ctx& ctx, std::span<std::byte> workspace,
                                    const kernel_table* kernels = nullptr,
                                    const static_node_fn* static_kernels = nullptr) const {
    bool agreed = false;
    run_status st = run_checked(inputs, outputs, ctx, workspace, kernels, static_kernels, agreed);
    if (ctx.comm && !agreed) return detail::agree_run(*ctx.comm, static_cast<run_status&&>(st), failed_digest());  // failed before the agreement
    return st;
  }

  // The first step that writes a caller buffer or communicates: where ranks agree on validation.
  std::int32_t sync_step() const { return sync_step_; }

  // The cones of the values the graph computes and reads with item() (exec/computed_values.hpp),
  // taken from the functional graph: a program made from it builds them itself; runtime_plan hands
  // over those of the graph it reinplaced.
  void set_value_cones(std::vector<value_cone> c) { cones_ = static_cast<std::vector<value_cone>&&>(c); }

 private:

  // Runs each cone on the host with the caller's inputs (before anything of the call is written)
  // and reads its one element.
  run_status compute_values(std::span<const tensor_ref> data, std::vector<computed_value>& out, const kernel_table* kernels) const {
    for (const value_cone& c : cones_) {
      std::vector<tensor_ref> in;
      for (const std::int32_t k : c.inputs) {
        if (static_cast<std::size_t>(k) >= data.size()) return detail::check_input_count(inputs_.size(), data.size());
        in.push_back(data[static_cast<std::size_t>(k)]);
      }
      const ir& cg = c.graph;
      const tensor_meta& m = cg.meta(cg.arg(cg.output_node(), 0));
      tensor_desc d{};
      d.dt = m.dt;
      d.rank = m.rank;
      for (int i = 0; i < m.rank; ++i) d.size[i] = m.size[i].value();
      d.set_contiguous();
      std::int64_t cell = 0;
      basic_program sub(cg, program_options{false, false, false});
      const tensor_ref o(&cell, d);
      const std::string name(g_.syms[c.sym].name.view());
      if (run_status st = sub.run(in, std::span<const tensor_ref>(&o, 1), device_ctx{backend::host, nullptr}, {}, kernels); !st)
        return run_status::failure(-1, "rule unbacked-symbol: computing '" + name + "' (item()) ahead of the run failed: " + st.message);
      index_t v = 0;
      switch (d.dt) {
        case dtype::i64: v = cell; break;
        case dtype::i32: { std::int32_t x; std::memcpy(&x, &cell, sizeof x); v = x; break; }
        case dtype::i8: { std::int8_t x; std::memcpy(&x, &cell, sizeof x); v = x; break; }
        case dtype::b8: { bool x; std::memcpy(&x, &cell, sizeof x); v = x ? 1 : 0; break; }
        default: return run_status::failure(-1, "rule unbacked-symbol: '" + name + "' is read from a tensor that is not an integer");
      }
      out.push_back({c.sym, v});
    }
    return {};
  }

  run_status run_checked(std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs, const device_ctx& ctx,
                         std::span<std::byte> workspace, const kernel_table* kernels, const static_node_fn* static_kernels,
                         bool& agreed) const {
    if (auto st = detail::check_backend(ctx); !st) return st;
    // A graph without symbols whose inputs are the ones it was made for binds to what was computed
    // when the program was made; any other call binds (and refuses with bind's words).
    binding b;
    const bool same = static_ && static_inputs_match(inputs);
    if (!same) {
      const std::vector<tensor_desc> descs(inputs.begin(), inputs.end());
      // Values read with item() are read on the host, with the shapes: every check on them runs
      // before anything is written. On CUDA from host copies of the inputs, taken on the stream
      // before the run's first kernel (the host waits for the stream: the sizes decide the launches).
      std::span<const tensor_ref> data = inputs;
      std::vector<std::vector<std::byte>> host_bytes;
      std::vector<tensor_ref> host_inputs;
      if (ctx.where == backend::cuda) {
        data = {};
#if defined(__CUDACC__)
        if (reads_input_values(g_)) {
          for (const tensor_ref& t : inputs) {
            host_bytes.emplace_back(t.data ? t.span_bytes() : 0);
            if (t.data && !host_bytes.back().empty())
              cudaMemcpyAsync(host_bytes.back().data(), t.data, host_bytes.back().size(), cudaMemcpyDeviceToHost,
                              static_cast<cudaStream_t>(ctx.stream));
            host_inputs.emplace_back(t.data ? static_cast<void*>(host_bytes.back().data()) : nullptr, static_cast<const tensor_desc&>(t));
          }
          if (cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.stream)) != cudaSuccess)
            return run_status::failure(-1, "rule unbacked-symbol: copying the inputs to the host to read their values (item()) failed");
          data = host_inputs;
        }
#endif
      }
      b = bind(descs, data, kernels);
      if (!b.status) return b.status;
    }
    const std::vector<tensor_desc>& bound_outputs = same ? static_outputs_ : b.outputs;
    const std::size_t workspace_bytes = same ? static_workspace_ : b.workspace_bytes;
    // ---- validation: nothing below writes until every check has passed
    // The plan's own layouts are read in place (no copy, no allocation per call), unless this call
    // moves rows' views (row_nodes_) or binds layouts of its own.
    std::vector<bound_layout> own_layouts;
    if (!static_) {
      if (auto st = evaluate_layouts(b.symbols, own_layouts); !st) return st;
    } else if (!row_nodes_.empty()) {
      own_layouts = static_layouts_;
    }
    const bool own = !static_ || !row_nodes_.empty();
    const std::vector<bound_layout>& L = own ? own_layouts : static_layouts_;
    if (auto st = detail::check_outputs(g_.output_node(), out_args_, bound_outputs, outputs); !st) return st;
    if (auto st = detail::check_input_data(inputs_, inputs); !st) return st;
    if (auto st = check_caller_aliasing(inputs, outputs); !st) return st;
    if (auto st = detail::check_workspace(workspace_bytes, workspace); !st) return st;
    // Per storage: its address, and (when this call bound its own layouts) its bytes; a call that
    // binds to the plan's own layouts reads their bytes from static_storage_bytes_.
    std::vector<std::byte*> base(static_cast<std::size_t>(g_.next_storage), nullptr);
    std::vector<std::size_t> storage_bytes_v(same ? 0 : static_cast<std::size_t>(g_.next_storage), 0);
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const auto s = static_cast<std::size_t>(g_.meta(inputs_[k]).storage);
      base[s] = static_cast<std::byte*>(inputs[k].data) - L[static_cast<std::size_t>(inputs_[k])].offset * size_of(inputs[k].dt);
      if (!same) storage_bytes_v[s] = input_bytes(k, L);
    }
    // Workspace: the caller's, or one allocation for this run (the only one a run makes).
    std::unique_ptr<std::byte[]> owned;
    std::byte* ws = nullptr;
    if (auto st = detail::take_workspace(ctx, workspace_bytes, workspace, owned, ws); !st) return st;
    std::byte* scratch = ws ? ws + (same ? static_buffer_region_ : buffer_region_bytes(b.symbols)) : nullptr;
    if (same) {
      for (const auto& [s, off] : static_planned_) base[static_cast<std::size_t>(s)] = ws + off;
    } else {
      for_each_planned(b.symbols, [&](std::size_t s, std::size_t off, std::size_t bytes) {
        base[s] = ws + off;
        storage_bytes_v[s] = bytes;
      });
    }
    // Outputs computed in the caller's buffer: a dense one is the buffer itself; a strided one gets
    // a temporary (on the host; this run's only other allocation), copied into it at the end.
    std::vector<std::uint8_t> direct(outputs.size(), 0);
    std::vector<std::unique_ptr<std::byte[]>> strided_out;
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      const std::int32_t st = direct_storage_[j];
      if (st < 0) continue;
      const std::size_t bytes = same ? static_storage_bytes_[static_cast<std::size_t>(st)] : direct_bytes(st, b.symbols);
      if (!same) storage_bytes_v[static_cast<std::size_t>(st)] = bytes;
      bool dense = false;
      if (auto e = detail::place_direct_output(ctx, j, out_args_[j], outputs[j], bytes, base[static_cast<std::size_t>(st)], dense, strided_out); !e)
        return e;
      direct[j] = dense;
    }
    for (const auto& [s, j] : held_storage_) {  // computed in an output's buffer before the output
      base[static_cast<std::size_t>(s)] = base[static_cast<std::size_t>(direct_storage_[static_cast<std::size_t>(j)])];
      if (!same) storage_bytes_v[static_cast<std::size_t>(s)] = direct_bytes(s, b.symbols);
    }
    // Every view inside its storage (known to hold, for the plan's own layouts, when it was made).
    if (!same || !static_views_ok_)
      if (auto st = check_views(L, same ? static_storage_bytes_ : storage_bytes_v,
                                [&](std::size_t s) { return base[s] != nullptr; });
          !st)
        return st;
    // Index values that can be checked now: those in caller buffers not written before their use.
    for (auto i : index_nodes_) {
      if (!index_checkable_early(i)) continue;
      if (fused_check_[static_cast<std::size_t>(i)]) {
        const bound_layout& x = L[static_cast<std::size_t>(g_.arg(i, 0))];
        if (fused_check(i, index_args(i, L, base, base[static_cast<std::size_t>(x.storage)], x), ctx)) continue;
      }
      if (auto st = check_indices(i, L, base, ctx, scratch); !st) return st;
    }
    // Rows that kernels write for a put: placed at the put's position, now that it is checked.
    for (const auto& [nd, p] : row_nodes_) own_layouts[static_cast<std::size_t>(nd)].offset += row_shift(p, L, base, ctx);
    if (kernels_needed_ && !kernels)
      return run_status::failure(first_custom_, "rule custom-kernel: " + detail::node_label(g_, first_custom_) +
                                                   " calls a user op; pass a kernel_table that implements it");
    for (auto i : custom_nodes_) {
      const auto& s = g_.customs[static_cast<std::size_t>(g_[i].aux)];
      if (!kernels->find(s.name.view()))
        return run_status::failure(i, "rule custom-kernel: no kernel for user op '" + std::string(s.name.view()) +
                                          "' (" + detail::node_label(g_, i) + ") in the kernel_table");
    }
    for (auto i : product_nodes_)  // a BLAS for each product's dtype on this backend
      if (std::string e = kernels::product_unavailable(ctx, g_[i].meta.dt); !e.empty())
        return run_status::failure(i, "rule blas-available: " + detail::node_label(g_, i) + " (" + std::string(name_of(g_[i].op)) + "): " + e);
    for (auto i : collective_nodes_) {
      const bound_layout& x = L[static_cast<std::size_t>(g_.arg(i, 0))];
      if (std::string e = kernels::check_collective(ctx, collective_of(i), x.at(base[static_cast<std::size_t>(x.storage)]));
          !e.empty())
        return detail::collective_check_failure(i, g_[i].name.view(), e);
    }
    // ---- execution
    std::vector<std::int32_t> owner(opt_.check_lifetimes ? slots_.size() + out_args_.size() : 0, -1);  // (outputs' buffers last)
    const exec_frame frame{L.data(), base.data(), ctx};
    // Copies run together (copy_run_) walk the grid once at the first one's step; the others are
    // then done. Only for the run-time dispatch's own kernels (a compiled<G>'s static plan groups
    // its copies itself).
    const bool copies_together = dispatch_.run_copies && !static_kernels && same && !copy_run_.empty();
    std::size_t copied_ahead = 0;
    for (std::size_t step = 0; step < life_.steps.size(); ++step) {
      const std::int32_t i = life_.steps[step];
      if (static_cast<std::int32_t>(step) == check_barrier_)  // indices computed ahead of the first caller write
        for (auto h : hoisted_checks_)
          if (auto st = check_indices(h, L, base, ctx, scratch); !st) return st;
      if (ctx.comm && static_cast<std::int32_t>(step) == sync_step_) {
        // A step that checks indices computed in the graph checks them before the ranks agree.
        if (is_index_op(g_[i].op) && !index_checkable_early(i))
          if (auto st = check_indices(i, L, base, ctx, scratch); !st) return st;
        agreed = true;
        if (auto st = detail::agree_run(*ctx.comm, {}, digest(L)); !st) return st;
      }
      if (opt_.check_lifetimes)
        if (auto st = check_step(static_cast<std::int32_t>(step), owner); !st) return st;
      if (static_kernels && static_kernels[i] && static_kernels[i](frame)) continue;
      if (copied_ahead > 0) {
        --copied_ahead;
        continue;
      }
      if (copies_together && copy_run_[step] > 1) {
        (this->*dispatch_.run_copies)(step, frame);
        copied_ahead = copy_run_[step] - 1u;
        continue;
      }
      if (dispatch_.run_group && !group_of_.empty() && group_of_[static_cast<std::size_t>(i)] >= 0) {
        (this->*dispatch_.run_group)(groups_[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(i)])], frame);
        continue;
      }
      if (auto st = (this->*dispatch_.exec)(i, L, base, ctx, scratch, kernels, b.symbols); !st) return st;
    }
    if (ctx.comm && !agreed) {
      agreed = true;
      if (auto st = detail::agree_run(*ctx.comm, {}, digest(L)); !st) return st;
    }
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      if (direct[j]) continue;
      const bound_layout& l = L[static_cast<std::size_t>(out_args_[j])];
      detail::copy_to_caller(ctx, outputs[j], l.at(base[static_cast<std::size_t>(l.storage)]));
    }
    return {};
  }

  struct slot { sym_expr bytes{}; };

  // Every node's layout for these symbols (a failure when an extent comes out negative).
  run_status evaluate_layouts(const std::vector<index_t>& sym, std::vector<bound_layout>& L) const {
    L.assign(static_cast<std::size_t>(g_.size()), bound_layout{});
    for (std::int32_t i = 0; i < g_.size(); ++i)
      if (g_[i].meta.is_tensor()) {
        L[static_cast<std::size_t>(i)] = evaluate(layout_meta(i), sym);
        for (int d = 0; d < L[static_cast<std::size_t>(i)].rank; ++d)
          if (L[static_cast<std::size_t>(i)].size[d] < 0)
            return run_status::failure(i, "rule extent-non-negative: " + detail::node_label(g_, i) + " has extent " +
                                              std::to_string(L[static_cast<std::size_t>(i)].size[d]) + " in dimension " +
                                              std::to_string(d) + " for these input shapes");
      }
    return {};
  }

  // Each view inside its storage; `placed(s)`: whether storage s has an address in this run (one
  // without an address and bytes is an unused result, left unchecked).
  template <class Placed>
  run_status check_views(const std::vector<bound_layout>& L, const std::vector<std::size_t>& bytes, Placed&& placed) const {
    for (std::int32_t i = 0; i < g_.size(); ++i) {
      const bound_layout& l = L[static_cast<std::size_t>(i)];
      if (!g_[i].meta.is_tensor() || l.numel() == 0) continue;
      const auto s = static_cast<std::size_t>(l.storage);
      if (!placed(s) && bytes[s] == 0) continue;
      const index_t lo = l.offset;
      const auto hi = static_cast<std::size_t>(l.extent()) * static_cast<std::size_t>(size_of(l.dt));
      if (lo < 0 || hi > bytes[s])
        return run_status::failure(i, "rule view-in-storage: " + detail::node_label(g_, i) + " reaches byte " +
                                          std::to_string(hi) + " of a storage of " + std::to_string(bytes[s]) +
                                          " bytes for these input shapes");
    }
    return {};
  }
  // The bytes input position k's storage spans, for layouts L.
  std::size_t input_bytes(std::size_t k, const std::vector<bound_layout>& L) const {
    const bound_layout& l = L[static_cast<std::size_t>(inputs_[k])];
    return static_cast<std::size_t>(l.extent()) * static_cast<std::size_t>(size_of(l.dt));
  }
  // The bytes of the buffer that storage st (an output computed in the caller's buffer, or one it holds) holds.
  std::size_t direct_bytes(std::int32_t st, const std::vector<index_t>& sym) const {
    const auto bi = static_cast<std::size_t>(life_.buffer_of[static_cast<std::size_t>(st)]);
    return static_cast<std::size_t>(std::max<index_t>(life_.buffers[bi].bytes.eval(sym), 0));
  }
  // Every storage planned into the workspace: f(storage, byte offset in the workspace, bytes), for
  // these symbols (the arena's pools back to back, or the reuse slots back to back).
  template <class F>
  void for_each_planned(const std::vector<index_t>& sym, F&& f) const {
    if (opt_.arena) {
      std::vector<std::size_t> pool_base(arena_.pools.size());
      std::size_t off = 0;
      for (std::size_t p = 0; p < arena_.pools.size(); ++p) {
        pool_base[p] = off;
        off += detail::align_ws(arena_.pool_size(static_cast<std::int32_t>(p), sym));
      }
      for (std::size_t bi = 0; bi < life_.buffers.size(); ++bi) {
        const std::int32_t k = slot_of_buffer_[bi];
        if (k < 0) continue;  // an output in the caller's buffer
        const auto& sl = arena_.slots[static_cast<std::size_t>(k)];
        f(static_cast<std::size_t>(life_.buffers[bi].storage),
          pool_base[static_cast<std::size_t>(sl.pool)] + static_cast<std::size_t>(arena_.offset_of(k, sym)),
          static_cast<std::size_t>(std::max<index_t>(slots_[static_cast<std::size_t>(k)].bytes.eval(sym), 0)));
      }
      return;
    }
    std::vector<std::size_t> slot_off(slots_.size()), slot_bytes(slots_.size());
    std::size_t off = 0;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      slot_bytes[k] = static_cast<std::size_t>(std::max<index_t>(slots_[k].bytes.eval(sym), 0));
      slot_off[k] = off;
      off += detail::align_ws(static_cast<index_t>(slot_bytes[k]));
    }
    for (std::size_t st = 0; st < slot_of_storage_.size(); ++st)
      if (const std::int32_t k = slot_of_storage_[st]; k >= 0)
        f(st, slot_off[static_cast<std::size_t>(k)], slot_bytes[static_cast<std::size_t>(k)]);
  }

  // A graph without symbols has the same layouts, outputs and workspace on every run: computed
  // once here (each run still checks its inputs against them, and everything else it checks).
  void prepare_static() {
    if (!g_.syms.empty() || !prepare_error_.ok) return;
    const std::vector<index_t> no_symbols;
    if (!evaluate_layouts(no_symbols, static_layouts_)) return;
    for (auto a : out_args_) {
      tensor_desc d = evaluate(g_.meta(a), no_symbols).desc();
      d.set_contiguous();
      static_outputs_.push_back(d);
    }
    static_buffer_region_ = buffer_region_bytes(no_symbols);
    static_workspace_ = static_buffer_region_ + scratch_bytes(no_symbols);
    for (auto i : inputs_) static_inputs_.push_back(evaluate(g_.meta(i), no_symbols).desc());
    // Where each storage lives and the bytes it spans; then whether every view stays inside its
    // storage, which holds on every run that binds to these layouts (only addresses change).
    const auto n_storage = static_cast<std::size_t>(g_.next_storage);
    static_storage_bytes_.assign(n_storage, 0);
    std::vector<std::uint8_t> placed(n_storage, 0);
    for (std::size_t k = 0; k < inputs_.size(); ++k) {
      const auto s = static_cast<std::size_t>(g_.meta(inputs_[k]).storage);
      static_storage_bytes_[s] = input_bytes(k, static_layouts_);
      placed[s] = 1;
    }
    for_each_planned(no_symbols, [&](std::size_t s, std::size_t off, std::size_t bytes) {
      static_planned_.emplace_back(static_cast<std::int32_t>(s), off);
      static_storage_bytes_[s] = bytes;
      placed[s] = 1;
    });
    for (auto st : direct_storage_)
      if (st >= 0) {
        static_storage_bytes_[static_cast<std::size_t>(st)] = direct_bytes(st, no_symbols);
        placed[static_cast<std::size_t>(st)] = 1;
      }
    for (const auto& [st, j] : held_storage_) {
      static_storage_bytes_[static_cast<std::size_t>(st)] = direct_bytes(st, no_symbols);
      placed[static_cast<std::size_t>(st)] = 1;
    }
    static_views_ok_ = check_views(static_layouts_, static_storage_bytes_, [&](std::size_t s) { return placed[s] != 0; }).ok;
    bind_static_groups();
    if (dispatch_.run_copies && !opt_.check_lifetimes && row_nodes_.empty()) plan_copy_siblings();  // (rows move their views)
    static_ = true;
  }
  // Consecutive strided copies that run element by element together (plan/copy_siblings.hpp), as
  // a static plan runs them: copy_run_[step] = how many start at that step (1: it runs alone).
  // Disjointness comes from the bound layouts and the workspace offsets (views_disjoint); no run
  // crosses a step where checks run first (computed indices, the ranks' agreement).
  void plan_copy_siblings() {
    const std::size_t n_steps = life_.steps.size();
    copy_run_.assign(n_steps, 1);
    copy_next_.assign(static_cast<std::size_t>(g_.size()), -1);
    std::vector<storage_extent> place(static_cast<std::size_t>(g_.next_storage));
    for (const auto& [st, off] : static_planned_) {
      const auto u = static_cast<std::size_t>(st);
      place[u] = {true, off, static_storage_bytes_[u]};
    }
    for (std::size_t bi = 0; bi < life_.buffers.size(); ++bi)  // one caller's output buffer: not disjoint
      if (output_of_buffer_[bi] >= 0) place[static_cast<std::size_t>(life_.buffers[bi].storage)].output = output_of_buffer_[bi];
    auto disjoint = [&](std::int32_t i, std::int32_t j) {
      return views_disjoint(layout_meta(i), layout_meta(j), static_layouts_[static_cast<std::size_t>(i)].storage,
                            static_layouts_[static_cast<std::size_t>(j)].storage,
                            [&](std::int32_t st) { return place[static_cast<std::size_t>(st)]; });
    };
    auto member = [&](std::int32_t i) {
      return g_[i].op == op_kind::copy_ && (group_of_.empty() || group_of_[static_cast<std::size_t>(i)] < 0);
    };
    auto barrier = [&](std::size_t k) {
      return static_cast<std::int32_t>(k) == check_barrier_ || static_cast<std::int32_t>(k) == sync_step_;
    };
    group_copy_siblings(g_, life_.steps.data(), n_steps, member, barrier, disjoint, [&](std::size_t first, std::int32_t last, std::int32_t b, int n) {
      copy_next_[static_cast<std::size_t>(last)] = b;
      copy_run_[first] = static_cast<std::uint8_t>(n);
    });
  }
  // The copies copy_run_ puts together from `step` on: one walk of their common extents.
  void run_copy_siblings(std::size_t step, const exec_frame& f) const {
    const std::size_t n = copy_run_[step];
    strided out[max_copy_siblings], in[max_copy_siblings];
    for (std::size_t m = 0; m < n; ++m) {
      const std::int32_t c = life_.steps[step + m];
      out[m] = f.view(g_.arg(c, 0));
      in[m] = f.view(g_.arg(c, 1)).broadcast_to(out[m].rank, out[m].size);
    }
    // Members copy one element type onto itself: bits moved, typed by the element's size as
    // kernels::copy_bits is (four instances for the eight dtypes: half this dispatch's code).
    visit_bits_dtype(out[0].dt, [&](auto bits) { copy_siblings_sized<decltype(bits)::value>(f.ctx, n, out, in); });
  }
  template <dtype E>
  static void copy_siblings_sized(const device_ctx& ctx, std::size_t n, const strided* out, const strided* in) {
    if (n == 2) return copy_siblings_n<E, 2>(ctx, out, in);
    if (n == 3) return copy_siblings_n<E, 3>(ctx, out, in);
    copy_siblings_n<E, 4>(ctx, out, in);
  }
  template <dtype E, std::size_t K>
  static void copy_siblings_n(const device_ctx& ctx, const strided* out, const strided* in) {
    strided o[K], s[K];
    for (std::size_t m = 0; m < K; ++m) {
      o[m] = out[m];
      s[m] = in[m];
    }
    kernels::copy_siblings<E, K>(ctx, o, s);
  }
  // A group's operands and loop nest for the plan's own layouts (bind_leaves, kernels::make_nest),
  // made once: a run that binds to them sets only the addresses (run_group). Row nodes move by
  // their put's position, which changes an operand's address only.
  void bind_static_groups() {
    for (group& G : groups_) {
      if (G.fold) continue;
      kernels::fused_kernel& k = G.proto;
      const strided dst = static_layouts_[static_cast<std::size_t>(G.dst)].shape();
      k.out.set_broadcast(dst, dst.rank, dst.size);
      for (int l = 0; l < k.n_leaves; ++l)
        k.leaf[l].set_broadcast(static_layouts_[static_cast<std::size_t>(G.leaves[static_cast<std::size_t>(l)])].shape(), k.out.rank,
                                k.out.size);
      G.nest = k.out.numel() > 0 ? kernels::make_nest(k) : kernels::fused_nest{};
      G.bound = true;
    }
  }
  // Whether bind_symbols would accept these inputs of a graph without symbols: each input's dtype,
  // rank and extents as the graph's, and its strides where the extent is above 1.
  bool static_inputs_match(std::span<const tensor_ref> inputs) const {
    if (inputs.size() != static_inputs_.size()) return false;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const tensor_desc& w = static_inputs_[k];
      if (!detail::input_matches(w.dt, w.rank, w.size, w.stride, inputs[k])) return false;
    }
    return true;
  }
  bool static_ = false;
  bool static_views_ok_ = false;                                        // every view inside its storage
  std::vector<std::pair<std::int32_t, std::size_t>> static_planned_;   // (storage, byte offset in the workspace)
  std::vector<std::uint8_t> copy_run_;                                  // per step: copies run together from it (plan_copy_siblings)
  std::vector<std::int32_t> copy_next_;                                 // per node: the next copy run with it, or -1
  std::vector<std::size_t> static_storage_bytes_;                       // per storage
  std::size_t static_buffer_region_ = 0;
  std::vector<bound_layout> static_layouts_;
  std::vector<tensor_desc> static_outputs_;
  std::vector<tensor_desc> static_inputs_;  // per input position: what bind_symbols checks it against
  std::size_t static_workspace_ = 0;

  ir g_;
  program_options opt_{};
  run_status prepare_error_{};
  liveness life_;
  reuse_plan reuse_;
  arena_plan arena_;
  std::vector<std::int32_t> inputs_, out_args_, mutated_inputs_;
  std::vector<value_cone> cones_;  // the values the graph computes and reads with item()
  std::vector<slot> slots_;
  std::vector<std::int32_t> slot_of_storage_;  // per storage: its slot, or -1 (inputs)
  std::vector<std::int32_t> slot_of_buffer_;
  std::vector<std::vector<std::int32_t>> results_;  // per tuple node: getitem node per result index
  std::vector<tensor_meta> target_;  // per scatter node: the view of its result that src goes into
  std::vector<std::int32_t> index_nodes_, custom_nodes_, collective_nodes_, product_nodes_;
  std::uint64_t fingerprint_ = 0;  // the graph's (graph/fingerprint.hpp), compared across ranks
  std::int32_t sync_step_ = -1;  // see sync_step()
  std::vector<std::int32_t> input_of_storage_;  // per storage: input position, or -1
  std::vector<std::int32_t> first_write_step_;  // per storage: the first step that writes it, or -1
  std::int32_t first_caller_write_ = -1;        // the first step that writes a caller buffer
  std::int32_t check_barrier_ = -1;             // no computed index is checked after this step
  std::vector<std::int32_t> hoisted_checks_;    // index nodes after it, whose indices are checked just before it
  std::vector<std::uint8_t> check_hoisted_;     // per node: in hoisted_checks_
  std::vector<std::uint8_t> fused_check_;       // per node: index put that may check inside its put
  std::int32_t first_custom_ = -1;
  bool kernels_needed_ = false;
  std::vector<std::pair<std::int32_t, tensor_meta>> hidden_;  // (node, meta) of results no getitem reads
  // Per control-flow node: the plans of its two subgraphs (shared: a plan is copied with its graph).
  std::vector<std::array<std::shared_ptr<const basic_program>, 2>> subs_;
  std::vector<std::uint8_t> subs_in_place_;  // per while_loop node: its body's plan updates the carried values in place
  // Outputs computed straight into the caller's buffer (when it is dense): per output position,
  // the storage it owns whole, or -1 (then it is computed in the workspace and copied at the end).
  std::vector<std::int32_t> direct_storage_;
  // Per liveness buffer: the output whose caller buffer holds it (the output's own buffer, or one
  // whose memory it takes along the reuse lines, plan/outputs.hpp), or -1; and those other
  // buffers' storages, with their output position.
  std::vector<std::int32_t> output_of_buffer_;
  std::vector<std::pair<std::int32_t, std::int32_t>> held_storage_;
  // Fused kernels: per node, its group (when it is a group's root) or -1; per group, the program
  // with its ops resolved, the nodes its leaves read and the node it writes.
  struct group {
    kernels::fused_kernel proto;
    std::vector<std::int32_t> leaves;
    std::int32_t dst = -1;
    std::vector<std::int32_t> nodes;  // members then root, in program order
    bool fold = false;                // the root is a reduction of the members' values
    bool bound = false;               // proto's operands and nest are bound to the plan's own layouts
    kernels::fused_nest nest{};
  };
  // The run-time dispatch: each entry instantiated for a set of kernel families (dispatch_for), so
  // that a compiled<G>'s program compiles only the kernels its steps can reach.
  struct dispatch {
    run_status (basic_program::*exec)(std::int32_t, const std::vector<bound_layout>&, const std::vector<std::byte*>&,
                                      const device_ctx&, std::byte*, const kernel_table*, const std::vector<index_t>&) const = nullptr;
    void (basic_program::*run_group)(const group&, const exec_frame&) const = nullptr;  // null: no chunked groups
    void (basic_program::*make_groups)() = nullptr;
    // The arena search make_plan calls (plan/make_plan.hpp), ~20 ms of it when the program is made,
    // the result checked overlap-free there; null: the arena comes planned (program_options::planned_arena).
    plan_step arena_planner = nullptr;
    void (basic_program::*run_copies)(std::size_t, const exec_frame&) const = nullptr;  // null: each copy on its own
  };
  template <int F, bool PlansArena = true, bool CopiesTogether = false>
  static dispatch dispatch_for() {
    dispatch d;
    d.exec = &basic_program::template exec_node<F>;
    if constexpr (PlansArena) d.arena_planner = &search_arena;
    if constexpr (CopiesTogether) d.run_copies = &basic_program::run_copy_siblings;
    if constexpr ((F & kernel_family::groups) != 0) {
      d.run_group = &basic_program::run_group;
      d.make_groups = &basic_program::make_groups;
    }
    return d;
  }
  // Every family: out of line, so that a file that only calls the executor compiled elsewhere
  // (CTFX_SEPARATE_RUNTIME) does not instantiate it to inline it.
  CTFX_RUNTIME_ENTRY static dispatch dispatch_all() { return dispatch_for<kernel_family::all, true, true>(); }
  // Whether dispatch F compiles `family`. exec_node's cases name their family by an op of the case
  // (kernel_family::of), so the families compiled<G> asks for and the cases they compile agree.
  template <int F>
  static constexpr bool has(int family) { return (F & family) != 0; }
  dispatch dispatch_;
  fusion fusion_;
  std::vector<tensor_meta> slice_meta_;  // per node computed in a cat's slice or a put's row: that layout (else unused)
  // (node, put): nodes computed in a put's row, whose offset moves by the put's checked position.
  std::vector<std::pair<std::int32_t, std::int32_t>> row_nodes_;
  std::vector<std::int32_t> group_of_;
  std::vector<group> groups_;

  // The layout a node's result has in this plan: its own, or its slice of a cat's buffer.
  const tensor_meta& layout_meta(std::int32_t i) const {
    return fusion_.into_of(i) >= 0 ? slice_meta_[static_cast<std::size_t>(i)] : g_[i].meta;
  }

  // Bytes of the planned buffers: the pools of the arena, or the reuse slots, back to back.
  std::size_t buffer_region_bytes(const std::vector<index_t>& sym) const {
    std::size_t off = 0;
    if (opt_.arena) {
      for (std::size_t p = 0; p < arena_.pools.size(); ++p) off += detail::align_ws(arena_.pool_size(static_cast<std::int32_t>(p), sym));
    } else {
      for (const auto& sl : slots_) off += detail::align_ws(sl.bytes.eval(sym));
    }
    return off;
  }

  std::size_t scratch_bytes(const std::vector<index_t>& sym) const {
    std::size_t hidden = 0;
    for (const auto& h : hidden_)
      hidden += detail::align_ws(storage_bytes(h.second).eval(sym));
    return scratch_bytes_without_hidden(sym) + hidden;
  }

  CTFX_RUNTIME_ENTRY void prepare() {
    fingerprint_ = fingerprint(g_);
    if (!g_.error.ok()) {
      prepare_error_ = run_status::failure(g_.error.node, std::string(g_.error.message()));
      return;
    }
    if (g_.phase == graph_phase::functional)
      if (run_status st = value_cones(g_, cones_); !st) { prepare_error_ = st; return; }
    // Every decision (grouping, schedule, reuse, slots, arena) is the plan's (plan/make_plan.hpp).
    planner_options po;
    po.fuse = opt_.fuse;
    po.fused_roots = opt_.fused_roots;
    po.fused_into = opt_.fused_roots ? opt_.fused_into : nullptr;
    po.reuse = opt_.reuse;
    po.memory_plan = opt_.memory_plan;
    po.arena = opt_.arena;
    po.given_arena = opt_.planned_arena;
    po.arena_planner = dispatch_.arena_planner;
    graph_plan P = make_plan(g_, po);
    fusion_ = static_cast<fusion&&>(P.fused);
    life_ = static_cast<liveness&&>(P.life);
    if (opt_.fuse) {
      // Results computed in a put's row are laid out as that row (its position added at run
      // time); results computed in a cat's slice as that slice of wherever cat's result lives.
      for (std::int32_t i = 0; i < g_.size(); ++i)
        if (const std::int32_t c = fusion_.into_of(i); c >= 0) {
          if (slice_meta_.empty()) slice_meta_.resize(static_cast<std::size_t>(g_.size()));
          if (is_index_op(g_[c].op)) slice_meta_[static_cast<std::size_t>(i)] = row_put_meta(g_, c);
        }
      for (std::int32_t i = 0; i < g_.size(); ++i)
        if (const std::int32_t c = fusion_.into_of(i); c >= 0 && g_[c].op == op_kind::cat)
          slice_meta_[static_cast<std::size_t>(i)] = cat_slice_meta(g_, c, i, &layout_meta(c));
      for (std::int32_t i = 0; i < g_.size(); ++i) {
        std::int32_t h = i;
        while (fusion_.into_of(h) >= 0) h = fusion_.into_of(h);
        if (h != i && is_index_op(g_[h].op)) row_nodes_.push_back({i, h});
      }
    }
    if (opt_.fuse && dispatch_.make_groups) (this->*dispatch_.make_groups)();
    inputs_ = detail::input_nodes_of(g_);
    if (auto o = g_.output_node(); o >= 0)
      for (auto a : g_.args_of(o))
        if (a >= 0 && g_.meta(a).is_tensor()) out_args_.push_back(a);
    const auto ns = static_cast<std::size_t>(g_.next_storage);
    input_of_storage_.assign(ns, -1);
    for (std::size_t k = 0; k < inputs_.size(); ++k)
      input_of_storage_[static_cast<std::size_t>(g_.meta(inputs_[k]).storage)] = static_cast<std::int32_t>(k);
    // Slots: one per buffer, or shared along the reuse lines (plan/slots.hpp); outputs computed in
    // the caller's buffer get none (plan/outputs.hpp).
    reuse_ = static_cast<reuse_plan&&>(P.reuse);
    direct_storage_.assign(P.direct.begin(), P.direct.end());
    const slot_plan& sp = P.slots;
    slot_of_buffer_ = sp.slot_of_buffer;
    output_of_buffer_ = sp.output_of_buffer;
    held_storage_.clear();
    for (std::size_t bi = 0; bi < life_.buffers.size(); ++bi)
      if (const std::int32_t j = output_of_buffer_[bi]; j >= 0 && direct_storage_[static_cast<std::size_t>(j)] != life_.buffers[bi].storage)
        held_storage_.emplace_back(life_.buffers[bi].storage, j);
    slots_.clear();
    for (const auto& e : sp.bytes) slots_.push_back({e});
    slot_of_storage_.assign(ns, -1);
    for (std::size_t bi = 0; bi < life_.buffers.size(); ++bi)
      slot_of_storage_[static_cast<std::size_t>(life_.buffers[bi].storage)] = slot_of_buffer_[bi];
    switch (P.arena_is) {
      case arena_state::off: break;
      case arena_state::planned: case arena_state::given:  // (given: planned in the compiler, compiled<G>, checked there)
        arena_ = static_cast<arena_plan&&>(P.arena);
        break;
      case arena_state::slots_differ:
        prepare_error_ = run_status::failure(-1, "rule arena-overlap: the given arena plan has " + std::to_string(P.arena_given_slots) +
                                                     " slots where this program lays out " + std::to_string(slots_.size()) +
                                                     " (plan it for this graph's slots: plan/slots.hpp)");
        return;
      case arena_state::no_planner:
        prepare_error_ = run_status::failure(-1, "rule executable-op: this program was made without an arena planner and given no arena plan");
        return;
      case arena_state::overlap:  // (the plan's own check of the arena it searched)
        prepare_error_ = run_status::failure(-1, "rule arena-overlap: the arena plan puts two live buffers on the same bytes of pool " +
                                                     std::to_string(P.arena_overlap_pool) + " (a planner bug: plan with arena = false)");
        return;
    }
    // Tuples' results, scatter targets, index and user-op nodes, writes.
    results_.assign(static_cast<std::size_t>(g_.size()), {});
    target_.assign(static_cast<std::size_t>(g_.size()), tensor_meta{});
    first_write_step_.assign(ns, -1);
    ir scratch_ir = g_;
    for (std::int32_t i = 0; i < g_.size(); ++i) {
      const node& n = g_[i];
      if (n.op == op_kind::getitem) {
        auto& r = results_[static_cast<std::size_t>(g_.arg(i, 0))];
        if (r.size() <= static_cast<std::size_t>(n.aux)) r.resize(static_cast<std::size_t>(n.aux) + 1, -1);
        r[static_cast<std::size_t>(n.aux)] = i;
      }
      if (is_view_scatter(n.op) || n.op == op_kind::generalized_scatter || n.op == op_kind::generalized_scatter_) {
        const tensor_meta& on = n.op == op_kind::generalized_scatter_ ? g_.meta(g_.arg(i, 0)) : n.meta;
        detail::scatter_view_meta(scratch_ir, i, n.op, on, g_.params_of(n), target_[static_cast<std::size_t>(i)]);
      }
      if (is_index_op(n.op)) {
        index_nodes_.push_back(i);
        int indices = 0, masks = 0;
        for (std::int32_t k = first_index_arg(n.op); k < n.nargs; ++k) {
          const std::int32_t x = g_.arg(i, k);
          indices += x >= 0;
          masks += x >= 0 && g_.meta(x).dt == dtype::b8;
        }
        if (masks > 0 && indices > 1) {
          prepare_error_ = run_status::failure(i, "rule bool-mask-index: " + detail::node_label(g_, i) +
                                                     " indexes with a bool mask and other indices together; the executors take a mask "
                                                     "only as the one index (convert the mask with nonzero)");
          return;
        }
      }
      if (facts(n.op).family == op_family::collective) collective_nodes_.push_back(i);
      if (is_product(n.op)) product_nodes_.push_back(i);
      if (n.op == op_kind::custom || n.op == op_kind::auto_functionalized) {
        custom_nodes_.push_back(i);
        kernels_needed_ = true;
        if (first_custom_ < 0) first_custom_ = i;
      }
      if (is_control_op(n.op)) {  // each subgraph planned as a program of its own
        subs_.resize(static_cast<std::size_t>(g_.size()));
        subs_in_place_.resize(static_cast<std::size_t>(g_.size()));
        // A loop body in its in-place form (ops/control.hpp: carried_in_place) writes its carried
        // inputs, and only those; they are the node's result buffers, row-major, so it runs where
        // its carried placeholders are laid out so (else the body writes new values each trip).
        const bool in_place = n.op == op_kind::while_loop && detail::body_to_run(g_, i) != n.aux + 1;
        subs_in_place_[static_cast<std::size_t>(i)] = in_place;
        for (int w = 0; w < 2; ++w) {
          const auto k = static_cast<std::size_t>(in_place && w == 1 ? detail::body_to_run(g_, i) : n.aux + w);
          auto p = std::make_shared<basic_program>(g_.subgraphs[k], opt_);
          if (!p->error().ok) {
            prepare_error_ = run_status::failure(i, detail::node_label(g_, i) + ", in its " + detail::subgraph_role(n.op, w) +
                                                        ": " + p->error().message);
            return;
          }
          if (!p->mutated_inputs().empty() && !(in_place && w == 1 && p->mutated_inputs().back() < carried_count(g_, i))) {
            prepare_error_ = run_status::failure(i, "rule subgraph-inputs-read-only: " + detail::node_label(g_, i) + ": its " +
                                                        detail::subgraph_role(n.op, w) + " writes its input " +
                                                        std::to_string(p->mutated_inputs()[0]) +
                                                        "; a subgraph returns new values and never writes its operands");
            return;
          }
          subs_[static_cast<std::size_t>(i)][w] = static_cast<std::shared_ptr<const basic_program>&&>(p);
        }
      }
    }
    if (!scratch_ir.error.ok()) {
      prepare_error_ = run_status::failure(scratch_ir.error.node, std::string(scratch_ir.error.message()));
      return;
    }
    // Which storages each step writes; results nobody reads but a user op must still write.
    for (std::size_t step = 0; step < life_.steps.size(); ++step) {
      const std::int32_t i = life_.steps[step];
      for_each_written(i, [&](std::int32_t storage) {
        auto& w = first_write_step_[static_cast<std::size_t>(storage)];
        if (w < 0) w = static_cast<std::int32_t>(step);
        if (input_of_storage_[static_cast<std::size_t>(storage)] >= 0) {
          if (first_caller_write_ < 0) first_caller_write_ = static_cast<std::int32_t>(step);
          const auto k = input_of_storage_[static_cast<std::size_t>(storage)];
          if (std::find(mutated_inputs_.begin(), mutated_inputs_.end(), k) == mutated_inputs_.end()) mutated_inputs_.push_back(k);
        }
      });
      const node& n = g_[i];
      if (is_control_op(n.op)) {  // results no getitem reads: the subgraph still writes them
        for (int r = 0;; ++r) {
          tensor_meta m;
          if (!detail::control_result_meta(g_, i, r, m)) break;
          if (result_node(i, r) < 0) hidden_.push_back({i, m});
        }
      }
      if (n.op == op_kind::custom || n.op == op_kind::auto_functionalized) {
        const auto& s = g_.customs[static_cast<std::size_t>(n.aux)];
        const int total = s.n_returns + detail::mutated_count(s);
        for (int r = 0; r < total; ++r) {
          if (result_node(i, r) >= 0) continue;
          if (r >= s.n_returns) {
            const int arg = detail::kth_mutated(s, r - s.n_returns);
            if (n.op == op_kind::custom && !((n.clone_mask >> arg) & 1u)) continue;  // written in place
            hidden_.push_back({i, detail::preserve_strides_result(g_.meta(g_.arg(i, arg)))});
          } else {
            const tensor_meta& like = g_.meta(g_.arg(i, s.returns_like));
            tensor_meta m = detail::contiguous_like(like, like.dt);
            if (!detail::fresh_result_layout(g_, i, s, m)) m = detail::contiguous_like(like, like.dt);  // (checked at the call)
            hidden_.push_back({i, m});
          }
        }
      }
    }
    std::sort(mutated_inputs_.begin(), mutated_inputs_.end());
    plan_computed_index_checks();
    if (!prepare_error_.ok) return;
    plan_fused_checks();
    // Ranks agree before the first step that writes a caller buffer (an input, or an output
    // computed in the caller's buffer) or communicates; indices computed in the graph are checked
    // before it (above), so every failure a rank can have comes before the agreement. (Outputs are
    // computed in the caller's buffer only when no index is computed: plan/outputs.hpp.)
    sync_step_ = check_barrier_;
    if (const std::int32_t first = first_output_step(); first >= 0) sync_step_ = std::min(sync_step_, first);
    for (auto st : direct_storage_)
      if (st >= 0 && first_write_step_[static_cast<std::size_t>(st)] >= 0) sync_step_ = std::min(sync_step_, first_write_step_[static_cast<std::size_t>(st)]);
    prepare_static();
  }

  // The first step that computes a buffer held in a caller's output buffer, or -1.
  std::int32_t first_output_step() const {
    return first_caller_output_step(life_, std::span<const std::int32_t>(output_of_buffer_.data(), output_of_buffer_.size()));
  }

  // What this run is about to post, as ranks compare it (comm/agreement.hpp), its layouts bound.
  run_digest digest(const std::vector<bound_layout>& L) const {
    std::vector<collective_record> records;
    records.reserve(collective_nodes_.size());
    for (auto i : collective_nodes_)
      records.push_back(kernels::record_of(i, g_[i].name, collective_of(i), L[static_cast<std::size_t>(g_.arg(i, 0))].shape()));
    return run_digest::of(fingerprint_, static_cast<std::vector<collective_record>&&>(records));
  }
  // A rank that failed before binding: its graph, and no collectives (its failure is what counts).
  run_digest failed_digest() const { return run_digest::of(fingerprint_, {}); }

  kernels::collective_node collective_of(std::int32_t i) const {
    kernels::collective_node c{g_[i].op, g_[i].aux, {}};
    for (std::int32_t k = 0; k < g_[i].npar && k < 3; ++k) c.param[k] = g_.iparam(i, k);
    return c;
  }

  // Indices computed in the graph are checked once they exist, and before the barrier: the first
  // step that writes a caller buffer (an input) or exchanges with other ranks. An index op at or
  // before the barrier checks them at its own step, before it reads or writes (`x[i - 3] = v`
  // checks i - 3, then writes x). A later one has them checked just before the barrier, which needs
  // their values computed by then: the pipeline's last pass (passes/hoist_computed_indices.hpp)
  // moves that computation ahead of the barrier wherever it does not depend on it. Where it does
  // (or the graph was not scheduled), the plan is refused here.
  void plan_computed_index_checks() {
    const auto n_steps = static_cast<std::int32_t>(life_.steps.size());
    check_barrier_ = first_caller_write_ < 0 ? n_steps : first_caller_write_;
    for (auto i : collective_nodes_) check_barrier_ = std::min(check_barrier_, life_.step_of[static_cast<std::size_t>(i)]);
    check_hoisted_.assign(static_cast<std::size_t>(g_.size()), 0);
    order_deps deps;
    bool have_deps = false;
    for (auto i : index_nodes_) {
      if (index_checkable_early(i) || life_.step_of[static_cast<std::size_t>(i)] <= check_barrier_) continue;
      if (!have_deps) { deps = order_of(g_); have_deps = true; }
      if (index_values_ready(g_, life_, deps, i) < check_barrier_) {
        check_hoisted_[static_cast<std::size_t>(i)] = 1;
        hoisted_checks_.push_back(i);
        continue;
      }
      prepare_error_ = run_status::failure(i, late_index_message(i, deps));
      return;
    }
  }

  // Why index node i cannot be checked before the barrier: the write or exchange its indices depend
  // on, when there is one (a walk back over what they depend on), or else the barrier itself.
  std::string late_index_message(std::int32_t i, const order_deps& deps) const {
    std::vector<std::uint8_t> seen(static_cast<std::size_t>(g_.size()), 0);
    std::vector<std::int32_t> todo;
    auto push = [&](std::int32_t x) {
      if (x >= 0 && !seen[static_cast<std::size_t>(x)]) { seen[static_cast<std::size_t>(x)] = 1; todo.push_back(x); }
    };
    for_each_index_tensor(g_, i, push);
    for (auto p : deps.index_part(i)) push(p);
    std::int32_t cause = -1, cause_input = -1;  // the earliest such node, and the input it writes (-1: it communicates)
    while (!todo.empty()) {
      const std::int32_t x = todo.back();
      todo.pop_back();
      std::int32_t written = -1;
      for_each_write(g_, x, [&](std::int32_t s) {
        if (s >= 0 && input_of_storage_[static_cast<std::size_t>(s)] >= 0) written = input_of_storage_[static_cast<std::size_t>(s)];
      });
      const bool exchange = facts(g_[x].op).family == op_family::collective;
      if ((written >= 0 || exchange) && (cause < 0 || x < cause)) { cause = x; cause_input = exchange ? -1 : written; }
      for (auto a : g_.args_of(x)) push(a);
      for (auto p : deps.of(x)) push(p);
    }
    // (A diagnostic holds 256 characters: the fix comes before anything long.)
    const std::string who = "rule validate-before-mutate: " + detail::node_label(g_, i) + " checks indices computed ";
    if (cause >= 0 && cause_input >= 0)
      return who + "from what " + detail::node_label(g_, cause) + " writes into input " + std::to_string(cause_input) + " ('" +
             std::string(g_[inputs_[static_cast<std::size_t>(cause_input)]].name.view()) +
             "'), so not before that write: pass the indices as an input, or compute them from values the graph does not "
             "update in place";
    if (cause >= 0)
      return who + "from what " + detail::node_label(g_, cause) +
             " receives from other ranks, so not before ranks agree that every check passed: compute the indices from "
             "local values, or pass them as an input";
    const std::int32_t b = life_.steps[static_cast<std::size_t>(check_barrier_)];
    return who + "after " + detail::node_label(g_, b) +
           (facts(g_[b].op).family == op_family::collective ? " communicates" : " writes a caller buffer") +
           "; every index is checked before that: compute them before it (the pipeline does, where it can), or pass "
           "them as an input";
  }

  // In-place index puts whose index check may run inside the put itself (host, see
  // kernels::index_put_checked_host): no step before them writes a caller buffer (an input, or an
  // output computed in the caller's buffer), so a failed check there still leaves every caller
  // buffer untouched. Whether a put takes that path is decided again at run time (its form, its size).
  void plan_fused_checks() {
    fused_check_.assign(static_cast<std::size_t>(g_.size()), 0);
    const std::int32_t first_output = first_output_step();  // a caller's output buffer written from here on
    for (auto i : index_nodes_) {
      const op_kind k = g_[i].op;
      if ((k != op_kind::index_put_ && k != op_kind::unsafe_index_put_) || mask_dim(i) >= 0 || !index_checkable_early(i) || put_in_row(i))
        continue;
      const std::int32_t step = life_.step_of[static_cast<std::size_t>(i)];
      bool ok = (first_caller_write_ < 0 || first_caller_write_ >= step) && (first_output < 0 || first_output >= step);
      for (auto st : direct_storage_)
        if (st >= 0 && first_write_step_[static_cast<std::size_t>(st)] >= 0 && first_write_step_[static_cast<std::size_t>(st)] < step) ok = false;
      fused_check_[static_cast<std::size_t>(i)] = ok ? 1 : 0;
    }
  }

  // True when index node i checks its indices inside its put on this run (then the validation
  // pass leaves them to it).
  bool fused_check(std::int32_t i, const kernels::index_put_args& a, const device_ctx& ctx) const {
    return ctx.where != backend::cuda && !ctx.comm && fused_check_[static_cast<std::size_t>(i)] && kernels::index_put_fusable_host(a);
  }

  // The fused kernels' programs: for each root with members, its ops in program order (each reads
  // earlier ops or leaves), resolved to chunk loops once, here.
  void make_groups() {
    const auto n = static_cast<std::size_t>(g_.size());
    group_of_.assign(n, -1);
    std::vector<std::int32_t> op_index(n, -1);
    for (std::int32_t i = 0; i < g_.size(); ++i) {
      const std::int32_t r = fusion_.root[static_cast<std::size_t>(i)];
      if (r == i) continue;
      if (group_of_[static_cast<std::size_t>(r)] < 0) {
        group_of_[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(groups_.size());
        groups_.emplace_back();
      }
      groups_[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(r)])].nodes.push_back(i);
    }
    // Single arithmetic nodes run through the same loop nest (a group of one op).
    for (std::int32_t i = 0; i < g_.size(); ++i) {
      const op_kind k = g_[i].op;
      if (group_of_[static_cast<std::size_t>(i)] >= 0 || fusion_.root[static_cast<std::size_t>(i)] != i || !g_[i].meta.is_tensor()) continue;
      if ((is_unary(k) && k != op_kind::convert) || is_binary(k) || is_ternary(k)) {
        group_of_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(groups_.size());
        groups_.emplace_back();
      }
    }
    for (std::int32_t r = 0; r < g_.size(); ++r) {
      const std::int32_t gi = group_of_[static_cast<std::size_t>(r)];
      if (gi < 0) continue;
      group& G = groups_[static_cast<std::size_t>(gi)];
      G.nodes.push_back(r);
      kernels::fused_kernel& k = G.proto;
      auto dtype_of = [&](kernels::fused_ref ref) {
        return ref >= max_fused_ops ? g_.meta(G.leaves[static_cast<std::size_t>(ref - max_fused_ops)]).dt : k.ops[ref].out;
      };
      auto ref = [&](std::int32_t a) -> kernels::fused_ref {
        if (a != r && fusion_.root[static_cast<std::size_t>(a)] == r)  // a member: an earlier op of this group
          return static_cast<kernels::fused_ref>(op_index[static_cast<std::size_t>(a)]);
        for (std::size_t l = 0; l < G.leaves.size(); ++l)
          if (G.leaves[l] == a) return kernels::leaf_ref(static_cast<int>(l));
        G.leaves.push_back(a);
        return kernels::leaf_ref(static_cast<int>(G.leaves.size() - 1));
      };
      for (auto x : G.nodes) {
        const node& nd = g_[x];
        if (is_reduction(nd.op)) {  // the root folds its input, the group's last op (fused_reduce.hpp)
          G.fold = true;
          continue;
        }
        kernels::fused_op o;
        o.out = nd.meta.dt;
        if (nd.op == op_kind::copy_) {
          o.k = op_kind::copy;
          G.dst = g_.arg(x, 0);
          o.out = g_.meta(G.dst).dt;
          o.a = ref(g_.arg(x, 1));
        } else if (nd.op == op_kind::clone || nd.op == op_kind::convert) {
          o.k = op_kind::copy;
          o.a = ref(g_.arg(x, 0));
        } else {
          o.k = nd.op;
          if (is_mutating(nd.op)) {
            G.dst = g_.arg(x, 0);
            o.out = g_.meta(G.dst).dt;
          }
          if (nd.op == op_kind::where) {  // where(c, a, b)
            o.c = ref(g_.arg(x, 0));
            o.a = ref(g_.arg(x, 1));
            o.b = ref(g_.arg(x, 2));
          } else if (nd.op == op_kind::fma) {  // fma(a, b, c) = a * b + c
            o.a = ref(g_.arg(x, 0));
            o.b = ref(g_.arg(x, 1));
            o.c = ref(g_.arg(x, 2));
          } else {
            o.a = ref(g_.arg(x, 0));
          }
          if (is_binary(nd.op)) {
            if (nd.nargs > 1) o.b = ref(g_.arg(x, 1));
            else { o.has_scalar = true; o.scalar = nd.scalar; }
          }
        }
        o.cdt = kernels::compute_dtype(o.k, o.out, operand_dtype_of(x));
        if (o.has_scalar && yields_bool(o.k))
          o.scalar = visit_dtype(o.cdt, [&](auto pd) { return kernels::scalar_in<decltype(pd)::value>(o.scalar); });
        kernels::resolve(o, dtype_of(o.a), o.b >= 0 ? dtype_of(o.b) : o.out, o.k == op_kind::fma ? dtype_of(o.c) : o.out);
        op_index[static_cast<std::size_t>(x)] = k.n_ops;
        k.ops[k.n_ops++] = o;
      }
      kernels::pair_ops(k);
      if (G.dst < 0) G.dst = r;
      k.n_leaves = static_cast<int>(G.leaves.size());
      for (int l = 0; l < k.n_leaves; ++l) k.leaf_dt[l] = g_.meta(G.leaves[static_cast<std::size_t>(l)]).dt;
    }
  }

  // The dtype a bool-result node (comparison, logical op) tests its operands in.
  dtype operand_dtype_of(std::int32_t x) const {
    const node& nd = g_[x];
    if (nd.op == op_kind::logical_not) return g_.meta(g_.arg(x, 0)).dt;
    if (!is_binary(nd.op)) return nd.meta.dt;
    return detail::operand_dtype(g_.meta(g_.arg(x, 0)), nd.nargs > 1 ? &g_.meta(g_.arg(x, 1)) : nullptr, nd.aux == 2);
  }

  void run_group(const group& G, const exec_frame& f) const {
    kernels::fused_kernel k = G.proto;
    if (G.fold) {
      const std::int32_t r = G.dst;
      k.out = f.domain(g_.arg(r, 0));  // the reduction's input: computed, folded, never stored
      bind_leaves(G, f, k);
      const strided out = f.view(r);
      const double count = static_cast<double>(out.numel() == 0 ? 0 : k.out.numel() / out.numel());
      if (g_[r].op == op_kind::mean && count == 0) {  // 0 / 0, as the unfused mean
        kernels::fill(f.ctx, out, std::numeric_limits<double>::quiet_NaN());
        return;
      }
      kernels::run_fused_reduce(f.ctx, k, out, {kernels::fold_of(g_[r].op), g_[r].op == op_kind::mean ? count : 0.0});
      return;
    }
    if (G.bound) {  // a run of a plan without symbols: its layouts are static_layouts_, only addresses move
      auto at = [&](std::int32_t x) { return f.layouts[x].address(f.bases[f.layouts[x].storage]); };
      k.out.p = at(G.dst);
      for (int l = 0; l < k.n_leaves; ++l) k.leaf[l].p = at(G.leaves[static_cast<std::size_t>(l)]);
      kernels::run_fused(f.ctx, k, G.nest);
      return;
    }
    const strided dst = f.view(G.dst);
    k.out.set_broadcast(dst, dst.rank, dst.size);
    bind_leaves(G, f, k);
    kernels::run_fused(f.ctx, k);
  }
  // The group's operands, each broadcast to its domain, written in place (strided::set_broadcast).
  static void bind_leaves(const group& G, const exec_frame& f, kernels::fused_kernel& k) {
    for (int l = 0; l < k.n_leaves; ++l) k.leaf[l].set_broadcast(f.view(G.leaves[static_cast<std::size_t>(l)]), k.out.rank, k.out.size);
  }

  std::int32_t result_node(std::int32_t tuple, int r) const {
    const auto& v = results_[static_cast<std::size_t>(tuple)];
    return static_cast<std::size_t>(r) < v.size() ? v[static_cast<std::size_t>(r)] : -1;
  }

  // The put whose row holds node i's result (fusion::into), or -1.
  std::int32_t row_put_of(std::int32_t i) const {
    for (const auto& r : row_nodes_)
      if (r.first == i) return r.second;
    return -1;
  }
  // True when put i writes nothing: its values were computed in the row it selects.
  bool put_in_row(std::int32_t i) const { return is_index_op(g_[i].op) && g_[i].nargs > 1 && fusion_.into_of(g_.arg(i, 1)) == i; }

  template <class F>
  void for_each_written(std::int32_t i, F&& f) const {
    if (const std::int32_t p = row_put_of(i); p >= 0) f(g_.meta(g_.arg(p, 0)).storage);  // a kernel writing a put's row
    for_each_write(g_, i, f);
  }

  // The put's bool mask (its one index): the x dimension it starts at, or -1 when it has none.
  int mask_dim(std::int32_t i) const {
    if (is_index_read(g_[i].op) || is_along_dim(g_[i].op)) return -1;
    for (std::int32_t k = 2; k < g_[i].nargs; ++k) {
      const std::int32_t x = g_.arg(i, k);
      if (x >= 0 && g_.meta(x).dt == dtype::b8) return k - 2;
    }
    return -1;
  }

  // Index tensors that live in caller buffers, unwritten before this node, are checked up front
  // (a bool mask has no values to check: its shape is the indexed dimensions', checked when built).
  bool index_checkable_early(std::int32_t i) const {
    const std::int32_t step = life_.step_of[static_cast<std::size_t>(i)];
    for (std::int32_t k = first_index_arg(g_[i].op); k < g_[i].nargs; ++k) {
      const std::int32_t x = g_.arg(i, k);
      if (x < 0 || g_.meta(x).dt == dtype::b8) continue;
      const auto s = static_cast<std::size_t>(g_.meta(x).storage);
      if (input_of_storage_[s] < 0) return false;
      if (first_write_step_[s] >= 0 && first_write_step_[s] < step) return false;
    }
    return true;
  }

  run_status check_caller_aliasing(std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs) const {
    return detail::check_caller_aliasing(
        inputs, outputs,
        [&](std::size_t k) { return std::find(mutated_inputs_.begin(), mutated_inputs_.end(), static_cast<std::int32_t>(k)) != mutated_inputs_.end(); },
        [&](std::size_t k) { return g_[inputs_[k]].name.view(); });
  }

  kernels::index_put_args index_args(std::int32_t i, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base,
                                     std::byte* dst_base, const bound_layout& dst) const {
    return detail::index_args(index_operands_of(g_, i), L.data(), base.data(), dst_base, dst);
  }

  run_status check_indices(std::int32_t i, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base,
                           const device_ctx& ctx, std::byte* scratch) const {
    const bound_layout& x = L[static_cast<std::size_t>(g_.arg(i, 0))];
    if (const int d0 = mask_dim(i); d0 >= 0) {  // the mask's extents must be the indexed ones
      const bound_layout& m = L[static_cast<std::size_t>(g_.arg(i, 2 + d0))];
      for (int d = 0; d < m.rank; ++d)
        if (d0 + d >= x.rank || m.size[d] != x.size[d0 + d])
          return run_status::failure(i, "rule mask-shape: " + detail::node_label(g_, i) + ": the mask's dimension " +
                                            std::to_string(d) + " has extent " + std::to_string(m.size[d]) +
                                            ", the indexed dimension " + std::to_string(d0 + d) + " of x has " +
                                            std::to_string(d0 + d < x.rank ? x.size[d0 + d] : 0));
      return {};
    }
    int which = -1;
    index_t value = 0, at = -1;
    if (ctx.where == backend::cuda) {
#if defined(__CUDACC__)
      at = detail::first_bad_index_cuda(index_args(i, L, base, base[static_cast<std::size_t>(x.storage)], x), ctx, scratch, &which, &value);
#endif
    } else {
      (void)scratch;
      const detail::bad_index bad = detail::first_bad_index_host(index_operands_of(g_, i), L.data(), base.data(), x);
      which = bad.which;
      value = bad.value;
      at = bad.at;
    }
    if (at < 0) return {};
    return index_failure(i, index_args(i, L, base, base[static_cast<std::size_t>(x.storage)], x), which, value);
  }

  // Elements from the start of row put p's destination to the row its (checked) index selects.
  index_t row_shift(std::int32_t p, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base, const device_ctx& ctx) const {
    std::int32_t ix = -1;
    const int d = row_put_dim(g_, p, &ix);
    const bound_layout& il = L[static_cast<std::size_t>(ix)];
    const bound_layout& x = L[static_cast<std::size_t>(g_.arg(p, 0))];
    const std::byte* at = base[static_cast<std::size_t>(il.storage)] + il.offset * size_of(il.dt);
    if (ctx.where == backend::cuda) {
      std::int64_t v = 0;
#if defined(__CUDACC__)
      if (il.dt == dtype::i64) cudaMemcpy(&v, at, 8, cudaMemcpyDeviceToHost);
      else { std::int32_t w = 0; cudaMemcpy(&w, at, 4, cudaMemcpyDeviceToHost); v = w; }
#endif
      if (v < 0) v += x.size[d];
      return static_cast<index_t>(v) * x.stride[d];
    }
    return detail::row_shift_host(at, il.dt, x.size[d], x.stride[d]);
  }

  run_status index_failure(std::int32_t i, const kernels::index_put_args& a, int which, index_t value) const {
    const index_operands o = index_operands_of(g_, i);
    return detail::index_failure(i, g_[i].name.view(), g_[o.index[which]].name.view(), a.index_dim[which], a.index_extent[which], value);
  }

  run_status check_step(std::int32_t step, std::vector<std::int32_t>& owner) const {
    const std::int32_t i = life_.steps[static_cast<std::size_t>(step)];
    // A buffer's memory: its slot, or (after the slots) the caller's output buffer that holds it.
    auto memory_of = [&](std::size_t bi) -> std::int64_t {
      if (slot_of_buffer_[bi] >= 0) return slot_of_buffer_[bi];
      if (output_of_buffer_[bi] >= 0) return static_cast<std::int64_t>(slots_.size()) + output_of_buffer_[bi];
      return -1;
    };
    auto touch = [&](std::int32_t node) -> run_status {
      if (node < 0 || !g_.meta(node).is_tensor()) return {};
      const auto bi = life_.buffer_of[static_cast<std::size_t>(layout_meta(node).storage)];
      if (bi < 0) return {};
      const auto& b = life_.buffers[static_cast<std::size_t>(bi)];
      const std::int64_t t0 = 2 * static_cast<std::int64_t>(step), t1 = t0 + 1;
      const std::int64_t mem = memory_of(static_cast<std::size_t>(bi));
      if (mem < 0) return {};
      const auto sl = static_cast<std::size_t>(mem);
      if (t1 < b.begin || t0 >= b.end || owner[sl] != bi)
        return run_status::failure(i, "rule lifetime: " + detail::node_label(g_, i) + " (step " + std::to_string(step) +
                                          ") touches the buffer of '" + std::string(g_[b.node].name.view()) +
                                          "' outside its planned life [" + std::to_string(b.begin) + ", " +
                                          std::to_string(b.end) + ") or after its memory went to another buffer");
      return {};
    };
    // Reads first (an elementwise result may take the memory of an input dying at this step),
    // then the buffers this step allocates take their slots, then its writes.
    for (auto a : g_.args_of(i))
      if (auto st = touch(a); !st) return st;
    for (std::size_t bi = 0; bi < life_.buffers.size(); ++bi)
      if (life_.buffers[bi].def_step == step && memory_of(bi) >= 0) owner[static_cast<std::size_t>(memory_of(bi))] = static_cast<std::int32_t>(bi);
    if (g_[i].meta.is_tensor())
      if (auto st = touch(i); !st) return st;
    for (auto r : results_[static_cast<std::size_t>(i)])
      if (auto st = touch(r); !st) return st;
    return {};
  }

  template <int F>
  run_status exec_node(std::int32_t i, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base,
                       const device_ctx& ctx, std::byte* scratch, const kernel_table* kt, const std::vector<index_t>& sym) const {
    const node& n = g_[i];
    auto view = [&](std::int32_t id) {
      const bound_layout& l = L[static_cast<std::size_t>(id)];
      return l.at(base[static_cast<std::size_t>(l.storage)]);
    };
    auto arg = [&](int k) { return view(g_.arg(i, k)); };
    switch (n.op) {
      case op_kind::copy_:
      case op_kind::copy:
        if constexpr (has<F>(kernel_family::of(op_kind::copy_))) {
          kernels::copy(ctx, n.op == op_kind::copy_ ? arg(0) : view(i), arg(1));
          return {};
        }
        break;
      case op_kind::clone:
      case op_kind::convert:
        if constexpr (has<F>(kernel_family::of(op_kind::clone))) {
          kernels::copy(ctx, view(i), arg(0));
          return {};
        }
        break;
      case op_kind::empty:
      case op_kind::empty_like:
        return {};  // contents unspecified, as in PyTorch
      case op_kind::zeros: case op_kind::ones: case op_kind::full: case op_kind::fill_:
        if constexpr (has<F>(kernel_family::of(op_kind::full))) {
          kernels::fill(ctx, n.op == op_kind::fill_ ? arg(0) : view(i), kernels::fill_value(n.op, n.scalar));
          return {};
        }
        break;
      case op_kind::all_reduce: case op_kind::all_reduce_: case op_kind::broadcast: case op_kind::broadcast_:
      case op_kind::all_gather: case op_kind::reduce_scatter: case op_kind::all_gather_blocks:
      case op_kind::all_gather_blocks_: case op_kind::reduce_scatter_blocks: case op_kind::reduce_scatter_blocks_:
      case op_kind::halo_exchange: case op_kind::halo_exchange_: {
        if constexpr (has<F>(kernel_family::of(op_kind::all_reduce))) {
          const strided x = arg(0);
          if (std::string e = kernels::run_collective(ctx, collective_of(i), x, is_mutating(n.op) ? x : view(i), scratch + 64);
              !e.empty())
            return detail::collective_run_failure(i, g_[i].name.view(), ctx.comm->engine(), e);
          return {};
        }
        break;
      }
      case op_kind::slice_scatter: case op_kind::select_scatter: case op_kind::diagonal_scatter:
      case op_kind::as_strided_scatter: case op_kind::generalized_scatter: case op_kind::generalized_scatter_: {
        if constexpr (has<F>(kernel_family::of(op_kind::slice_scatter))) {
          std::byte* b = base[static_cast<std::size_t>(n.op == op_kind::generalized_scatter_ ? g_.meta(g_.arg(i, 0)).storage : n.meta.storage)];
          if (n.op != op_kind::generalized_scatter_) kernels::copy(ctx, view(i), arg(0));
          kernels::copy(ctx, evaluate(target_[static_cast<std::size_t>(i)], sym).at(b), arg(1));
          return {};
        }
        break;
      }
      case op_kind::index_put: case op_kind::unsafe_index_put:
      case op_kind::index_put_: case op_kind::unsafe_index_put_: case op_kind::scatter: case op_kind::scatter_: {
        if constexpr (has<F>(kernel_family::of(op_kind::index_put))) {
          const bool inplace = n.op == op_kind::index_put_ || n.op == op_kind::unsafe_index_put_ || n.op == op_kind::scatter_;
          if (put_in_row(i)) return {};  // its values were computed in the row (checked in validation)
          const std::int32_t dst = inplace ? g_.arg(i, 0) : i;
          const bound_layout& dl = L[static_cast<std::size_t>(dst)];
          if (!index_checkable_early(i) && !check_hoisted_[static_cast<std::size_t>(i)])
            if (auto st = check_indices(i, L, base, ctx, scratch); !st) return st;
          if (!inplace) kernels::copy(ctx, view(i), arg(0));
          if (const int d0 = mask_dim(i); d0 >= 0) {  // x[mask] = v: elementwise over x
            kernels::masked_put(ctx, dl.at(base[static_cast<std::size_t>(dl.storage)]), arg(2 + d0), d0, arg(1), n.aux != 0);
            return {};
          }
          const kernels::index_put_args a = index_args(i, L, base, base[static_cast<std::size_t>(dl.storage)], dl);
          if (inplace && fused_check(i, a, ctx)) {  // the check inside the put (no early check ran)
            index_t value = 0;
            if (kernels::index_put_checked_host(a, &value) >= 0) return index_failure(i, a, 0, value);
            return {};
          }
          kernels::index_put(ctx, a, scratch + 64, opt_.atomic_index_put);
          return {};
        }
        break;
      }
      case op_kind::index: case op_kind::gather: {
        if constexpr (has<F>(kernel_family::of(op_kind::index))) {  // x[indices], gather: checked (unless the validation pass did) before the read
          if (!index_checkable_early(i) && !check_hoisted_[static_cast<std::size_t>(i)])
            if (auto st = check_indices(i, L, base, ctx, scratch); !st) return st;
          const bound_layout& xl = L[static_cast<std::size_t>(g_.arg(i, 0))];
          kernels::gather(ctx, index_args(i, L, base, base[static_cast<std::size_t>(xl.storage)], xl));
          return {};
        }
        break;
      }
      case op_kind::sum: case op_kind::amax: case op_kind::amin: case op_kind::prod: case op_kind::mean: {
        if constexpr (has<F>(kernel_family::of(op_kind::sum))) {
          kernels::reduce_node(ctx, kernels::fold_of(n.op), n.op == op_kind::mean, view(i), arg(0), reduction_dims(g_, i));
          return {};
        }
        break;
      }
      case op_kind::argmax: case op_kind::argmin: {
        if constexpr (has<F>(kernel_family::of(op_kind::argmax))) {
          kernels::arg_reduce(ctx, kernels::fold_of(n.op), view(i), arg(0), reduction_dims(g_, i));
          return {};
        }
        break;
      }
      case op_kind::var: case op_kind::var_mean: {
        if constexpr (has<F>(kernel_family::of(op_kind::var))) {
          kernels::welford(ctx, n.op == op_kind::var_mean, n.scalar.d, view(i), arg(0), reduction_dims(g_, i));
          return {};
        }
        break;
      }
      case op_kind::cumsum: case op_kind::cumprod: case op_kind::logcumsumexp: {
        if constexpr (has<F>(kernel_family::of(op_kind::cumsum))) {
          kernels::cumsum(ctx, kernels::scan_of(g_[i].op), view(i), arg(0), scan_dim(g_, i));
          return {};
        }
        break;
      }
      case op_kind::cat: {
        if constexpr (has<F>(kernel_family::of(op_kind::cat))) {
          bool all_placed = true;  // every part computed in its slice: nothing to copy
          for (std::int32_t k = 0; all_placed && k < n.nargs; ++k) all_placed = fusion_.into_of(g_.arg(i, k)) == i;
          if (all_placed) return {};
          kernels::cat_into(ctx, view(i), n.npar ? g_.iparam(i, 0) : 0, n.nargs, arg,
                            [&](std::int32_t k) { return fusion_.into_of(g_.arg(i, k)) == i; });  // placed: computed there already
          return {};
        }
        break;
      }
      case op_kind::foreach_add: case op_kind::foreach_mul: case op_kind::foreach_add_: case op_kind::foreach_mul_: {
        if constexpr (has<F>(kernel_family::of(op_kind::foreach_add))) {
          const bool inplace = is_mutating(n.op);
          const dynamic_op bop{n.op == op_kind::foreach_add || n.op == op_kind::foreach_add_ ? op_kind::add : op_kind::mul};
          const bool list_b = n.nargs == 2 * n.aux;
          for (std::int32_t k = 0; k < n.aux; ++k) {
            strided out;
            if (inplace) out = arg(k);
            else {
              const std::int32_t r = result_node(i, k);
              if (r < 0) continue;  // nobody reads this element
              out = view(r);
            }
            strided b = list_b ? arg(n.aux + k) : strided{};
            if (opt_.fuse) {  // chunked loops, as a group of one op; the reference keeps the plain kernel
              const strided a = arg(k);
              kernels::run_binary(ctx, kernels::binary_op(bop.kind(), out.dt, a.dt, list_b ? &b.dt : nullptr, n.scalar), out, a,
                                  list_b ? &b : nullptr);
            } else {
              kernels::binary(ctx, bop, out, arg(k), list_b ? &b : nullptr, n.scalar);
            }
          }
          return {};
        }
        break;
      }
      case op_kind::custom: case op_kind::auto_functionalized:
        if constexpr (has<F>(kernel_family::of(op_kind::custom))) return run_custom(i, L, base, ctx, scratch, kt, sym);
        break;
      case op_kind::cond: case op_kind::while_loop:
        if constexpr (has<F>(kernel_family::of(op_kind::cond))) return run_control(i, L, base, ctx, scratch, kt, sym);
        break;
      case op_kind::mm: case op_kind::addmm: case op_kind::bmm: case op_kind::baddbmm:
        if constexpr (has<F>(kernel_family::product)) return detail::product_step(g_, i, ctx, view(i), view);
        break;
      default:
        break;
    }
    if constexpr (has<F>(kernel_family::of(op_kind::add))) {
      const dynamic_op op{n.op};
      if (is_unary(n.op)) { kernels::unary(ctx, op, view(i), arg(0)); return {}; }
      if (is_binary(n.op)) {
        const bool inplace = is_mutating(n.op);
        strided out = inplace ? arg(0) : view(i);
        strided b = n.nargs > 1 ? arg(1) : strided{};
        kernels::binary(ctx, op, out, arg(0), n.nargs > 1 ? &b : nullptr, n.scalar, operand_dtype_of(i));
        return {};
      }
      if (n.op == op_kind::where) { kernels::where(ctx, view(i), arg(0), arg(1), arg(2)); return {}; }
      if (n.op == op_kind::fma) { kernels::fma(ctx, view(i), arg(0), arg(1), arg(2)); return {}; }
    }
    return run_status::failure(i, "rule executable-op: " + detail::node_label(g_, i) + " (" + std::string(name_of(n.op)) +
                                      ") has no kernel" + (F == kernel_family::all ? "" : " in this compiled plan"));
  }

  run_status run_custom(std::int32_t i, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base,
                        const device_ctx& ctx, std::byte* scratch, const kernel_table* kt, const std::vector<index_t>& sym) const {
    const node& n = g_[i];
    const auto& s = g_.customs[static_cast<std::size_t>(n.aux)];
    auto ref_of = [](const strided& t) {
      tensor_desc d;
      d.dt = t.dt;
      d.rank = t.rank;
      for (int k = 0; k < t.rank; ++k) { d.size[k] = t.size[k]; d.stride[k] = t.stride[k]; }
      return tensor_ref(t.p, d);
    };
    auto view = [&](std::int32_t id) {
      const bound_layout& l = L[static_cast<std::size_t>(id)];
      return l.at(base[static_cast<std::size_t>(l.storage)]);
    };
    // Hidden results of this node live after the index checker's flag and the sort scratch.
    std::size_t hidden_off = scratch_bytes_without_hidden(sym);
    auto hidden_slot = [&](int nth) {
      std::size_t off = hidden_off;
      int seen = 0;
      for (const auto& h : hidden_) {
        if (h.first == i) {
          if (seen++ == nth) return std::pair<std::byte*, tensor_meta>{scratch + off, h.second};
        }
        off += detail::align_ws(storage_bytes(h.second).eval(sym));
      }
      return std::pair<std::byte*, tensor_meta>{nullptr, tensor_meta{}};
    };
    std::vector<tensor_ref> args, results;
    int hidden_seen = 0;
    for (int r = 0; r < s.n_returns; ++r) {
      const std::int32_t rn = result_node(i, r);
      if (rn >= 0) results.push_back(ref_of(view(rn)));
      else {
        auto [p, m] = hidden_slot(hidden_seen++);
        results.push_back(ref_of(evaluate(m, sym).at(p)));
      }
    }
    int mut = 0;
    for (int a = 0; a < s.n_args; ++a) {
      strided t = view(g_.arg(i, a));
      if ((s.mutates >> a) & 1u) {
        const bool cloned = n.op == op_kind::auto_functionalized || ((n.clone_mask >> a) & 1u);
        if (cloned) {
          const std::int32_t rn = result_node(i, s.n_returns + mut);
          strided c;
          if (rn >= 0) c = view(rn);
          else {
            auto [p, m] = hidden_slot(hidden_seen++);
            c = evaluate(m, sym).at(p);
          }
          kernels::copy(ctx, c, t);
          t = c;
        }
        ++mut;
      }
      args.push_back(ref_of(t));
    }
    const custom_kernel* k = kt ? kt->find(s.name.view()) : nullptr;
    if (!k) return run_status::failure(i, "rule custom-kernel: no kernel for user op '" + std::string(s.name.view()) + "'");
    (*k)(custom_call{args, results, ctx});
    return {};
  }

  // A control-flow node: its arguments and result buffers (hidden ones in the scratch, as a user
  // op's), then its subgraphs' plans (exec/control_step.hpp).
  run_status run_control(std::int32_t i, const std::vector<bound_layout>& L, const std::vector<std::byte*>& base,
                         const device_ctx& ctx, std::byte* scratch, const kernel_table* kt, const std::vector<index_t>& sym) const {
    auto view = [&](std::int32_t id) {
      const bound_layout& l = L[static_cast<std::size_t>(id)];
      return l.at(base[static_cast<std::size_t>(l.storage)]);
    };
    std::vector<strided> args, results;
    for (std::int32_t k = 0; k < g_[i].nargs; ++k) args.push_back(view(g_.arg(i, k)));
    std::size_t off = scratch_bytes_without_hidden(sym);
    int hidden_seen = 0;
    for (int r = 0;; ++r) {
      tensor_meta m;
      if (!detail::control_result_meta(g_, i, r, m)) break;
      if (const std::int32_t rn = result_node(i, r); rn >= 0) {
        results.push_back(view(rn));
        continue;
      }
      std::size_t o = off;
      int seen = 0;
      for (const auto& h : hidden_) {
        if (h.first == i && seen++ == hidden_seen) {
          results.push_back(evaluate(h.second, sym).at(scratch + o));
          break;
        }
        o += detail::align_ws(storage_bytes(h.second).eval(sym));
      }
      ++hidden_seen;
    }
    const auto& sp = subs_[static_cast<std::size_t>(i)];
    return detail::run_control_step(g_, i, *sp[0], *sp[1], subs_in_place_[static_cast<std::size_t>(i)] != 0, args, results, ctx, kt);
  }

  // The CUDA index checker's flag, then the deterministic index_put's sort scratch (CUDA only).
  std::size_t scratch_bytes_without_hidden(const std::vector<index_t>& sym) const {
    std::size_t n = 64;
    for (auto i : index_nodes_)
      if (!is_index_read(g_[i].op) && mask_dim(i) < 0)  // a gather and a masked put sort nothing
        n = std::max(n, 64 + kernels::index_put_scratch_bytes(selected_count(i, sym), backend::cuda));
    for (auto i : collective_nodes_)
      if (g_[i].op == op_kind::halo_exchange || g_[i].op == op_kind::halo_exchange_) {
        const bound_layout x = evaluate(g_.meta(g_.arg(i, 0)), sym);
        n = std::max(n, 64 + kernels::halo_scratch_bytes(collective_of(i), x.size[0], x.size[1], x.dt));
      }
    return detail::align_ws(static_cast<index_t>(n));
  }

  // numel of x[indices] of an index_put: the broadcast index shape times x's other extents.
  index_t selected_count(std::int32_t i, const std::vector<index_t>& sym) const {
    if (is_along_dim(g_[i].op)) return evaluate(g_.meta(g_.arg(i, first_index_arg(g_[i].op))), sym).numel();  // a scatter: the index's
    const bound_layout x = evaluate(g_.meta(g_.arg(i, 0)), sym);
    index_t bshape[max_rank]{};
    int brank = 0;
    index_t count = 1;
    int dim = 0;
    for (std::int32_t k = first_index_arg(g_[i].op); k < g_[i].nargs; ++k, ++dim) {
      const std::int32_t t = g_.arg(i, k);
      if (t < 0) { count *= x.size[dim]; continue; }
      const bound_layout l = evaluate(g_.meta(t), sym);
      detail::broadcast_into(bshape, brank, l.size, l.rank);
    }
    for (int d = dim; d < x.rank; ++d) count *= x.size[d];
    for (int d = 0; d < brank; ++d) count *= bshape[d];
    return count;
  }
};

/// A graph made runnable (see basic_program).
using program = basic_program<>;
#if defined(CTFX_SEPARATE_RUNTIME)
extern template class basic_program<0>;
#endif

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
