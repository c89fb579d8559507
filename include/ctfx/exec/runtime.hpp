// ctfx/exec/runtime.hpp — graphs built at run time: the pipeline runs as a library call, and the
// plan dispatches per op kind and dtype.
//
//   ctfx::runtime_plan p(graph);                      // reinplacing pipeline + memory plan
//   ctfx::binding b = p.bind(input_descs);            // output shapes, workspace bytes
//   ctfx::run_status st = p.run(inputs, outputs);     // host backend, own workspace
//   if (!st) std::puts(st.message.c_str());           // every caller buffer is as before
//
// Errors are values (run_status), never exceptions: a plan whose graph fails the pipeline reports
// it from error() and from every run.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <initializer_list>
#include <vector>
#include "../passes/pipeline.hpp"
#include "inplace_table.hpp"
#include "program.hpp"

namespace ctfx {

/// How a ctfx::runtime_plan plans its graph; the defaults are what ctfx::compiled<G> does.
struct plan_options {
  bool reinplace = true;         ///< run the reinplacing pipeline (false: the functional graph as is)
  bool inductor_table = false;   ///< plan with Inductor's table (its scatter profitability check) instead of executor_inplace_table
  bool reuse = true;             ///< share buffers along Inductor's reuse lines
  bool check_lifetimes = false;  ///< debug mode: fail on any access outside a buffer's planned life
  bool atomic_index_put = false; ///< CUDA: accumulate index_put with atomics
  bool arena = true;             ///< lay buffers out in pooled arenas (false: one slot per reuse line)
  bool fuse = true;              ///< fuse elementwise chains into one kernel each (plan/fusion.hpp)
};

/// A graph built at run time (ctfx::build_checked, ctfx::parse_fx), planned and runnable: the
/// reinplacing pipeline, fusion and the memory plan run when it is made; run() validates the
/// caller's buffers, then runs every step on the chosen backend. Errors are values: a graph that
/// fails the pipeline is reported by error() and by every run. Users name it ctfx::runtime_plan.
/// (A class template with one instance, as basic_program, for CTFX_SEPARATE_RUNTIME.)
template <int Instance = 0>
class basic_runtime_plan {
 public:
  /// Plans `functional` (a graph as written: in-place ops only in the epilogue) with options `o`.
  explicit basic_runtime_plan(const ir& functional, plan_options o = {}) { make(functional, o); }

 private:
  CTFX_RUNTIME_ENTRY void make(const ir& functional, plan_options o) {
    prog_ = program(!o.reinplace ? functional
                    : o.inductor_table ? run_pipeline<builtin_inplace_table>(functional, &log_)
                                       : run_pipeline<executor_inplace_table>(functional, &log_),
                    program_options{o.reuse, o.check_lifetimes, o.atomic_index_put, nullptr, o.arena && o.reuse, o.fuse});
    if (o.reinplace && functional.error.ok()) {  // the cones of computed values, from the graph as written
      std::vector<value_cone> cones;
      if (run_status st = value_cones(functional, cones); !st) {
        ir tmp;
        tmp.fail(rule::bad_argument, st.node, st.message);
        error_ = tmp.error;
        return;
      }
      prog_.set_value_cones(static_cast<std::vector<value_cone>&&>(cones));
    }
    const ir& g = prog_.graph();
    if (!g.error.ok()) error_ = g.error;
    else if (!prog_.error().ok) {
      error_ = diagnostic{};
      ir tmp;
      tmp.fail(rule::bad_argument, prog_.error().node, prog_.error().message);
      error_ = tmp.error;
    }
  }

 public:
  /// The first broken rule of the graph or of its plan (ok() when the plan can run).
  const diagnostic& error() const { return error_; }
  /// The optimized graph the plan runs (after reinplacing).
  const ir& graph() const { return prog_.graph(); }
  /// The reinplacing decisions, one per candidate (print with ctfx::to_text).
  const reinplace_log& decisions() const { return log_; }
  /// The steps in run order and each value's lifetime (for listings).
  const liveness& life() const { return prog_.life(); }
  /// Which values share a buffer (Inductor's reuse lines).
  const reuse_plan& memory_plan() const { return prog_.memory_plan(); }
  /// Where each buffer lives in the workspace: pools, lanes and offsets.
  const arena_plan& arena() const { return prog_.arena(); }
  /// The kernel grouping (plan/fusion.hpp): per node of graph(), the node whose kernel computes it.
  const fusion& fused() const { return prog_.fused(); }
  /// Strided copies run element by element together: per node of graph(), the node of the next step
  /// run with it, else -1 (empty when none are; listing_options::copy_siblings).
  const std::vector<std::int32_t>& copy_siblings() const { return prog_.copy_siblings_next(); }
  /// The graph's input nodes, in input order.
  const std::vector<std::int32_t>& input_nodes() const { return prog_.input_nodes(); }
  /// The inputs the graph writes (its epilogue's targets): their buffers hold the new values after a run.
  const std::vector<std::int32_t>& mutated_inputs() const { return prog_.mutated_inputs(); }

  /// What a call with inputs of these shapes and dtypes needs: the outputs' shapes (contiguous), the
  /// workspace bytes and the symbols' values; a `status` that says why not when the inputs do not fit.
  binding bind(std::span<const tensor_desc> inputs) const { return prog_.bind(inputs); }
  /// bind() with the inputs themselves (host memory): a graph that reads values from its inputs
  /// (item(): a position, a valid length) binds only so, its sizes and checks depending on them.
  /// `kernels`: the user ops' kernels, where a value read with item() is computed with one.
  binding bind_values(tensor_refs inputs, const kernel_table* kernels = nullptr) const {
    const std::vector<tensor_desc> descs(inputs.begin(), inputs.end());
    return prog_.bind(descs, inputs, kernels);
  }
  /// bind() on a braced list of input descriptions.
  binding bind(std::initializer_list<tensor_desc> inputs) const { return prog_.bind({inputs.begin(), inputs.size()}); }

  /// Runs the plan on backend `where` (host, omp or cuda) with the caller's buffers: `inputs` in
  /// graph-input order, `outputs` in output order (braced lists of tensor_ref, vectors, arrays or
  /// spans). Every buffer is validated first (dtype, shape, strides, overlap); a refusal leaves every
  /// buffer untouched. `workspace`: the scratch (at least bind()'s bytes; empty: the plan allocates
  /// its own); `kernels`: the user ops' kernels.
  run_status run(tensor_refs inputs, tensor_refs outputs, backend where = backend::host,
                 std::span<std::byte> workspace = {}, const kernel_table* kernels = nullptr) const {
    return prog_.run(inputs, outputs, device_ctx{where, nullptr}, workspace, kernels);
  }
  /// The same on a device context: a backend, a CUDA stream, and the communicator of a graph with collectives.
  run_status run(tensor_refs inputs, tensor_refs outputs, const device_ctx& ctx,
                 std::span<std::byte> workspace = {}, const kernel_table* kernels = nullptr) const {
    return prog_.run(inputs, outputs, ctx, workspace, kernels);
  }

 private:
  reinplace_log log_;
  program prog_;
  diagnostic error_{};
};

/// A graph built at run time, planned and runnable (see basic_runtime_plan).
using runtime_plan = basic_runtime_plan<>;
#if defined(CTFX_SEPARATE_RUNTIME)
extern template class basic_runtime_plan<0>;
#endif

/// The ground truth: the functional graph as written, every functional op into a fresh buffer, no
/// reuse, on the host backend (over `comm` when the graph communicates across ranks).
inline run_status reference_run(const ir& functional, tensor_refs inputs, tensor_refs outputs,
                                const kernel_table* kernels = nullptr, communicator* comm = nullptr) {
  program p(functional, program_options{false, false, false});
  return p.run(inputs, outputs, device_ctx{backend::host, nullptr, comm}, {}, kernels);
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
