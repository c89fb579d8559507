// ctfx/kernels/math.hpp — e^x for f32 from IEEE float additions and multiplications only, so every
// backend gets the same bits: the host's scalar loop, its vectorized loop (any vector width) and
// CUDA's threads (glibc's expf and CUDA's expf differ from each other in the last place, and a libm
// call keeps a loop from vectorizing). It stays in float, so a vector holds as many lanes as the
// data: over all 2^32 floats it is within 0.77 ulp of e^x (SLEEF's expf, which PyTorch's CPU kernels
// use, is within 1 ulp; CUDA's expf within 2) and differs from e^x correctly rounded on 0.12% of the
// inputs in its finite range (test/unit/kernels_math_test.cpp checks a sample of them).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>
#include "../core/config.hpp"

namespace ctfx::kernels::math {

// e^x = 2^k · e^r with k = round(x / ln 2) and |r| ≤ ln 2 / 2. r is kept as r + r_lo (the rounding
// error of its last subtraction) and 1 + r as the exact pair one_hi + one_lo, so the one rounding
// that matters is the last addition; e^r − 1 − r = r² · p(r), p of degree 5 fitted to relative error
// 2^-29.8 on that interval. 2^k is applied in two exact halves so that k ∈ [-150, 128] needs no
// special case for subnormal or overflowing results. Selects are integer masks and min/max, never
// float compares: under the default -ftrapping-math a float compare keeps g++ from vectorizing the
// loop.
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
  constexpr float ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cp-20f;  // k · ln2_hi and x − k · ln2_hi are exact
  const float ks = x * inv_ln2 + shifter;
  const float k = ks - shifter;
  const float a = x - k * ln2_hi, b = k * ln2_lo;
  const float r = a - b;
  const float r_lo = (a - r) - b;
  float p = 0x1.9f085cp-13f;
  p = p * r + 0x1.6d8d52p-10f;
  p = p * r + 0x1.111272p-7f;
  p = p * r + 0x1.55548ep-5f;
  p = p * r + 0x1.555554p-3f;
  p = p * r + 0.5f;
  const float one_hi = 1.0f + r;
  const float one_lo = (1.0f - one_hi) + r;  // exact: |r| < 1
  const float y = one_hi + (one_lo + (r_lo + p * (r * r)));
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
