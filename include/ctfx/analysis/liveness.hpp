// ctfx/analysis/liveness.hpp — steps (the nodes that run a kernel), buffers (the storages those
// steps create) and each buffer's lifetime, as Inductor's memory.py models them:
//   - views and getitem allocate nothing; a view extends its base's life (same storage);
//   - an in-place op is a rename: it writes its argument's storage, extending that buffer's life;
//   - a tuple-returning op (foreach, user ops) allocates all its fresh results at its own step;
//   - graph inputs are the caller's and are never planned; graph outputs live to the end.
//
// Time runs in half-steps so that the reuse rule can be stated exactly: step s reads its inputs in
// [2s, 2s+1) and its result is live from 2s — or from 2s+1 when the step is an elementwise op with
// a contiguous result that reads some input at the index it writes, so its output may take the
// memory of such an input whose last use is this very step (Inductor's in-place buffer update).
// An input the step reads elsewhere (broadcast, strided, a different element size) stays live
// through the step, to 2s+2, so no result of the step takes its memory: as Inductor decides it per
// input (can_inplace), only an input read at the written index is ever overwritten. addmm and
// baddbmm start late too when their c is read at the written index (they accumulate into it);
// their matrices stay live through the step. Lifetimes are
// half-open.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <vector>
#include "../detail/cvec.hpp"
#include "../graph/ir.hpp"

namespace ctfx {

struct buffer_life {
  std::int32_t storage = -1;
  std::int32_t node = -1;        // the node whose result first holds this storage
  std::int32_t def_step = -1;    // the step that allocates it
  std::int32_t last_step = -1;   // the last step that reads or writes it (any alias)
  std::int64_t begin = 0, end = 0;  // half-open lifetime in half-steps
  sym_expr bytes{};              // storage size in bytes (symbolic where the extents are)
  dtype dt = dtype::f32;
  bool is_output = false;
  bool unbacked = false;         // its size depends on a data-dependent symbol
  std::int32_t partition = 0;    // the partition that allocates it
  bool crosses_partition = false;  // read by a later partition: an output of its own partition
};

struct liveness {
  std::vector<std::int32_t> steps;        // node ids, in program order
  std::vector<std::int32_t> step_partition;  // per step: its graph partition
  std::vector<std::int32_t> step_of;      // per node: the step that computes it, or -1
  std::vector<buffer_life> buffers;       // one per planned storage, ordered by def_step
  std::vector<std::int32_t> buffer_of;    // per storage id: index into buffers, or -1
  std::int32_t n_steps() const { return static_cast<std::int32_t>(steps.size()); }
};

// Nodes that run no kernel: graph structure and views.
constexpr bool is_free_node(op_kind k) {
  return k == op_kind::placeholder || k == op_kind::output || k == op_kind::getitem ||
         k == op_kind::sym_size || is_view_op(k);
}

// True for ops whose output element i depends only on input elements at index i.
constexpr bool is_pointwise(op_kind k) { return is_unary(k) || is_binary(k) || is_ternary(k); }

// Bytes the storage of a fresh tensor needs: (max reachable offset + 1) · itemsize.
constexpr sym_expr storage_bytes(const tensor_meta& m) {
  // A static layout (the common case) in plain integers, read from the fields: in constant
  // evaluation each sym_expr operation and accessor is a call and a temporary.
  bool fixed = m.offset.n == 0 && !m.offset.overflow;
  for (int i = 0; fixed && i < m.rank; ++i)
    fixed = m.size[i].n == 0 && !m.size[i].overflow && m.stride[i].n == 0 && !m.stride[i].overflow;
  if (fixed) {
    index_t top = m.offset.c;
    for (int i = 0; i < m.rank; ++i) {
      if (m.size[i].c == 0) return sym_expr(0);
      top += (m.size[i].c - 1) * m.stride[i].c;
    }
    return sym_expr((top + 1) * static_cast<index_t>(size_of(m.dt)));
  }
  const sym_expr hi = m.last_element();
  bool empty = false;
  for (int i = 0; i < m.rank; ++i)
    if (m.size[i] == sym_expr(0)) empty = true;
  if (empty) return sym_expr(0);
  return (hi + sym_expr(1)) * sym_expr(size_of(m.dt));
}

constexpr bool uses_unbacked(const ir& g, const sym_expr& e) {
  for (std::size_t s = 0; s < g.syms.size(); ++s)
    if (g.syms[s].kind == symbol_kind::unbacked && e.uses(static_cast<int>(s))) return true;
  return false;
}

// Linear in nodes + edges. With `fused_root` (plan/fusion.hpp: per node, the node whose kernel
// computes it), a node fused into a later one is no step and gets no buffer: its reads happen at
// its root's step. The loops read the graph's pools through raw pointers (nvcc's front end
// charges each accessor call against its constexpr budget, g++ pays for each as well).
// With `into` (plan/fusion.hpp's fusion::into: per node, the cat whose buffer holds its result, or
// -1), such a node gets no buffer of its own: it writes cat's, which is allocated at the first step
// that writes into it and lives as cat's result does. A chain ends at its holder: a cat placed in
// a put's row (into[cat] == the put) holds its operands' results in the put's destination, a
// caller's buffer, so none of them gets a buffer.
constexpr liveness compute_liveness(const ir& g, const std::int32_t* fused_root = nullptr, const std::int32_t* into = nullptr) {
  liveness L;
  const std::int32_t n = g.size();
  const node* N = g.nodes.data();
  const std::int32_t* A = g.args.data();
  const auto ns = static_cast<std::size_t>(g.next_storage);
  // Sized once (an element appended to a std::vector costs several calls in constant evaluation,
  // a reallocation one per element moved).
  L.step_of.assign(static_cast<std::size_t>(n), -1);
  L.buffer_of.assign(ns, -1);
  L.steps.reserve(static_cast<std::size_t>(n));
  L.step_partition.reserve(static_cast<std::size_t>(n));
  L.buffers.reserve(ns < static_cast<std::size_t>(n) ? ns : static_cast<std::size_t>(n));
  detail::cvec<unsigned char> input_storage(ns, 0);  // not vector<bool>: clang 14 rejects it in constexpr
  unsigned char* is_input = input_storage.data();
  for (std::int32_t i = 0; i < n; ++i)
    if (N[i].op == op_kind::placeholder && N[i].meta.storage >= 0) is_input[N[i].meta.storage] = 1;
  std::int32_t* step_of = L.step_of.data();
  std::int32_t* buffer_of = L.buffer_of.data();

  // Steps, and the buffers they create.
  for (std::int32_t i = 0; i < n; ++i) {
    const node& nd = N[i];
    std::int32_t step = -1;
    if (fused_root && fused_root[i] != i) {
      step_of[i] = -2;  // a fused member: its root's step, set below (roots come later)
      continue;
    }
    if (!is_free_node(nd.op)) {
      step = static_cast<std::int32_t>(L.steps.size());
      L.steps.push_back(i);
      L.step_partition.push_back(nd.partition);
    } else if (nd.op == op_kind::getitem) {
      step = step_of[A[nd.arg0]];  // allocated by the tuple's step
    }
    step_of[i] = step;
    std::int32_t holder = i;  // the node whose result owns the memory (a cat, a put's destination)
    while (into && into[holder] >= 0) holder = into[holder];
    const node& hd = N[holder];
    const std::int32_t s = hd.meta.storage;
    if (step < 0 || s < 0 || is_input[s] || buffer_of[s] >= 0) continue;
    buffer_life b{};
    b.storage = s;
    b.node = holder;
    b.def_step = step;
    b.last_step = step;
    b.bytes = storage_bytes(hd.meta);
    b.dt = hd.meta.dt;
    b.unbacked = !b.bytes.is_static() && uses_unbacked(g, b.bytes);
    b.partition = hd.partition;
    buffer_of[s] = static_cast<std::int32_t>(L.buffers.size());
    L.buffers.push_back(b);
  }
  if (fused_root)
    for (std::int32_t i = n - 1; i >= 0; --i)
      if (step_of[i] == -2) step_of[i] = step_of[fused_root[i]];
  // Last uses: every argument read by a step (through any alias) keeps its storage alive.
  buffer_life* B = L.buffers.data();
  for (std::int32_t i = 0; i < n; ++i) {
    const node& nd = N[i];
    const std::int32_t step = step_of[i];
    const bool out = nd.op == op_kind::output;
    if (!out && (step < 0 || nd.op == op_kind::getitem)) continue;
    if (!out && into) {  // a step writes the buffer that holds its result (cat's, after a write into a slice)
      std::int32_t h = i;
      while (into[h] >= 0) h = into[h];
      const std::int32_t hs = N[h].meta.storage;
      const std::int32_t bi = hs >= 0 ? buffer_of[hs] : -1;
      if (bi >= 0 && B[bi].last_step < step) B[bi].last_step = step;
    }
    for (const std::int32_t* a = A + nd.arg0; a != A + nd.arg0 + nd.nargs; ++a) {
      if (*a < 0 || N[*a].meta.storage < 0) continue;
      const std::int32_t bi = buffer_of[N[*a].meta.storage];
      if (bi < 0) continue;
      buffer_life& b = B[bi];
      if (out) { b.is_output = true; continue; }
      if (b.last_step < step) b.last_step = step;
      if (nd.partition != b.partition) b.crosses_partition = true;
    }
  }
  // Half-step intervals. Per step: whether its result may start at 2s+1 (a pointwise kernel of its
  // own, a contiguous result) and, for each argument, whether it is read at the written index.
  const auto same_index = [&](const tensor_meta& am, const tensor_meta& om) {
    return am.same_shape(om) && am.is_contiguous() && am.offset == sym_expr(0) && size_of(am.dt) == size_of(om.dt);
  };
  const std::int64_t end_of_graph = 2 * static_cast<std::int64_t>(L.steps.size()) + 1;
  const std::int32_t* steps = L.steps.data();
  detail::cvec<unsigned char> late_of_step(L.steps.size(), 0);
  for (std::size_t k = 0; k < L.buffers.size(); ++k) {
    buffer_life& b = B[k];
    const node& def = N[steps[b.def_step]];
    const bool group = fused_root && def.nargs > 0 && [&] {  // a fused kernel's reads are its leaves'
      for (const std::int32_t* a = A + def.arg0; a != A + def.arg0 + def.nargs; ++a)
        if (*a >= 0 && fused_root[*a] != *a) return true;
      return false;
    }();
    bool late_start = false;
    if (is_pointwise(def.op) && def.meta.storage == b.storage && !group && def.meta.is_contiguous())
      for (const std::int32_t* a = A + def.arg0; !late_start && a != A + def.arg0 + def.nargs; ++a)
        late_start = *a >= 0 && N[*a].meta.storage >= 0 && same_index(N[*a].meta, def.meta);
    // addmm / baddbmm accumulate into their result (kernels/matmul.hpp), which may so take the
    // memory of their c (argument 0, read at the written index); never that of a or b.
    if ((def.op == op_kind::addmm || def.op == op_kind::baddbmm) && def.nargs == 3 && def.meta.storage == b.storage && !group &&
        def.meta.is_contiguous()) {
      const std::int32_t c = A[def.arg0];
      late_start = c >= 0 && N[c].meta.storage >= 0 && same_index(N[c].meta, def.meta) && N[c].meta.dt == def.meta.dt;
    }
    late_of_step[static_cast<std::size_t>(b.def_step)] = late_start ? 1 : 0;
    b.begin = 2 * static_cast<std::int64_t>(b.def_step) + (late_start ? 1 : 0);
    b.end = b.is_output ? end_of_graph : 2 * static_cast<std::int64_t>(b.last_step) + 1;
  }
  // An argument of a late-starting step read elsewhere than at the written index, and dying there,
  // stays live through the step: its result must not take that memory.
  for (std::size_t st = 0; st < L.steps.size(); ++st) {
    if (!late_of_step[st]) continue;
    const node& def = N[steps[st]];
    for (const std::int32_t* a = A + def.arg0; a != A + def.arg0 + def.nargs; ++a) {
      if (*a < 0 || N[*a].meta.storage < 0) continue;
      if (same_index(N[*a].meta, def.meta) && (!is_product(def.op) || a == A + def.arg0)) continue;
      const std::int32_t bi = buffer_of[N[*a].meta.storage];
      if (bi >= 0 && !B[bi].is_output && B[bi].last_step == static_cast<std::int32_t>(st)) B[bi].end = 2 * static_cast<std::int64_t>(st) + 2;
    }
  }
  for (std::size_t k = 0; k < L.buffers.size(); ++k)
    if (B[k].end <= B[k].begin) B[k].end = B[k].begin + 1;
  return L;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
