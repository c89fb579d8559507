// ctfx/core/isa.hpp — the host's hot loops compiled for more than the build's baseline ISA, and the
// widest one the CPU has picked at run time, as PyTorch's CPU kernels pick theirs.
//
// A default x86-64 build targets SSE2; the loops that carry a plan's arithmetic (a `compiled<G>`
// group's rows, a fused sum's direct fold, a reduction's row and run folds) are also instantiated
// inside functions compiled for AVX2 and for AVX-512 (`target` attributes), and `on_host_isa` calls
// the one for `isa::current()`: a branch per row or run, not per element. The bits do not depend on
// the level: each element is computed by the same operations in the same order, -ffp-contract=off
// keeps a multiply and an add two roundings at every level (a fused multiply-add is only where the
// source writes one, kernels/math.hpp's fma_f32, and rounds once everywhere), and a sum's 32 lanes
// are the fold order's, not the vector's. Plain functions rather than target_clones/ifuncs: clang 14
// emits an ifunc's resolver in every object file (a multiple definition at link time) and refuses
// target_clones on templates, and the loader runs a resolver before a sanitizer's runtime is up.
//
// On with g++ and clang on x86-64 where the build does not already target AVX-512; off under nvcc
// (it compiles the CUDA path) and with CTFX_NO_ISA_CLONES defined. The environment variable
// CTFX_ISA=baseline|avx2|avx512 caps the level for a run (read once, at the first use), and
// `isa::use(level)` sets it from code (tests compare the levels' bits; benchmarks compare speed).
#pragma once
#include "diagnostics_push.hpp"
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include "config.hpp"

#if (CTFX_GXX_FRONTEND || (defined(__clang__) && !defined(__CUDACC__))) && defined(__x86_64__) && \
    !defined(__AVX512F__) && !defined(CTFX_NO_ISA_CLONES)
#define CTFX_HOST_ISA_LEVELS 1
#else
#define CTFX_HOST_ISA_LEVELS 0
#endif

// The loop body handed to on_host_isa is inlined into each level's function (and so compiled for
// that level, with its cost model), and with g++ and no levels into the chunk function that
// carries CTFX_VECTORIZE (kernels/fused.hpp); a body the compiler cannot inline is a compile
// error, not a silently scalar loop.
#if CTFX_HOST_ISA_LEVELS || CTFX_GXX_FRONTEND
#define CTFX_ISA_BODY __attribute__((always_inline))
#else
#define CTFX_ISA_BODY
#endif

// The functions that hold the hot loops ask g++ for -O3's vectorizer cost model at any -O level.
// At -O2 g++ 12 uses its "very cheap" model, which vectorizes only a loop that needs no run-time
// alias check and no remainder loop: every row loop of a plan needs both (its operands are
// pointers, its length a run-time value), so at -O2 they all stayed scalar, 3-9x slower than at
// -O3 (bench/RESULTS.md). The attribute adds to the command line's options (-ffp-contract=off
// stays); clang vectorizes at -O2 already, and nvcc compiles none of these loops.
// A build that targets AVX-512 itself (-march=native on an AVX-512 CPU) also gets 512-bit vectors
// in those functions, as the AVX-512 level of a default build has them: g++ 12 tunes an AVX-512
// CPU it does not know (Zen 5) as rocketlake, which prefers 256 bits, and softmax [2048, 1024] then
// took 1.75-1.82 against 1.31-1.38 ms (bench/RESULTS.md). CTFX_KEEP_VECTOR_WIDTH keeps the build's
// preference (-mprefer-vector-width) in them too.
#if CTFX_GXX_FRONTEND && defined(__AVX512F__) && !defined(CTFX_KEEP_VECTOR_WIDTH)
#define CTFX_VECTORIZE __attribute__((optimize("vect-cost-model=dynamic"), target("prefer-vector-width=512")))
#elif CTFX_GXX_FRONTEND
#define CTFX_VECTORIZE __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define CTFX_VECTORIZE
#endif

/// The instruction-set levels of the host's hot loops, and which one runs (see core/isa.hpp).
namespace ctfx::isa {

/// The instruction-set levels the host's hot loops are compiled for, narrowest first.
enum class level : int {
  baseline = 0,  ///< the build's own target (SSE2 in a default x86-64 build)
  avx2 = 1,      ///< AVX2 and FMA
  avx512 = 2     ///< AVX-512F and FMA
};

/// The level's name as CTFX_ISA spells it: "baseline", "avx2" or "avx512".
inline constexpr const char* name(level l) {
  return l == level::avx512 ? "avx512" : l == level::avx2 ? "avx2" : "baseline";
}
/// Prints name(l).
inline std::ostream& operator<<(std::ostream& os, level l) { return os << name(l); }

/// The widest level this build compiled and this CPU (and its OS, for the vector state) runs.
inline level supported() {
#if CTFX_HOST_ISA_LEVELS
  const bool fma = __builtin_cpu_supports("fma");
  if (fma && __builtin_cpu_supports("avx512f")) return level::avx512;
#if !defined(__AVX2__)
  if (fma && __builtin_cpu_supports("avx2")) return level::avx2;
#endif
#endif
  return level::baseline;
}

namespace detail {
// l, or supported() where l is wider: a level the CPU cannot run is never chosen.
inline level capped(level l) {
  const level top = supported();
  return static_cast<int>(l) < static_cast<int>(top) ? l : top;
}
// The level CTFX_ISA names, capped at what is supported; an unknown name keeps the supported level
// and says so once on stderr.
inline level from_environment() {
  const level top = supported();
  const char* v = std::getenv("CTFX_ISA");
  if (v == nullptr || *v == '\0') return top;
  for (level l : {level::baseline, level::avx2, level::avx512})
    if (std::strcmp(v, name(l)) == 0) return capped(l);
  std::fprintf(stderr, "ctfx: CTFX_ISA=%s is not a level; use baseline, avx2 or avx512 (running %s)\n", v, name(top));
  return top;
}
inline std::atomic<int>& chosen() {
  static std::atomic<int> l{static_cast<int>(from_environment())};
  return l;
}
}  // namespace detail

/// The level the hot loops run at now: CTFX_ISA's (or supported()) until use() sets another.
inline level current() { return static_cast<level>(detail::chosen().load(std::memory_order_relaxed)); }

/// Runs the hot loops at `l`, capped at supported(); returns the level that was current. Meant for
/// tests and benchmarks, between runs: a run that is under way may see either level.
inline level use(level l) {
  return static_cast<level>(detail::chosen().exchange(static_cast<int>(detail::capped(l)), std::memory_order_relaxed));
}

#if CTFX_HOST_ISA_LEVELS
namespace detail {
template <class F>
__attribute__((target("avx512f,fma"))) CTFX_VECTORIZE decltype(auto) at_avx512(F& f) { return f(); }
#if !defined(__AVX2__)
template <class F>
__attribute__((target("avx2,fma"))) CTFX_VECTORIZE decltype(auto) at_avx2(F& f) { return f(); }
#endif
template <class F>
CTFX_VECTORIZE decltype(auto) at_build(F& f) { return f(); }
}  // namespace detail
#endif

/// Calls f (a lambda marked CTFX_ISA_BODY, which inlines its body) compiled for current(). Without
/// the levels (a build that targets AVX-512 already) f runs inline in its caller, which carries
/// CTFX_VECTORIZE itself: a function with it is never inlined into one without, so the callers are
/// functions called once per kernel or chunk, never per row (that call per row cost RoPE's short
/// rows a third more time: 3.9-4.6 against 3.1-3.2 us, -march=native -O3).
template <class F>
CTFX_INLINE decltype(auto) on_host_isa(F&& f) {
#if CTFX_HOST_ISA_LEVELS
  switch (current()) {
    case level::avx512: return detail::at_avx512(f);
#if !defined(__AVX2__)
    case level::avx2: return detail::at_avx2(f);
#endif
    default: return detail::at_build(f);
  }
#else
  return f();
#endif
}

}  // namespace ctfx::isa
#include "diagnostics_pop.hpp"
