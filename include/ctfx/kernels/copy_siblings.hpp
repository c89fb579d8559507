// ctfx/kernels/copy_siblings.hpp — N strided copies of one element type over the same extents, run
// element by element together (plan/copy_siblings.hpp decides which): one walk of the outer
// dimensions, and an innermost loop that moves element j of every member before element j + 1,
// so that copies into the same rows of a grid (a halo's columns) visit each row once. The members
// touch disjoint elements, so the values are those of the copies run one after the other. On CUDA
// each member runs as kernels::copy_typed, one after the other; on OMP the walk runs on the calling
// thread (strided copies of a few thousand elements: an element each per thread cost the halo's
// columns 1.4x the hand loop).
#pragma once
#include <cstddef>
#include "pointwise.hpp"

namespace ctfx::kernels {

template <dtype D, std::size_t N>
void copy_siblings(const device_ctx& ctx, const strided (&out)[N], const strided (&src)[N]) {
  if (ctx.where == backend::cuda) {
    for (std::size_t m = 0; m < N; ++m) copy_typed<D, D>(ctx, out[m], src[m]);
    return;
  }
  // The extents without their size-1 dimensions (the same ones for every member: one shape).
  const strided& o0 = out[0];
  index_t size[max_rank]{}, os[N][max_rank]{}, ss[N][max_rank]{};
  int r = 0;
  for (int d = 0; d < o0.rank; ++d) {
    if (o0.size[d] == 1) continue;
    size[r] = o0.size[d];
    for (std::size_t m = 0; m < N; ++m) {
      os[m][r] = out[m].stride[d];
      ss[m][r] = src[m].stride[d];
    }
    ++r;
  }
  using E = element_t<D>;
  E* o[N];
  const E* s[N];
  for (std::size_t m = 0; m < N; ++m) {
    if (out[m].numel() == 0) return;
    o[m] = reinterpret_cast<E*>(out[m].p);
    s[m] = reinterpret_cast<const E*>(src[m].p);
  }
  const index_t inner = r == 0 ? 1 : size[r - 1];
  index_t io[N], is[N];
  for (std::size_t m = 0; m < N; ++m) {
    io[m] = r == 0 ? 0 : os[m][r - 1];
    is[m] = r == 0 ? 0 : ss[m][r - 1];
  }
  // The outer dimensions by an odometer, touched once per row.
  index_t idx[max_rank]{}, ao[N]{}, bo[N]{};
  index_t rows = 1;
  for (int d = 0; d + 1 < r; ++d) rows *= size[d];
  for (index_t row = 0; row < rows; ++row) {
    for (index_t j = 0; j < inner; ++j)
      for (std::size_t m = 0; m < N; ++m) o[m][ao[m] + j * io[m]] = s[m][bo[m] + j * is[m]];
    for (int d = r - 2; d >= 0; --d) {
      for (std::size_t m = 0; m < N; ++m) { ao[m] += os[m][d]; bo[m] += ss[m][d]; }
      if (++idx[d] < size[d]) break;
      for (std::size_t m = 0; m < N; ++m) { ao[m] -= os[m][d] * size[d]; bo[m] -= ss[m][d] * size[d]; }
      idx[d] = 0;
    }
  }
}

}  // namespace ctfx::kernels
