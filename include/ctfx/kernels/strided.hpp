// ctfx/kernels/strided.hpp — what a kernel sees of a tensor: a byte pointer to element [0,...,0],
// the dtype, extents and element strides (any strides: views, broadcasts with stride 0, negative
// offsets already folded into the pointer). Linear indices run in row-major order of the extents.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include "../core/config.hpp"
#include "../core/dtype.hpp"

namespace ctfx {

struct strided {
  std::byte* p = nullptr;
  dtype dt = dtype::f32;
  int rank = 0;
  index_t size[max_rank]{};
  index_t stride[max_rank]{};

  CTFX_HD constexpr index_t numel() const {
    index_t n = 1;
    for (int i = 0; i < rank; ++i) n *= size[i];
    return n;
  }
  // Element offset of the row-major linear index `i`.
  CTFX_HD index_t offset_of(index_t i) const {
    index_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const index_t c = i % size[d];
      i /= size[d];
      off += c * stride[d];
    }
    return off;
  }
  CTFX_HD std::byte* at(index_t i) const { return p + offset_of(i) * size_of(dt); }
  // The coordinates of the row-major linear index `i`: one division per dimension, shared by every
  // view of these extents (a kernel's operands broadcast to its output) through at_coords.
  CTFX_HD void coords_of(index_t i, index_t* c) const {
    for (int d = rank - 1; d >= 0; --d) {
      c[d] = i % size[d];
      i /= size[d];
    }
  }
  CTFX_HD std::byte* at_coords(const index_t* c) const {
    index_t off = 0;
    for (int d = 0; d < rank; ++d) off += c[d] * stride[d];
    return p + off * size_of(dt);
  }
  // Calls f(element offset) for every element in row-major order, with an odometer (no division).
  template <class F>
  CTFX_HD void for_each_offset(F&& f) const {
    const index_t n = numel();
    index_t idx[max_rank]{};
    index_t off = 0;
    for (index_t k = 0; k < n; ++k) {
      f(off);
      for (int d = rank - 1; d >= 0; --d) {
        off += stride[d];
        if (++idx[d] < size[d]) break;
        off -= stride[d] * size[d];
        idx[d] = 0;
      }
    }
  }
  // Broadcast to `rank` dims of `sizes` (right-aligned, stride 0 where this tensor has extent 1).
  CTFX_HD constexpr strided broadcast_to(int r, const index_t* sizes) const {
    strided b;
    b.set_broadcast(*this, r, sizes);
    return b;
  }
  // Sets this view to v broadcast to r dims of `sizes`, field by field. (A kernel's setup builds
  // its operands this way, in place: copying a whole view just written field by field stalls on
  // store forwarding, which cost a small typed kernel a fifth of its call.)
  CTFX_HD constexpr void set_broadcast(const strided& v, int r, const index_t* sizes) {
    p = v.p;
    dt = v.dt;
    rank = r;
    for (int d = 0; d < r; ++d) {
      const int k = d - (r - v.rank);
      size[d] = sizes[d];
      stride[d] = k >= 0 && v.size[k] == sizes[d] ? v.stride[k] : 0;
    }
  }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
