// ctfx/core/config.hpp — limits and portability macros shared by every header.
#pragma once
#include "diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>

// g++'s own front end doing the constant evaluation (not clang, nvcc's EDG, or another compiler
// that defines __GNUC__): the constant-evaluation paths tuned for g++ key on this one test.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && !defined(__NVCOMPILER) && \
    !defined(__INTEL_COMPILER) && !defined(__INTEL_LLVM_COMPILER)
#define CTFX_GXX_FRONTEND 1
#else
#define CTFX_GXX_FRONTEND 0
#endif

#if defined(__CUDACC__)
#define CTFX_HD __host__ __device__
#else
#define CTFX_HD
#endif

// Small math a vectorized loop calls per element: inlined always, since a call left in the loop
// keeps it scalar (g++'s heuristics otherwise decline a function of some 40 operations once it has
// callers in several kernels).
#if defined(__CUDACC__)
#define CTFX_INLINE __forceinline__
#elif defined(__GNUC__)
#define CTFX_INLINE [[gnu::always_inline]] inline
#else
#define CTFX_INLINE inline
#endif

// A large body that many kernels call (the runtime_plan interpreter): one function, called, not a
// copy inlined into each kernel (under nvcc, inlined, each fold kernel's PTX grew to ~170,000 lines
// and the CUDA test's compile from 1 to 4 minutes).
#if defined(__CUDACC__)
#define CTFX_NOINLINE __noinline__
#elif defined(__GNUC__)
#define CTFX_NOINLINE [[gnu::noinline]]
#else
#define CTFX_NOINLINE
#endif

namespace ctfx {
/// Tensors of rank up to 6 cover the use cases (KV caches are rank 4); a fixed bound keeps a node a
/// plain structural value.
inline constexpr int max_rank = 6;
/// Node and symbol names are short identifiers stored inline.
inline constexpr int max_name = 32;
/// Extents, strides, offsets and dimension numbers: signed 64-bit, as PyTorch's.
using index_t = std::int64_t;
/// Sentinel for "to the end of the dimension" (PyTorch's sys.maxsize default of slice's end).
inline constexpr index_t end_of_dim = INT64_MAX;
}  // namespace ctfx
#include "diagnostics_pop.hpp"
