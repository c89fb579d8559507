// ctfx/exec/control_step.hpp — the step of a control-flow node (ops/control.hpp): each subgraph is a
// plan of its own (a program, made when its parent's is), run on the parent's buffers.
//
//   cond:        the predicate is read where it was computed, then the branch's plan runs with
//                the operands as its inputs and the node's result buffers as its outputs.
//   while_loop:  the condition's plan writes one flag, read after each trip. A body with an
//                in-place form (ops/control.hpp: carried_in_place, body_to_run) updates the carried
//                values where they live: they are copied into the node's result buffers once, and
//                the body's plan writes each back into its buffer (reinplacing decides where that
//                needs a copy). Otherwise the body reads the carried values from one set of
//                buffers and writes the next into the other (the node's result buffers and one
//                scratch set, alternately); after the last trip the values are moved into the
//                result buffers if they are not there (after none: the initial values are copied).
//
// An operand whose layout is not the one its subgraph's plan was made for is copied into that
// layout first (conformed). On CUDA every buffer of the step (those copies, the loop's second set
// and flag, each subgraph plan's workspace) is device memory from the stream (cudaMallocAsync,
// freed stream-ordered at the step's end), and the host waits for the stream once per decision:
// the predicate, and the loop's flag after each trip, are copied to the host and the stream
// synchronized, since the host chooses what is launched next. Nothing else synchronizes.
//
// What is refused: a subgraph's plan that writes one of its inputs (a subgraph is functional; its
// operands are the parent's buffers, which the parent may still read).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstring>
#include <new>
#include <span>
#include <string>
#include <vector>
#include "../kernels/pointwise.hpp"
#include "../ops/control.hpp"
#include "run_checks.hpp"
#include "tensor.hpp"

namespace ctfx::detail {

// A kernel view as a caller's tensor.
inline tensor_ref ref_of_view(const strided& t) {
  tensor_desc d;
  d.dt = t.dt;
  d.rank = t.rank;
  for (int k = 0; k < t.rank; ++k) { d.size[k] = t.size[k]; d.stride[k] = t.stride[k]; }
  return tensor_ref(t.p, d);
}
inline strided view_of_ref(const tensor_ref& t) {
  strided s;
  s.p = static_cast<std::byte*>(t.data);
  s.dt = t.dt;
  s.rank = t.rank;
  for (int k = 0; k < t.rank; ++k) { s.size[k] = t.size[k]; s.stride[k] = t.stride[k]; }
  return s;
}

// The step's own memory: the device's on CUDA (stream-ordered allocations, freed on the stream
// when the step ends), host memory otherwise.
struct control_memory {
  const device_ctx& ctx;
  std::vector<void*> blocks;
  explicit control_memory(const device_ctx& c) : ctx(c) {}
  std::byte* get(std::size_t bytes) {
    void* p = nullptr;
#if defined(__CUDACC__)
    if (ctx.where == backend::cuda) {
      if (cudaMallocAsync(&p, bytes ? bytes : 1, static_cast<cudaStream_t>(ctx.stream)) != cudaSuccess) return nullptr;
      blocks.push_back(p);
      return static_cast<std::byte*>(p);
    }
#endif
    p = ::operator new(bytes ? bytes : 1, std::align_val_t{workspace_alignment});  // aligned as a plan's own workspace
    blocks.push_back(p);
    return static_cast<std::byte*>(p);
  }
  control_memory(const control_memory&) = delete;
  control_memory& operator=(const control_memory&) = delete;
  ~control_memory() {
    for (void* p : blocks) {
#if defined(__CUDACC__)
      if (ctx.where == backend::cuda) { cudaFreeAsync(p, static_cast<cudaStream_t>(ctx.stream)); continue; }
#endif
      ::operator delete(p, std::align_val_t{workspace_alignment});
    }
  }
};

// The predicate (or the loop's flag): a one-element b8 tensor. On CUDA it is copied to the host
// after the kernels that compute it, and the host waits for them: it decides what runs next.
inline bool read_flag(const strided& t, const device_ctx& ctx) {
  bool v = false;
#if defined(__CUDACC__)
  if (ctx.where == backend::cuda) {
    auto stream = static_cast<cudaStream_t>(ctx.stream);
    cudaMemcpyAsync(&v, t.p, 1, cudaMemcpyDeviceToHost, stream);
    cudaStreamSynchronize(stream);
    return v;
  }
#endif
  (void)ctx;
  std::memcpy(&v, t.p, 1);
  return v;
}

// Operand `a` as input k of subgraph `s`: itself where its layout is the one the subgraph's plan
// was made for (the placeholder's strides: a branch declared with b.input is row-major), else a
// copy laid out so, in memory from `keep` (the signature rule matches extents, not strides: a
// transposed operand, or a carried value that lives in a row-major buffer, reaches any subgraph).
inline strided conformed(const ir& s, std::int32_t k, const strided& a, const device_ctx& ctx, control_memory& keep) {
  const std::int32_t p = placeholder_at(s, k);
  if (p < 0) return a;
  const tensor_meta& m = s[p].meta;
  if (m.rank != a.rank || !m.offset.is_static() || m.offset.value() != 0) return a;
  bool same = true;
  index_t span = 1;
  for (int d = 0; d < m.rank; ++d) {
    if (!m.stride[d].is_static() || m.stride[d].value() < 0) return a;
    if (a.size[d] == 0) return a;  // no element to move
    same = same && (a.size[d] <= 1 || m.stride[d].value() == a.stride[d]);
    span += (a.size[d] - 1) * m.stride[d].value();
  }
  if (same) return a;
  strided c = a;
  c.p = keep.get(static_cast<std::size_t>(span) * static_cast<std::size_t>(size_of(a.dt)));
  if (c.p == nullptr) return a;  // (no memory: the subgraph's plan refuses the layout, naming it)
  for (int d = 0; d < m.rank; ++d) c.stride[d] = m.stride[d].value();
  kernels::copy(ctx, c, a);
  return c;
}
// Runs control node `i` of `g`: `subs` are the plans of its two subgraphs, `args` its arguments'
// views (predicate first for cond), `results` its result buffers (row-major). Program: basic_program.
template <class Program, class Kernels>
run_status run_control_step(const ir& g, std::int32_t i, const Program& then_or_cond, const Program& else_or_body,
                            bool in_place, const std::vector<strided>& args, const std::vector<strided>& results, const device_ctx& ctx,
                            const Kernels* kt) {
  const node& n = g[i];
  auto label = [&] { return "node '" + std::string(n.name.view()) + "' (" + std::string(name_of(n.op)) + ")"; };
  std::vector<tensor_ref> out;
  for (const auto& r : results) out.push_back(ref_of_view(r));
  auto sub_failed = [&](const char* role, const run_status& st) {
    return run_status::failure(i, label() + ", in its " + role + ": " + st.message);
  };
  control_memory mem{ctx};  // the step's own buffers (device memory on CUDA)
  // A subgraph's plan on these inputs and outputs, with a workspace of its own from the step's
  // memory (device memory on CUDA), taken once per plan (its extents are static: every trip
  // needs the same).
  std::span<std::byte> ws[2];
  bool have_ws[2] = {false, false};
  auto run_sub = [&](const Program& p, const std::vector<tensor_ref>& in, const std::vector<tensor_ref>& o) -> run_status {
    const int w = &p == &then_or_cond ? 0 : 1;
    if (!have_ws[w]) {
      const std::vector<tensor_desc> d(in.begin(), in.end());
      const auto b = p.bind(d);
      if (!b.status) return b.status;
      std::byte* at = mem.get(b.workspace_bytes);
      if (at == nullptr)
        return run_status::failure(i, "rule workspace-size: " + label() + " cannot take " + std::to_string(b.workspace_bytes) +
                                          " bytes of device memory for a subgraph's workspace");
      ws[w] = std::span<std::byte>(at, b.workspace_bytes);
      have_ws[w] = true;
    }
    return p.run(in, o, ctx, ws[w], kt);
  };
  // The loop's condition: its plan writes one b8 into `flag` (the step's memory), read after it.
  tensor_desc fd;
  fd.dt = dtype::b8;
  fd.rank = 0;
  std::byte* flag = nullptr;
  if (n.op == op_kind::while_loop) {
    const ir& c = g.subgraphs[static_cast<std::size_t>(n.aux)];
    const tensor_meta& m = c.meta(detail::subgraph_output(c, 0));
    fd.rank = m.rank;
    for (int d = 0; d < m.rank; ++d) { fd.size[d] = 1; fd.stride[d] = 1; }
    flag = mem.get(1);
    if (flag == nullptr) return run_status::failure(i, "rule workspace-size: " + label() + " cannot take a byte of device memory for its flag");
  }
  run_status cond_status{};
  bool go = false;
  auto loop_condition = [&](const std::vector<tensor_ref>& in) {
    std::vector<tensor_ref> fo{tensor_ref(flag, fd)};
    cond_status = run_sub(then_or_cond, in, fo);
    if (!cond_status) {
      cond_status = sub_failed("condition graph", cond_status);
      return false;
    }
    strided f;
    f.p = flag;
    f.dt = dtype::b8;
    go = read_flag(f, ctx);
    return true;
  };
  auto input = [&](const Program& p, std::size_t k, const strided& a, control_memory& into) {
    return ref_of_view(conformed(p.graph(), static_cast<std::int32_t>(k), a, ctx, into));
  };
  if (n.op == op_kind::cond) {
    const bool taken = read_flag(args[0], ctx);
    const Program& p = taken ? then_or_cond : else_or_body;
    std::vector<tensor_ref> in;
    for (std::size_t k = 1; k < args.size(); ++k) in.push_back(input(p, k - 1, args[k], mem));
    run_status st = run_sub(p, in, out);
    if (!st) return sub_failed(taken ? "then-graph" : "else-graph", st);
    return {};
  }
  // while_loop
  const auto carried = static_cast<std::size_t>(carried_count(g, i));
  if (in_place) {  // the carried values live in the result buffers; the body updates them there
    for (std::size_t k = 0; k < carried; ++k) kernels::copy(ctx, results[k], args[k]);
    std::vector<tensor_ref> in, cin;
    for (const auto& t : results) in.push_back(ref_of_view(t));  // (the body's carried inputs are row-major: body_to_run)
    for (std::size_t k = carried; k < args.size(); ++k) in.push_back(input(else_or_body, k, args[k], mem));
    for (std::size_t k = 0; k < args.size(); ++k) cin.push_back(k < carried ? in[k] : input(then_or_cond, k, args[k], mem));
    for (;;) {
      control_memory trip{ctx};  // carried values in the condition's layout, this trip
      for (std::size_t k = 0; k < carried; ++k) cin[k] = input(then_or_cond, k, results[k], trip);
      if (!loop_condition(cin)) return cond_status;
      if (!go) return {};
      if (run_status st = run_sub(else_or_body, in, std::vector<tensor_ref>{}); !st) return sub_failed("body graph", st);
    }
  }
  std::vector<strided> other(carried);
  for (std::size_t k = 0; k < carried; ++k) {
    other[k] = results[k];
    other[k].p = mem.get(static_cast<std::size_t>(results[k].numel()) * static_cast<std::size_t>(size_of(results[k].dt)));
    if (other[k].p == nullptr)
      return run_status::failure(i, "rule workspace-size: " + label() + " cannot take device memory for its second set of carried values");
  }
  std::vector<strided> cur(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(carried));
  int where = -1;  // -1: the initial values; 0: the result buffers; 1: the scratch set
  for (;;) {
    control_memory trip{ctx};  // operands in the subgraphs' layouts, this trip
    std::vector<tensor_ref> cin, in;
    for (std::size_t k = 0; k < args.size(); ++k) cin.push_back(input(then_or_cond, k, k < carried ? cur[k] : args[k], trip));
    if (!loop_condition(cin)) return cond_status;
    if (!go) break;
    for (std::size_t k = 0; k < args.size(); ++k) in.push_back(input(else_or_body, k, k < carried ? cur[k] : args[k], trip));
    const int next = where == 0 ? 1 : 0;
    const std::vector<strided>& dst = next == 0 ? results : other;
    std::vector<tensor_ref> nout;
    for (const auto& t : dst) nout.push_back(ref_of_view(t));
    if (run_status st = run_sub(else_or_body, in, nout); !st) return sub_failed("body graph", st);
    cur = dst;
    where = next;
  }
  if (where != 0)
    for (std::size_t k = 0; k < carried; ++k) kernels::copy(ctx, results[k], cur[k]);
  return {};
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
