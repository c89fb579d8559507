// ctfx/kernels/reduce.hpp — sum, amax and mean over any set of dimensions. Each output element
// folds its inputs in row-major order of the reduced dimensions, so host and CUDA results, and every
// run, are bit-identical (a fixed order, not a tree whose shape depends on the launch).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "pointwise.hpp"
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

// One step of an output's fold: its first value starts a maximum; a sum adds every value to 0.
template <class C>
CTFX_HD inline C fold_step(bool is_max, C acc, C v, bool first) {
  return is_max ? (first ? v : binary_value<C>(op_kind::maximum, acc, v)) : wrap_add(acc, v);
}

// L outputs folded side by side, output k's n values at b[k][0, n): L independent chains of adds
// (a sum is a chain of dependent adds; each output keeps its own row-major order).
template <int L, dtype S, class C>
void fold_side_by_side(bool is_max, const element_t<S>* const* b, index_t n, C* acc) {
  if (is_max) {
    for (int k = 0; k < L; ++k) acc[k] = load_as<S, C>(b[k]);
    for (index_t r = 1; r < n; ++r)
      for (int k = 0; k < L; ++k) acc[k] = binary_value<C>(op_kind::maximum, acc[k], load_as<S, C>(b[k] + r));
  } else {
    for (int k = 0; k < L; ++k) acc[k] = C(0);
    for (index_t r = 0; r < n; ++r)
      for (int k = 0; k < L; ++k) acc[k] = wrap_add(acc[k], load_as<S, C>(b[k] + r));
  }
}

// One output per call (CUDA): dtypes fixed, the output's elements walked with an odometer over the
// collapsed reduced dimensions (no division per element), folded in row-major order.
template <dtype S, dtype O>
struct reduce_fn {
  strided out;
  strided kept;  // the input over the output's extents
  reduced_dims red;
  bool is_max = false;
  double divisor = 0;  // mean: the count; 0 otherwise
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
    index_t idx[max_rank]{}, roff = 0;
    C acc = C(0);
    for (index_t r = 0; r < red.n; ++r) {
      acc = fold_step(is_max, acc, load_as<S, C>(base + roff), r == 0);
      red.next(idx, roff);
    }
    if (divisor != 0) acc = acc / static_cast<C>(divisor);
    store_as<O, C>(reinterpret_cast<element_t<O>*>(out.p) + ooff, acc);
  }
};

// Outputs contiguous in the input and in out along their last dimension (a sum over rows, say):
// `rows` of them, from row `r0`. Each output still folds its elements in row-major order, but a
// chunk of outputs advances together, so the inner loop runs over neighbouring outputs and vectorizes.
template <dtype S, dtype O>
void reduce_rows(bool is_max, const strided& out, const strided& kept, const reduced_dims& rd, double divisor,
                 index_t r0, index_t r1) {
  using C = compute_t<O>;
  using E = element_t<S>;
  constexpr index_t B = 4096;  // whole rows of outputs (32 KiB of accumulators at most): long unit-stride runs
  C acc[B];
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
        if (r == 0) {
          if (is_max) for (index_t j = 0; j < nb; ++j) acc[j] = load_as<S, C>(q + j);
          else for (index_t j = 0; j < nb; ++j) acc[j] = wrap_add(C(0), load_as<S, C>(q + j));
        } else if (is_max) {
          for (index_t j = 0; j < nb; ++j) acc[j] = binary_value<C>(op_kind::maximum, acc[j], load_as<S, C>(q + j));
        } else {
          for (index_t j = 0; j < nb; ++j) acc[j] = wrap_add(acc[j], load_as<S, C>(q + j));
        }
        rd.next(ridx, roff);
      }
      auto* o = reinterpret_cast<element_t<O>*>(out.p) + ooff + j0;
      if (divisor != 0) for (index_t j = 0; j < nb; ++j) acc[j] = acc[j] / static_cast<C>(divisor);
      for (index_t j = 0; j < nb; ++j) store_as<O, C>(o + j, acc[j]);
    }
    next_output(out, kept, lr, oidx, ooff, koff);  // the next row of outputs
  }
}

// The amax of n > 0 floats as the fold computes it, on integer keys that order floats as `<` does:
// a loop compilers vectorize (a float compare is not, under g++'s default -ftrapping-math). Where
// keys cannot tell the fold's answer — a NaN (the first is the result) or a maximum of +0 (a -0 may
// have come first) — it returns false and the caller folds.
inline bool amax_by_keys(const float* p, index_t n, float& out) {
  std::int32_t best = INT32_MIN, nan = 0;
  for (index_t r = 0; r < n; ++r) {
    const std::int32_t u = __builtin_bit_cast(std::int32_t, p[r]);
    const std::int32_t key = u ^ ((u >> 31) & 0x7fffffff);
    best = key > best ? key : best;
    nan |= static_cast<std::int32_t>((u & 0x7fffffff) > 0x7f800000);
  }
  out = __builtin_bit_cast(float, best ^ ((best >> 31) & 0x7fffffff));
  return nan == 0 && (best & 0x7fffffff) != 0;
}

// Outputs [o0, o1) one by one, each folding its elements in row-major order. Where each output's
// elements are one unit-stride run, eight outputs fold side by side: eight independent chains of
// adds instead of one (a sum is a chain of dependent adds; each output keeps its own order).
template <dtype S, dtype O>
void reduce_each(bool is_max, const strided& out, const strided& kept, const reduced_dims& rd, double divisor,
                 index_t o0, index_t o1) {
  using C = compute_t<O>;
  using E = element_t<S>;
  const index_t n = rd.n;
  auto finish = [&](C acc, index_t ooff) {
    if (divisor != 0) acc = acc / static_cast<C>(divisor);
    store_as<O, C>(reinterpret_cast<element_t<O>*>(out.p) + ooff, acc);
  };
  index_t oidx[max_rank]{}, ooff = 0, koff = 0;
  seek_output(out, kept, out.rank, o0, oidx, ooff, koff);
  index_t o = o0;
  if constexpr (S == dtype::f32 && std::is_same_v<C, float>) {
    if (is_max && rd.unit_run() && n > 0) {
      for (; o < o1; ++o) {
        const E* base = reinterpret_cast<const E*>(kept.p) + koff;
        C acc;
        if (!amax_by_keys(base, n, acc)) {
          acc = base[0];
          for (index_t r = 1; r < n; ++r) acc = binary_value<C>(op_kind::maximum, acc, base[r]);
        }
        finish(acc, ooff);
        next_output(out, kept, out.rank, oidx, ooff, koff);
      }
      return;
    }
  }
  if (rd.unit_run() && n > 0) {
    constexpr int L = 8;
    for (; o + L <= o1; o += L) {
      const E* b[L];
      index_t at[L];
      for (int k = 0; k < L; ++k) {
        b[k] = reinterpret_cast<const E*>(kept.p) + koff;
        at[k] = ooff;
        next_output(out, kept, out.rank, oidx, ooff, koff);
      }
      C acc[L];
      fold_side_by_side<L, S>(is_max, b, n, acc);
      for (int k = 0; k < L; ++k) finish(acc[k], at[k]);
    }
  }
  for (; o < o1; ++o) {
    const E* base = reinterpret_cast<const E*>(kept.p) + koff;
    C acc;
    if (n == 0) {
      acc = C(0);
    } else if (rd.unit_run()) {
      acc = is_max ? load_as<S, C>(base) : C(0);
      if (is_max) for (index_t r = 1; r < n; ++r) acc = binary_value<C>(op_kind::maximum, acc, load_as<S, C>(base + r));
      else for (index_t r = 0; r < n; ++r) acc = wrap_add(acc, load_as<S, C>(base + r));
    } else {
      index_t ridx[max_rank]{}, roff = 0;
      acc = C(0);
      for (index_t r = 0; r < n; ++r) {
        const C v = load_as<S, C>(base + roff);
        acc = r == 0 && is_max ? v : is_max ? binary_value<C>(op_kind::maximum, acc, v) : wrap_add(acc, v);
        rd.next(ridx, roff);
      }
    }
    finish(acc, ooff);
    next_output(out, kept, out.rank, oidx, ooff, koff);
  }
}

// The host loop: dtypes fixed once per kernel, no division per element; outputs walked with an
// odometer, each folding its reduced elements in row-major order (the same order as reduce_fn's).
// On the OMP backend the outputs are split across threads (each output's order is unchanged).
template <dtype S, dtype O>
void reduce_host(const device_ctx& ctx, bool is_max, const strided& out, const strided& kept, const strided& red,
                 double divisor) {
  const reduced_dims rd(red);
  const index_t m = out.numel();
  const int lr = out.rank - 1;
  const bool by_rows = lr >= 0 && rd.n > 0 && out.size[lr] >= 8 && out.stride[lr] == 1 && kept.stride[lr] == 1;
  const index_t units = by_rows ? m / out.size[lr] : m;
  auto part = [&](index_t u0, index_t u1) {
    if (by_rows) reduce_rows<S, O>(is_max, out, kept, rd, divisor, u0, u1);
    else reduce_each<S, O>(is_max, out, kept, rd, divisor, u0, u1);
  };
#if defined(_OPENMP)
  // Worth threads only when each output folds enough elements or there are many outputs.
  if (ctx.where == backend::omp && units > 1 && m * rd.n >= (index_t{1} << 15)) {
#pragma omp parallel
    {
      const index_t t = omp_get_thread_num(), T = omp_get_num_threads();
      part(units * t / T, units * (t + 1) / T);
    }
    return;
  }
#endif
  (void)ctx;
  part(0, units);
}

// out = sum/amax of `in` over the dimensions flagged in `dims` (bit d), keepdim or not. A nonzero
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

inline void reduce(const device_ctx& ctx, bool is_max, const strided& out, const strided& in, unsigned dims,
                   double divisor = 0) {
  strided kept, red;
  split_reduction(out, in, dims, kept, red);
  visit_fold_dtypes(in.dt, out.dt, [&](auto sd, auto od) {
    constexpr dtype S = decltype(sd)::value, O = decltype(od)::value;
    if (ctx.where == backend::cuda) parallel_for(ctx, out.numel(), reduce_fn<S, O>{out, kept, reduced_dims(red), is_max, divisor});
    else reduce_host<S, O>(ctx, is_max, out, kept, red, divisor);
  });
}

}  // namespace ctfx::kernels
