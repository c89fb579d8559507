// ctfx's f32 exp (kernels/math.hpp): its special values, its accuracy against e^x computed in
// double, the same bits from a vectorized loop as from single calls, and a graph's exp computing it.
#include <doctest/doctest.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/math.hpp>

namespace {

using ctfx::kernels::math::exp_f32;

std::uint32_t bits(float f) { return __builtin_bit_cast(std::uint32_t, f); }
float from_bits(std::uint32_t u) { return __builtin_bit_cast(float, u); }

// Single calls the optimizer cannot merge into a vector loop.
__attribute__((noinline)) float exp_one(float x) { return exp_f32(x); }
// A loop it vectorizes.
__attribute__((noinline)) void exp_loop(const float* x, float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = exp_f32(x[i]);
}

}  // namespace

TEST_CASE("math: fma_f32 rounds once, in constant expressions as at run time") {
  using ctfx::kernels::math::fma_f32;
  // (1 + 2^-12)^2 + 2^-80 lies just above a midpoint of two floats; a·b + c rounded to double
  // first lands on the midpoint, and its rounding to float then goes down, to even.
  constexpr float a = 1.0f + 0x1p-12f;
  static_assert(fma_f32(a, a, 0x1p-80f) == 1.0f + 0x1p-11f + 0x1p-23f);
  static_assert(static_cast<float>(static_cast<double>(a) * a + 0x1p-80) == 1.0f + 0x1p-11f);
  static_assert(fma_f32(3.0f, 0.5f, -1.5f) == 0.0f && fma_f32(-0.0f, 1.0f, 0.0f) == 0.0f);
  CHECK(fma_f32(a, a, 0x1p-80f) == 1.0f + 0x1p-11f + 0x1p-23f);
  // The emulation against the library's fmaf on random bit patterns, and on sums that cancel.
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<std::uint32_t>(state >> 16);
  };
  long differ = 0;
  for (int i = 0; i < 400000; ++i) {
    const float x = from_bits(next()), y = from_bits(next());
    const float z = (i & 1) ? -(x * y) * (1.0f + 0x1p-23f * static_cast<float>(next() % 64)) : from_bits(next());
    const float want = std::fma(x, y, z), got = ctfx::kernels::math::detail::fma_exact(x, y, z);
    differ += bits(got) != bits(want) && !(want != want && got != got);
  }
  CHECK(differ == 0);
  // exp_f32 evaluated by the compiler equals the run-time call.
  constexpr float at_compile_time[] = {exp_f32(1.0f), exp_f32(-3.5f), exp_f32(80.0f), exp_f32(-100.0f)};
  const float xs[] = {1.0f, -3.5f, 80.0f, -100.0f};
  for (int i = 0; i < 4; ++i) CHECK(bits(at_compile_time[i]) == bits(exp_one(xs[i])));
}

TEST_CASE("math: exp_f32 at its special values") {
  constexpr float inf = std::numeric_limits<float>::infinity();
  static_assert(exp_f32(0.0f) == 1.0f && exp_f32(-0.0f) == 1.0f);  // usable in constant expressions
  CHECK(exp_f32(1.0f) == 2.71828183f);
  CHECK(exp_f32(-inf) == 0.0f);
  CHECK(exp_f32(inf) == inf);
  CHECK(exp_f32(0x1.62e42ep+6f) == 0x1.ffff08p+127f);  // the largest x with a finite result
  CHECK(exp_f32(0x1.62e430p+6f) == inf);               // the next float overflows
  CHECK(exp_f32(-0x1.5d589ep+6f) == 0x1.00004cp-126f); // near the smallest normal float
  CHECK(exp_f32(-0x1.9fe368p+6f) == 0x1p-149f);        // the smallest subnormal
  CHECK(exp_f32(-104.0f) == 0.0f);
  CHECK(exp_f32(-1e30f) == 0.0f);
  CHECK(exp_f32(1e30f) == inf);
  const float qnan = std::numeric_limits<float>::quiet_NaN();
  CHECK(bits(exp_f32(qnan)) == bits(qnan));
  CHECK(bits(exp_f32(-qnan)) == bits(-qnan));
  // A signaling NaN comes back quieted, its payload kept.
  CHECK(bits(exp_f32(from_bits(0x7f800001u))) == 0x7fc00001u);
}

TEST_CASE("math: exp_f32 is within 0.874 ulp of e^x and nearly always e^x rounded") {
  // Every 4099th float from -104 to 89 (~400,000 values), against e^x in double. The bound over all
  // 2^32 floats is 0.8736 ulp, and 0.45% of them differ from e^x correctly rounded.
  long checked = 0, differ = 0;
  double worst = 0;
  for (std::uint64_t u = 0; u < (1ull << 32); u += 4099) {
    const float x = from_bits(static_cast<std::uint32_t>(u));
    if (!(x >= -104.0f && x <= 89.0f)) continue;
    const double e = std::exp(static_cast<double>(x));
    const float want = static_cast<float>(e);
    const float got = exp_f32(x);
    ++checked;
    if (want == 0.0f || want == std::numeric_limits<float>::infinity()) {
      CHECK(bits(got) == bits(want));
      continue;
    }
    // One ulp of the result's binade (subnormals: 2^-149).
    const double ulp = want < 0x1p-126f ? 0x1p-149 : std::ldexp(1.0, std::ilogb(want) - 23);
    worst = std::max(worst, std::fabs(static_cast<double>(got) - e) / ulp);
    differ += bits(got) != bits(want);
  }
  CHECK(checked > 300000);
  CHECK(worst < 0.874);
  CHECK(differ * 1000 < checked * 6);  // under 0.6%
  CHECK(differ > 0);                   // the sample sees the rounding the bound describes
}

TEST_CASE("math: a vectorized loop computes the bits of single calls") {
  std::vector<float> x(4099), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -110.0f + 200.0f * static_cast<float>(i) / static_cast<float>(x.size());
  x[7] = std::numeric_limits<float>::quiet_NaN();
  x[8] = -std::numeric_limits<float>::infinity();
  exp_loop(x.data(), y.data(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    INFO("x = " << x[i]);
    CHECK(bits(y[i]) == bits(exp_one(x[i])));
  }
}

TEST_CASE("math: a graph's exp and sigmoid compute with exp_f32") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 5});
    b.output(ctfx::exp(x) + ctfx::sigmoid(x));
  });
  std::vector<float> x(15), out(15);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -7.0f + 1.13f * static_cast<float>(i);
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  auto st = p.run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 5})},
                  {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {3, 5})});
  REQUIRE(st);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = exp_f32(x[i]) + 1.0f / (1.0f + exp_f32(-x[i]));
    CHECK(bits(out[i]) == bits(want));
  }
}
