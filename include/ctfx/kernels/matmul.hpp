// ctfx/kernels/matmul.hpp — the matrix products (mm, addmm, bmm, baddbmm) as extern kernels, as
// Inductor calls them: the result is written into its planned buffer (or the caller's output),
// out = beta * c + alpha * (a @ b), batch by batch.
//   - f32, f64 on the host: a CBLAS (sgemm, dgemm), when the build has one (CTFX_HAVE_CBLAS: CMake's
//     ctfx::blas). An operand whose layout BLAS can read (one unit stride) is passed as it is,
//     transposed (CblasTrans) where its columns are the unit stride; any other is packed first.
//   - f32, f64 on CUDA: cuBLAS (cublasGemmStridedBatchedEx), with CTFX_HAVE_CUBLAS, under nvcc.
//   - i8, i32, i64: an exact loop (integer arithmetic modulo 2^bits, as PyTorch's, in any order).
// addmm and baddbmm copy c (broadcast) into the result, then accumulate the product into it with
// BLAS's beta; where the planner gave the result c's own buffer (c dies there: analysis/liveness.hpp)
// the copy is skipped and the product accumulates in place.
// ctfx: nvcc-tested-by test/cuda/matmul_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <climits>
#include <cstdint>
#include <string>
#include <vector>
#include "pointwise.hpp"
#if defined(CTFX_HAVE_CBLAS)
#include <cblas.h>
#endif
#if defined(__CUDACC__) && defined(CTFX_HAVE_CUBLAS)
#include <cublas_v2.h>
#endif

namespace ctfx::kernels {

/// Whether this build multiplies floating matrices on the host (a CBLAS is linked: ctfx::blas).
#if defined(CTFX_HAVE_CBLAS)
inline constexpr bool host_blas = true;
#else
inline constexpr bool host_blas = false;
#endif

/// How BLAS reads a matrix [r, c] with strides (sr, sc): as it is (row-major, leading dimension ld),
/// transposed (its transpose row-major), or not at all (`ok` false: pack it first).
struct gemm_layout {
  bool ok = false, trans = false;
  index_t ld = 1;
};
constexpr gemm_layout gemm_layout_of(index_t r, index_t c, index_t sr, index_t sc) {
  const index_t rc = c > 1 ? c : 1, rr = r > 1 ? r : 1;
  if ((c <= 1 || sc == 1) && (r <= 1 || sr >= rc)) return {true, false, r <= 1 ? rc : sr};
  if ((r <= 1 || sr == 1) && (c <= 1 || sc >= rr)) return {true, true, c <= 1 ? rr : sc};
  return {};
}

namespace detail {
// The 2-D matrix of batch `bi` of a rank-2 or rank-3 view.
inline strided matrix_of(const strided& v, index_t bi) {
  strided m{};
  m.dt = v.dt;
  m.rank = 2;
  const int d = v.rank - 2;
  m.p = v.p + (v.rank == 3 ? bi * v.stride[0] * static_cast<index_t>(size_of(v.dt)) : 0);
  m.size[0] = v.size[d];
  m.size[1] = v.size[d + 1];
  m.stride[0] = v.stride[d];
  m.stride[1] = v.stride[d + 1];
  return m;
}
inline strided packed_like(const strided& v, std::byte* p) {
  strided m = v;
  m.p = p;
  index_t s = 1;
  for (int d = v.rank - 1; d >= 0; --d) { m.stride[d] = s; s *= v.size[d] > 1 ? v.size[d] : 1; }
  return m;
}
inline bool fits_blas_int(const strided& v) {
  for (int d = 0; d < v.rank; ++d)
    if (v.size[d] > INT_MAX || v.stride[d] > INT_MAX) return false;
  return true;
}

// out += alpha * a @ b on one batch's matrices, out already holding beta * c's operand (BLAS's C):
// integer operands, modulo 2^bits (unsigned arithmetic), exact in any order.
template <class T>
void product_loop(const strided& o, const strided& a, const strided& b, double beta, double alpha) {
  using U = std::uint64_t;
  const U be = static_cast<U>(static_cast<std::int64_t>(beta)), al = static_cast<U>(static_cast<std::int64_t>(alpha));
  const index_t m = o.size[0], n = o.size[1], k = a.size[1];
  const T* A = reinterpret_cast<const T*>(a.p);
  const T* B = reinterpret_cast<const T*>(b.p);
  T* O = reinterpret_cast<T*>(o.p);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      U acc = 0;
      for (index_t q = 0; q < k; ++q)
        acc += static_cast<U>(static_cast<std::int64_t>(A[i * a.stride[0] + q * a.stride[1]])) *
               static_cast<U>(static_cast<std::int64_t>(B[q * b.stride[0] + j * b.stride[1]]));
      T& y = O[i * o.stride[0] + j * o.stride[1]];
      const U prev = beta == 0 ? U{0} : be * static_cast<U>(static_cast<std::int64_t>(y));
      y = static_cast<T>(static_cast<std::int64_t>(prev + al * acc));
    }
}

#if defined(CTFX_HAVE_CBLAS)
// One batch's gemm on the host: out (BLAS-readable, not transposed) = alpha * a @ b + beta * out.
template <class T>
void product_blas(const strided& o, const strided& a, const strided& b, double beta, double alpha) {
  const index_t m = o.size[0], n = o.size[1], k = a.size[1];
  gemm_layout lo = gemm_layout_of(m, n, o.stride[0], o.stride[1]);
  const gemm_layout la = gemm_layout_of(m, k, a.stride[0], a.stride[1]);
  const gemm_layout lb = gemm_layout_of(k, n, b.stride[0], b.stride[1]);
  const T* A = reinterpret_cast<const T*>(a.p);
  const T* B = reinterpret_cast<const T*>(b.p);
  T* O = reinterpret_cast<T*>(o.p);
  if (!lo.trans) {
    const auto ta = la.trans ? CblasTrans : CblasNoTrans, tb = lb.trans ? CblasTrans : CblasNoTrans;
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), float(alpha), A, int(la.ld), B, int(lb.ld), float(beta), O, int(lo.ld));
    else
      cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, A, int(la.ld), B, int(lb.ld), beta, O, int(lo.ld));
  } else {  // out's columns are its unit stride: out^T = b^T @ a^T, row-major
    const auto ta = la.trans ? CblasNoTrans : CblasTrans, tb = lb.trans ? CblasNoTrans : CblasTrans;
    if constexpr (sizeof(T) == 4)
      cblas_sgemm(CblasRowMajor, tb, ta, int(n), int(m), int(k), float(alpha), B, int(lb.ld), A, int(la.ld), float(beta), O, int(lo.ld));
    else
      cblas_dgemm(CblasRowMajor, tb, ta, int(n), int(m), int(k), alpha, B, int(lb.ld), A, int(la.ld), beta, O, int(lo.ld));
  }
}
#endif

#if defined(__CUDACC__) && defined(CTFX_HAVE_CUBLAS)
// One cuBLAS handle per host thread, bound to the run's stream at each call.
inline cublasHandle_t cublas_handle() {
  thread_local cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    cublasCreate(&x);
    return x;
  }();
  return h;
}
// The whole batch on CUDA: cuBLAS is column-major, so a row-major out = a @ b is out^T = b^T @ a^T.
// Every view BLAS-readable, out not transposed; one stride per batch dimension (zero: broadcast).
inline std::string product_cublas(const device_ctx& ctx, const strided& o, const strided& a, const strided& b, double beta, double alpha) {
  const strided o0 = matrix_of(o, 0), a0 = matrix_of(a, 0), b0 = matrix_of(b, 0);
  const index_t m = o0.size[0], n = o0.size[1], k = a0.size[1], batch = o.rank == 3 ? o.size[0] : 1;
  const gemm_layout lo = gemm_layout_of(m, n, o0.stride[0], o0.stride[1]);
  const gemm_layout la = gemm_layout_of(m, k, a0.stride[0], a0.stride[1]);
  const gemm_layout lb = gemm_layout_of(k, n, b0.stride[0], b0.stride[1]);
  cublasHandle_t h = cublas_handle();
  if (!h) return "cuBLAS: cublasCreate failed";
  cublasSetStream(h, static_cast<cudaStream_t>(ctx.stream));
  const bool f32 = o.dt == dtype::f32;
  const float af = static_cast<float>(alpha), bf = static_cast<float>(beta);
  const void* al = f32 ? static_cast<const void*>(&af) : static_cast<const void*>(&alpha);
  const void* be = f32 ? static_cast<const void*>(&bf) : static_cast<const void*>(&beta);
  const cudaDataType_t t = f32 ? CUDA_R_32F : CUDA_R_64F;
  const cublasComputeType_t ct = f32 ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_64F_PEDANTIC;
  const long long sa = a.rank == 3 ? a.stride[0] : 0, sb = b.rank == 3 ? b.stride[0] : 0, so = o.rank == 3 ? o.stride[0] : 0;
  const cublasStatus_t st = cublasGemmStridedBatchedEx(
      h, lb.trans ? CUBLAS_OP_T : CUBLAS_OP_N, la.trans ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), al, b.p, t, int(lb.ld), sb,
      a.p, t, int(la.ld), sa, be, o.p, t, int(lo.ld), so, int(batch), ct, CUBLAS_GEMM_DEFAULT);
  return st == CUBLAS_STATUS_SUCCESS ? std::string() : "cuBLAS: cublasGemmStridedBatchedEx failed (status " + std::to_string(int(st)) + ")";
}
#endif

// Scratch for packed copies (host memory, or the device's on CUDA), freed at the end of the step.
struct product_scratch {
  const device_ctx& ctx;
  std::vector<void*> blocks;
  std::byte* get(std::size_t bytes) {
    void* p = nullptr;
#if defined(__CUDACC__)
    if (ctx.where == backend::cuda) {
      cudaMallocAsync(&p, bytes ? bytes : 1, static_cast<cudaStream_t>(ctx.stream));
      blocks.push_back(p);
      return static_cast<std::byte*>(p);
    }
#endif
    p = ::operator new(bytes ? bytes : 1);
    blocks.push_back(p);
    return static_cast<std::byte*>(p);
  }
  ~product_scratch() {
    for (void* p : blocks) {
#if defined(__CUDACC__)
      if (ctx.where == backend::cuda) { cudaFreeAsync(p, static_cast<cudaStream_t>(ctx.stream)); continue; }
#endif
      ::operator delete(p);
    }
  }
};
// A packed (row-major) copy of v, unless every batch's matrix is BLAS-readable already (and, for
// the result, `plain`: not transposed). With a batch, the batch stride must be one number.
inline strided blas_view(product_scratch& s, const strided& v, bool plain) {
  const strided m = matrix_of(v, 0);
  const gemm_layout l = gemm_layout_of(m.size[0], m.size[1], m.stride[0], m.stride[1]);
  if (l.ok && (!plain || !l.trans) && fits_blas_int(v)) return v;
  const strided p = packed_like(v, s.get(static_cast<std::size_t>(v.numel()) * size_of(v.dt)));
  copy(s.ctx, p, v);
  return p;
}
}  // namespace detail

/// Why a product of `dt` cannot run on ctx in this build ("" when it can): the run-time check made
/// before the first write (a compiled<G> asks host_blas in the compiler instead).
inline std::string product_unavailable(const device_ctx& ctx, dtype dt) {
  const bool floating = dt == dtype::f32 || dt == dtype::f64;
  if (ctx.where == backend::cuda && !floating) return "integer products run on the host only (convert to f32 or f64 for cuBLAS)";
  if (!floating) return "";  // the exact loop
  if (ctx.where == backend::cuda) {
#if defined(__CUDACC__) && defined(CTFX_HAVE_CUBLAS)
    return "";
#else
    return "this translation unit has no cuBLAS: compile it with nvcc and link ctfx::blas (CUDA::cublas)";
#endif
  }
  return host_blas ? "" : "this build has no BLAS for floating products on the host: link ctfx::blas (a CBLAS such as OpenBLAS)";
}

/// The result `out` of a product node: beta * c + alpha * (a @ b) (c null: mm or bmm, beta 0), each
/// view of rank 2 (mm, addmm) or 3 (bmm, baddbmm; c broadcast to out's shape). Returns the reason
/// when it cannot run (no BLAS for this dtype in this build, a failed cuBLAS call), else "".
inline std::string run_product(const device_ctx& ctx, const strided& out, const strided* c, const strided& a, const strided& b,
                               double beta, double alpha) {
  if (!c) beta = 0;
  const bool floating = out.dt == dtype::f32 || out.dt == dtype::f64;
  const bool on_device = ctx.where == backend::cuda;
  if (std::string e = product_unavailable(ctx, out.dt); !e.empty()) return e;
  if (out.numel() == 0) return "";
  // c into out (broadcast), unless the result already lives in c's own memory, laid out alike.
  if (c && beta != 0) {
    bool same = c->p == out.p && c->rank == out.rank && c->dt == out.dt;
    for (int d = 0; same && d < out.rank; ++d) same = c->size[d] == out.size[d] && (out.size[d] == 1 || c->stride[d] == out.stride[d]);
    if (!same) copy(ctx, out, c->broadcast_to(out.rank, out.size));
  }
  detail::product_scratch s{ctx, {}};
  if (!floating) {
    const index_t batch = out.rank == 3 ? out.size[0] : 1;
    for (index_t bi = 0; bi < batch; ++bi) {
      const strided o = detail::matrix_of(out, bi), x = detail::matrix_of(a, bi), y = detail::matrix_of(b, bi);
      visit_dtype(out.dt, [&](auto dd) {
        using T = element_t<decltype(dd)::value>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) detail::product_loop<T>(o, x, y, beta, alpha);
      });
    }
    return "";
  }
  if (a.size[a.rank - 1] == 0 || (out.rank == 3 && out.size[0] == 0)) {  // no terms: beta * c (0 for mm)
    if (beta == 0) fill(ctx, out, 0.0);
    else if (beta != 1) {
      // PyTorch's CPU addmm with no terms: c copied, then mul_(beta) (the scalar in out's dtype)
      binary(ctx, dynamic_op{op_kind::mul}, out, out, nullptr, scalar_value(beta).rounded_to(out.dt));
    }
    return "";
  }
  const strided o = detail::blas_view(s, out, on_device);  // (the host's gemm writes a transposed result too)
  if (o.p != out.p && c && beta != 0) copy(ctx, o, out);  // the packed result starts from c
  const strided x = detail::blas_view(s, a, false), y = detail::blas_view(s, b, false);
  (void)x, (void)y;  // (a build with neither BLAS returned above)
  std::string e;
#if defined(__CUDACC__) && defined(CTFX_HAVE_CUBLAS)
  if (on_device) e = detail::product_cublas(ctx, o, x, y, beta, alpha);
#endif
#if defined(CTFX_HAVE_CBLAS)
  if (!on_device) {
    const index_t batch = out.rank == 3 ? out.size[0] : 1;
    for (index_t bi = 0; bi < batch; ++bi) {
      const strided ob = detail::matrix_of(o, bi), xb = detail::matrix_of(x, bi), yb = detail::matrix_of(y, bi);
      if (out.dt == dtype::f32) detail::product_blas<float>(ob, xb, yb, beta, alpha);
      else detail::product_blas<double>(ob, xb, yb, beta, alpha);
    }
  }
#endif
  if (e.empty() && o.p != out.p) copy(ctx, out, o);
  return e;
}

}  // namespace ctfx::kernels
#include "../core/diagnostics_pop.hpp"
