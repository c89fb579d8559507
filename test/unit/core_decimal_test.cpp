// Decimal text to double (core/decimal.hpp) against the C library's strtod, which glibc rounds
// correctly: every double's shortest repr and its 17-digit form read back to the same bits, random
// decimals and halfway points between doubles give strtod's double, and the same holds in
// constant evaluation.
#include <doctest/doctest.h>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <ctfx/core/decimal.hpp>

namespace {

constexpr double read(std::string_view s) {
  double d = -1.0;
  return ctfx::detail::decimal_to_double(s, d) ? d : -2.0;
}
constexpr bool same(double a, double b) { return __builtin_bit_cast(std::uint64_t, a) == __builtin_bit_cast(std::uint64_t, b); }

// In the compiler: the cases a mantissa-times-power-of-ten reader gets wrong.
static_assert(same(read("0.041666666666666664"), 0.041666666666666664));
static_assert(same(read("1.7976931348623157e+308"), DBL_MAX));
static_assert(same(read("1.7976931348623158e+308"), DBL_MAX));  // below the halfway point to 2^1024
static_assert(read("1.7976931348623159e+308") == std::numeric_limits<double>::infinity());
static_assert(same(read("2.2250738585072014e-308"), DBL_MIN));
static_assert(same(read("2.2250738585072011e-308"), 2.2250738585072011e-308));  // the largest subnormal
static_assert(same(read("5e-324"), std::numeric_limits<double>::denorm_min()));
static_assert(same(read("4.9406564584124654e-324"), std::numeric_limits<double>::denorm_min()));
static_assert(same(read("2.4703282292062327e-324"), 0.0));  // just below half the smallest subnormal
static_assert(same(read("2.4703282292062328e-324"), std::numeric_limits<double>::denorm_min()));
static_assert(same(read("9007199254740993"), 9007199254740992.0));  // 2^53 + 1: a tie, to even
static_assert(same(read("9007199254740995"), 9007199254740996.0));
static_assert(same(read("0.1"), 0.1) && same(read(".5"), 0.5) && same(read("7."), 7.0) && same(read("1E3"), 1000.0));
static_assert(same(read("123456789012345678901234567890e-30"), 0.12345678901234568));
static_assert(same(read("1e23"), 1e23) && same(read("8.988465674311579e+307"), 8.988465674311579e+307));
static_assert(read("1e400") == std::numeric_limits<double>::infinity() && same(read("1e-400"), 0.0));
static_assert(same(read("0.000"), 0.0) && same(read("0e999999"), 0.0));
static_assert(read("1e") == -2.0 && read("") == -2.0 && read(".") == -2.0 && read("1.5x") == -2.0);

double from_strtod(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

void check(const std::string& s) {
  double got = -1.0;
  REQUIRE(ctfx::detail::decimal_to_double(s, got));
  const double want = from_strtod(s);
  if (!same(got, want)) {
    INFO("text " << s << ": strtod " << want << ", ctfx " << got);
    CHECK(same(got, want));
  }
}

}  // namespace

TEST_CASE("decimal: every double's shortest and 17-digit text reads back to its bits") {
  std::mt19937_64 rng(20261207);
  int failures = 0;
  for (int k = 0; k < 200000; ++k) {
    std::uint64_t bits = rng();
    if ((bits >> 52 & 0x7ff) == 0x7ff) continue;  // inf and nan are not decimals
    const double x = std::fabs(__builtin_bit_cast(double, bits));
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, x);
    double got = -1.0;
    if (!ctfx::detail::decimal_to_double(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)), got) || !same(got, x)) ++failures;
    std::snprintf(buf, sizeof buf, "%.16e", x);
    if (!ctfx::detail::decimal_to_double(buf, got) || !same(got, x)) ++failures;
  }
  CHECK(failures == 0);
}

TEST_CASE("decimal: doubles between 0 and 1 as Python prints them, and int64 edges, read as strtod reads them") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 50000; ++k) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, u(rng));
    check(std::string(buf, r.ptr));
  }
  for (const char* s : {"9223372036854775807", "9223372036854775808", "9223372036854775806", "100000000000000001",
                        "18446744073709551615", "18446744073709551616", "4611686018427387905"})
    check(s);
}

TEST_CASE("decimal: random digit strings, long mantissas and every exponent give strtod's double") {
  std::mt19937_64 rng(11);
  for (int k = 0; k < 60000; ++k) {
    const int digits = 1 + static_cast<int>(rng() % (k % 10 == 0 ? 900 : 30));
    std::string s;
    const int point = static_cast<int>(rng() % static_cast<std::uint64_t>(digits + 1));
    for (int i = 0; i < digits; ++i) {
      if (i == point) s += '.';
      s += static_cast<char>('0' + rng() % 10);
    }
    s += 'e' + std::to_string(static_cast<int>(rng() % 700) - 350);
    check(s);
  }
}

TEST_CASE("decimal: halfway points between adjacent doubles, and one digit either side, round as strtod") {
  // The midpoint of two adjacent doubles needs 54 bits: exact in x87's 64-bit long double, printed
  // exactly by glibc with enough digits.
  if (LDBL_MANT_DIG < 64) return;
  std::mt19937_64 rng(3);
  for (int k = 0; k < 20000; ++k) {
    std::uint64_t bits = rng() & 0x7fefffffffffffffull;  // finite, positive, below DBL_MAX
    const double a = __builtin_bit_cast(double, bits);
    const double b = std::nextafter(a, std::numeric_limits<double>::infinity());
    const long double mid = (static_cast<long double>(a) + static_cast<long double>(b)) / 2;
    char buf[1200];
    std::snprintf(buf, sizeof buf, "%.770Le", mid);
    std::string s(buf);
    check(s);
    // The same decimal cut after 40 significant digits (just below the midpoint) and with a 1 added
    // after its last digit (just above).
    const std::size_t e = s.find('e');
    check(s.substr(0, 42) + s.substr(e));
    check(s.substr(0, e) + "1" + s.substr(e));
  }
}
