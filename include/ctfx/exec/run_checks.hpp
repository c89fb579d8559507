// ctfx/exec/run_checks.hpp — what every run checks and prepares before its first write, shared word
// for word by the two executors of a plan: the program that binds and plans at run time
// (exec/program.hpp) and the plan compiled<G> fixed in the compiler (exec/static_run.hpp). Each
// failure names the input, output or node and the rule; nothing here writes a caller buffer.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include "../comm/communicator.hpp"
#include "../kernels/pointwise.hpp"
#include "tensor.hpp"

namespace ctfx {

/// Every workspace buffer (slot, arena pool, scratch) starts at a multiple of this many bytes.
inline constexpr std::size_t workspace_alignment = 256;

namespace detail {

// A collective's failed check ("rule x: reason", from kernels::check_collective) as a run's
// refusal, the node named after the rule; and an engine's failure while it ran. (Both executors.)
inline run_status collective_check_failure(std::int32_t node, std::string_view name, const std::string& e) {
  return run_status::failure(node, e.substr(0, e.find(':') + 2) + "node '" + std::string(name) + "': " + e.substr(e.find(':') + 2));
}
inline run_status collective_run_failure(std::int32_t node, std::string_view name, const char* engine, const std::string& e) {
  return run_status::failure(node, "rule communication: node '" + std::string(name) + "' failed in " + engine + ": " + e);
}

constexpr std::size_t align_ws(index_t bytes) {
  return (static_cast<std::size_t>(bytes > 0 ? bytes : 0) + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

inline std::string shape_text(const index_t* s, int rank) {
  std::string t = "[";
  for (int i = 0; i < rank; ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

inline run_status check_backend(const device_ctx& ctx) {
  if (backend_compiled(ctx.where)) return {};
  return run_status::failure(-1, std::string("rule backend: the ") + name_of(ctx.where) +
                                     " backend is not compiled into this program (build it with nvcc)");
}

// ---- inputs: count, then dtype and rank of each, then (once symbols are bound) extents and strides
inline std::string input_label(std::size_t k, std::string_view name) {
  return "input " + std::to_string(k) + " ('" + std::string(name) + "')";
}
inline run_status check_input_count(std::size_t graph_inputs, std::size_t given) {
  if (given == graph_inputs) return {};
  return run_status::failure(-1, "rule input-count: the graph takes " + std::to_string(graph_inputs) +
                                     " tensor inputs, the call passes " + std::to_string(given));
}
inline run_status check_input_kind(std::int32_t node, std::string_view name, std::size_t k, dtype dt, int rank, const tensor_desc& t) {
  if (t.dt != dt)
    return run_status::failure(node, "rule input-dtype: " + input_label(k, name) + " must be " + std::string(name_of(dt)) +
                                         ", got " + std::string(name_of(t.dt)));
  if (t.rank != rank)
    return run_status::failure(node, "rule input-rank: " + input_label(k, name) + " must have rank " + std::to_string(rank) +
                                         ", got " + std::to_string(t.rank));
  return {};
}
// Whether input t passes check_input_kind and check_input_layout against these (no message built:
// a call asks this first, and runs the checks for their words only when it fails).
inline bool input_matches(dtype dt, int rank, const index_t* size, const index_t* stride, const tensor_desc& t) {
  if (t.dt != dt || t.rank != rank) return false;
  for (int d = 0; d < rank; ++d)
    if (t.size[d] != size[d] || (t.size[d] > 1 && t.stride[d] != stride[d])) return false;
  return true;
}
// `size` and `stride`: the extents and strides the graph needs, evaluated.
inline run_status check_input_layout(std::int32_t node, std::string_view name, std::size_t k, const index_t* size,
                                     const index_t* stride, int rank, const tensor_desc& t) {
  for (int d = 0; d < rank; ++d)
    if (size[d] != t.size[d])
      return run_status::failure(node, "rule input-shape: " + input_label(k, name) + " has shape " + shape_text(t.size, t.rank) +
                                           "; the graph needs " + shape_text(size, rank) + " (dimension " + std::to_string(d) + ")");
  for (int d = 0; d < rank; ++d)
    if (t.size[d] > 1 && stride[d] != t.stride[d])
      return run_status::failure(node, "rule input-strides: " + input_label(k, name) + " has strides " + shape_text(t.stride, t.rank) +
                                           "; the graph was traced with " + shape_text(stride, rank));
  return {};
}

// ---- the caller's buffers: outputs as bound (`want`, dense), data pointers, no aliasing
inline run_status check_outputs(std::int32_t output_node, std::span<const std::int32_t> out_nodes, std::span<const tensor_desc> want,
                                std::span<const tensor_ref> outputs) {
  if (outputs.size() != out_nodes.size())
    return run_status::failure(output_node, "rule output-count: the graph returns " + std::to_string(out_nodes.size()) +
                                                " tensors, the call passes " + std::to_string(outputs.size()) + " buffers");
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    const tensor_desc& w = want[j];
    const tensor_ref& o = outputs[j];
    auto who = [j] { return "output " + std::to_string(j); };
    if (o.dt != w.dt)
      return run_status::failure(out_nodes[j], "rule output-dtype: " + who() + " is " + std::string(name_of(w.dt)) +
                                                   ", the buffer is " + std::string(name_of(o.dt)));
    bool same = o.rank == w.rank;
    for (int d = 0; same && d < w.rank; ++d) same = o.size[d] == w.size[d];
    if (!same)
      return run_status::failure(out_nodes[j], "rule output-shape: " + who() + " has shape " + shape_text(w.size, w.rank) +
                                                   ", the buffer " + shape_text(o.size, o.rank));
    if (o.numel() > 0 && o.data == nullptr)
      return run_status::failure(out_nodes[j], "rule output-buffer: " + who() + " has no data pointer");
  }
  return {};
}
inline run_status check_input_data(std::span<const std::int32_t> input_nodes, std::span<const tensor_ref> inputs) {
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].numel() > 0 && inputs[k].data == nullptr)
      return run_status::failure(input_nodes[k], "rule input-buffer: input " + std::to_string(k) + " has no data pointer");
  return {};
}
// Caller buffers the graph writes (`written(k)` for input k; every output) overlap no other caller
// buffer. `name(k)`: input k's node name.
template <class Written, class Name>
run_status check_caller_aliasing(std::span<const tensor_ref> inputs, std::span<const tensor_ref> outputs, Written&& written, Name&& name) {
  struct range { const std::byte* lo; const std::byte* hi; bool written; std::int32_t who; };  // who: input k, or ~j for output j
  range stack[16];
  std::vector<range> heap;
  const std::size_t n = inputs.size() + outputs.size();
  range* rs = n <= 16 ? stack : (heap.resize(n), heap.data());
  std::size_t m = 0;
  auto add = [&](const tensor_ref& t, bool w, std::int32_t who) {
    if (t.numel() == 0 || !t.data) return;
    const auto* p = static_cast<const std::byte*>(t.data);
    rs[m++] = {p, p + t.span_bytes(), w, who};
  };
  for (std::size_t k = 0; k < inputs.size(); ++k) add(inputs[k], written(k), static_cast<std::int32_t>(k));
  for (std::size_t j = 0; j < outputs.size(); ++j) add(outputs[j], true, ~static_cast<std::int32_t>(j));
  // A call's few buffers, pair by pair, without sorting: when no written one meets another, the
  // sweep below would find nothing.
  if (m <= 16) {
    bool clash = false;
    for (std::size_t a = 0; a < m; ++a)
      for (std::size_t c = a + 1; c < m; ++c)
        clash = clash || ((rs[a].written || rs[c].written) && rs[a].lo < rs[c].hi && rs[c].lo < rs[a].hi);
    if (!clash) return {};
  }
  std::sort(rs, rs + m, [](const range& a, const range& b) { return a.lo < b.lo; });
  auto label = [&](std::int32_t who) {
    return who >= 0 ? input_label(static_cast<std::size_t>(who), name(static_cast<std::size_t>(who))) : "output " + std::to_string(~who);
  };
  // Sweep: any overlap that involves a written buffer is refused.
  for (std::size_t a = 0; a < m; ++a)
    for (std::size_t c = a + 1; c < m && rs[c].lo < rs[a].hi; ++c)
      if (rs[a].written || rs[c].written)
        return run_status::failure(-1, "rule no-caller-aliasing: " + label(rs[a].who) + " and " + label(rs[c].who) +
                                           " overlap in memory, and the graph writes one of them; pass separate buffers");
  return {};
}

// ---- memory: the caller's workspace or one allocation; outputs computed in the caller's buffers
inline run_status check_workspace(std::size_t need, std::span<std::byte> workspace) {
  if (workspace.empty() || workspace.size() >= need) return {};
  return run_status::failure(-1, "rule workspace-size: the plan needs " + std::to_string(need) +
                                     " bytes of workspace for these shapes, the call gives " + std::to_string(workspace.size()));
}
// The workspace a run uses: the caller's, or one aligned allocation held by `owned` (the only one
// a run makes, and only on the host).
inline run_status take_workspace(const device_ctx& ctx, std::size_t need, std::span<std::byte> workspace,
                                 std::unique_ptr<std::byte[]>& owned, std::byte*& ws) {
  ws = workspace.data();
  if (!workspace.empty() || need == 0) return {};
  if (ctx.where == backend::cuda)
    return run_status::failure(-1, "rule workspace-size: a CUDA run needs a device workspace of " + std::to_string(need) +
                                       " bytes from the caller");
  owned.reset(new std::byte[need + workspace_alignment]);
  ws = owned.get();
  if (const auto mis = reinterpret_cast<std::uintptr_t>(ws) % workspace_alignment) ws += workspace_alignment - mis;
  return {};
}
// Output j computed in the caller's buffer: a dense buffer is the storage itself (`direct`); a
// strided one gets a host temporary of `bytes`, copied into it at the end (copy_to_caller).
inline run_status place_direct_output(const device_ctx& ctx, std::size_t j, std::int32_t node, const tensor_ref& out, std::size_t bytes,
                                      std::byte*& base, bool& direct, std::vector<std::unique_ptr<std::byte[]>>& temporaries) {
  tensor_desc dense = out;
  dense.set_contiguous();
  direct = dense == static_cast<const tensor_desc&>(out);
  if (direct) {
    base = static_cast<std::byte*>(out.data);
    return {};
  }
  if (ctx.where == backend::cuda)
    return run_status::failure(node, "rule output-layout: output " + std::to_string(j) +
                                         " is computed in the caller's buffer, which on CUDA must be dense (row-major); pass a dense buffer");
  temporaries.emplace_back(new std::byte[bytes + 1]);
  base = temporaries.back().get();
  return {};
}
// A result computed in the workspace (`src`) copied into the caller's output buffer.
inline void copy_to_caller(const device_ctx& ctx, const tensor_ref& out, const strided& src) {
  strided dst;
  dst.p = static_cast<std::byte*>(out.data);
  dst.dt = out.dt;
  dst.rank = out.rank;
  for (int d = 0; d < out.rank; ++d) { dst.size[d] = out.size[d]; dst.stride[d] = out.stride[d]; }
  kernels::copy_bits(ctx, dst, src);  // (the output and its node: one element type)
}

// Across ranks: every rank learns whether any failed, and whether all are about to post the same
// collectives (`mine`, comm/agreement.hpp); all return the lowest failing rank's failure, or the
// disagreement (comm/communicator.hpp), before any writes a caller buffer. A rank that failed
// passes whatever digest it has: a failure is reported before a disagreement.
inline run_status agree_run(communicator& c, run_status st, const run_digest& mine) {
  std::int32_t node = st.node;
  auto [ok, text] = agree_world(c, st.ok, st.message, node, mine);
  if (ok) return {};
  return run_status::failure(node, static_cast<std::string&&>(text));
}

}  // namespace detail
}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
