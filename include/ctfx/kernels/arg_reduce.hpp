// ctfx/kernels/arg_reduce.hpp — argmax and argmin: for each output, the int64 index of the first
// maximum (minimum) of its reduced elements, counted in row-major order of the reduced dimensions
// (along the one dim, or in the flattened input when every dimension is reduced). A NaN counts as
// the maximum (minimum) and the first NaN's index wins; of equal values (-0 and +0 among them) the
// first index is kept: PyTorch's CPU kernels (and fold_takes, the order amax and amin fold in, so
// the value at the index is amax's or amin's). One thread per output on CUDA, the same walk on
// the host: every backend gives the same indices.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include "reduce.hpp"

namespace ctfx::kernels {

// Output o's index: its elements walked with an odometer over the collapsed reduced dimensions.
template <dtype S>
struct arg_reduce_fn {
  strided out;   // int64
  strided kept;  // the input over the output's extents
  reduced_dims red;
  fold_op fold = fold_op::max;
  CTFX_HD void operator()(index_t o) const {
    using C = compute_t<S>;
    index_t ooff = 0, koff = 0;
    for (int d = out.rank - 1; d >= 0; --d) {
      const index_t c = o % out.size[d];
      o /= out.size[d];
      ooff += c * out.stride[d];
      koff += c * kept.stride[d];
    }
    const auto* base = reinterpret_cast<const element_t<S>*>(kept.p) + koff;
    index_t idx[max_rank]{}, off = 0, at = 0;
    C best = load_as<S, C>(base);
    red.next(idx, off);
    for (index_t r = 1; r < red.n; ++r) {
      const C v = load_as<S, C>(base + off);
      if (fold_takes(fold, best, v)) {
        best = v;
        at = r;
      }
      red.next(idx, off);
    }
    reinterpret_cast<std::int64_t*>(out.p)[ooff] = at;
  }
};

// out (int64) = the index of the maximum (fold_op::max) or minimum (fold_op::min) of `in` over the
// dimensions flagged in `dims` (bit d), keepdim or not (out's rank says). Every reduced extent is
// above 0 (ops/reductions.hpp refuses the others).
template <dtype S>
inline void arg_reduce_typed(const device_ctx& ctx, fold_op fold, const strided& out, const strided& in, unsigned dims) {
  if (out.numel() == 0) return;
  strided kept, red;
  split_reduction(out, in, dims, kept, red);
  parallel_for(ctx, out.numel(), arg_reduce_fn<S>{out, kept, reduced_dims(red), fold});
}
// The same, the input's element type read from the view.
inline void arg_reduce(const device_ctx& ctx, fold_op fold, const strided& out, const strided& in, unsigned dims) {
  visit_dtype(in.dt, [&](auto d) { arg_reduce_typed<decltype(d)::value>(ctx, fold, out, in, dims); });
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
