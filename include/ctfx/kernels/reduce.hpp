// ctfx/kernels/reduce.hpp — sum, amax, amin and mean over any set of dimensions, in one fixed order on
// every backend, so host and CUDA results, and every run, are bit-identical (not a tree whose shape
// depends on the launch or the CPU's vector width):
//   - amax (amin) folds each output's elements in row-major order of the reduced dimensions (the
//     first NaN is the result; of equal values the first is kept);
//   - a sum (and mean's sum) whose outputs each fold a run of consecutive elements of the input in
//     row-major order (the reduced dimensions are its last ones: a row sum, a full sum) deals the
//     run to 32 lanes round-robin (element r to lane r mod 32), each lane a sequential chain of adds
//     from 0, then adds the lanes in order, lane 0 + lane 1 + ... + lane 31. On the host the lanes
//     are a vector loop's accumulators at any vector width; on CUDA, a warp's. Up to 32 elements
//     this is the sequential sum (torch eager's CPU sum is that for rows of up to 4 elements only);
//   - any other sum (over outer dimensions: neighbouring outputs vectorize instead) adds each
//     output's elements sequentially from 0 in row-major order;
//   - a product (prod) whose outputs each fold one unit-stride run is PyTorch's CPU kernel's order
//     (prod_run); any other multiplies sequentially in row-major order, as PyTorch's outer
//     reduction does.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include "../core/isa.hpp"
#include "pointwise.hpp"
#include "warp_fold.hpp"
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace ctfx::kernels {

// Advances the odometer over out's first `dims` dimensions: the output's and the input's offsets.
inline void next_output(const strided& out, const strided& kept, int dims, index_t* idx, index_t& ooff, index_t& koff) {
  for (int d = dims - 1; d >= 0; --d) {
    ooff += out.stride[d];
    koff += kept.stride[d];
    if (++idx[d] < out.size[d]) break;
    ooff -= out.stride[d] * out.size[d];
    koff -= kept.stride[d] * out.size[d];
    idx[d] = 0;
  }
}

// Sets the odometer over out's first `dims` dimensions to position o (once per thread's range).
inline void seek_output(const strided& out, const strided& kept, int dims, index_t o, index_t* idx, index_t& ooff, index_t& koff) {
  ooff = koff = 0;
  for (int d = dims - 1; d >= 0; --d) {
    idx[d] = o % out.size[d];
    o /= out.size[d];
    ooff += idx[d] * out.stride[d];
    koff += idx[d] * kept.stride[d];
  }
}

// The reduced dimensions with those contiguous with each other collapsed (row-major order kept).
struct reduced_dims {
  index_t size[max_rank], stride[max_rank];
  int rank = 0;
  index_t n = 1;  // elements folded into each output
  CTFX_HD explicit reduced_dims(const strided& red) {
    for (int d = 0; d < red.rank; ++d) {
      if (red.size[d] == 1) continue;
      if (rank > 0 && stride[rank - 1] == red.stride[d] * red.size[d]) {
        size[rank - 1] *= red.size[d];
        stride[rank - 1] = red.stride[d];
      } else {
        size[rank] = red.size[d];
        stride[rank++] = red.stride[d];
      }
    }
    for (int d = 0; d < rank; ++d) n *= size[d];
  }
  // One unit-stride run per output (a sum over the last dimension, say).
  CTFX_HD bool unit_run() const { return rank == 0 || (rank == 1 && stride[0] == 1); }
  CTFX_HD void next(index_t* idx, index_t& off) const {
    for (int d = rank - 1; d >= 0; --d) {
      off += stride[d];
      if (++idx[d] < size[d]) break;
      off -= stride[d] * size[d];
      idx[d] = 0;
    }
  }
};

// The dtype pairs reductions run with (ops/reductions.hpp makes no others): the input's dtype, or
// an integer sum into int64. f(S, O) as integral constants.
template <class F>
void visit_fold_dtypes(dtype s, dtype o, F&& f) {
  if (s == o) {
    visit_dtype(s, [&](auto d) { f(d, d); });
  } else if (o == dtype::i64 && s == dtype::b8) {
    f(std::integral_constant<dtype, dtype::b8>{}, std::integral_constant<dtype, dtype::i64>{});
  } else if (o == dtype::i64 && s == dtype::i8) {
    f(std::integral_constant<dtype, dtype::i8>{}, std::integral_constant<dtype, dtype::i64>{});
  } else if (o == dtype::i64 && s == dtype::i32) {
    f(std::integral_constant<dtype, dtype::i32>{}, std::integral_constant<dtype, dtype::i64>{});
  }
}

// The amax (Min: amin) of n > 0 floats as the fold computes it, on integer keys that order floats
// as `<` does (an amin's keys complemented, so the largest key is still the answer): a loop
// compilers vectorize (a float compare is not, under g++'s default -ftrapping-math). Where keys
// cannot tell the fold's answer — a NaN (the first is the result), a maximum of +0 or a minimum
// of -0 (the other zero may have come first) — it returns false and the caller folds. Always
// inlined: its one caller, add_run, is compiled once per ISA level, and an out-of-line copy would
// run at the build's baseline.
template <bool Min>
CTFX_INLINE bool extremum_by_keys(const float* p, index_t n, float& out) {
  std::int32_t best = INT32_MIN, nan = 0;
  for (index_t r = 0; r < n; ++r) {
    const std::int32_t u = __builtin_bit_cast(std::int32_t, p[r]);
    const std::int32_t key = (u ^ ((u >> 31) & 0x7fffffff)) ^ (Min ? -1 : 0);
    best = key > best ? key : best;
    nan |= static_cast<std::int32_t>((u & 0x7fffffff) > 0x7f800000);
  }
  const std::int32_t key = best ^ (Min ? -1 : 0);
  const std::int32_t bits = key ^ ((key >> 31) & 0x7fffffff);
  out = __builtin_bit_cast(float, bits);
  return nan == 0 && bits != (Min ? INT32_MIN : 0);
}

// The lanes a sum deals its elements to (the order above): on CUDA, a warp's (warp_fold.hpp).
inline constexpr int sum_lanes = warp_lanes;

// Whether each output of reducing `in` over `dims` (bit d) folds a run of consecutive elements of
// the input in row-major order: no kept dimension of extent above 1 after a reduced one.
inline bool folds_runs(const strided& in, unsigned dims) {
  bool reduced = false;
  for (int d = 0; d < in.rank; ++d) {
    if (in.size[d] == 1) continue;
    if (dims & (1u << d)) reduced = true;
    else if (reduced) return false;
  }
  return true;
}

// PyTorch's CPU product of one unit-stride run p[0, n) (binary_kernel_reduce_vec's inner
// reduction at AVX2 width, its default): 4 vectors of W = 32 bytes / sizeof(C) lanes, L = 4W in
// all, lane l multiplying elements l, l + L, ... of the whole rounds of L (from its first, no 1);
// then each lane j < W combined as (v0 * v1) * (v2 * v3) of the 4 vectors, those W values
// multiplied in order, and the rest of the run multiplied on sequentially. Under L elements this is
// the sequential product; the product of nothing is 1. Integers wrap (any order gives the same).
template <dtype S, class C>
CTFX_HD inline C prod_run(const element_t<S>* p, index_t n) {
  constexpr int W = static_cast<int>(32 / sizeof(C)), L = 4 * W;
  C out = C(1);
  const index_t rounds = n / L;
  if (rounds > 0) {
    C acc[L];
    for (int l = 0; l < L; ++l) acc[l] = load_as<S, C>(p + l);
    for (index_t i = 1; i < rounds; ++i)
      for (int l = 0; l < L; ++l) acc[l] = wrap_mul(acc[l], load_as<S, C>(p + i * L + l));
    C b = wrap_mul(wrap_mul(acc[0], acc[W]), wrap_mul(acc[2 * W], acc[3 * W]));
    for (int j = 1; j < W; ++j) b = wrap_mul(b, wrap_mul(wrap_mul(acc[j], acc[W + j]), wrap_mul(acc[2 * W + j], acc[3 * W + j])));
    out = wrap_mul(out, b);
  }
  for (index_t k = rounds * L; k < n; ++k) out = wrap_mul(out, load_as<S, C>(p + k));
  return out;
}

// One output's fold in progress, `count` values in: a maximum or minimum (lane[0]), a sequential
// sum (lane[0]) or a sum's 32 lanes. Lanes start at +0 and so never hold -0 (+0 + -0 is +0), which makes adding
// a lane no value reached an exact identity: result() adds only the lanes that were reached.
template <class C>
struct fold_acc {
  fold_op op = fold_op::sum;
  bool lanes = true;  // a sum over runs (folds_runs): the 32 lanes; else sequential
  index_t count = 0;
  C lane[sum_lanes];

  CTFX_HD explicit fold_acc(fold_op f, bool in_lanes = true) : op(f), lanes(in_lanes && f == fold_op::sum) {
    for (int l = 0; l < sum_lanes; ++l) lane[l] = C(0);
  }
  CTFX_HD void add(C v) {
    if (op == fold_op::prod) lane[0] = count == 0 ? v : wrap_mul(lane[0], v);
    else if (op != fold_op::sum) lane[0] = count == 0 ? v : fold_extremum(op, lane[0], v);
    else if (!lanes) lane[0] = wrap_add(lane[0], v);
    else lane[lane_of(count)] = wrap_add(lane[lane_of(count)], v);
    ++count;
  }
  // The lane value number k goes to.
  CTFX_HD static int lane_of(index_t k) { return static_cast<int>(static_cast<std::uint64_t>(k) % sum_lanes); }
  // Adds p[0, m), of dtype S: whole rounds of 32 as a loop over the lanes (it vectorizes), an f32
  // maximum or minimum by integer keys where they decide it.
  template <dtype S>
  CTFX_VECTORIZE void add_run(const element_t<S>* p, index_t m) {
    isa::on_host_isa([&]() CTFX_ISA_BODY { add_run_loop<S>(p, m); });
  }
  template <dtype S>
  CTFX_INLINE void add_run_loop(const element_t<S>* p, index_t m) {
    index_t r = 0;
    if (op != fold_op::sum) {
      if constexpr (S == dtype::f32 && std::is_same_v<C, float>) {
        if (op == fold_op::prod) {  // a sequential product (a run's is prod_run: reduce_each)
          for (; r < m; ++r) add(load_as<S, C>(p + r));
          return;
        }
        C best;  // a run without a NaN whose answer is not a zero the other zero may precede: exactly it
        if (m > 0 && (op == fold_op::min ? extremum_by_keys<true>(p, m, best) : extremum_by_keys<false>(p, m, best))) {
          lane[0] = count == 0 ? best : fold_extremum(op, lane[0], best);
          count += m;
          return;
        }
      }
      for (; r < m; ++r) add(load_as<S, C>(p + r));
      return;
    }
    if (!lanes) {
      C a = lane[0];
      for (; r < m; ++r) a = wrap_add(a, load_as<S, C>(p + r));
      lane[0] = a;
      count += m;
      return;
    }
    for (; r < m && lane_of(count) != 0; ++r) add(load_as<S, C>(p + r));
    if (r == m) return;
    // count is now a multiple of 32: whole rounds, then the rest to lanes 0, 1, ...
    const index_t r0 = r, rounds = (m - r) / sum_lanes;
    C a[sum_lanes];
    for (int l = 0; l < sum_lanes; ++l) a[l] = lane[l];
    for (index_t k = 0; k < rounds; ++k, r += sum_lanes)
      for (int l = 0; l < sum_lanes; ++l) a[l] = wrap_add(a[l], load_as<S, C>(p + r + l));
    const int rest = static_cast<int>(m - r);
    for (int l = 0; l < rest; ++l) a[l] = wrap_add(a[l], load_as<S, C>(p + r + l));
    for (int l = 0; l < sum_lanes; ++l) lane[l] = a[l];
    count += m - r0;
  }
  // The fold's value: the maximum or minimum, the sum, or the lanes added in order (0 when nothing was added).
  CTFX_HD C result() const { return lanes ? in_order(lane, count) : op == fold_op::prod && count == 0 ? C(1) : lane[0]; }
  // The 32 lanes of a sum of `count` values added in order.
  CTFX_HD static C in_order(const C* lane, index_t count) {
    const int used = count < sum_lanes ? static_cast<int>(count) : sum_lanes;  // lanes past them add +0
    C t = used > 0 ? lane[0] : C(0);
    for (int l = 1; l < used; ++l) t = wrap_add(t, lane[l]);
    return t;
  }
};

// Output o of a fold functor (warp_fold.hpp) by one thread, value after value into fold_acc: the
// kernel of folds shorter than a warp.
template <class C, class F>
CTFX_HD void fold_in_thread(const F& f, index_t o, index_t n, fold_op fold) {
  const auto src = f.source(o);
  fold_acc<C> a(fold);
  constexpr int B = fold_batch<F>();
  for (index_t r = 0; r < n; r += B) {
    C x[B];
    const int m = fold_values<B>(f, src, r, 1, n, x);
    for (int t = 0; t < m; ++t) a.add(x[t]);
  }
  f.store(o, a.result());
}

// An output's element: a mean's division of the fold's value (in C), then the store.
template <dtype O, class C>
CTFX_HD inline void store_result(element_t<O>* at, C v, double divisor) {
  if (divisor != 0) v = v / static_cast<C>(divisor);
  store_as<O, C>(at, v);
}

// The fold of one output's elements from base, walked with an odometer over the collapsed
// reduced dimensions (no division per element).
template <dtype S, class C>
CTFX_HD inline fold_acc<C> fold_walk(const element_t<S>* base, const reduced_dims& red, fold_op fold, bool runs) {
  fold_acc<C> acc(fold, runs);
  index_t idx[max_rank]{}, off = 0;
  for (index_t r = 0; r < red.n; ++r) {
    acc.add(load_as<S, C>(base + off));
    red.next(idx, off);
  }
  return acc;
}

// One output per call (CUDA, outputs that fold strided elements or fewer than a warp's): dtypes
// fixed, the output's elements walked with an odometer over the collapsed reduced dimensions (no
// division per element), folded in the order above.
template <dtype S, dtype O>
struct reduce_fn {
  strided out;
  strided kept;  // the input over the output's extents
  reduced_dims red;
  fold_op fold = fold_op::sum;
  double divisor = 0;  // mean: the count; 0 otherwise
  bool runs = true;    // a sum's outputs fold runs of the input (folds_runs): in 32 lanes
  CTFX_HD void operator()(index_t o) const {
    using C = compute_t<O>;
    index_t ooff = 0, koff = 0;
    for (int d = out.rank - 1; d >= 0; --d) {
      const index_t c = o % out.size[d];
      o /= out.size[d];
      ooff += c * out.stride[d];
      koff += c * kept.stride[d];
    }
    const auto* base = reinterpret_cast<const element_t<S>*>(kept.p) + koff;
    auto* at = reinterpret_cast<element_t<O>*>(out.p) + ooff;
    if (fold == fold_op::prod && red.unit_run()) store_result<O>(at, prod_run<S, C>(base, red.n), 0);
    else store_result<O>(at, fold_walk<S, C>(base, red, fold, runs).result(), divisor);
  }
};

// A fold whose outputs each read one unit-stride run of the input (reduced_dims::unit_run), one
// warp per output on CUDA (warp_fold.hpp).
template <dtype S, dtype O>
struct reduce_run_fold {
  using C = compute_t<O>;
  strided out;
  strided kept;  // the input over the output's extents
  double divisor = 0;
  CTFX_HD const element_t<S>* source(index_t o) const {
    return reinterpret_cast<const element_t<S>*>(kept.p) + kept.offset_of(o);
  }
  CTFX_HD C value(const element_t<S>* run, index_t r) const { return load_as<S, C>(run + r); }
  CTFX_HD void store(index_t o, C v) const {
    store_result<O>(reinterpret_cast<element_t<O>*>(out.p) + out.offset_of(o), v, divisor);
  }
};

// Outputs contiguous in the input and in out along their last dimension (a sum over rows, say):
// `rows` of them, from row `r0`. A chunk of outputs advances together, so the inner loop runs over
// neighbouring outputs and vectorizes. A sum over runs of the input (`runs`: the input laid out
// transposed) keeps each output's lanes side by side, lane l of output j at acc[l·B + j].
template <dtype S, dtype O>
CTFX_INLINE void reduce_rows_loop(fold_op fold, bool runs, const strided& out, const strided& kept, const reduced_dims& rd,
                                  double divisor, index_t r0, index_t r1) {
  using C = compute_t<O>;
  using E = element_t<S>;
  constexpr index_t room = 4096;  // 16–32 KiB of accumulators: B outputs' lanes
  C acc[room];
  const int lanes = fold != fold_op::sum || !runs ? 1 : rd.n < sum_lanes ? static_cast<int>(rd.n) : sum_lanes;  // those reached
  const index_t B = room / lanes;  // whole rows of outputs where one lane: long unit-stride runs
  const int lr = out.rank - 1;
  const index_t inner = out.size[lr];
  index_t oidx[max_rank]{}, ooff = 0, koff = 0;
  seek_output(out, kept, lr, r0, oidx, ooff, koff);
  for (index_t row = r0; row < r1; ++row) {
    for (index_t j0 = 0; j0 < inner; j0 += B) {
      const index_t nb = inner - j0 < B ? inner - j0 : B;
      const E* base = reinterpret_cast<const E*>(kept.p) + koff + j0;
      index_t ridx[max_rank]{}, roff = 0;
      for (index_t r = 0; r < rd.n; ++r) {
        const E* q = base + roff;
        C* a = acc + (lanes == 1 ? 0 : fold_acc<C>::lane_of(r) * B);
        if (r < lanes) {  // a lane's first value
          if (fold != fold_op::sum) for (index_t j = 0; j < nb; ++j) a[j] = load_as<S, C>(q + j);
          else for (index_t j = 0; j < nb; ++j) a[j] = wrap_add(C(0), load_as<S, C>(q + j));
        } else if (fold == fold_op::max) {
          for (index_t j = 0; j < nb; ++j) a[j] = binary_value<C>(op_kind::maximum, a[j], load_as<S, C>(q + j));
        } else if (fold == fold_op::min) {
          for (index_t j = 0; j < nb; ++j) a[j] = binary_value<C>(op_kind::minimum, a[j], load_as<S, C>(q + j));
        } else if (fold == fold_op::prod) {
          for (index_t j = 0; j < nb; ++j) a[j] = wrap_mul(a[j], load_as<S, C>(q + j));
        } else {
          for (index_t j = 0; j < nb; ++j) a[j] = wrap_add(a[j], load_as<S, C>(q + j));
        }
        rd.next(ridx, roff);
      }
      for (int l = 1; l < lanes; ++l)  // fold_acc::result: the lanes added in order
        for (index_t j = 0; j < nb; ++j) acc[j] = wrap_add(acc[j], acc[l * B + j]);
      auto* o = reinterpret_cast<element_t<O>*>(out.p) + ooff + j0;
      if (divisor != 0) for (index_t j = 0; j < nb; ++j) acc[j] = acc[j] / static_cast<C>(divisor);
      for (index_t j = 0; j < nb; ++j) store_as<O, C>(o + j, acc[j]);
    }
    next_output(out, kept, lr, oidx, ooff, koff);  // the next row of outputs
  }
}

// reduce_rows_loop at the host's widest vector level (core/isa.hpp).
template <dtype S, dtype O>
CTFX_VECTORIZE void reduce_rows(fold_op fold, bool runs, const strided& out, const strided& kept, const reduced_dims& rd,
                                double divisor, index_t r0, index_t r1) {
  isa::on_host_isa([&]() CTFX_ISA_BODY { reduce_rows_loop<S, O>(fold, runs, out, kept, rd, divisor, r0, r1); });
}

// Outputs [o0, o1) one by one, each folding its elements in the order above: a unit-stride run
// with fold_acc::add_run (its 32 lanes are a vectorized loop's accumulators), others element by
// element with an odometer.
template <dtype S, dtype O>
void reduce_each(fold_op fold, bool runs, const strided& out, const strided& kept, const reduced_dims& rd,
                 double divisor, index_t o0, index_t o1) {
  using C = compute_t<O>;
  using E = element_t<S>;
  index_t oidx[max_rank]{}, ooff = 0, koff = 0;
  seek_output(out, kept, out.rank, o0, oidx, ooff, koff);
  for (index_t o = o0; o < o1; ++o) {
    const E* base = reinterpret_cast<const E*>(kept.p) + koff;
    auto* at = reinterpret_cast<element_t<O>*>(out.p) + ooff;
    if (fold == fold_op::prod && rd.unit_run()) {
      store_result<O>(at, prod_run<S, C>(base, rd.n), 0);
    } else {
      fold_acc<C> acc(fold, runs);
      if (rd.unit_run()) acc.template add_run<S>(base, rd.n);
      else acc = fold_walk<S, C>(base, rd, fold, runs);
      store_result<O>(at, acc.result(), divisor);
    }
    next_output(out, kept, out.rank, oidx, ooff, koff);
  }
}

// The host loop: dtypes fixed once per kernel, no division per element; outputs walked with an
// odometer, each folding its reduced elements in the order above (the same as reduce_fn's).
// On the OMP backend the outputs are split across threads (each output's order is unchanged).
template <dtype S, dtype O>
void reduce_host(const device_ctx& ctx, fold_op fold, bool runs, const strided& out, const strided& kept,
                 const strided& red, double divisor) {
  const reduced_dims rd(red);
  const index_t m = out.numel();
  const int lr = out.rank - 1;
  const bool by_rows = lr >= 0 && rd.n > 0 && out.size[lr] >= 8 && out.stride[lr] == 1 && kept.stride[lr] == 1;
  const index_t units = by_rows ? m / out.size[lr] : m;
  auto part = [&](const strided& o, const strided& kp, index_t u0, index_t u1) {
    if (by_rows) reduce_rows<S, O>(fold, runs, o, kp, rd, divisor, u0, u1);
    else reduce_each<S, O>(fold, runs, o, kp, rd, divisor, u0, u1);
  };
#if defined(_OPENMP)
  // Worth threads only when each output folds enough elements or there are many outputs.
  if (ctx.where == backend::omp && m * rd.n >= (index_t{1} << 15)) {
    if (units > 1) {
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        part(out, kept, units * t / T, units * (t + 1) / T);
      }
      return;
    }
    if (by_rows) {  // one row of outputs (a sum over a matrix's rows): its columns split across threads
#pragma omp parallel
      {
        const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
        const index_t j0 = out.size[lr] * t / T, j1 = out.size[lr] * (t + 1) / T;
        strided o = out, kp = kept;
        o.size[lr] = kp.size[lr] = j1 - j0;
        o.p += j0 * size_of(o.dt);  // both unit-stride along the row (by_rows)
        kp.p += j0 * size_of(kp.dt);
        if (j1 > j0) part(o, kp, 0, 1);
      }
      return;
    }
  }
#endif
  (void)ctx;
  part(out, kept, 0, units);
}

// out = sum/amax/amin of `in` over the dimensions flagged in `dims` (bit d), keepdim or not. A nonzero
// `divisor` makes the sum a mean: PyTorch's CPU mean.dim sums in the accumulation type (float for
// f16/bf16), divides there, and rounds once to the result's dtype.
// The input seen over the output's extents (`kept`: reduced dimensions removed, or of extent 1
// with keepdim) and over the reduced dimensions alone (`red`: its pointer unused).
inline void split_reduction(const strided& out, const strided& in, unsigned dims, strided& kept, strided& red) {
  kept = strided{};
  red = strided{};
  kept.p = in.p;
  kept.dt = in.dt;
  kept.rank = out.rank;
  for (int d = 0; d < out.rank; ++d) { kept.size[d] = out.size[d]; kept.stride[d] = 0; }
  const bool keepdim = out.rank == in.rank;
  int k = 0;
  for (int d = 0; d < in.rank; ++d) {
    if (dims & (1u << d)) {
      red.size[red.rank] = in.size[d];
      red.stride[red.rank++] = in.stride[d];
      if (keepdim) ++k;
    } else {
      kept.stride[k++] = in.stride[d];
    }
  }
}

inline void reduce(const device_ctx& ctx, fold_op fold, const strided& out, const strided& in, unsigned dims,
                   double divisor = 0);

// A reduction with the element types fixed: S, the input's, and O, the output's (compiled<G> knows
// them; reduce below picks them at run time).
template <dtype S, dtype O>
inline void reduce_typed(const device_ctx& ctx, fold_op fold, const strided& out, const strided& in, unsigned dims, double divisor) {
  if (out.numel() == 0) return;  // nothing to write (and no extent to walk the outputs by)
  strided kept, red;
  split_reduction(out, in, dims, kept, red);
  const bool runs = folds_runs(in, dims);
  if (!runs_device_kernels(ctx)) {
    reduce_host<S, O>(ctx, fold, runs, out, kept, red, divisor);
    return;
  }
  const reduced_dims rd(red);
  if (fold != fold_op::prod && (fold != fold_op::sum || runs) && rd.unit_run() && rd.n >= sum_lanes)  // a row each: one warp per output
    fold_by_warps<compute_t<O>>(ctx, reduce_run_fold<S, O>{out, kept, divisor}, out.numel(), rd.n, fold);
  else
    parallel_for(ctx, out.numel(), reduce_fn<S, O>{out, kept, rd, fold, divisor, runs});
}

inline void reduce(const device_ctx& ctx, fold_op fold, const strided& out, const strided& in, unsigned dims,
                   double divisor) {
  visit_fold_dtypes(in.dt, out.dt, [&](auto sd, auto od) {
    reduce_typed<decltype(sd)::value, decltype(od)::value>(ctx, fold, out, in, dims, divisor);
  });
}

// A mean's divisor: the number of elements folded into each result (0: none, the result is 0 / 0).
inline double mean_count(const strided& in, unsigned dims) {
  double count = 1;
  for (int d = 0; d < in.rank; ++d)
    if (dims & (1u << d)) count *= static_cast<double>(in.size[d]);
  return count;
}

// A reduction node over `dims` of `in`, the element types fixed: a sum, a maximum or a minimum
// (`fold`), or a mean (`mean`: the sum divided by the number of elements folded into each result; 0 / 0, NaN,
// when there are none).
template <dtype S, dtype O>
inline void reduce_node_typed(const device_ctx& ctx, fold_op fold, bool mean, const strided& out, const strided& in, unsigned dims) {
  const double count = mean ? mean_count(in, dims) : 0;
  if (mean && count == 0) {
    fill_typed<O>(ctx, out, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  reduce_typed<S, O>(ctx, fold, out, in, dims, count);
}
// The same, the element types read from the views.
inline void reduce_node(const device_ctx& ctx, fold_op fold, bool mean, const strided& out, const strided& in, unsigned dims) {
  const double count = mean ? mean_count(in, dims) : 0;
  if (mean && count == 0) {
    fill(ctx, out, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  reduce(ctx, fold, out, in, dims, count);
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
