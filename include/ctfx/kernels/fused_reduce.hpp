// ctfx/kernels/fused_reduce.hpp — a sum, amax, amin or mean whose input is computed by a fused group
// (plan/fusion.hpp's is_fusible_reduction): the group's values are folded into the outputs as they
// are computed, so the reduction's input is never written to memory.
//
// The reduced dimensions are the input's last ones, so the values of output o are elements
// [o·n, (o+1)·n) of the input in row-major order, the order the group computes them in. Each output
// folds them in kernels/reduce.hpp's order (fold_acc), so the results are the same bits as the
// unfused reduction's. On the host, the group computes its values chunk by chunk straight into a
// tile; the outputs complete in the tile fold from it (a sum's 32 lanes a vectorized loop's
// accumulators), and an output longer than the tile folds its chunks as they come.
// On CUDA a warp folds each output (warp_fold.hpp), evaluating the group element by element.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstring>
#include "fused.hpp"
#include "reduce.hpp"

namespace ctfx::kernels {

// What a reduction does with its values: the fold (sum, max or min), and a mean's divisor (0: none).
struct fold_spec {
  fold_op fold = fold_op::sum;
  double divisor = 0;
};

// The outputs of a reduction, in row-major order: one odometer step per output.
struct output_cursor {
  strided out;
  index_t idx[max_rank]{};
  index_t off = 0;
  CTFX_HD output_cursor(const strided& o, index_t first) : out(o) {
    for (int d = out.rank - 1; d >= 0; --d) {
      idx[d] = first % out.size[d];
      first /= out.size[d];
      off += idx[d] * out.stride[d];
    }
  }
  CTFX_HD void next() {
    for (int d = out.rank - 1; d >= 0; --d) {
      off += out.stride[d];
      if (++idx[d] < out.size[d]) return;
      off -= out.stride[d] * out.size[d];
      idx[d] = 0;
    }
  }
};

// The end of output o's fold: a mean's division, then the store.
template <dtype O, class C>
CTFX_HD inline void store_fold(const strided& out, index_t o, C acc, double divisor) {
  store_result<O>(reinterpret_cast<element_t<O>*>(out.p) + output_cursor(out, o).off, acc, divisor);
}

// Folds a stream of values of dtype S (each output's n values in a row) into outputs of dtype O.
template <dtype S, dtype O>
struct fold_sink {
  using C = compute_t<O>;
  using E = element_t<S>;
  static constexpr index_t tile_size = 8192;  // eight outputs of 1,024 values (32 KiB of f32)

  fold_spec spec;
  index_t n;  // values per output, > 0
  output_cursor at;
  alignas(64) E tile[tile_size];
  index_t have = 0;  // values in the tile (n <= tile_size)
  fold_acc<C> acc;   // n > tile_size: the current output's fold so far

  fold_sink(fold_spec s, index_t values_per_output, const strided& out, index_t first_output)
      : spec(s), n(values_per_output), at(out, first_output), acc(s.fold) {}

  void finish(const fold_acc<C>& a) {
    store_result<O>(reinterpret_cast<element_t<O>*>(at.out.p) + at.off, a.result(), spec.divisor);
    at.next();
  }

  // Folds the outputs complete in the tile; keeps the values of the next one.
  void drain() {
    const index_t outs = have / n;
    for (index_t o = 0; o < outs; ++o) {
      fold_acc<C> a(spec.fold);
      a.template add_run<S>(tile + o * n, n);
      finish(a);
    }
    const index_t left = have - outs * n;
    if (left > 0) std::memmove(tile, tile + outs * n, static_cast<std::size_t>(left) * sizeof(E));
    have = left;
  }

  // Where the next m <= fused_chunk values go: the tile (folding the outputs complete in it first
  // when it has no room), or, for outputs longer than the tile, its start as a scratch.
  E* reserve(index_t m) {
    if (n > tile_size) return tile;
    if (have + m > tile_size) drain();
    return tile + have;
  }
  // The m values written where reserve() said are in.
  void commit(index_t m) {
    if (n <= tile_size) {
      have += m;
      return;
    }
    const E* p = tile;  // one output spans many chunks: fold them as they come
    while (m > 0) {
      const index_t t = m < n - acc.count ? m : n - acc.count;
      acc.template add_run<S>(p, t);
      p += t;
      m -= t;
      if (acc.count == n) {
        finish(acc);
        acc = fold_acc<C>(spec.fold);
      }
    }
  }
  // Folds what is left (every output is complete once all values are in).
  void close() {
    if (have > 0) drain();
  }
  static void* reserve_erased(void* self, index_t m) { return static_cast<fold_sink*>(self)->reserve(m); }
  static void commit_erased(void* self, index_t m) { static_cast<fold_sink*>(self)->commit(m); }
  chunk_sink erased() { return {this, &reserve_erased, &commit_erased}; }
};

// On the OMP backend: part(kernel, first output) per thread, each over its share of the domain's
// first dimension of extent above 1 when the reduction keeps it (its outputs are then a
// contiguous run of the row-major outputs, its values the matching run of the group's loop).
// False: nothing ran (another backend, a full reduction, or too small to be worth threads).
template <class K, class Part>
bool split_outputs_for_threads(const device_ctx& ctx, const K& k, index_t outputs, Part&& part) {
#if defined(_OPENMP)
  if (ctx.where != backend::omp || outputs < 2 || k.out.numel() < (index_t{1} << 15)) return false;
  int d = 0;
  while (d < k.out.rank && k.out.size[d] == 1) ++d;
  if (d == k.out.rank || outputs % k.out.size[d] != 0) return false;
  const index_t extent = k.out.size[d], per_index = outputs / extent;
  // (dimension d is kept: reducing it would reduce every dimension after it, leaving one output)
#pragma omp parallel
  {
    const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
    const index_t a = extent * t / T, b = extent * (t + 1) / T;
    if (b > a) {
      K kt = k;
      kt.out.size[d] = b - a;
      for (int l = 0; l < k.n_leaves; ++l) kt.leaf[l].p += a * k.leaf[l].stride[d] * size_of(k.leaf[l].dt);
      for (int l = 0; l < k.n_leaves; ++l) kt.leaf[l].size[d] = b - a;
      part(static_cast<const K&>(kt), a * per_index);
    }
  }
  return true;
#else
  (void)ctx;
  (void)k;
  (void)outputs;
  (void)part;
  return false;
#endif
}

// The fold on CUDA (warp_fold.hpp): the group evaluated at each of the output's values, by the
// output's warp (source, value, store) or, for short folds, its thread (operator()).
template <dtype S, dtype O>
struct fused_fold_fn {
  using C = compute_t<O>;
  fused_elem_fn group;  // its k.out: the loop domain (the reduction's input), never written
  strided out;
  fold_spec spec;
  index_t n;
  CTFX_HD fold_start source(index_t o) const { return fold_start_of(group.nest, group.k.n_leaves + 1, o * n, n); }
  CTFX_HD C value(const fold_start& s, index_t r) const {
    index_t off[max_fused_leaves + 1];
    fold_value_offsets(group.nest, group.k.n_leaves + 1, s, r, off);
    alignas(8) std::byte v[8];
    group.value_at(off, v);
    return load_as<S, C>(reinterpret_cast<const element_t<S>*>(v));
  }
  // Values r, r + step, ... (m <= per_dispatch) at once where the output's values lie in one row of
  // the nest (each operand then a stride apart): the group's ops dispatched once for them.
  static constexpr int per_dispatch = fused_row_fn::per_dispatch;
  CTFX_HD void values(const fold_start& s, index_t r, index_t step, int m, C* x) const {
    if (!s.in_row) {
      for (int t = 0; t < m; ++t) x[t] = value(s, r + t * step);
      return;
    }
    const fused_kernel& k = group.k;
    const std::byte* leafp[max_fused_leaves];
    index_t lstep[max_fused_leaves];
    for (int l = 0; l < k.n_leaves; ++l) {
      const index_t bytes = size_of(k.leaf[l].dt), stride = group.nest.istride[l + 1];
      leafp[l] = k.leaf[l].p + (s.off[l + 1] + r * stride) * bytes;
      lstep[l] = step * stride * bytes;
    }
    alignas(8) std::byte v[per_dispatch][8];
    group.values_at<per_dispatch>(leafp, lstep, m, v);
    for (int t = 0; t < m; ++t) x[t] = load_as<S, C>(reinterpret_cast<const element_t<S>*>(v[t]));
  }
  CTFX_HD void store(index_t o, C v) const { store_fold<O>(out, o, v, spec.divisor); }
  CTFX_HD void operator()(index_t o) const { fold_in_thread<C>(*this, o, n, spec.fold); }
};

// The reduction `out` of the group k over its domain's last dimensions: k.out describes the
// domain (the input's extents; k.out.p unused); each output folds total / outputs values (the
// product of the reduced extents). Outputs that fold no value are 0, as in kernels::reduce (a
// mean's 0 / 0 is the caller's: it fills NaN without running the group).
inline void run_fused_reduce(const device_ctx& ctx, const fused_kernel& k, const strided& out, fold_spec spec) {
  const index_t outputs = out.numel();
  if (outputs == 0) return;
  const index_t total = k.out.numel();
  const index_t n = total / outputs;
  if (total == 0) {
    fill(ctx, out, 0.0);
    return;
  }
  visit_fold_dtypes(k.out.dt, out.dt, [&](auto sd, auto od) {
    constexpr dtype S = decltype(sd)::value, O = decltype(od)::value;
    if constexpr (device_kernels_compiled) {
      if (runs_device_kernels(ctx)) {
        fold_outputs_on_device<compute_t<O>>(ctx, fused_fold_fn<S, O>{fused_elem_fn{k}, out, spec, n}, outputs, n, spec.fold);
        return;
      }
    }
    auto part = [&](const fused_kernel& kt, index_t o0) {
      const fused_nest nest = make_nest(kt);
      fold_sink<S, O> sink(spec, n, out, o0);
      const chunk_sink s = sink.erased();
      run_fused_rows(kt, nest, 0, nest.rows, &s);
      sink.close();
    };
    if (!split_outputs_for_threads(ctx, k, outputs, part)) part(k, 0);
  });
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
