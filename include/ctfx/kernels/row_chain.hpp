// ctfx/kernels/row_chain.hpp — consecutive steps of a compile-time plan run row by row
// (plan/row_chain.hpp): for each row of their common [rows, n] domain, every step in turn, each an
// elementwise group's row (static_group::row) or a reduction's fold of one row into its output
// (fold_acc, the order kernels/reduce.hpp folds a row in, so the bits are the unchained ones).
// The whole walk runs inside one on_host_isa body. Host only; on CUDA, or when a run's layouts are
// not row-local (see run), the caller runs the steps one by one.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
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

  template <class View>
  bool prepare(View&& view, index_t rows, index_t cols, row_spans& spans) {
    const fused_kernel k = G::map_kernel(view);
    if (k.out.rank != 2 || k.out.size[0] != rows || k.out.size[1] != cols) return false;
    d = reinterpret_cast<E*>(k.out.p);
    d_row = k.out.stride[0];
    d_inner = k.out.stride[1];
    n = cols;
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

// A sum, amax or mean over the last dimension: row r of its input folded into its output r.
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

  template <class View>
  bool prepare(View&& view, index_t rows, index_t cols, row_spans& spans) {
    const strided in = view(A), out = view(I);
    if (in.rank != 2 || in.size[0] != rows || in.size[1] != cols || in.stride[1] != 1 || cols == 0) return false;
    if (out.numel() != rows || out.rank < 1 || out.rank > 2) return false;
    x = reinterpret_cast<const element_t<S>*>(in.p);
    o = reinterpret_cast<element_t<O>*>(out.p);
    x_row = in.stride[0];
    o_row = out.stride[0];
    n = cols;
    divisor = K == op_kind::mean ? static_cast<double>(cols) : 0.0;
    strided o2 = out;  // as [rows, 1]
    o2.rank = 2;
    o2.size[1] = 1;
    o2.stride[1] = 1;
    spans.add(in, false);
    spans.add(o2, true);
    return true;
  }
  CTFX_INLINE void row(index_t r) {
    fold_acc<C> a(K == op_kind::amax);
    a.template add_run<S>(x + r * x_row, n);
    store_result<O>(o + r * o_row, a.result(), divisor);
  }
};

template <class GV, std::int32_t I>
using row_chain_step = std::conditional_t<is_reduction(GV::nodes()[static_cast<std::size_t>(I)].op), row_chain_fold<GV, I>,
                                          row_chain_map<GV, I>>;

template <class GV, std::int32_t... Is>
struct static_row_chain {
  static constexpr std::size_t N = sizeof...(Is);
  using steps = std::tuple<row_chain_step<GV, Is>...>;
  template <class F>
  CTFX_INLINE static void each(F&& f) { for_each_index<N>(f); }

  // Runs the steps row by row and returns true, or returns false having run nothing (CUDA, an
  // empty domain, a layout the row walk does not take, or an overlap that is not row-local).
  template <class View>
  CTFX_VECTORIZE static bool run(const device_ctx& ctx, View&& view) {
    if (ctx.where == backend::cuda) return false;
    constexpr std::int32_t ids[] = {Is...};
    using head = row_chain_step<GV, ids[0]>;  // its domain: a fold's input, a map's result
    constexpr std::int32_t domain = [] {
      if constexpr (requires { head::A; }) return head::A;
      else return ids[0];
    }();
    const strided dom = view(domain);
    if (dom.rank != 2 || dom.size[0] < 1 || dom.size[1] < 1) return false;
    const index_t rows = dom.size[0], cols = dom.size[1];
    steps st;
    row_spans spans;
    bool ok = true;
    each([&](auto i) { ok = ok && std::get<i>(st).prepare(view, rows, cols, spans); });
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
