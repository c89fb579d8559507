// ctfx/kernels/row_chain.hpp — consecutive steps of a compile-time plan run row by row
// (plan/row_chain.hpp): for each row of their common rows, every step in turn, each an elementwise
// group's row (static_group::row, over n values or one) or a reduction's fold of one row into its
// output, of a row in memory or of a fused group's values computed for it (fold_acc, the order
// kernels/reduce.hpp folds a row in, so the bits are the unchained ones). A chain of elementwise
// groups only (several stores per element: an optimizer's updates) runs block by block instead,
// each block (about 16 KiB of what the steps touch) through every step while it is in L1.
// Tensors of any rank are seen as [rows, n]: their leading dimensions collapsed into the rows (or,
// for an elementwise chain, every dimension into one row cut in blocks) where their strides allow.
// The whole walk runs inside one on_host_isa body. Host only; on CUDA the steps run one by one, and
// where a run's layouts are not row-local (see run) the chain is split.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>
#include <tuple>
#include <utility>
#include "fused_static.hpp"
#include "reduce.hpp"

#ifndef CTFX_ROW_CHAIN_BLOCK_BYTES
#define CTFX_ROW_CHAIN_BLOCK_BYTES 16384
#endif
#ifndef CTFX_ROW_CHAIN_MIN_ELEMENTS
#define CTFX_ROW_CHAIN_MIN_ELEMENTS 1024
#endif

namespace ctfx::kernels {

// A chain's tensor as the rank-2 [rows, n] its walk takes: the first `lead` dimensions collapsed into
// the rows, the last one the row (a view of rank `lead`, a reduction's output without its kept
// dimension, gets a last dimension of 1); `flat`: every dimension into one row [1, numel]. False
// where the strides do not collapse (a view broadcast along some rows only, a transposed one).
inline bool chain_rows(const strided& v, int lead, bool flat, strided& o) {
  if (v.rank < lead || v.rank > lead + 1 || (flat && v.rank != lead + 1)) return false;
  const int k = flat ? v.rank : lead;  // the dimensions collapsed
  index_t count = 1, st = 0, next = 0;
  bool any = false;
  for (int d = k - 1; d >= 0; --d) {  // inner to outer, size-1 dimensions skipped
    count *= v.size[d];
    if (v.size[d] == 1) continue;
    if (any && v.stride[d] != next) return false;
    if (!any) st = v.stride[d];
    any = true;
    next = v.stride[d] * v.size[d];
  }
  o = v;
  o.rank = 2;
  if (flat) {
    o.size[0] = 1, o.stride[0] = 0, o.size[1] = count, o.stride[1] = st;
    return true;
  }
  o.size[0] = count, o.stride[0] = st;
  o.size[1] = v.rank > lead ? v.size[lead] : 1;
  o.stride[1] = v.rank > lead ? v.stride[lead] : 1;
  return true;
}

// The byte ranges a chain's steps read and write, and the check that each overlap between a write
// and anything else is row-local: the same base and row step, every row within its step (and, for
// elementwise chains run block by block, the same element step: element e read where it is written).
template <int Capacity>
struct row_spans_of {
  struct span {
    const std::byte *lo, *hi, *base;  // [lo, hi): every byte the view may touch
    index_t step, width, inner;       // bytes from row r to row r + 1; bytes a row spans; from element to element
    bool writes;
  };
  static constexpr int capacity = Capacity;
  span s[capacity];
  int n = 0;
  bool overflow = false;

  // A rank-2 view [rows, n] (strides in elements, any sign). One row: a row step no overlap reaches.
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
    const index_t step = v.size[0] == 1 ? index_t{1} << 60 : v.stride[0] * es;
    s[n++] = {v.p + lo * es, v.p + (hi + 1) * es, v.p, step, ((v.size[1] - 1) * w + 1) * es, v.stride[1] * es, writes};
  }
  bool pair_local(const span& a, const span& b, bool elementwise) const {
    if (!(a.lo < b.hi && b.lo < a.hi)) return true;
    const bool same_rows = a.base == b.base && a.step == b.step && a.step > 0 && a.width <= a.step && b.width <= b.step;
    return same_rows && (!elementwise || (a.inner == b.inner && a.inner != 0));
  }
  // Whether spans [from, end) are row-local among themselves, given that [from, added) are: the
  // pairs with one of [added, end) (a step added to a chain's run).
  bool fits(int from, int added, int end, bool elementwise) const {
    if (overflow) return false;
    for (int i = added; i < end; ++i)
      for (int j = from; j < end; ++j)
        if (i != j && (s[i].writes || s[j].writes) && !pair_local(s[i], s[j], elementwise)) return false;
    return true;
  }
  bool row_local(bool elementwise = false) const { return fits(0, 0, n, elementwise); }
};
/// The spans of a chain of up to four steps of a fused group's full width.
using row_spans = row_spans_of<4 * (max_fused_leaves + 1)>;

// An elementwise group's rows: its destination's and operands' row starts, each advanced by its
// row step; the row itself is static_group::row (the inner loop the unchained group runs), whole
// (len 0) or columns [c0, c0 + len) of it (an elementwise chain's block).
template <class GV, std::int32_t I>
struct row_chain_map {
  using G = static_group<GV, I>;
  using E = element_t<G::out_dt>;
  E* d = nullptr;
  index_t d_row = 0, d_inner = 1, n = 0;
  leaf_ptrs p{};
  index_t step[max_fused_leaves > 0 ? max_fused_leaves : 1]{}, col[max_fused_leaves > 0 ? max_fused_leaves : 1]{};
  bool unit = false;

  template <class View, class Domain, class Spans>
  bool prepare(View&& view, Domain&&, index_t rows, int lead, bool flat, Spans& spans) {
    const fused_operands k = G::map_kernel(view);
    strided o;
    if (!chain_rows(k.out, lead, flat, o) || o.size[0] != rows || o.size[1] < 1) return false;
    d = reinterpret_cast<E*>(o.p);
    d_row = o.stride[0];
    d_inner = o.stride[1];
    n = o.size[1];  // the chain's n, or 1: a value per row
    unit = d_inner == 1;
    for (int l = 0; l < G::leaves.n; ++l) {
      strided x;
      if (!chain_rows(k.leaf[l], lead, flat, x)) return false;
      p.p[l] = x.p;
      p.st[l] = x.stride[1];
      step[l] = x.stride[0] * size_of(x.dt);
      col[l] = x.stride[1] * size_of(x.dt);
      unit = unit && p.st[l] == (((G::row_broadcast >> l) & 1u) != 0 ? 0 : 1);
      spans.add(x, false);
    }
    spans.add(o, true);
    return true;
  }
  CTFX_INLINE void row(index_t r, index_t c0, index_t len) {
    leaf_ptrs q = p;
    for (int l = 0; l < G::leaves.n; ++l) q.p[l] += r * step[l] + c0 * col[l];
    G::row(d + r * d_row + c0 * d_inner, d_inner, q, len == 0 || n == 1 ? n : len, unit);
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

  template <class View, class Domain, class Spans>
  bool prepare(View&& view, Domain&&, index_t rows, int lead, bool flat, Spans& spans) {
    strided in, out;
    if (flat || !chain_rows(view(A), lead, false, in) || !chain_rows(view(I), lead, false, out)) return false;
    if (in.size[0] != rows || in.stride[1] != 1 || in.size[1] < 1 || out.size[0] != rows || out.size[1] != 1) return false;
    x = reinterpret_cast<const element_t<S>*>(in.p);
    o = reinterpret_cast<element_t<O>*>(out.p);
    x_row = in.stride[0];
    o_row = out.stride[0];
    n = in.size[1];
    divisor = K == op_kind::mean ? static_cast<double>(n) : 0.0;
    spans.add(in, false);
    spans.add(out, true);
    return true;
  }
  CTFX_INLINE void row(index_t r, index_t, index_t) {
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

  template <class View, class Domain, class Spans>
  bool prepare(View&& view, Domain&& domain_of, index_t rows, int lead, bool flat, Spans& spans) {
    const strided dom = domain_of(G::domain);
    strided out;
    if (flat || dom.rank != lead + 1 || dom.size[lead] < 1 || !chain_rows(view(I), lead, false, out) || out.size[0] != rows ||
        out.size[1] != 1)
      return false;
    o = reinterpret_cast<element_t<O>*>(out.p);
    o_row = out.stride[0];
    n = dom.size[lead];
    divisor = K == op_kind::mean ? static_cast<double>(n) : 0.0;
    unit = true;
    for (int l = 0; l < G::leaves.n; ++l) {
      strided leaf;
      if (!chain_rows(view(G::leaves.id[l]).broadcast_to(dom.rank, dom.size), lead, false, leaf) || leaf.size[0] != rows) return false;
      p.p[l] = leaf.p;
      p.st[l] = leaf.stride[1];
      step[l] = leaf.stride[0] * size_of(leaf.dt);
      unit = unit && p.st[l] == (((G::row_broadcast >> l) & 1u) != 0 ? 0 : 1);
      spans.add(leaf, false);
    }
    spans.add(out, true);
    return true;
  }
  CTFX_INLINE void row(index_t r, index_t, index_t) {
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
  static constexpr std::int32_t ids[sizeof...(Is)] = {Is...};  // (with its bound: clang 14 reads no element of an array of unknown bound in a constant expression)
  template <class F>
  CTFX_INLINE static void each(F&& f) { for_each_index<N>(f); }

  // Elementwise groups only, every one over the same last extent (no value per row): the chain
  // runs block by block, each block the same elements of every step.
  static constexpr bool elementwise = [] {
    const tensor_meta& m0 = GV::nodes()[static_cast<std::size_t>(ids[0])].meta;
    for (std::int32_t i : ids) {
      const tensor_meta& m = GV::nodes()[static_cast<std::size_t>(i)].meta;
      if (is_reduction(GV::nodes()[static_cast<std::size_t>(i)].op) || m.rank < 1 || m.rank != m0.rank ||
          !(m.size[m.rank - 1] == m0.size[m0.rank - 1]))
        return false;
    }
    return true;
  }();
  // Fewer elements than this: an elementwise chain's steps run alone (CTFX_ROW_CHAIN_MIN_ELEMENTS:
  // 1 runs every chain, as the fuzzer's compiled sample does to check the walk on small tensors).
  static constexpr index_t small_chain = CTFX_ROW_CHAIN_MIN_ELEMENTS;
  // The spans a chain's steps add: each step's operands and its destination.
  static constexpr int span_capacity = static_cast<int>(N) * (max_fused_leaves + 1);
  // A block of an elementwise chain: about 16 KiB of what its steps touch, so that what one step
  // stores is in L1 when the next reads it.
  static index_t block_of(const row_spans_of<span_capacity>& spans, int from, int end) {
    index_t bytes = 0;
    for (int k = from; k < end; ++k) {  // (a strided view touches a cache line per element at most)
      const index_t b = spans.s[k].inner < 0 ? -spans.s[k].inner : spans.s[k].inner;
      bytes += b < 64 ? b : 64;
    }
    const index_t b = bytes > 0 ? (index_t{CTFX_ROW_CHAIN_BLOCK_BYTES} / bytes) & ~index_t{63} : 4096;
    return b < 256 ? 256 : b > 8192 ? 8192 : b;
  }

  // Steps [a, b) row by row (len 0: whole rows), or block by block (len > 0: each row of n in
  // blocks of len), the rows, or blocks, split across OMP's threads.
  static void walk(const device_ctx& ctx, steps& st, std::size_t a, std::size_t b, index_t rows, index_t n, index_t len) {
    const index_t per_row = len == 0 ? 1 : (n + len - 1) / len, items = rows * per_row;
    auto part = [&](index_t i0, index_t i1) {
      isa::on_host_isa([&]() CTFX_ISA_BODY {
        for (index_t it = i0; it < i1; ++it) {
          const index_t r = it / per_row, c0 = (it - r * per_row) * len, m = len == 0 ? 0 : (n - c0 < len ? n - c0 : len);
          each([&](auto i) CTFX_ISA_BODY {
            if (i >= a && i < b) std::get<i>(st).row(r, c0, m);
          });
        }
      });
    };
#if defined(_OPENMP)
    if (ctx.where == backend::omp && items > 1) {
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        part(items * t / T, items * (t + 1) / T);
      }
      return;
    }
#else
    (void)ctx;
#endif
    part(0, items);
  }

  // Runs the steps: consecutive steps whose overlaps are row-local (block-local) row by row (block
  // by block) together, each other step alone by `alone(integral_constant i)` (its own kernel, as
  // unchained; all of them on CUDA, for an empty domain or a layout the walk does not take).
  // Returns false where a step alone does. `view(id)`: node id's bound tensor; `domain_of(id)`: the
  // extents of a value computed inside a group (a fused fold's values, no memory).
  template <class View, class Domain, class Alone>
  CTFX_VECTORIZE static bool run(const device_ctx& ctx, View&& view, Domain&& domain_of, Alone&& alone) {
    auto alone_from = [&](std::size_t a, std::size_t b) {
      bool ok = true;
      each([&](auto i) { ok = ok && (i < a || i >= b || alone(i)); });
      return ok;
    };
    if (runs_device_kernels(ctx)) return alone_from(0, N);
    using head = row_chain_step<GV, ids[0]>;  // its rows: a fold's input's, a map's result's
    constexpr std::int32_t domain = [] {
      if constexpr (requires { head::A; }) return head::A;
      else if constexpr (requires { head::G::domain; }) return head::G::domain;
      else return ids[0];
    }();
    const strided dom = domain_of(domain);
    // (an elementwise chain of a few elements: in L1 step by step too, and each kernel alone runs
    // its compile-time loop nest without the chain's checks)
    if (dom.rank < 1 || dom.numel() == 0 || (elementwise && dom.numel() < small_chain)) return alone_from(0, N);
    const int lead = dom.rank - 1;
    index_t rows = 1;
    for (int d = 0; d < lead; ++d) rows *= dom.size[d];
    steps st;
    row_spans_of<span_capacity> spans;
    int first[N + 1]{};
    auto prepare = [&](bool flat) {
      spans.n = 0;
      spans.overflow = false;
      bool ok = true;
      each([&](auto i) {
        first[i] = spans.n;
        ok = ok && std::get<i>(st).prepare(view, domain_of, flat ? 1 : rows, lead, flat, spans);
      });
      first[N] = spans.n;
      return ok;
    };
    bool flat = elementwise && prepare(true);  // every tensor one row, cut in blocks
    if (!flat && !prepare(false)) return alone_from(0, N);
    const index_t n = flat ? dom.numel() : dom.size[lead];
    for (std::size_t a = 0; a < N;) {  // the longest runs of steps that are row-local together
      std::size_t b = a + 1;
      while (b < N && spans.fits(first[a], first[b], first[b + 1], elementwise)) ++b;
      if (b == a + 1) {
        if (!alone_from(a, b)) return false;
      } else {
        walk(ctx, st, a, b, flat ? 1 : rows, n, elementwise ? block_of(spans, first[a], first[b]) : 0);
      }
      a = b;
    }
    return true;
  }
};

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
