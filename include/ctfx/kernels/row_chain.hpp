// ctfx/kernels/row_chain.hpp — consecutive steps of a compile-time plan run row by row
// (plan/row_chain.hpp): for each row of their common rows, every step in turn, each an elementwise
// group's row (static_group::row, over n values or one) or a reduction's fold of one row into its
// output, of a row in memory or of a fused group's values computed for it (fold_acc, the order
// kernels/reduce.hpp folds a row in, so the bits are the unchained ones).
// The whole walk runs inside one on_host_isa body. Host only; on CUDA, or when a run's layouts are
// not row-local (see run), the caller runs the steps one by one.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <tuple>
#include <utility>
#include "fused_static.hpp"
#include "reduce.hpp"

namespace ctfx::kernels {

// The byte ranges a chain's steps read and write, and the check that each overlap between a write
// and anything else is row-local: the same base and row step, every row within its step.
struct row_spans {
  struct span {
    const std::byte *lo, *hi, *base;  // [lo, hi): every byte the view may touch
    index_t step, width;              // bytes from row r to row r + 1; bytes a row spans
    bool writes;
  };
  static constexpr int capacity = 4 * (max_fused_leaves + 1);
  span s[capacity];
  int n = 0;
  bool overflow = false;

  // A rank-2 view [rows, n] (strides in elements, any sign).
  void add(const strided& v, bool writes) {
    if (n == capacity) {
      overflow = true;
      return;
    }
    const index_t es = size_of(v.dt);
    index_t lo = 0, hi = 0;
    for (int d = 0; d < 2; ++d) {
      const index_t reach = (v.size[d] - 1) * v.stride[d];
      (reach < 0 ? lo : hi) += reach;
    }
    const index_t w = v.stride[1] < 0 ? -v.stride[1] : v.stride[1];
    s[n++] = {v.p + lo * es, v.p + (hi + 1) * es, v.p, v.stride[0] * es, ((v.size[1] - 1) * w + 1) * es, writes};
  }
  bool row_local() const {
    if (overflow) return false;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (!s[i].writes || i == j || !(s[i].lo < s[j].hi && s[j].lo < s[i].hi)) continue;
        const bool same_rows = s[i].base == s[j].base && s[i].step == s[j].step && s[i].step > 0 && s[i].width <= s[i].step &&
                               s[j].width <= s[j].step;
        if (!same_rows) return false;
      }
    return true;
  }
};

// A reduction's outputs: one per row, rank 1 or 2 ([rows] or [rows, 1]); as the [rows, 1] view
// row_spans takes.
inline bool one_per_row(const strided& out, index_t rows) { return out.numel() == rows && out.rank >= 1 && out.rank <= 2; }
inline strided as_rows(const strided& out) {
  strided o = out;
  o.rank = 2;
  o.size[1] = 1;
  o.stride[1] = 1;
  return o;
}

// An elementwise group's rows: its destination's and operands' row starts, each advanced by its
// row step; the row itself is static_group::row (the inner loop the unchained group runs).
template <class GV, std::int32_t I>
struct row_chain_map {
  using G = static_group<GV, I>;
  using E = element_t<G::out_dt>;
  E* d = nullptr;
  index_t d_row = 0, d_inner = 1, n = 0;
  leaf_ptrs p{};
  index_t step[max_fused_leaves > 0 ? max_fused_leaves : 1]{};
  bool unit = false;

  template <class View, class Domain>
  bool prepare(View&& view, Domain&&, index_t rows, row_spans& spans) {
    const fused_operands k = G::map_kernel(view);
    if (k.out.rank != 2 || k.out.size[0] != rows || k.out.size[1] < 1) return false;
    d = reinterpret_cast<E*>(k.out.p);
    d_row = k.out.stride[0];
    d_inner = k.out.stride[1];
    n = k.out.size[1];  // the chain's n, or 1: a value per row
    unit = d_inner == 1;
    for (int l = 0; l < G::leaves.n; ++l) {
      p.p[l] = k.leaf[l].p;
      p.st[l] = k.leaf[l].stride[1];
      step[l] = k.leaf[l].stride[0] * size_of(k.leaf[l].dt);
      unit = unit && p.st[l] == (((G::row_broadcast >> l) & 1u) != 0 ? 0 : 1);
      spans.add(k.leaf[l], false);
    }
    spans.add(k.out, true);
    return true;
  }
  CTFX_INLINE void row(index_t r) {
    leaf_ptrs q = p;
    for (int l = 0; l < G::leaves.n; ++l) q.p[l] += r * step[l];
    G::row(d + r * d_row, d_inner, q, n, unit);
  }
};

// A sum, amax, amin or mean over the last dimension: row r of its input folded into its output r.
template <class GV, std::int32_t I>
struct row_chain_fold {
  // (values, not a reference to the node: nvcc's front end rejects a static constexpr reference
  // member of a class template as initialized twice)
  static constexpr op_kind K = GV::nodes()[static_cast<std::size_t>(I)].op;
  static constexpr std::int32_t A = GV::args()[static_cast<std::size_t>(GV::nodes()[static_cast<std::size_t>(I)].arg0)];
  static constexpr dtype O = GV::nodes()[static_cast<std::size_t>(I)].meta.dt;
  static constexpr dtype S = GV::nodes()[static_cast<std::size_t>(A)].meta.dt;
  using C = compute_t<O>;
  const element_t<S>* x = nullptr;
  element_t<O>* o = nullptr;
  index_t x_row = 0, o_row = 0, n = 0;
  double divisor = 0;

  template <class View, class Domain>
  bool prepare(View&& view, Domain&&, index_t rows, row_spans& spans) {
    const strided in = view(A), out = view(I);
    if (in.rank != 2 || in.size[0] != rows || in.stride[1] != 1 || in.size[1] < 1 || !one_per_row(out, rows)) return false;
    x = reinterpret_cast<const element_t<S>*>(in.p);
    o = reinterpret_cast<element_t<O>*>(out.p);
    x_row = in.stride[0];
    o_row = out.stride[0];
    n = in.size[1];
    divisor = K == op_kind::mean ? static_cast<double>(n) : 0.0;
    spans.add(in, false);
    spans.add(as_rows(out), true);
    return true;
  }
  CTFX_INLINE void row(index_t r) {
    fold_acc<C> a(fold_of(K));
    a.template add_run<S>(x + r * x_row, n);
    store_result<O>(o + r * o_row, a.result(), divisor);
  }
};

// A sum, amax, amin or mean over the last dimension of values a group computes (RMSNorm's mean of
// squares): row r of the group computed chunk by chunk into a buffer and folded from it in
// reduce.hpp's order (fold_acc: the unchained fused fold's bits), never stored.
template <class GV, std::int32_t I>
struct row_chain_fused_fold {
  using G = static_group<GV, I>;
  static constexpr op_kind K = GV::nodes()[static_cast<std::size_t>(I)].op;
  static constexpr dtype O = GV::nodes()[static_cast<std::size_t>(I)].meta.dt;
  using C = compute_t<O>;
  using E = element_t<G::out_dt>;  // the values' dtype: the reduction's input's
  leaf_ptrs p{};
  index_t step[max_fused_leaves > 0 ? max_fused_leaves : 1]{};
  element_t<O>* o = nullptr;
  index_t o_row = 0, n = 0;
  double divisor = 0;
  bool unit = false;

  template <class View, class Domain>
  bool prepare(View&& view, Domain&& domain_of, index_t rows, row_spans& spans) {
    const strided dom = domain_of(G::domain), out = view(I);
    if (dom.rank != 2 || dom.size[0] != rows || dom.size[1] < 1 || !one_per_row(out, rows)) return false;
    o = reinterpret_cast<element_t<O>*>(out.p);
    o_row = out.stride[0];
    n = dom.size[1];
    divisor = K == op_kind::mean ? static_cast<double>(n) : 0.0;
    unit = true;
    for (int l = 0; l < G::leaves.n; ++l) {
      const strided leaf = view(G::leaves.id[l]).broadcast_to(dom.rank, dom.size);
      p.p[l] = leaf.p;
      p.st[l] = leaf.stride[1];
      step[l] = leaf.stride[0] * size_of(leaf.dt);
      unit = unit && p.st[l] == (((G::row_broadcast >> l) & 1u) != 0 ? 0 : 1);
      spans.add(leaf, false);
    }
    spans.add(as_rows(out), true);
    return true;
  }
  CTFX_INLINE void row(index_t r) {
    leaf_ptrs q = p;
    for (int l = 0; l < G::leaves.n; ++l) q.p[l] += r * step[l];
    if constexpr (fold_of(K) == fold_op::sum) {
      if (unit) {  // a sum's values straight into its 32 lanes, as static_group::fold_direct adds them
        store_result<O>(o + r * o_row, G::template sum_in_lanes<C>(q, n), divisor);
        return;
      }
    }
    fold_acc<C> a(fold_of(K));
    alignas(64) E buf[fused_chunk];
    for (index_t c0 = 0; c0 < n; c0 += fused_chunk) {
      const index_t len = n - c0 < fused_chunk ? n - c0 : fused_chunk;
      leaf_ptrs qc = q;
      for (int l = 0; l < G::leaves.n; ++l) qc.p[l] += c0 * q.st[l] * size_of(GV::nodes()[static_cast<std::size_t>(G::leaves.id[l])].meta.dt);
      if (unit) G::template inner_loop<typename G::dense_access>(buf, 1, qc, len);
      else G::template inner_loop<strided_access>(buf, 1, qc, len);
      a.template add_run_loop<G::out_dt>(buf, len);
    }
    store_result<O>(o + r * o_row, a.result(), divisor);
  }
};

template <class GV, std::int32_t I>
using row_chain_step =
    std::conditional_t<!is_reduction(GV::nodes()[static_cast<std::size_t>(I)].op), row_chain_map<GV, I>,
                       std::conditional_t<(GV::members(I) > 0), row_chain_fused_fold<GV, I>, row_chain_fold<GV, I>>>;

template <class GV, std::int32_t... Is>
struct static_row_chain {
  static constexpr std::size_t N = sizeof...(Is);
  using steps = std::tuple<row_chain_step<GV, Is>...>;
  template <class F>
  CTFX_INLINE static void each(F&& f) { for_each_index<N>(f); }

  // Runs the steps row by row and returns true, or returns false having run nothing (CUDA, an
  // empty domain, a layout the row walk does not take, or an overlap that is not row-local).
  // `view(id)`: node id's bound tensor; `domain_of(id)`: the extents of a value computed inside a
  // group (a fused fold's values, no memory).
  template <class View, class Domain>
  CTFX_VECTORIZE static bool run(const device_ctx& ctx, View&& view, Domain&& domain_of) {
    if (runs_device_kernels(ctx)) return false;
    constexpr std::int32_t ids[] = {Is...};
    using head = row_chain_step<GV, ids[0]>;  // its rows: a fold's input's, a map's result's
    constexpr std::int32_t domain = [] {
      if constexpr (requires { head::A; }) return head::A;
      else if constexpr (requires { head::G::domain; }) return head::G::domain;
      else return ids[0];
    }();
    const strided dom = domain_of(domain);
    if (dom.rank != 2 || dom.size[0] < 1) return false;
    const index_t rows = dom.size[0];
    steps st;
    row_spans spans;
    bool ok = true;
    each([&](auto i) { ok = ok && std::get<i>(st).prepare(view, domain_of, rows, spans); });
    if (!ok || !spans.row_local()) return false;
    auto part = [&](index_t r0, index_t r1) {
      isa::on_host_isa([&]() CTFX_ISA_BODY {
        for (index_t r = r0; r < r1; ++r) each([&](auto i) CTFX_ISA_BODY { std::get<i>(st).row(r); });
      });
    };
#if defined(_OPENMP)
    if (ctx.where == backend::omp && rows > 1) {
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        part(rows * t / T, rows * (t + 1) / T);
      }
      return true;
    }
#endif
    part(0, rows);
    return true;
  }
};

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
