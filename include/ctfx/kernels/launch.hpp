// ctfx/kernels/launch.hpp — one macro-free switch picks where kernels run: a backend value.
//
//   backend::host  a sequential loop (what Thrust's CPP system runs; the reference for the others)
//   backend::omp   Thrust on its OMP system (when compiled with OpenMP, else the same as host)
//   backend::cuda  Thrust on CUDA, on the stream the caller gives (only in nvcc-compiled code)
//
// Kernels are functors written once (CTFX_HD) and launched by `parallel_for`; they never allocate.
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
// Thrust only where it launches something: the sequential host backend is a plain loop (Thrust's
// CPP system, written out), so a host-only program does not parse Thrust (~0.8 s of g++ per file).
#if defined(_OPENMP) || defined(__CUDACC__)
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>
#endif
#if defined(_OPENMP)
#include <thrust/system/omp/execution_policy.h>
#endif
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#include <thrust/system/cuda/execution_policy.h>
#endif
#include "../core/config.hpp"

namespace ctfx {

class communicator;  // ctfx/comm/communicator.hpp

/// Where a run's kernels execute: `host` (one thread, vectorized loops), `omp` (OpenMP threads;
/// a build with OpenMP and the ctfx::omp target) or `cuda` (a CUDA device; the translation unit
/// compiled by nvcc, device pointers in the run's tensors). A run asks for one in its device_ctx,
/// or passes it alone (`plan.run(in, out, ctfx::backend::omp)`); a backend the translation unit
/// was not compiled for is refused before any write (rule backend).
enum class backend : std::uint8_t { host, omp, cuda };

/// The backend's name as messages and listings print it: "host", "omp" or "cuda".
constexpr const char* name_of(backend b) {
  return b == backend::host ? "host" : b == backend::omp ? "omp" : "cuda";
}

/// True when this translation unit can run kernels on `b` (cuda only under nvcc).
constexpr bool backend_compiled(backend b) {
#if defined(__CUDACC__)
  if (b == backend::cuda) return true;
#endif
  return b != backend::cuda;
}

/// Where a run executes: the backend and, for CUDA, the stream (null: the legacy default stream);
/// and the world it communicates over (ctfx/comm: MPI or NCCL), none for a world of one rank.
///
///     plan.run(in, out, ctfx::device_ctx{ctfx::backend::cuda, stream, &world});
///
/// On CUDA every kernel is enqueued on `stream`; the host waits for the stream only where it must
/// read what the device holds: an index check reading indices computed on the device, an MPI call
/// (MPI is not stream-ordered), the NCCL agreement before the first write.
struct device_ctx {
  backend where = backend::host;  ///< the backend the kernels run on
  void* stream = nullptr;  ///< a `cudaStream_t` for backend::cuda; unused otherwise
  communicator* comm = nullptr;  ///< the ranks' world (not owned), or null for one rank
};

// CTFX_EMULATE_DEVICE_KERNELS, a test build's switch (in a translation unit without CUDA): the
// host backends run CUDA's kernels instead of their own loops — the row functors of groups, copies
// and fills, mapped into segments and lanes as the device maps them (kernels/rows.hpp), and the
// folds of fused reductions lane by lane (kernels/warp_fold.hpp) — so that a machine without a GPU
// checks CUDA's evaluation against the reference (test/fuzz: fuzz.device_kernels).
#if defined(CTFX_EMULATE_DEVICE_KERNELS) && !defined(__CUDACC__)
inline constexpr bool emulate_device_kernels = true;
#else
inline constexpr bool emulate_device_kernels = false;
#endif
// Whether this translation unit has CUDA's kernels to run (nvcc compiles it, or the host emulates
// them). Where not, the executors leave their functors out (`if constexpr`): a host program does
// not compile them.
#if defined(__CUDACC__)
inline constexpr bool device_kernels_compiled = true;
#else
inline constexpr bool device_kernels_compiled = emulate_device_kernels;
#endif
// Whether a run on ctx takes CUDA's kernels: its backend is CUDA, or the host emulates them.
constexpr bool runs_device_kernels(const device_ctx& ctx) {
  return device_kernels_compiled && (ctx.where == backend::cuda || emulate_device_kernels);
}

template <class F>
inline void parallel_for(const device_ctx& ctx, index_t n, const F& f) {
  if (n <= 0) return;
#if defined(_OPENMP) || defined(__CUDACC__)
  thrust::counting_iterator<index_t> first(0);
#endif
  switch (ctx.where) {
    case backend::cuda:
#if defined(__CUDACC__)
      thrust::for_each_n(thrust::cuda::par_nosync.on(static_cast<cudaStream_t>(ctx.stream)), first, n, f);
      return;
#else
      break;  // not compiled in: rejected by the executor before any launch
#endif
    case backend::omp:
#if defined(_OPENMP)
      thrust::for_each_n(thrust::omp::par, first, n, f);
      return;
#else
      [[fallthrough]];
#endif
    case backend::host:
      // Thrust's CPP system is this loop; written out, it costs the compiler far less per kernel.
      for (index_t i = 0; i < n; ++i) f(i);
      return;
  }
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
