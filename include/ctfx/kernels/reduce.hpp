// ctfx/kernels/reduce.hpp — sum, amax and mean over any set of dimensions. Each output element
// folds its inputs in row-major order of the reduced dimensions, so host and CUDA results, and every
// run, are bit-identical (a fixed order, not a tree whose shape depends on the launch).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "pointwise.hpp"

namespace ctfx::kernels {

template <dtype O>
struct reduce_fn {
  strided out;
  strided kept;     // the input over the output's extents (reduced dims removed or of extent 1)
  strided reduced;  // the input over the reduced extents only (pointer unused)
  bool is_max = false;
  double divisor = 0;  // mean: the count (the sum in C divided by it, then rounded); 0 otherwise
  CTFX_HD void operator()(index_t o) const {
    using C = compute_t<O>;
    const std::byte* base = kept.at(o);
    const index_t n = reduced.numel();
    const int isz = size_of(kept.dt);
    C acc = is_max ? load_dyn<C>(kept.dt, base + reduced.offset_of(0) * isz) : C(0);
    for (index_t r = is_max ? 1 : 0; r < n; ++r) {
      const C v = load_dyn<C>(kept.dt, base + reduced.offset_of(r) * isz);
      if (is_max) acc = binary_value<C>(op_kind::maximum, acc, v);
      else acc = wrap_add(acc, v);
    }
    if (divisor != 0) acc = acc / static_cast<C>(divisor);
    store_as<O, C>(out.at(o), acc);
  }
};

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

// The host loop: dtypes fixed once per kernel; outputs walked with an odometer, each folding its
// reduced elements in row-major order (the same order as reduce_fn) with an odometer too, and a
// plain pointer loop when the reduced elements are one unit-stride run. No division per element.
template <dtype S, dtype O>
void reduce_host(bool is_max, const strided& out, const strided& kept, const strided& red, double divisor) {
  using C = compute_t<O>;
  using E = element_t<S>;
  // Collapse the reduced dimensions that are contiguous with each other (row-major order kept).
  index_t rs[max_rank], rst[max_rank];
  int rr = 0;
  for (int d = 0; d < red.rank; ++d) {
    if (red.size[d] == 1) continue;
    if (rr > 0 && rst[rr - 1] == red.stride[d] * red.size[d]) {
      rs[rr - 1] *= red.size[d];
      rst[rr - 1] = red.stride[d];
    } else {
      rs[rr] = red.size[d];
      rst[rr++] = red.stride[d];
    }
  }
  index_t n = 1;
  for (int d = 0; d < rr; ++d) n *= rs[d];
  const index_t m = out.numel();
  // Outputs contiguous in the input and in out along their last dimension (a sum over rows, say):
  // each output still folds its elements in row-major order, but a chunk of outputs advances
  // together, so the inner loop runs over neighbouring outputs and vectorizes.
  const int lr = out.rank - 1;
  if (lr >= 0 && n > 0 && out.size[lr] >= 8 && out.stride[lr] == 1 && kept.stride[lr] == 1) {
    constexpr index_t B = 4096;  // whole rows of outputs (32 KiB of accumulators at most): long unit-stride runs
    C acc[B];
    const index_t inner = out.size[lr], rows = m / inner;
    index_t oidx[max_rank]{}, ooff = 0, koff = 0;
    for (index_t row = 0; row < rows; ++row) {
      for (index_t j0 = 0; j0 < inner; j0 += B) {
        const index_t nb = inner - j0 < B ? inner - j0 : B;
        const E* base = reinterpret_cast<const E*>(kept.p) + koff + j0;
        index_t ridx[max_rank]{}, roff = 0;
        for (index_t r = 0; r < n; ++r) {
          const E* q = base + roff;
          if (r == 0) {
            if (is_max) for (index_t j = 0; j < nb; ++j) acc[j] = load_as<S, C>(q + j);
            else for (index_t j = 0; j < nb; ++j) acc[j] = wrap_add(C(0), load_as<S, C>(q + j));
          } else if (is_max) {
            for (index_t j = 0; j < nb; ++j) acc[j] = binary_value<C>(op_kind::maximum, acc[j], load_as<S, C>(q + j));
          } else {
            for (index_t j = 0; j < nb; ++j) acc[j] = wrap_add(acc[j], load_as<S, C>(q + j));
          }
          for (int d = rr - 1; d >= 0; --d) {
            roff += rst[d];
            if (++ridx[d] < rs[d]) break;
            roff -= rst[d] * rs[d];
            ridx[d] = 0;
          }
        }
        auto* o = reinterpret_cast<element_t<O>*>(out.p) + ooff + j0;
        if (divisor != 0) for (index_t j = 0; j < nb; ++j) acc[j] = acc[j] / static_cast<C>(divisor);
        for (index_t j = 0; j < nb; ++j) store_as<O, C>(o + j, acc[j]);
      }
      next_output(out, kept, lr, oidx, ooff, koff);  // the next row of outputs
    }
    return;
  }
  index_t oidx[max_rank]{}, ooff = 0, koff = 0;
  for (index_t o = 0; o < m; ++o) {
    const E* base = reinterpret_cast<const E*>(kept.p) + koff;
    C acc;
    if (n == 0) {
      acc = C(0);
    } else if (rr <= 1 && (rr == 0 || rst[0] == 1)) {
      acc = is_max ? load_as<S, C>(base) : C(0);
      if (is_max) for (index_t r = 1; r < n; ++r) acc = binary_value<C>(op_kind::maximum, acc, load_as<S, C>(base + r));
      else for (index_t r = 0; r < n; ++r) acc = wrap_add(acc, load_as<S, C>(base + r));
    } else {
      index_t ridx[max_rank]{}, roff = 0;
      acc = C(0);
      for (index_t r = 0; r < n; ++r) {
        const C v = load_as<S, C>(base + roff);
        acc = r == 0 && is_max ? v : is_max ? binary_value<C>(op_kind::maximum, acc, v) : wrap_add(acc, v);
        for (int d = rr - 1; d >= 0; --d) {
          roff += rst[d];
          if (++ridx[d] < rs[d]) break;
          roff -= rst[d] * rs[d];
          ridx[d] = 0;
        }
      }
    }
    if (divisor != 0) acc = acc / static_cast<C>(divisor);
    store_as<O, C>(reinterpret_cast<element_t<O>*>(out.p) + ooff, acc);
    next_output(out, kept, out.rank, oidx, ooff, koff);
  }
}

// out = sum/amax of `in` over the dimensions flagged in `dims` (bit d), keepdim or not. A nonzero
// `divisor` makes the sum a mean: PyTorch's CPU mean.dim sums in the accumulation type (float for
// f16/bf16), divides there, and rounds once to the result's dtype.
inline void reduce(const device_ctx& ctx, bool is_max, const strided& out, const strided& in, unsigned dims,
                   double divisor = 0) {
  strided kept{}, red{};
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
  if (ctx.where != backend::cuda) {  // host and OMP (the reduction itself runs on one thread)
    // The pairs ops/reductions.hpp makes: the input's dtype, or an integer sum in int64 (each pair
    // instantiated is a loop nest the compiler optimizes in every program that runs plans).
    if (out.dt == in.dt) {
      visit_dtype(in.dt, [&](auto sd) { reduce_host<decltype(sd)::value, decltype(sd)::value>(is_max, out, kept, red, divisor); });
      return;
    }
    if (out.dt == dtype::i64 && (in.dt == dtype::b8 || in.dt == dtype::i8 || in.dt == dtype::i32)) {
      if (in.dt == dtype::b8) reduce_host<dtype::b8, dtype::i64>(is_max, out, kept, red, 0);
      else if (in.dt == dtype::i8) reduce_host<dtype::i8, dtype::i64>(is_max, out, kept, red, 0);
      else reduce_host<dtype::i32, dtype::i64>(is_max, out, kept, red, 0);
      return;
    }
  }
  visit_dtype(out.dt, [&](auto od) {
    parallel_for(ctx, out.numel(), reduce_fn<decltype(od)::value>{out, kept, red, is_max, divisor});
  });
}

}  // namespace ctfx::kernels
