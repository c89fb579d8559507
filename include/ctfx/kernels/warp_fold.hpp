// ctfx/kernels/warp_fold.hpp — a reduction's outputs folded one warp per output on CUDA, in
// kernels/reduce.hpp's order, so the results are the bits the host's fold computes:
//   - a sum in lanes: lane l of the warp adds values l, l + 32, l + 64, ... from +0 (exactly
//     fold_acc's lane l), and lane 0 adds the lanes reached in order (fold_acc::in_order);
//   - a maximum or minimum: the sequential fold's answer depends only on the values and their positions (the
//     first NaN, else the first of the values equal to the largest), so each lane folds its values
//     keeping the position of its answer, and lane 0 merges the 32 answers by position.
// Each lane reads values l, l + 32, ...: a warp reads 32 neighbours at a time (coalesced where
// the values are consecutive in memory), and the outputs' work spreads over 32 times the threads.
// Not CUB's WarpReduce or DeviceSegmentedReduce: they add in a tree of their own, whose order the
// host could not reproduce, and a float sum's bits depend on the order.
//
// A fold is a functor F: `source(o)`, what output o reads (a pointer, or where its values start:
// fused.hpp's fold_start); `value(s, r)`, value r of it as C; `store(o, v)`; and, optionally,
// `per_dispatch` and `values(s, r, step, m, x)`, several values at once (fold_batch).
// fold_by_warps runs it on CUDA; in a translation unit without CUDA (or on another backend) it
// runs the 32 lanes one after the other (fold_by_lanes): the tests check the order and each
// functor against fold_acc that way, without a GPU.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstring>
#include <type_traits>
#include "launch.hpp"
#include "pointwise.hpp"
#if defined(__CUDACC__)
#include <thrust/system/cuda/error.h>
#include <thrust/system_error.h>
#endif

namespace ctfx::kernels {

// The lanes a warp folds with: reduce.hpp's lanes of a sum.
inline constexpr int warp_lanes = 32;

// What a reduction folds its values with: a sum (a mean's too), a maximum (amax), a minimum (amin)
// or a product (prod: never folded by warps; reduce.hpp's prod_run order).
enum class fold_op : std::uint8_t { sum, max, min, prod };
// The fold of a reduction node: amax (argmax) a maximum, amin (argmin) a minimum, prod a product,
// the others a sum.
CTFX_HD constexpr fold_op fold_of(op_kind k) {
  return k == op_kind::amax || k == op_kind::argmax ? fold_op::max
         : k == op_kind::amin || k == op_kind::argmin ? fold_op::min
         : k == op_kind::prod ? fold_op::prod : fold_op::sum;
}
// Whether the maximum or minimum fold of a then b (a the earlier value) answers b, as pointwise.hpp's
// maximum and minimum do: a NaN on either side, the first; else the larger (the smaller), and of
// equal values (-0 and +0 among them) the first.
template <class C>
CTFX_HD inline bool fold_takes(fold_op f, C a, C b) {
  if constexpr (!std::is_integral_v<C>) {
    if (a != a) return false;
    if (b != b) return true;
  }
  return f == fold_op::min ? b < a : a < b;
}
// The maximum or minimum fold's answer for a then b.
template <class C>
CTFX_HD inline C fold_extremum(fold_op f, C a, C b) { return fold_takes(f, a, b) ? b : a; }

// How many values a fold F computes at once: its `per_dispatch` where it has `values(s, r, step,
// m, x)` (x[t] = value r + t * step, t < m: a runtime_plan group, whose ops then dispatch once for
// them), else 1. A lane still adds its values in their order.
template <class F>
constexpr int fold_batch() {
  if constexpr (requires { F::per_dispatch; }) return F::per_dispatch;
  else return 1;
}
// Values r, r + step, ... of output src into x[0, m), m = the count of them before n, at most B.
template <int B, class C, class F, class S>
CTFX_HD inline int fold_values(const F& f, const S& src, index_t r, index_t step, index_t n, C* x) {
  const index_t left = (n - r + step - 1) / step;
  const int m = left < B ? static_cast<int>(left) : B;
  if constexpr (B > 1) f.values(src, r, step, m, x);
  else x[0] = f.value(src, r);
  return m;
}

// One lane's fold: its sum, or its maximum (minimum) and the position of that value (-1: no value yet).
template <class C>
struct lane_fold {
  C v = C(0);
  index_t at = -1;

  CTFX_HD void add(fold_op f, C x, index_t r) {
    if (f == fold_op::sum) {
      v = wrap_add(v, x);
    } else if (at < 0 || fold_takes(f, v, x)) {
      v = x;
      at = r;
    }
  }
  // Folds the next lane in: a sum adds it; a maximum or minimum keeps the answer of the two values
  // in the order of their positions.
  CTFX_HD void merge(fold_op f, const lane_fold& b) {
    if (f == fold_op::sum) {
      v = wrap_add(v, b.v);
    } else if (b.at >= 0 && (at < 0 || (b.at > at ? fold_takes(f, v, b.v) : !fold_takes(f, b.v, v)))) {
      *this = b;
    }
  }
};

// The lanes reached by n values (fold_acc::in_order adds only those).
CTFX_HD inline int lanes_used(index_t n) { return n < warp_lanes ? static_cast<int>(n) : warp_lanes; }

// Output o's fold with its 32 lanes run one after the other: the warp's order, on the host.
template <class C, class F>
C fold_by_lanes(const F& f, index_t o, index_t n, fold_op fold) {
  const auto src = f.source(o);
  lane_fold<C> lane[warp_lanes];
  constexpr int B = fold_batch<F>();
  for (int l = 0; l < warp_lanes; ++l)
    for (index_t r = l; r < n; r += warp_lanes * B) {
      C x[B];
      const int m = fold_values<B>(f, src, r, warp_lanes, n, x);
      for (int t = 0; t < m; ++t) lane[l].add(fold, x[t], r + t * warp_lanes);
    }
  lane_fold<C> t = lane[0];
  for (int l = 1; l < lanes_used(n); ++l) t.merge(fold, lane[l]);
  return t.v;
}

#if defined(__CUDACC__)
// x of lane `src` of the warp (every lane of the warp calls it).
template <class T>
__device__ T lane_value(T x, int src) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a fold's value is float, double or int64");
  if constexpr (sizeof(T) == 4) {
    unsigned u;
    std::memcpy(&u, &x, 4);
    u = __shfl_sync(0xffffffffu, u, src);
    std::memcpy(&x, &u, 4);
  } else {
    unsigned long long u;
    std::memcpy(&u, &x, 8);
    u = __shfl_sync(0xffffffffu, u, src);
    std::memcpy(&x, &u, 8);
  }
  return x;
}

// A grid-stride loop over the outputs, one warp each (blocks of whole warps, so every lane of a
// warp takes the same outputs and the shuffles have all 32).
template <class C, class F>
__global__ void fold_by_warps_kernel(F f, index_t outputs, index_t n, fold_op fold) {
  const int lane = static_cast<int>(threadIdx.x) % warp_lanes;
  const index_t warps = static_cast<index_t>(gridDim.x) * blockDim.x / warp_lanes;
  for (index_t o = (static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp_lanes; o < outputs; o += warps) {
    const auto src = f.source(o);
    lane_fold<C> mine;
    constexpr int B = fold_batch<F>();
    for (index_t r = lane; r < n; r += warp_lanes * B) {
      C x[B];
      const int m = fold_values<B>(f, src, r, warp_lanes, n, x);
      for (int t = 0; t < m; ++t) mine.add(fold, x[t], r + t * warp_lanes);
    }
    lane_fold<C> t = mine;
    for (int l = 1; l < warp_lanes; ++l) {
      lane_fold<C> b;
      b.v = lane_value(mine.v, l);
      b.at = lane_value(mine.at, l);
      if (l < lanes_used(n)) t.merge(fold, b);
    }
    if (lane == 0) f.store(o, t.v);
  }
}
#endif

// The outputs [0, outputs) of fold f, each of n values: one warp per output on CUDA, the lanes one
// after the other elsewhere.
template <class C, class F>
void fold_by_warps(const device_ctx& ctx, const F& f, index_t outputs, index_t n, fold_op fold) {
  if (outputs <= 0) return;
#if defined(__CUDACC__)
  if (ctx.where == backend::cuda) {
    constexpr int block = 256;
    constexpr index_t per_block = block / warp_lanes, max_blocks = index_t{1} << 16;
    const index_t blocks = (outputs + per_block - 1) / per_block;
    const auto grid = static_cast<unsigned>(blocks < max_blocks ? blocks : max_blocks);
    fold_by_warps_kernel<C><<<grid, block, 0, static_cast<cudaStream_t>(ctx.stream)>>>(f, outputs, n, fold);
    if (const cudaError_t e = cudaPeekAtLastError(); e != cudaSuccess)
      throw thrust::system_error(e, thrust::cuda_category(), "ctfx::kernels::fold_by_warps: launch");
    return;
  }
#endif
  (void)ctx;
  for (index_t o = 0; o < outputs; ++o) f.store(o, fold_by_lanes<C>(f, o, n, fold));
}

// A fused reduction's outputs on CUDA: one warp each when they fold a warp's worth of values, else
// one thread each (f(o): fold_acc over its values, the same order).
template <class C, class F>
void fold_outputs_on_device(const device_ctx& ctx, const F& f, index_t outputs, index_t n, fold_op fold) {
  if (n >= warp_lanes) fold_by_warps<C>(ctx, f, outputs, n, fold);
  else parallel_for(ctx, outputs, f);
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
