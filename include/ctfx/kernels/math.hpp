// ctfx/kernels/math.hpp — e^x for f32 from IEEE additions and multiplications only, so every
// backend gets the same bits: the host's scalar loop, its vectorized loop (any vector width) and
// CUDA's threads (glibc's expf and CUDA's expf differ from each other in the last place, and a libm
// call keeps a loop from vectorizing). Evaluated in double and rounded to float once, it is closer
// to e^x than glibc's expf: over all 2^32 floats it differs from std::exp(double) rounded to float
// on 36, glibc's expf on 170,648 (test/unit/kernels_math_test.cpp checks a sample of them).
// ctfx: nvcc-tested-by test/cuda/exec_cuda.cu
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>
#include "../core/config.hpp"

namespace ctfx::kernels::math {

// e^x = 2^k · e^r with k = round(x / ln 2) and |r| ≤ ln 2 / 2; e^r by its Taylor polynomial of degree
// 10 (truncation below 2^-42 relative), 2^k built in the exponent bits. Selects are integer masks
// and min/max, never float compares: under the default -ftrapping-math a float compare keeps g++
// from vectorizing the loop.
CTFX_HD constexpr float exp_f32(float xf) {
  const std::int32_t u = __builtin_bit_cast(std::int32_t, xf);
  // Clamp x to [-104, 89] on an integer key that orders floats (NaN is restored at the end): beyond
  // it the result rounds to 0 or overflows to inf, and k stays within the double exponent's range.
  std::int32_t s = u ^ ((u >> 31) & 0x7fffffff);
  constexpr std::int32_t lo = static_cast<std::int32_t>(0xc2d00000u ^ 0x7fffffffu);  // key of -104.0f
  constexpr std::int32_t hi = 0x42b20000;                                             // key of 89.0f
  s = s < lo ? lo : s;
  s = s > hi ? hi : s;
  const double x = static_cast<double>(__builtin_bit_cast(float, s ^ ((s >> 31) & 0x7fffffff)));
  constexpr double inv_ln2 = 0x1.71547652b82fep0;
  constexpr double shifter = 0x1.8p52;  // adding it rounds to an integer, kept in the low mantissa bits
  constexpr double ln2_hi = 0x1.62e42fefa3800p-1, ln2_lo = 0x1.ef35793c76730p-45;  // k · ln2_hi is exact
  const double ks = x * inv_ln2 + shifter;
  const double k = ks - shifter;
  const double r = (x - k * ln2_hi) - k * ln2_lo;
  double p = 1.0 / 3628800;
  p = p * r + 1.0 / 362880;
  p = p * r + 1.0 / 40320;
  p = p * r + 1.0 / 5040;
  p = p * r + 1.0 / 720;
  p = p * r + 1.0 / 120;
  p = p * r + 1.0 / 24;
  p = p * r + 1.0 / 6;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  // 2^k: k + 1023 in the exponent field (k's low bits are ks's; k ∈ [-150, 128]).
  const std::uint64_t two_k = (__builtin_bit_cast(std::uint64_t, ks) << 52) + (std::uint64_t{1023} << 52);
  const std::int32_t result = __builtin_bit_cast(std::int32_t, static_cast<float>(p * __builtin_bit_cast(double, two_k)));
  // A NaN returns itself, quieted (as libm's does).
  const std::int32_t nan = -static_cast<std::int32_t>((u & 0x7fffffff) > 0x7f800000);
  return __builtin_bit_cast(float, result ^ (nan & (result ^ (u | 0x400000))));
}

// e^x as every kernel and the ops' reference semantics compute it: f32 by exp_f32, others by libm.
template <class T>
CTFX_HD constexpr T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) return exp_f32(x);
  else return static_cast<T>(std::exp(x));
}

}  // namespace ctfx::kernels::math
