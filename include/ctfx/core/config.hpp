// ctfx/core/config.hpp — limits and portability macros shared by every header.
#pragma once
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

// The host's hot loops (a fused group's rows, a reduction's folds) compiled for more than the
// build's baseline ISA, picked once when the program loads (g++'s target_clones, an ELF ifunc): a
// default x86-64 build still runs 256- and 512-bit vector code on a CPU that has it, as PyTorch's
// CPU kernels do. The bits do not depend on the clone: the loops compute per element in a fixed
// order, -ffp-contract=off keeps FMA out of every clone, and the sums' 32 lanes are fixed (reduce.hpp).
// Only g++ on x86-64 Linux: clang 14 defines each clone's resolver once per object file (a multiple
// definition at link time), and nvcc compiles the CUDA path. Not where the build already targets
// AVX-512, nor under a sanitizer (the loader runs a clone's resolver before ThreadSanitizer's
// runtime is up, and the instrumented resolver faults), nor with CTFX_NO_ISA_CLONES defined.
#if CTFX_GXX_FRONTEND && defined(__x86_64__) && defined(__linux__) && !defined(__AVX512F__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__) && !defined(CTFX_NO_ISA_CLONES)
#if defined(__AVX2__)
#define CTFX_ISA_CLONES __attribute__((target_clones("default", "avx512f")))
#else
#define CTFX_ISA_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#endif
#else
#define CTFX_ISA_CLONES
#endif

namespace ctfx {
// Tensors of rank up to 6 cover the use cases (KV caches are rank 4); a fixed bound keeps a node a
// plain structural value.
inline constexpr int max_rank = 6;
// Node and symbol names are short identifiers stored inline.
inline constexpr int max_name = 32;
using index_t = std::int64_t;
// Sentinel for "to the end of the dimension" (PyTorch's sys.maxsize default of slice's end).
inline constexpr index_t end_of_dim = INT64_MAX;
}  // namespace ctfx
