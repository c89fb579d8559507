// ctfx/kernels/math.hpp — e^x for f32 from IEEE float additions, multiplications and fused
// multiply-adds only, so every backend gets the same bits: the host's scalar loop, its vectorized
// loop (any vector width) and CUDA's threads (glibc's expf and CUDA's expf differ from each other
// in the last place, and a libm call keeps a loop from vectorizing). A fused multiply-add rounds
// once, so it too has one result everywhere: the FMA instruction where the code is compiled for it
// (CUDA, the host's AVX2 and AVX-512 levels, a -march that has it), libm's fmaf (correctly rounded)
// elsewhere. It stays in float, so a vector holds as many lanes as the data: over all 2^32 floats
// it is within 0.874 ulp of e^x (SLEEF's expf, which PyTorch's CPU kernels use, is within 1 ulp;
// CUDA's expf within 2) and differs from e^x correctly rounded on 0.45% of the inputs in its finite
// range (test/unit/kernels_math_test.cpp checks a sample of them).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cmath>
#include <cstdint>
#include <type_traits>
#include "../core/config.hpp"

namespace ctfx::kernels::math {

namespace detail {
// a·b + c rounded once, in arithmetic a constant expression allows: a·b is exact in double (24 + 24
// bits), the sum is rounded to odd (two-sum's error decides the last bit), and rounding that to
// float is then correct (Boldo & Melquiond: an odd rounding with 2 more bits than the target).
CTFX_HD constexpr float fma_exact(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b), cd = c;
  const double s = p + cd;
  if (!(s - s == 0.0)) return static_cast<float>(s);  // inf or NaN: nothing to round
  const double bv = s - p;
  const double e = (p - (s - bv)) + (cd - bv);
  std::uint64_t bits = __builtin_bit_cast(std::uint64_t, s);
  if (e != 0.0 && (bits & 1u) == 0u) bits += ((e > 0.0) == (s > 0.0)) ? 1 : std::uint64_t(-1);
  return static_cast<float>(__builtin_bit_cast(double, bits));
}
}  // namespace detail

/// a·b + c rounded once (IEEE fusedMultiplyAdd), the same bits on every backend: CUDA's fmaf, the
/// FMA instruction where the host code is compiled for it, libm's fmaf otherwise, and an exact
/// emulation in constant expressions.
CTFX_INLINE CTFX_HD constexpr float fma_f32(float a, float b, float c) {
  if (__builtin_is_constant_evaluated()) return detail::fma_exact(a, b, c);
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return __builtin_fmaf(a, b, c);
#endif
}

// e^x = 2^k · e^r with k = round(x / ln 2), |r| ≤ ln 2 / 2 and r = x − k·ln2 in two FMAs (the
// first exact); e^r = 1 + r·(1 + r·p(r)) by Horner's rule in FMAs, p of degree 5 fitted to relative
// error 2^-29.8 on that interval, so the last FMA is the one rounding that matters. 2^k is applied
// in two exact halves so that k ∈ [-150, 128] needs no special case for subnormal or overflowing
// results. Selects are integer masks and min/max, never float compares: under the default
// -ftrapping-math a float compare keeps g++ from vectorizing the loop.
CTFX_INLINE CTFX_HD constexpr float exp_f32(float xf) {
  const std::uint32_t u = __builtin_bit_cast(std::uint32_t, xf);
  // Clamp x to [-104, 89] on its bits, two integer minimums (NaN is restored at the end): beyond it
  // the result rounds to 0 or overflows to inf. As unsigned integers the negative floats, -NaN
  // included, lie above every positive one and grow with their magnitude; as signed integers the
  // positive floats, +NaN included, grow with theirs and lie above every negative one.
  constexpr std::uint32_t lo = 0xc2d00000u;     // bits of -104.0f
  constexpr std::int32_t hi = 0x42b20000;       // bits of 89.0f
  const std::uint32_t v = u > lo ? lo : u;
  const std::int32_t s = static_cast<std::int32_t>(v) > hi ? hi : static_cast<std::int32_t>(v);
  const float x = __builtin_bit_cast(float, s);
  constexpr float inv_ln2 = 0x1.715476p0f;
  constexpr float shifter = 0x1.8p23f;  // adding it rounds to an integer, kept in the low mantissa bits
  constexpr float ln2_hi = 0x1.62e430p-1f, ln2_lo = -0x1.05c610p-29f;  // ln 2 = ln2_hi + ln2_lo + O(2^-54)
  const float ks = fma_f32(x, inv_ln2, shifter);
  const float k = ks - shifter;
  const float r = fma_f32(k, -ln2_lo, fma_f32(k, -ln2_hi, x));
  float p = 0x1.9f085cp-13f;
  p = fma_f32(p, r, 0x1.6d8d52p-10f);
  p = fma_f32(p, r, 0x1.111272p-7f);
  p = fma_f32(p, r, 0x1.55548ep-5f);
  p = fma_f32(p, r, 0x1.555554p-3f);
  p = fma_f32(p, r, 0.5f);
  const float y = fma_f32(fma_f32(p, r, 1.0f), r, 1.0f);
  // 2^k as 2^k1 · 2^k2 (k's low bits are ks's), each a normal float.
  const std::int32_t ki = __builtin_bit_cast(std::int32_t, ks) - 0x4b400000;
  const std::int32_t k1 = ki >> 1, k2 = ki - k1;
  const float two_k1 = __builtin_bit_cast(float, (k1 + 127) << 23), two_k2 = __builtin_bit_cast(float, (k2 + 127) << 23);
  const std::uint32_t result = __builtin_bit_cast(std::uint32_t, (y * two_k1) * two_k2);
  // A NaN returns itself, quieted (as libm's does).
  const std::uint32_t nan = 0u - static_cast<std::uint32_t>((u & 0x7fffffffu) > 0x7f800000u);
  return __builtin_bit_cast(float, result ^ (nan & (result ^ (u | 0x400000u))));
}

// e^x as every kernel and the ops' reference semantics compute it: f32 by exp_f32, others by libm.
template <class T>
CTFX_INLINE CTFX_HD constexpr T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32(x);
  else return static_cast<T>(std::exp(x));
}

}  // namespace ctfx::kernels::math
#include "../core/diagnostics_pop.hpp"
