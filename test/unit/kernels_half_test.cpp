// float16 and bfloat16 conversions (kernels/element.hpp), written without branches so that loops
// over them vectorize: round to nearest even, checked against the CPU's own F16C conversions
// (where it has them) on a sample of every float bit pattern and on every half, and against the
// rules PyTorch's c10::Half and c10::BFloat16 follow for NaN.
#include <doctest/doctest.h>
#include <cstdint>
#include <cstring>
#include <ctfx/kernels/element.hpp>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define CTFX_TEST_F16C 1
#endif

namespace {

float from_bits(std::uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
std::uint32_t to_bits(float f) { std::uint32_t u; std::memcpy(&u, &f, 4); return u; }

#if CTFX_TEST_F16C
__attribute__((target("f16c"))) std::uint16_t hw_half(float f) { return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }
__attribute__((target("f16c"))) float hw_float(std::uint16_t h) { return _cvtsh_ss(h); }
bool have_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29)) != 0;  // CPUID.1:ECX.F16C
}
#endif

// float -> bfloat16 by its definition: round the low 16 bits to nearest even; NaN quiet.
std::uint16_t ref_bf16(std::uint32_t x) {
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t low = x & 0xffffu, half = 0x8000u;
  std::uint32_t hi = x >> 16;
  if (low > half || (low == half && (hi & 1u))) ++hi;
  return static_cast<std::uint16_t>(hi);
}

}  // namespace

TEST_CASE("half_t: every 251st float pattern and the boundaries round to nearest even as F16C does, NaN to 0x7e00") {
  long checked = 0, nan = 0, bad_nan = 0, bad_hw = 0, bad_bf = 0;
#if CTFX_TEST_F16C
  const bool hw = have_f16c();
#endif
  auto check = [&](std::uint32_t u) {
    const float f = from_bits(u);
    const std::uint16_t h = ctfx::half_t(f).bits;
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: the quiet NaN of its sign, payload dropped
      bad_nan += h != (((u >> 16) & 0x8000u) | 0x7e00u);
      ++nan;
      return;
    }
#if CTFX_TEST_F16C
    if (hw) bad_hw += h != hw_half(f);
#endif
    bad_bf += ctfx::bfloat16_t(f).bits != ref_bf16(u);
    ++checked;
  };
  for (std::uint64_t u = 0; u < (1ull << 32); u += 251) check(static_cast<std::uint32_t>(u));
  // Around every rounding boundary that matters: the half subnormal range, the smallest normal,
  // the largest finite (65504) and what rounds to inf (65520), inf and NaN.
  for (std::uint32_t base : {0x33000000u, 0x33800000u, 0x387fc000u, 0x38800000u, 0x477fe000u, 0x477ff000u, 0x7f800000u})
    for (std::uint32_t d = 0; d < 0x4000u; ++d)
      for (std::uint32_t sign : {0u, 0x80000000u}) check(sign | (base - 0x2000u + d));
  CHECK(bad_nan == 0);
  CHECK(bad_hw == 0);
  CHECK(bad_bf == 0);
  CHECK(checked > 17000000);
  CHECK(nan > 30000);
  CHECK(ctfx::half_t(65504.0f).bits == 0x7bffu);
  CHECK(ctfx::half_t(65520.0f).bits == 0x7c00u);         // ties to even: rounds up to inf
  CHECK(ctfx::half_t(65519.996f).bits == 0x7bffu);
  CHECK(ctfx::half_t(-0.0f).bits == 0x8000u);
  CHECK(ctfx::half_t(5.9604645e-08f).bits == 0x0001u);    // 2^-24, the smallest subnormal
  CHECK(ctfx::half_t(2.9802322e-08f).bits == 0x0000u);    // half of it: ties to even, 0
}

TEST_CASE("half_t: every half converts to the float F16C gives (NaN: a NaN of its sign and payload)") {
  for (std::uint32_t b = 0; b < 65536u; ++b) {
    ctfx::half_t h;
    h.bits = static_cast<std::uint16_t>(b);
    const float f = static_cast<float>(h);
    const bool is_nan = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
    if (is_nan) {
      CHECK(f != f);
      CHECK((to_bits(f) >> 31) == (b >> 15));
      CHECK(((to_bits(f) >> 13) & 0x3ffu) == (b & 0x3ffu));
      continue;
    }
    CHECK(ctfx::half_t(f).bits == b);  // round trip
#if CTFX_TEST_F16C
    if (have_f16c()) CHECK(to_bits(f) == to_bits(hw_float(static_cast<std::uint16_t>(b))));
#endif
  }
  for (std::uint32_t b = 0; b < 65536u; ++b) {  // bfloat16 -> float: the high half of the float
    ctfx::bfloat16_t h;
    h.bits = static_cast<std::uint16_t>(b);
    CHECK(to_bits(static_cast<float>(h)) == b << 16);
  }
}
