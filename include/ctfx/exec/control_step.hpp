// ctfx/exec/control_step.hpp — the step of a control-flow node (ops/control.hpp): each subgraph is a
// plan of its own (a program, made when its parent's is), run on the parent's buffers.
//
//   cond:        the predicate is read where it was computed (host memory), then the branch's plan
//                runs with the operands as its inputs and the node's result buffers as its outputs.
//   while_loop:  the condition's plan writes one flag (host memory), read after each trip. A body
//                with an in-place form (ops/control.hpp: carried_in_place) updates the carried
//                values where they live: they are copied into the node's result buffers once, and
//                the body's plan writes each back into its buffer (reinplacing decides where that
//                needs a copy). Otherwise the body reads the carried values from one set of
//                buffers and writes the next into the other (the node's result buffers and one
//                scratch set, alternately); after the last trip the values are moved into the
//                result buffers if they are not there (after none: the initial values are copied).
//
// What is refused: a subgraph's plan that writes one of its inputs (a subgraph is functional; its
// operands are the parent's buffers, which the parent may still read), and a device backend (the
// predicate and the flag are read by the host: on CUDA that would be a synchronizing copy after
// each trip, not written yet).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstring>
#include <string>
#include <vector>
#include "../kernels/pointwise.hpp"
#include "../ops/control.hpp"
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

// The predicate (or the loop's flag): a one-element b8 tensor in host memory.
inline bool read_flag(const strided& t) {
  bool v = false;
  std::memcpy(&v, t.p, 1);
  return v;
}

// Operand `a` as input k of subgraph `s`: itself where its layout is the one the subgraph's plan
// was made for (the placeholder's strides: a branch declared with b.input is row-major), else a
// copy laid out so, kept in `keep` (the signature rule matches extents, not strides: a transposed
// operand, or a carried value that lives in a row-major buffer, reaches any subgraph).
inline strided conformed(const ir& s, std::int32_t k, const strided& a, const device_ctx& ctx, std::vector<std::vector<std::byte>>& keep) {
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
  keep.emplace_back(static_cast<std::size_t>(span) * static_cast<std::size_t>(size_of(a.dt)));
  strided c = a;
  c.p = keep.back().data();
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
  if (ctx.where == backend::cuda)
    return run_status::failure(i, "rule control-flow-host: " + label() +
                                      " reads its predicate on the host; run the plan on the host or omp backend "
                                      "(a CUDA control-flow step is not written yet)");
  std::vector<tensor_ref> out;
  for (const auto& r : results) out.push_back(ref_of_view(r));
  auto sub_failed = [&](const char* role, const run_status& st) {
    return run_status::failure(i, label() + ", in its " + role + ": " + st.message);
  };
  // The loop's condition: its plan writes one b8 into `flag`, read here (host memory).
  bool flag = false;
  tensor_desc fd;
  fd.dt = dtype::b8;
  fd.rank = 0;
  if (n.op == op_kind::while_loop) {
    const ir& c = g.subgraphs[static_cast<std::size_t>(n.aux)];
    const tensor_meta& m = c.meta(detail::subgraph_output(c, 0));
    fd.rank = m.rank;
    for (int d = 0; d < m.rank; ++d) { fd.size[d] = 1; fd.stride[d] = 1; }
  }
  run_status cond_status{};
  auto loop_condition = [&](const Program& p, const std::vector<tensor_ref>& in) {
    std::vector<tensor_ref> fo{tensor_ref(&flag, fd)};
    cond_status = p.run(in, fo, ctx, {}, kt);
    if (!cond_status) cond_status = sub_failed("condition graph", cond_status);
    return static_cast<bool>(cond_status);
  };
  std::vector<std::vector<std::byte>> keep;  // operands copied into the layout a subgraph takes
  auto input = [&](const Program& p, std::size_t k, const strided& a, std::vector<std::vector<std::byte>>& into) {
    return ref_of_view(conformed(p.graph(), static_cast<std::int32_t>(k), a, ctx, into));
  };
  if (n.op == op_kind::cond) {
    const bool taken = read_flag(args[0]);
    const Program& p = taken ? then_or_cond : else_or_body;
    std::vector<tensor_ref> in;
    for (std::size_t k = 1; k < args.size(); ++k) in.push_back(input(p, k - 1, args[k], keep));
    run_status st = p.run(in, out, ctx, {}, kt);
    if (!st) return sub_failed(taken ? "then-graph" : "else-graph", st);
    return {};
  }
  // while_loop
  const auto carried = static_cast<std::size_t>(carried_count(g, i));
  if (in_place) {  // the carried values live in the result buffers; the body updates them there
    for (std::size_t k = 0; k < carried; ++k) kernels::copy(ctx, results[k], args[k]);
    std::vector<tensor_ref> in, cin;
    for (const auto& t : results) in.push_back(ref_of_view(t));  // (the body's carried inputs are row-major: program.hpp)
    for (std::size_t k = carried; k < args.size(); ++k) in.push_back(input(else_or_body, k, args[k], keep));
    for (std::size_t k = 0; k < args.size(); ++k) cin.push_back(k < carried ? in[k] : input(then_or_cond, k, args[k], keep));
    for (;;) {
      std::vector<std::vector<std::byte>> trip;  // carried values in the condition's layout, this trip
      for (std::size_t k = 0; k < carried; ++k) cin[k] = input(then_or_cond, k, results[k], trip);
      if (!loop_condition(then_or_cond, cin)) return cond_status;
      if (!flag) return {};
      if (run_status st = else_or_body.run(in, std::vector<tensor_ref>{}, ctx, {}, kt); !st) return sub_failed("body graph", st);
    }
  }
  std::vector<std::vector<std::byte>> scratch(carried);
  std::vector<strided> other(carried);
  for (std::size_t k = 0; k < carried; ++k) {
    scratch[k].resize(static_cast<std::size_t>(results[k].numel()) * static_cast<std::size_t>(size_of(results[k].dt)) + 1);
    other[k] = results[k];
    other[k].p = scratch[k].data();
  }
  std::vector<strided> cur(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(carried));
  int where = -1;  // -1: the initial values; 0: the result buffers; 1: the scratch set
  for (;;) {
    std::vector<std::vector<std::byte>> trip;  // operands in the subgraphs' layouts, this trip
    std::vector<tensor_ref> cin, in;
    for (std::size_t k = 0; k < args.size(); ++k) cin.push_back(input(then_or_cond, k, k < carried ? cur[k] : args[k], trip));
    if (!loop_condition(then_or_cond, cin)) return cond_status;
    if (!flag) break;
    for (std::size_t k = 0; k < args.size(); ++k) in.push_back(input(else_or_body, k, k < carried ? cur[k] : args[k], trip));
    const int next = where == 0 ? 1 : 0;
    const std::vector<strided>& dst = next == 0 ? results : other;
    std::vector<tensor_ref> nout;
    for (const auto& t : dst) nout.push_back(ref_of_view(t));
    if (run_status st = else_or_body.run(in, nout, ctx, {}, kt); !st) return sub_failed("body graph", st);
    cur = dst;
    where = next;
  }
  if (where != 0)
    for (std::size_t k = 0; k < carried; ++k) kernels::copy(ctx, results[k], cur[k]);
  return {};
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
