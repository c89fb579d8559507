// ctfx/plan/fusion.hpp — grouping the nodes of a reinplaced graph into kernels, after reinplacing
// and before memory planning: a chain of elementwise ops is fused into its consumer, so a value used
// only inside a group is never written to memory and gets no buffer (Inductor's vertical fusion of
// pointwise nodes, and of pointwise nodes into the reduction that reads them).
//
//   fusion f = plan_fusion(g);   // constexpr: compiled<G> groups in the compiler, runtime_plan at run time
//   f.root[i] == i               // node i is a kernel of its own (or the root of a group)
//   f.root[i] == r, r > i        // node i is computed inside r's kernel, element by element
//
// A member m (fused into its consumer c) is an elementwise op (unary, binary, where, convert, clone) whose
// result nobody else reads: c is its only user, reads it directly (not through a view) and over the
// same extents (m is never recomputed for a broadcast). The consumer c is an elementwise op, an
// in-place binary op whose written argument is not m, a copy_ whose source is m, or a sum, amax or
// mean of m over m's last dimensions (is_fusible_reduction): the group's loop domain is then m's
// extents, and each value is folded into its output as it is computed (Inductor's reduction
// fusion), in the order the unfused reduction folds it.
//
// The legality rules, each tested (test/unit/exec_fusion_test.cpp):
//   writer-index-map: inside a group, every read of the storage the group writes (the destination
//     of a copy_ or in-place root) uses the writer's own index map (same offset, extents, strides).
//     Otherwise the read could see elements the group already overwrote — a stencil that reads the
//     neighbours of what it writes (pytorch#198270: a fused copy-back reading x.flip(0); openxla
//     #49176: an in-place dynamic-update-slice reading its own output). Such a chain is split: the
//     value is computed into its own buffer (exactly the temporary it needs), then copied.
//   no-write-between: a group's reads move to its root's position, so no node between the first
//     member and the root writes a storage the group reads (a leaf's), and no user op (which may
//     write more than it declares) lies between. A write-back of another parameter between them
//     does not split the group: it touches nothing the group reads.
//   size: at most max_fused_ops ops and max_fused_leaves distinct operands per group (the CUDA
//     kernel carries them in its parameters).
//
// Results written into a cat's slice (Inductor's ConcatKernel with NonOwningLayout):
//   f.into[i] == c               // kernel root i writes its result straight into its slice of cat
//                                // c's buffer; i gets no buffer and c copies nothing for it
// Legal when i is an elementwise kernel (a group root or a single op) of cat's dtype and rank, and
// cat is the only reader of i: then nothing reads the slice before cat would have written it, and
// nothing else can see cat's buffer early (a group that read it would have to read i, a second
// use). The memory planner (analysis/liveness.hpp) starts cat's buffer at the first such write.
// i is then laid out as its slice (cat_slice_meta): cat's strides, channels-last when cat's result
// is, whatever i's own strides; cat reads i's values, not its layout.
//
// Results written into the row of a caller's buffer that an in-place put selects:
//   f.into[v] == p               // p: x.index_put_({None, ..., pos}, v) with pos one integer of a
//                                // graph input; kernel v (a cat or an elementwise root, p its only
//                                // reader, x's dtype, exactly the selected extents) writes x[..., pos, ...]
// v gets no buffer and p copies nothing; v's layout is x's with pos * stride added once the run has
// checked pos (exec/program.hpp checks such a put's index in the validation phase, before the first
// write into any caller buffer). Legal when no node writes pos, and no kernel from the first write
// into the row (v, or the first operand computed in v's slices) up to p reads or writes x's
// storage or can fail a check of its own (indices computed in the graph, user ops, collectives),
// and no index op after p checks indices computed in the graph; otherwise v keeps its buffer and
// p copies it.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <algorithm>
#include <cstdint>
#include "../analysis/order.hpp"
#include "../detail/cvec.hpp"
#include "../graph/ir.hpp"

namespace ctfx {

inline constexpr int max_fused_ops = 16;
inline constexpr int max_fused_leaves = 12;

struct fusion {
  // Per node: the node whose kernel computes it (itself if none). (detail::cvec, not std::vector:
  // clang 14 cannot constant-evaluate libstdc++'s sized vector constructors.)
  detail::cvec<std::int32_t> root;
  // Per node: the cat whose buffer holds its result, or the put whose row does (see above), or -1.
  // Empty: none.
  detail::cvec<std::int32_t> into;
  constexpr std::int32_t into_of(std::int32_t i) const { return into.empty() ? -1 : into[static_cast<std::size_t>(i)]; }
  constexpr bool is_member(std::int32_t i) const { return root[static_cast<std::size_t>(i)] != i; }
  // Kernels that fuse more than one node.
  constexpr std::int32_t groups_with_members() const {
    std::int32_t n = 0;
    detail::cvec<std::uint8_t> seen(root.size(), 0);
    for (std::size_t i = 0; i < root.size(); ++i)
      if (root[i] != static_cast<std::int32_t>(i) && !seen[static_cast<std::size_t>(root[i])]) {
        seen[static_cast<std::size_t>(root[i])] = 1;
        ++n;
      }
    return n;
  }
};

// Ops that can be the last op of a group (they may write their first argument in place).
constexpr bool is_fusion_consumer(op_kind k) { return is_fusible_elementwise(k) || (is_binary(k) && is_mutating(k)) || k == op_kind::copy_; }
constexpr bool is_reduction(op_kind k) { return k == op_kind::sum || k == op_kind::amax || k == op_kind::amin || k == op_kind::mean; }

// The dimensions reduction i folds, as bits of its input's dimensions (none listed: all of them).
constexpr unsigned reduction_dims(const ir& g, std::int32_t i) {
  const node& n = g.nodes[static_cast<std::size_t>(i)];
  const int r = g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(n.arg0)])].meta.rank;
  if (n.npar == 0) return (1u << r) - 1;
  unsigned dims = 0;
  for (std::int32_t k = 0; k < n.npar; ++k) {
    const index_t d = g.iparam(i, k);
    dims |= 1u << (d < 0 ? d + r : d);
  }
  return dims;
}

// A cumsum's dimension, normalized (-1: a 0-d input).
constexpr int scan_dim(const ir& g, std::int32_t i) {
  const node& n = g.nodes[static_cast<std::size_t>(i)];
  const int r = g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(n.arg0)])].meta.rank;
  if (r == 0) return -1;
  const index_t d = g.iparam(i, 0);
  return static_cast<int>(d < 0 ? d + r : d);
}

// A reduction that folds its input's values as they are computed (kernels/fused_reduce.hpp): the
// dimensions it reduces are the input's last ones (all of them, for a full reduction), so each
// output's values are one run of the input in row-major order, the order it folds them in; and its
// dtypes are a pair the host fold instantiates (the input's, or an integer sum into int64).
constexpr bool is_fusible_reduction(const ir& g, std::int32_t c) {
  const node& cn = g.nodes[static_cast<std::size_t>(c)];
  if (!is_reduction(cn.op) || !cn.meta.is_tensor() || cn.nargs < 1) return false;
  const std::int32_t a = g.args[static_cast<std::size_t>(cn.arg0)];
  if (a < 0) return false;
  const tensor_meta& x = g.nodes[static_cast<std::size_t>(a)].meta;
  const dtype s = x.dt, o = cn.meta.dt;
  if (!(s == o || (o == dtype::i64 && (s == dtype::b8 || s == dtype::i8 || s == dtype::i32)))) return false;
  const unsigned dims = reduction_dims(g, c);
  // trailing: dims == {r-k, ..., r-1}
  const unsigned low = dims == 0 ? 0 : (dims & (~dims + 1));  // lowest set bit
  return dims != 0 && dims + low == (1u << x.rank);
}

namespace detail {

// The members of the group under m (m itself, then recursively its arguments that are members),
// calling f(arg) for every argument read by a member that is not itself a member (the leaves).
template <class F>
constexpr void for_each_leaf(const ir& g, const std::int32_t* parent, std::int32_t m, F&& f) {
  const node& n = g.nodes[static_cast<std::size_t>(m)];
  for (std::int32_t k = 0; k < n.nargs; ++k) {
    const std::int32_t a = g.args[static_cast<std::size_t>(n.arg0 + k)];
    if (a < 0) continue;
    if (parent[a] == m && a != m) for_each_leaf(g, parent, a, f);
    else f(a);
  }
}

// The values of p when p is an in-place index_put_ (not accumulating) that writes one whole row
// of a caller's buffer: x[:, ..., pos] = v with pos one integer element of a graph input that no
// node writes, and v of x's dtype with exactly the selected extents (no broadcast). Else -1.
constexpr std::int32_t row_put_values(const ir& g, std::int32_t p) {
  const node& pn = g.nodes[static_cast<std::size_t>(p)];
  if ((pn.op != op_kind::index_put_ && pn.op != op_kind::unsafe_index_put_) || pn.aux != 0 || pn.nargs < 3) return -1;
  const std::int32_t x = g.args[static_cast<std::size_t>(pn.arg0)], v = g.args[static_cast<std::size_t>(pn.arg0 + 1)];
  std::int32_t ix = -1, d = -1;
  for (std::int32_t k = 2; k < pn.nargs; ++k) {
    const std::int32_t a = g.args[static_cast<std::size_t>(pn.arg0 + k)];
    if (a < 0) continue;
    if (ix >= 0) return -1;  // more than one index
    ix = a;
    d = k - 2;
  }
  if (x < 0 || v < 0 || ix < 0) return -1;
  const tensor_meta &xm = g.nodes[static_cast<std::size_t>(x)].meta, &vm = g.nodes[static_cast<std::size_t>(v)].meta;
  const node& in = g.nodes[static_cast<std::size_t>(ix)];
  if (in.op != op_kind::placeholder || (in.meta.dt != dtype::i64 && in.meta.dt != dtype::i32)) return -1;
  if (in.meta.rank > 1 || (in.meta.rank == 1 && !(in.meta.size[0] == sym_expr(1)))) return -1;
  if (!vm.is_tensor() || !xm.is_tensor() || vm.dt != xm.dt || vm.rank != xm.rank || d >= xm.rank) return -1;
  for (int j = 0; j < xm.rank; ++j)
    if (!(vm.size[j] == (j == d ? sym_expr(1) : xm.size[j]))) return -1;
  bool caller = false;  // x lives in a graph input's storage
  for (const node& q : g.nodes) caller = caller || (q.op == op_kind::placeholder && q.meta.storage == xm.storage);
  if (!caller || xm.storage < 0) return -1;
  for (std::int32_t q = 0; q < g.size(); ++q) {  // nothing writes pos
    const node& qn = g.nodes[static_cast<std::size_t>(q)];
    const bool user = qn.op == op_kind::custom || qn.op == op_kind::auto_functionalized;
    if (!is_mutating(qn.op) && !user) continue;
    const std::int32_t written = user ? qn.nargs : is_list_op(qn.op) ? qn.aux : 1;
    for (std::int32_t k = 0; k < written && k < qn.nargs; ++k) {
      const std::int32_t a = g.args[static_cast<std::size_t>(qn.arg0 + k)];
      if (a >= 0 && g.nodes[static_cast<std::size_t>(a)].meta.storage == in.meta.storage) return -1;
    }
  }
  return v;
}

// True when the kernels between position `first` (the first write into the row) and the put p
// neither read nor write the put's destination storage (so writing the row early changes nothing
// any of them sees), and none of them can fail a run-time check of its own (indices computed in the
// graph, a user op, a collective): those are checked before the first write into a caller buffer,
// which would now be `first`. A fused member's reads happen at its root's position.
constexpr bool row_clear_between(const ir& g, const std::int32_t* root, std::int32_t p, std::int32_t first) {
  const std::int32_t xs = g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(g.nodes[static_cast<std::size_t>(p)].arg0)])].meta.storage;
  for (std::int32_t q = 0; q < p; ++q) {
    const std::int32_t r = root[static_cast<std::size_t>(q)];
    if (r < first || r >= p) continue;
    const node& qn = g.nodes[static_cast<std::size_t>(q)];
    if (qn.op == op_kind::placeholder || qn.op == op_kind::getitem || qn.op == op_kind::sym_size || is_view_op(qn.op)) continue;
    if (qn.op == op_kind::custom || qn.op == op_kind::auto_functionalized || facts(qn.op).family == op_family::collective) return false;
    if (is_index_op(qn.op))
      for (std::int32_t k = first_index_arg(qn.op); k < qn.nargs; ++k) {
        const std::int32_t a = g.args[static_cast<std::size_t>(qn.arg0 + k)];
        if (a >= 0 && g.nodes[static_cast<std::size_t>(a)].op != op_kind::placeholder) return false;
      }
    for (std::int32_t k = 0; k < qn.nargs; ++k) {
      const std::int32_t a = g.args[static_cast<std::size_t>(qn.arg0 + k)];
      if (a >= 0 && g.nodes[static_cast<std::size_t>(a)].meta.storage == xs) return false;
    }
  }
  // Nor may an index op after p check indices computed in the graph: the pipeline computes those
  // before p's write (passes/hoist_computed_indices.hpp), not before `first`.
  for (std::int32_t q = p + 1; q < g.size(); ++q) {
    const node& qn = g.nodes[static_cast<std::size_t>(q)];
    if (!is_index_op(qn.op)) continue;
    for (std::int32_t k = first_index_arg(qn.op); k < qn.nargs; ++k) {
      const std::int32_t a = g.args[static_cast<std::size_t>(qn.arg0 + k)];
      if (a >= 0 && g.nodes[static_cast<std::size_t>(a)].op != op_kind::placeholder) return false;
    }
  }
  return true;
}

}  // namespace detail

// Linear in nodes + edges (each member is visited once more, when its group meets a writing root).
constexpr fusion plan_fusion(const ir& g) {
  const std::int32_t n = g.size();
  fusion f;
  f.root.assign(static_cast<std::size_t>(n), 0);
  const auto N = static_cast<std::size_t>(n);
  detail::cvec<std::int32_t> parent(N, 0), uses(N, 0), earliest(N, 0), ops(N, 1);
  const write_positions writes(g);
  for (std::int32_t i = 0; i < n; ++i) {
    parent[static_cast<std::size_t>(i)] = i;
    earliest[static_cast<std::size_t>(i)] = i;
    const node& nd = g.nodes[static_cast<std::size_t>(i)];
    for (std::int32_t k = 0; k < nd.nargs; ++k) {
      const std::int32_t a = g.args[static_cast<std::size_t>(nd.arg0 + k)];
      if (a >= 0) ++uses[static_cast<std::size_t>(a)];
    }
  }
  detail::cvec<std::int32_t> leaves;
  for (std::int32_t c = 0; c < n; ++c) {
    const node& cn = g.nodes[static_cast<std::size_t>(c)];
    const bool folds = is_fusible_reduction(g, c);
    if (!(is_fusion_consumer(cn.op) || folds) || !cn.meta.is_tensor()) continue;
    const bool writer = is_mutating(cn.op);
    // The consumer's loop domain: its result (a copy_ or in-place op returns its destination), or
    // a reduction's input.
    const tensor_meta& domain = folds ? g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(cn.arg0)])].meta : cn.meta;
    for (std::int32_t k = writer ? 1 : 0; k < (folds ? 1 : cn.nargs); ++k) {
      const std::int32_t m = g.args[static_cast<std::size_t>(cn.arg0 + k)];
      if (m < 0) continue;
      const node& mn = g.nodes[static_cast<std::size_t>(m)];
      if (!is_fusible_elementwise(mn.op) || parent[static_cast<std::size_t>(m)] != m || uses[static_cast<std::size_t>(m)] != 1) continue;
      if (!mn.meta.is_tensor() || !mn.meta.same_shape(domain)) continue;
      if (mn.partition != cn.partition) continue;
      // no-write-between (no user op in the merged group's span; its leaves are checked below)
      const std::int32_t first = std::min(earliest[static_cast<std::size_t>(m)], earliest[static_cast<std::size_t>(c)]);
      if (writes.opaque_between(first, c)) continue;
      if (ops[static_cast<std::size_t>(c)] + ops[static_cast<std::size_t>(m)] > max_fused_ops) continue;
      // Leaves of the merged group: count them (size rule) and, for a writing consumer, check the
      // writer-index-map rule against its destination.
      leaves.clear();
      auto add_leaf = [&](std::int32_t a) {
        for (auto l : leaves)
          if (l == a) return;
        leaves.push_back(a);
      };
      parent[static_cast<std::size_t>(m)] = c;  // tentatively
      detail::for_each_leaf(g, parent.data(), c, add_leaf);
      bool ok = leaves.size() <= static_cast<std::size_t>(max_fused_leaves);
      for (auto l : leaves)  // no-write-between: nothing the group reads is written in its span
        ok = ok && !writes.written_between(g.nodes[static_cast<std::size_t>(l)].meta.storage, first, c);
      if (ok && writer) {
        const std::int32_t dst = g.args[static_cast<std::size_t>(cn.arg0)];
        const tensor_meta& dm = g.nodes[static_cast<std::size_t>(dst)].meta;
        for (auto l : leaves) {
          const tensor_meta& lm = g.nodes[static_cast<std::size_t>(l)].meta;
          if (lm.storage == dm.storage && !(lm.same_layout(dm))) ok = false;
        }
      }
      if (!ok) {
        parent[static_cast<std::size_t>(m)] = m;
        continue;
      }
      ops[static_cast<std::size_t>(c)] += ops[static_cast<std::size_t>(m)];
      if (earliest[static_cast<std::size_t>(m)] < earliest[static_cast<std::size_t>(c)])
        earliest[static_cast<std::size_t>(c)] = earliest[static_cast<std::size_t>(m)];
    }
  }
  // Roots: parents always point forward, so one backward sweep resolves every chain.
  for (std::int32_t i = n - 1; i >= 0; --i) {
    const std::int32_t p = parent[static_cast<std::size_t>(i)];
    f.root[static_cast<std::size_t>(i)] = p == i ? i : f.root[static_cast<std::size_t>(p)];
  }
  // Kernel roots that write straight into their cat's slice.
  f.into.assign(N, -1);
  for (std::int32_t c = 0; c < n; ++c) {
    const node& cn = g.nodes[static_cast<std::size_t>(c)];
    if (cn.op != op_kind::cat || !cn.meta.is_tensor()) continue;
    const std::int32_t d0 = cn.npar ? static_cast<std::int32_t>(g.iparam(c, 0)) : 0;
    const std::int32_t d = d0 < 0 ? d0 + cn.meta.rank : d0;
    sym_expr at(0);  // the operand's offset along d, as cat_slice_meta computes it
    for (std::int32_t k = 0; k < cn.nargs; ++k) {
      const std::int32_t m = g.args[static_cast<std::size_t>(cn.arg0 + k)];
      if (m < 0) continue;
      const node& mn = g.nodes[static_cast<std::size_t>(m)];
      const bool fits = mn.meta.rank == cn.meta.rank;
      const bool placed = is_fusible_elementwise(mn.op) && f.root[static_cast<std::size_t>(m)] == m &&
                          uses[static_cast<std::size_t>(m)] == 1 && mn.meta.is_tensor() && mn.meta.dt == cn.meta.dt && fits &&
                          mn.partition == cn.partition && !(cn.meta.offset + at * cn.meta.stride[d]).overflow;
      if (placed) f.into[static_cast<std::size_t>(m)] = c;
      if (fits) at = at + mn.meta.size[d];
    }
  }
  // Kernels (a cat, an elementwise root) that write straight into the row of a caller's buffer an
  // in-place index_put_ selects with one run-time position.
  for (std::int32_t p = 0; p < n; ++p) {
    const std::int32_t v = detail::row_put_values(g, p);
    if (v < 0) continue;
    const node& vn = g.nodes[static_cast<std::size_t>(v)];
    const bool kernel = (vn.op == op_kind::cat || is_fusible_elementwise(vn.op)) && f.root[static_cast<std::size_t>(v)] == v &&
                        f.into[static_cast<std::size_t>(v)] < 0;
    if (!kernel || uses[static_cast<std::size_t>(v)] != 1 || vn.partition != g.nodes[static_cast<std::size_t>(p)].partition) continue;
    // The kernels that would write the row: v and the operands computed in v's slices.
    std::int32_t first = v;
    for (std::int32_t m = 0; m < v; ++m)
      if (f.into[static_cast<std::size_t>(m)] == v && m < first) first = m;
    if (detail::row_clear_between(g, f.root.data(), p, first)) f.into[static_cast<std::size_t>(v)] = p;
  }
  return f;
}

// The layout of operand m's slice of cat c's result (the view cat would copy m into): cat's
// storage and strides, m's extents, the offset of the operands before m along cat's dimension.
// (`cat_layout`: where cat's result lives, when not in its own buffer: a row of a put.)
constexpr tensor_meta cat_slice_meta(const ir& g, std::int32_t c, std::int32_t m, const tensor_meta* cat_layout = nullptr) {
  const node& cn = g.nodes[static_cast<std::size_t>(c)];
  tensor_meta s = cat_layout ? *cat_layout : cn.meta;
  const std::int32_t d0 = cn.npar ? static_cast<std::int32_t>(g.iparam(c, 0)) : 0;
  const std::int32_t d = d0 < 0 ? d0 + s.rank : d0;
  sym_expr at(0);
  for (std::int32_t k = 0; k < cn.nargs; ++k) {
    const std::int32_t a = g.args[static_cast<std::size_t>(cn.arg0 + k)];
    if (a == m) break;
    const tensor_meta& am = g.nodes[static_cast<std::size_t>(a)].meta;
    if (am.rank == s.rank) at = at + am.size[d];  // (a legacy 1-D empty operand takes no room)
  }
  const tensor_meta& mm = g.nodes[static_cast<std::size_t>(m)].meta;
  for (int j = 0; j < s.rank; ++j) s.size[j] = mm.size[j];
  s.offset = s.offset + at * s.stride[d];
  return s;
}

// The layout of the values of row put p (see row_put_values) in the put's destination: x's
// storage, strides and offset, the selected extents; the row's position is added at run time
// (position * x's stride along the indexed dimension), once the index is checked.
constexpr tensor_meta row_put_meta(const ir& g, std::int32_t p) {
  const node& pn = g.nodes[static_cast<std::size_t>(p)];
  tensor_meta s = g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(pn.arg0)])].meta;
  const tensor_meta& vm = g.nodes[static_cast<std::size_t>(g.args[static_cast<std::size_t>(pn.arg0 + 1)])].meta;
  for (int j = 0; j < s.rank; ++j) s.size[j] = vm.size[j];
  return s;
}

// The indexed dimension of row put p and its index node.
constexpr std::int32_t row_put_dim(const ir& g, std::int32_t p, std::int32_t* index_node = nullptr) {
  const node& pn = g.nodes[static_cast<std::size_t>(p)];
  for (std::int32_t k = 2; k < pn.nargs; ++k)
    if (const std::int32_t a = g.args[static_cast<std::size_t>(pn.arg0 + k)]; a >= 0) {
      if (index_node) *index_node = a;
      return k - 2;
    }
  return -1;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
