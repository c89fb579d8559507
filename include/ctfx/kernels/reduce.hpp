// ctfx/kernels/reduce.hpp — sum and amax over any set of dimensions. Each output element folds its
// inputs in row-major order of the reduced dimensions, so host and CUDA results, and every run,
// are bit-identical (a fixed order, not a tree whose shape depends on the launch).
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
    store_as<O, C>(out.at(o), acc);
  }
};

// out = sum/amax of `in` over the dimensions flagged in `dims` (bit d), keepdim or not.
inline void reduce(const device_ctx& ctx, bool is_max, const strided& out, const strided& in, unsigned dims) {
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
  visit_dtype(out.dt, [&](auto od) {
    parallel_for(ctx, out.numel(), reduce_fn<decltype(od)::value>{out, kept, red, is_max});
  });
}

}  // namespace ctfx::kernels
