// ctfx/kernels/gather.hpp — out = x[indices] (aten.index.Tensor), the read twin of index_put.
//
// The operands are index_put's (kernels/index_put.hpp) with `values` standing for the result: the
// result over the selected shape S, x's non-indexed part and each index broadcast over S. Position j
// of S reads x.p + free(j) + Σ_k wrap(index_k(j)) · x.stride[dim_k]. Index values are checked before
// the first write of a run (the executor's validation), so the kernel never sees one out of range.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include "index_put.hpp"

namespace ctfx::kernels {

template <dtype D>
struct gather_fn {  // one position per call (CUDA)
  index_put_args a;
  CTFX_HD void operator()(index_t j) const {
    std::memcpy(a.values.at(j), a.x.p + a.dest(j) * size_of(D), sizeof(element_t<D>));
  }
};

// The host loop: positions in row-major order of S walked with put_walk's odometer; when no index
// varies along S's innermost dimension and it is unit-stride in x and in the result, a row is one memcpy.
template <dtype D>
inline void gather_host(const index_put_args& a) {
  const int r = a.free.rank;
  bool rows = r > 0 && a.free.stride[r - 1] == 1 && a.values.stride[r - 1] == 1;
  for (int k = 0; rows && k < a.n_index; ++k) rows = a.index[k].stride[r - 1] == 0;
  put_walk w{a};
  constexpr std::size_t es = sizeof(element_t<D>);
  if (!rows) {
    for (index_t j = 0; j < a.count; ++j, w.next(r))
      std::memcpy(a.values.p + w.vo * static_cast<index_t>(es), a.x.p + w.dest() * static_cast<index_t>(es), es);
    return;
  }
  const index_t inner = a.free.size[r - 1];
  const index_t n_rows = inner == 0 ? 0 : a.count / inner;
  for (index_t row = 0; row < n_rows; ++row, w.next(r - 1))
    std::memcpy(a.values.p + w.vo * static_cast<index_t>(es), a.x.p + w.dest() * static_cast<index_t>(es),
                static_cast<std::size_t>(inner) * es);
}

// a.values: the result over S (written); a.x: the source.
inline void gather(const device_ctx& ctx, const index_put_args& a) {
  if (a.count == 0) return;
  visit_dtype(a.x.dt, [&](auto dd) {
    constexpr dtype D = decltype(dd)::value;
    if (runs_device_kernels(ctx)) parallel_for(ctx, a.count, gather_fn<D>{a});
    else gather_host<D>(a);
  });
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
