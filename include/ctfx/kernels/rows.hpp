// ctfx/kernels/rows.hpp — a kernel over the rows of a loop nest (kernels::fused_nest: a group's
// dimensions collapsed into rows of `inner` elements), for CUDA. The work is cut into segments of
// rows (a whole short row, or up to `row_segment` elements of a long one: a dense tensor collapses
// into one row, which every block of the grid then shares), and each segment is taken by `lanes`
// threads of one block (a power of two, so a block holds whole segments). A thread finds its
// row's operand offsets once per segment (one division per outer dimension, never per element),
// then takes the segment's vectors lane, lane + lanes, ... — a warp reads consecutive vectors,
// coalesced — with loads and stores of up to 16 bytes where every operand of the row is aligned
// for them.
//
// A row functor F has `F::width`, the elements of one vector step, and `F::operator()(r, j0, j1,
// lane, lanes)`: the elements [j0, j1) of row r that lane `lane` of `lanes` computes (j0 a multiple
// of the width). parallel_rows launches it on CUDA; on the host (another backend, or a translation
// unit without CUDA) it runs each row whole, as one lane. rows_as_on_device runs the kernel's
// segments and lanes one after the other on the host: the tests check the device's mapping with it.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <atomic>
#include <cstdint>
#include <cstring>
#include "launch.hpp"
#if defined(__CUDACC__)
#include <thrust/system/cuda/error.h>
#include <thrust/system_error.h>
#endif

namespace ctfx::kernels {

// N bytes aligned to N (N a power of two, at most 16): one load or store instruction on CUDA
// (ld.global.v4.u32 for 16), as PyTorch's aligned_vector.
template <int N>
struct alignas(N) vector_bytes {
  unsigned char b[N];
};

// Copies N bytes from `from` to `to`, both aligned to N.
template <int N>
CTFX_INLINE CTFX_HD void move_vector(void* to, const void* from) {
#if defined(__CUDA_ARCH__)
  *static_cast<vector_bytes<N>*>(to) = *static_cast<const vector_bytes<N>*>(from);
#else
  std::memcpy(to, from, N);  // the host's compiler makes it one move; no aliasing question
#endif
}

// Whether p is aligned to n bytes (n a power of two).
CTFX_INLINE CTFX_HD bool aligned_to(const void* p, index_t n) {
  return (reinterpret_cast<std::uintptr_t>(p) & static_cast<std::uintptr_t>(n - 1)) == 0;
}

// The elements of a segment of a long row: 8 vectors for each thread of a block.
inline constexpr int rows_block = 256;
constexpr index_t row_segment(int width) { return index_t{rows_block} * width * 8; }

// The threads a block gives one segment: enough for its vectors, a power of two, at most `block`.
constexpr int row_lanes(index_t inner, int width, int block) {
  const index_t vectors = (inner + width - 1) / width;
  int lanes = 1;
  while (lanes < block && lanes < vectors) lanes *= 2;
  return lanes;
}

// Segment s of the segments of `seg` elements that rows of `inner` elements are cut into: its row
// and its elements [j0, j1).
struct row_part {
  index_t r, j0, j1;
};
CTFX_INLINE CTFX_HD row_part segment_of(index_t s, index_t segs_per_row, index_t inner, index_t seg) {
  const index_t r = s / segs_per_row;
  const index_t j0 = (s - r * segs_per_row) * seg;
  return {r, j0, j0 + seg < inner ? j0 + seg : inner};
}

#if defined(__CUDACC__)
// A grid-stride loop over the segments, rows_block / lanes of them per block at a time.
template <class F>
__global__ void rows_kernel(F f, index_t segments, index_t segs_per_row, index_t inner, index_t seg, int lanes) {
  const int per_block = static_cast<int>(blockDim.x) / lanes;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const index_t first = static_cast<index_t>(blockIdx.x) * per_block + static_cast<int>(threadIdx.x) / lanes;
  const index_t step = static_cast<index_t>(gridDim.x) * per_block;
  for (index_t s = first; s < segments; s += step) {
    const row_part w = segment_of(s, segs_per_row, inner, seg);
    f(w.r, w.j0, w.j1, lane, lanes);
  }
}
#endif

// How a launch cuts rows of `inner` elements: the segment length (a multiple of the width), the
// segments per row, and the threads per segment.
struct row_launch {
  index_t seg, segs_per_row;
  int lanes;
};
constexpr row_launch row_launch_of(index_t inner, int width, index_t seg) {
  const index_t s = inner < seg ? inner : seg;
  return {s, (inner + s - 1) / s, row_lanes(s, width, rows_block)};
}

// The CUDA kernel's work run on the host: every segment (of `seg` elements, a multiple of the
// width), every lane of `lanes` one after the other.
template <class F>
void rows_as_on_device(index_t rows, index_t inner, index_t seg, int lanes, const F& f) {
  if (rows <= 0 || inner <= 0) return;
  const row_launch L = row_launch_of(inner, F::width, seg);
  for (index_t s = 0; s < rows * L.segs_per_row; ++s) {
    const row_part w = segment_of(s, L.segs_per_row, inner, L.seg);
    for (int lane = 0; lane < lanes; ++lane) f(w.r, w.j0, w.j1, lane, lanes);
  }
}

// Rows [0, rows) of f, each of `inner` elements (with emulate_device_kernels, as the device cuts them).
template <class F>
void parallel_rows(const device_ctx& ctx, index_t rows, index_t inner, const F& f) {
  if (rows <= 0 || inner <= 0) return;
#if defined(__CUDACC__)
  if (ctx.where == backend::cuda) {
    const row_launch L = row_launch_of(inner, F::width, row_segment(F::width));
    const index_t segments = rows * L.segs_per_row;
    constexpr index_t max_blocks = index_t{1} << 16;
    const index_t per_block = rows_block / L.lanes, blocks = (segments + per_block - 1) / per_block;
    const auto grid = static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
    rows_kernel<<<grid, rows_block, 0, static_cast<cudaStream_t>(ctx.stream)>>>(f, segments, L.segs_per_row, inner, L.seg, L.lanes);
    if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
      throw thrust::system_error(e, thrust::cuda_category(), "ctfx::kernels::parallel_rows: launch");
    return;
  }
#endif
  (void)ctx;
  if constexpr (emulate_device_kernels) {
    // The device's cut on one launch in three. Short rows (most of a test's) give each of its lanes
    // one element, so the other launches cut segments of 8 or 5 vectors taken by 2 or 3 lanes: a
    // lane computes several elements, a row spans segments. A functor's bits must not depend on
    // the cut.
    static std::atomic<unsigned> launches{0};
    const unsigned v = launches.fetch_add(1, std::memory_order_relaxed) % 3;
    const row_launch L = row_launch_of(inner, F::width, row_segment(F::width));
    if (v == 0) rows_as_on_device(rows, inner, L.seg, L.lanes, f);
    else rows_as_on_device(rows, inner, index_t{F::width} * (v == 1 ? 8 : 5), v == 1 ? 2 : 3, f);
  } else {
    for (index_t r = 0; r < rows; ++r) f(r, 0, inner, 0, 1);
  }
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
