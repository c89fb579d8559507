// ctfx/kernels/rows.hpp — a kernel over the rows of a loop nest (kernels::fused_nest: a group's
// dimensions collapsed into rows of `inner` elements), for CUDA. Each row is taken by `lanes`
// threads of one block (a power of two, so a block holds whole rows): a thread finds its row's
// operand offsets once (one division per outer dimension, never per element), then takes the
// row's vectors lane, lane + lanes, ... — a warp reads consecutive vectors, coalesced — with
// loads and stores of up to 16 bytes where every operand of the row is aligned for them.
//
// A row functor F has `F::width`, the elements of one vector step, and `F::operator()(r, lane,
// lanes)`, the elements of row r that lane `lane` of `lanes` computes. parallel_rows launches it
// on CUDA; on the host (another backend, or a translation unit without CUDA) it runs each row as
// one lane, in order. The tests run a block's lanes one after the other on the host.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
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

// The threads a block gives one row: enough for the row's vectors, a power of two, at most `block`.
constexpr int row_lanes(index_t inner, int width, int block) {
  const index_t vectors = (inner + width - 1) / width;
  int lanes = 1;
  while (lanes < block && lanes < vectors) lanes *= 2;
  return lanes;
}

inline constexpr int rows_block = 256;

#if defined(__CUDACC__)
// A grid-stride loop over the rows, rows_block / lanes rows per block at a time.
template <class F>
__global__ void rows_kernel(F f, index_t rows, int lanes) {
  const int per_block = static_cast<int>(blockDim.x) / lanes;
  const int lane = static_cast<int>(threadIdx.x) & (lanes - 1);
  const index_t first = static_cast<index_t>(blockIdx.x) * per_block + static_cast<int>(threadIdx.x) / lanes;
  const index_t step = static_cast<index_t>(gridDim.x) * per_block;
  for (index_t r = first; r < rows; r += step) f(r, lane, lanes);
}
#endif

// Rows [0, rows) of f, each of `inner` elements.
template <class F>
void parallel_rows(const device_ctx& ctx, index_t rows, index_t inner, const F& f) {
  if (rows <= 0 || inner <= 0) return;
#if defined(__CUDACC__)
  if (ctx.where == backend::cuda) {
    const int lanes = row_lanes(inner, F::width, rows_block);
    constexpr index_t max_blocks = index_t{1} << 16;
    const index_t per_block = rows_block / lanes, blocks = (rows + per_block - 1) / per_block;
    const auto grid = static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
    rows_kernel<<<grid, rows_block, 0, static_cast<cudaStream_t>(ctx.stream)>>>(f, rows, lanes);
    if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
      throw thrust::system_error(e, thrust::cuda_category(), "ctfx::kernels::parallel_rows: launch");
    return;
  }
#endif
  (void)ctx;
  for (index_t r = 0; r < rows; ++r) f(r, 0, 1);
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
