// ctfx/kernels/scan.hpp — cumsum, cumprod and logcumsumexp: each row along a dimension summed
// (multiplied, log-sum-exp'ed) sequentially from its start, out[..., j, ...] = x[..., 0, ...] + ... +
// x[..., j, ...], as PyTorch's CPU kernel computes it: in its accumulation type (double for f32 and
// f64, float for f16 and bf16, int64 wrapping for the integers, which the front ends have converted
// to int64), each prefix rounded to the dtype once. logcumsumexp folds each element x into the
// running value y as PyTorch's _log_add_exp_helper: log1p(exp(min - max)) + max (libm's, in the
// accumulation type), y itself where both are the same infinity, NaN propagating.
// One thread per row on CUDA, the same loop on the host: every backend gives the same bits.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cmath>
#include <limits>
#include "pointwise.hpp"

namespace ctfx::kernels {

// The type a cumsum of dtype D accumulates in (PyTorch's at::acc_type on the CPU).
template <dtype D>
using scan_acc_t = std::conditional_t<D == dtype::f32, double, compute_t<D>>;

// What a scan folds.
enum class scan_op : std::uint8_t { sum, product, logsumexp };
constexpr scan_op scan_of(op_kind k) {
  return k == op_kind::cumprod ? scan_op::product : k == op_kind::logcumsumexp ? scan_op::logsumexp : scan_op::sum;
}

// PyTorch's _log_add_exp_helper(x, y) on the CPU, std::min/std::max's NaN rules included (each
// returns its first argument when the comparison is false).
template <class A>
CTFX_HD A log_add_exp(A x, A y) {
  const bool y_nan = y != y;
  const A lo = y_nan ? y : (y < x ? y : x), hi = y_nan ? y : (x < y ? y : x);
  if (lo != hi || (lo - lo == lo - lo)) return std::log1p(std::exp(lo - hi)) + hi;  // (lo - lo == 0: lo is finite)
  return x;  // the same infinity twice
}

// Row r: the elements along `dim` (the other dimensions fixed at r's position in row-major order).
template <dtype D>
struct cumsum_fn {
  strided out, in;
  scan_op op = scan_op::sum;  // cumprod: each prefix multiplied (from 1); logcumsumexp: from -inf
  int dim = 0;  // -1: a 0-d tensor, one row of one element
  CTFX_HD void operator()(index_t r) const {
    using A = scan_acc_t<D>;
    index_t ooff = 0, ioff = 0;
    for (int d = out.rank - 1; d >= 0; --d) {
      if (d == dim) continue;
      const index_t c = r % out.size[d];
      r /= out.size[d];
      ooff += c * out.stride[d];
      ioff += c * in.stride[d];
    }
    const index_t n = dim < 0 ? 1 : out.size[dim], os = dim < 0 ? 0 : out.stride[dim], is = dim < 0 ? 0 : in.stride[dim];
    const auto* x = reinterpret_cast<const element_t<D>*>(in.p) + ioff;
    auto* o = reinterpret_cast<element_t<D>*>(out.p) + ooff;
    if constexpr (is_floating(D)) {
      if (op == scan_op::logsumexp) {
        A acc = -std::numeric_limits<A>::infinity();
        for (index_t j = 0; j < n; ++j) {
          acc = log_add_exp(load_as<D, A>(x + j * is), acc);
          store_as<D, A>(o + j * os, acc);
        }
        return;
      }
    }
    const bool product = op == scan_op::product;
    A acc = product ? A(1) : A(0);
    for (index_t j = 0; j < n; ++j) {
      acc = product ? wrap_mul(acc, load_as<D, A>(x + j * is)) : wrap_add(acc, load_as<D, A>(x + j * is));
      store_as<D, A>(o + j * os, acc);
    }
  }
};

// out = the scan `op` of `in` along `dim` (of `in`'s dtype, which is out's).
template <dtype D>
inline void cumsum_typed(const device_ctx& ctx, scan_op op, const strided& out, const strided& in, int dim) {
  const index_t n = out.numel();
  if (n == 0) return;
  parallel_for(ctx, dim < 0 ? 1 : n / out.size[dim], cumsum_fn<D>{out, in, op, dim});
}
inline void cumsum(const device_ctx& ctx, scan_op op, const strided& out, const strided& in, int dim) {
  visit_dtype(out.dt, [&](auto d) { cumsum_typed<decltype(d)::value>(ctx, op, out, in, dim); });
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
