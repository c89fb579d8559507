// ctfx/kernels/copy_siblings.hpp — N strided copies of one element type over the same extents, run
// element by element together (plan/copy_siblings.hpp decides which): one walk of the outer
// dimensions, and an innermost loop that moves element j of every member before element j + 1,
// so that copies into the same rows of a grid (a halo's columns) visit each row once. The members
// touch disjoint elements, so the values are those of the copies run one after the other. On CUDA
// each member runs as kernels::copy_typed, one after the other; on OMP the walk runs on the calling
// thread (strided copies of a few thousand elements: an element each per thread cost the halo's
// columns 1.4x the hand loop).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include "fused.hpp"

namespace ctfx::kernels {

template <dtype D, std::size_t N>
void copy_siblings(const device_ctx& ctx, const strided (&out)[N], const strided (&src)[N]) {
  static_assert(2 * N - 1 <= static_cast<std::size_t>(max_fused_leaves), "copy_siblings: more members than a loop nest has operands");
  if (runs_device_kernels(ctx)) {
    for (std::size_t m = 0; m < N; ++m) copy_typed<D, D>(ctx, out[m], src[m]);
    return;
  }
  // One loop nest over the members' common extents (make_nest: extent-1 dimensions dropped,
  // contiguous ones merged): operand m < N is destination m, operand N + m source m.
  fused_operands k;
  k.out = out[0];
  for (std::size_t m = 1; m < N; ++m) k.leaf[k.n_leaves++] = out[m];
  for (std::size_t m = 0; m < N; ++m) k.leaf[k.n_leaves++] = src[m];
  const fused_nest nest = make_nest(k);
  using E = element_t<D>;
  E* o[N];
  const E* s[N];
  index_t io[N], is[N], ao[N]{}, bo[N]{};
  for (std::size_t m = 0; m < N; ++m) {
    o[m] = reinterpret_cast<E*>(out[m].p);
    s[m] = reinterpret_cast<const E*>(src[m].p);
    io[m] = nest.istride[m];
    is[m] = nest.istride[N + m];
  }
  // The outer dimensions by an odometer, stepped once per row.
  index_t idx[max_rank]{};
  for (index_t row = 0; row < nest.rows; ++row) {
    for (index_t j = 0; j < nest.inner; ++j)
      for (std::size_t m = 0; m < N; ++m) o[m][ao[m] + j * io[m]] = s[m][bo[m] + j * is[m]];
    for (int d = nest.rank - 1; d >= 0; --d) {
      for (std::size_t m = 0; m < N; ++m) { ao[m] += nest.stride[m][d]; bo[m] += nest.stride[N + m][d]; }
      if (++idx[d] < nest.size[d]) break;
      for (std::size_t m = 0; m < N; ++m) { ao[m] -= nest.stride[m][d] * nest.size[d]; bo[m] -= nest.stride[N + m][d] * nest.size[d]; }
      idx[d] = 0;
    }
  }
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
