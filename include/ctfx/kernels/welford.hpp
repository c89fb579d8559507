// ctfx/kernels/welford.hpp — var and var_mean's mean as PyTorch's CPU kernel computes them (its
// WelfordOps in one sequential pass, which it takes below 32,768 elements per output): each
// output's elements in row-major order of the reduced dimensions, in double,
//   n += 1; delta = x - mean; mean += delta / n; m2 += delta * (x - mean),
// then var = m2 / max(n - correction, 0) and mean, each rounded once to the dtype. One thread per
// output on CUDA, the same walk on the host: every backend gives the same bits.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include "reduce.hpp"

namespace ctfx::kernels {

// Output o: the variance (`want_mean` false) or the mean of its elements.
template <dtype S>
struct welford_fn {
  strided out;
  strided kept;  // the input over the output's extents
  reduced_dims red;
  double correction = 1;
  bool want_mean = false;
  CTFX_HD void operator()(index_t o) const {
    index_t ooff = 0, koff = 0;
    for (int d = out.rank - 1; d >= 0; --d) {
      const index_t c = o % out.size[d];
      o /= out.size[d];
      ooff += c * out.stride[d];
      koff += c * kept.stride[d];
    }
    const auto* base = reinterpret_cast<const element_t<S>*>(kept.p) + koff;
    index_t idx[max_rank]{}, off = 0;
    double mean = 0, m2 = 0;
    for (index_t r = 0; r < red.n; ++r) {
      const double x = load_as<S, double>(base + off);
      const double delta = x - mean;
      mean = mean + delta / static_cast<double>(r + 1);
      m2 = m2 + delta * (x - mean);
      red.next(idx, off);
    }
    const double nf = static_cast<double>(red.n);
    const double divisor = nf > correction ? nf - correction : 0.0;
    store_as<S, double>(reinterpret_cast<element_t<S>*>(out.p) + ooff, want_mean ? mean : m2 / divisor);
  }
};

// out = var (or var_mean's mean) of `in` over the dimensions flagged in `dims` (bit d), keepdim or
// not (out's rank says); ops/reductions.hpp admits f32 and f64 and reduced extents above 0 only.
template <dtype S>
inline void welford_typed(const device_ctx& ctx, bool want_mean, double correction, const strided& out, const strided& in, unsigned dims) {
  if (out.numel() == 0) return;
  strided kept, red;
  split_reduction(out, in, dims, kept, red);
  parallel_for(ctx, out.numel(), welford_fn<S>{out, kept, reduced_dims(red), correction, want_mean});
}
inline void welford(const device_ctx& ctx, bool want_mean, double correction, const strided& out, const strided& in, unsigned dims) {
  if (in.dt == dtype::f64) welford_typed<dtype::f64>(ctx, want_mean, correction, out, in, dims);
  else welford_typed<dtype::f32>(ctx, want_mean, correction, out, in, dims);
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
