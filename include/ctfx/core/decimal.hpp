// ctfx/core/decimal.hpp — decimal text to double, correctly rounded, in constant evaluation.
//
// PyTorch prints a float constant as Python's repr (the shortest text that reads back to the same
// double), so reading a graph exactly needs the double strtod gives for every input: a mantissa
// times a power of ten in double arithmetic is 1–2 ulp off for about one decimal in seven, overflows
// finfo.max and flushes the subnormals. This is the exact method (the slow path of Clinger's and
// fast_float's readers): the decimal as a big integer D times 10^E, and
//   E >= 0: D * 5^E, whose top 64 bits and a sticky bit of the rest round to 53 bits;
//   E <  0: D * 2^s / 5^-E by long division to a 63–64-bit quotient, the remainder as sticky bit;
// then one round-to-nearest-even into the double (subnormals and overflow included). Digits past
// the 800th only set the sticky bit: a halfway point between two doubles has at most 767
// significant digits, so the first 800 decide every rounding.
#pragma once
#include "diagnostics_push.hpp"
#include <bit>
#include <cstdint>
#include <limits>
#include <string_view>

namespace ctfx::detail {

/// An unsigned integer of up to 130 32-bit limbs (4,160 bits), enough for 800 digits times 10^310
/// or for 5^1124, the largest operands the reader forms.
struct big_uint {
  static constexpr int cap = 130;
  std::uint32_t w[cap]{};  ///< limbs, least significant first
  int n = 0;               ///< limbs in use; w[n - 1] != 0 unless n == 0

  constexpr void trim() { while (n > 0 && w[n - 1] == 0) --n; }
  constexpr bool zero() const { return n == 0; }
  constexpr void mul_add(std::uint32_t m, std::uint32_t a) {
    std::uint64_t carry = a;
    for (int i = 0; i < n; ++i) {
      const std::uint64_t t = static_cast<std::uint64_t>(w[i]) * m + carry;
      w[i] = static_cast<std::uint32_t>(t);
      carry = t >> 32;
    }
    if (carry != 0 && n < cap) w[n++] = static_cast<std::uint32_t>(carry);
  }
  constexpr void mul_pow5(int e) {
    constexpr std::uint32_t p13 = 1220703125u;  // 5^13, the largest power of five in a limb
    for (; e >= 13; e -= 13) mul_add(p13, 0);
    std::uint32_t r = 1;
    for (; e > 0; --e) r *= 5;
    if (r != 1) mul_add(r, 0);
  }
  constexpr int bit_length() const { return n == 0 ? 0 : 32 * (n - 1) + (32 - std::countl_zero(w[n - 1])); }
  constexpr bool bit(int i) const { return i / 32 < n && ((w[i / 32] >> (i % 32)) & 1u) != 0; }
  /// Whether any bit below position `b` is set.
  constexpr bool any_below(int b) const {
    for (int i = 0; i < b / 32 && i < n; ++i)
      if (w[i] != 0) return true;
    return b % 32 != 0 && b / 32 < n && (w[b / 32] & ((1u << (b % 32)) - 1u)) != 0;
  }
  /// The 64 bits from position `lo` up.
  constexpr std::uint64_t bits_from(int lo) const {
    std::uint64_t r = 0;
    for (int i = 63; i >= 0; --i) r = (r << 1) | (bit(lo + i) ? 1u : 0u);
    return r;
  }
  constexpr void shl(int s) {
    if (s <= 0 || n == 0) return;
    const int limbs = s / 32, bits = s % 32;
    int m = n + limbs + 1;
    if (m > cap) m = cap;
    for (int i = m - 1; i >= 0; --i) {
      const int j = i - limbs;
      std::uint32_t v = j >= 0 && j < n ? w[j] << bits : 0u;
      if (bits != 0 && j - 1 >= 0 && j - 1 < n) v |= w[j - 1] >> (32 - bits);
      w[i] = v;
    }
    n = m;
    trim();
  }
  constexpr void shr1() {
    for (int i = 0; i < n; ++i) w[i] = (w[i] >> 1) | (i + 1 < n ? w[i + 1] << 31 : 0u);
    trim();
  }
  /// -1, 0 or 1 as *this <, ==, > o.
  constexpr int compare(const big_uint& o) const {
    if (n != o.n) return n < o.n ? -1 : 1;
    for (int i = n - 1; i >= 0; --i)
      if (w[i] != o.w[i]) return w[i] < o.w[i] ? -1 : 1;
    return 0;
  }
  /// *this -= o, where o <= *this.
  constexpr void sub(const big_uint& o) {
    std::int64_t borrow = 0;
    for (int i = 0; i < n; ++i) {
      std::int64_t t = static_cast<std::int64_t>(w[i]) - (i < o.n ? o.w[i] : 0u) - borrow;
      borrow = t < 0 ? 1 : 0;
      w[i] = static_cast<std::uint32_t>(t + (borrow << 32));
    }
    trim();
  }
};

/// m * 2^e2 (plus less than one unit of m's last bit when `sticky`) rounded to the nearest double,
/// ties to even; m != 0.
constexpr double round_to_double(std::uint64_t m, int e2, bool sticky) {
  const int lz = std::countl_zero(m);
  m <<= lz;
  e2 -= lz;
  const int x = e2 + 63;  // the value lies in [2^x, 2^(x+1))
  if (x > 1023) return std::numeric_limits<double>::infinity();
  // The unit of the result's last bit: 2^(x - 52) for a normal double, 2^-1074 below.
  const int shift = x >= -1022 ? 11 : -1074 - e2;
  if (shift > 64) return 0.0;  // below half the smallest subnormal
  std::uint64_t kept = shift == 64 ? 0 : m >> shift;
  const std::uint64_t rem = shift == 64 ? m : m & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (sticky || (kept & 1u) != 0))) ++kept;
  if (x < -1022) return std::bit_cast<double>(kept);  // a subnormal; 2^52 carries into the smallest normal
  int e = x;
  if (kept == (std::uint64_t{1} << 53)) { kept >>= 1; ++e; }
  if (e > 1023) return std::numeric_limits<double>::infinity();
  return std::bit_cast<double>((static_cast<std::uint64_t>(e + 1023) << 52) | (kept & ((std::uint64_t{1} << 52) - 1)));
}

/// Reads an unsigned decimal — digits, an optional fraction, an optional exponent (1.5e-3, .5, 7.,
/// 12) — into the correctly rounded double, as strtod does. False when `s` is not such a number.
constexpr bool decimal_to_double(std::string_view s, double& out) {
  constexpr int max_digits = 800;
  big_uint d;
  int kept = 0;            // significant digits in d
  long long exp10 = 0;     // d * 10^exp10
  bool truncated = false;  // a non-zero digit past the 800th
  bool any = false;
  std::size_t i = 0;
  auto digit = [&](char c, bool fraction) {
    any = true;
    if (kept == 0 && c == '0') { if (fraction) --exp10; return; }
    if (kept < max_digits) {
      d.mul_add(10, static_cast<std::uint32_t>(c - '0'));
      ++kept;
      if (fraction) --exp10;
    } else {
      truncated = truncated || c != '0';
      if (!fraction) ++exp10;
    }
  };
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) digit(s[i], false);
  if (i < s.size() && s[i] == '.')
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) digit(s[i], true);
  if (!any) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == s.size()) return false;
    long long e = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i)
      if (e < 100000) e = e * 10 + (s[i] - '0');
    exp10 += neg ? -e : e;
  }
  if (i != s.size()) return false;
  if (d.zero()) { out = 0.0; return true; }
  // Outside [1e-324, 1e310) the result is 0 or inf whatever the digits.
  if (kept + exp10 <= -324) { out = 0.0; return true; }
  if (kept + exp10 >= 310) { out = std::numeric_limits<double>::infinity(); return true; }
  if (exp10 >= 0) {
    d.mul_pow5(static_cast<int>(exp10));
    const int len = d.bit_length();
    if (len <= 64) { out = round_to_double(d.bits_from(0), static_cast<int>(exp10), truncated); return true; }
    const int lo = len - 64;
    out = round_to_double(d.bits_from(lo), static_cast<int>(exp10) + lo, truncated || d.any_below(lo));
    return true;
  }
  const int f = static_cast<int>(-exp10);
  big_uint b;
  b.w[0] = 1;
  b.n = 1;
  b.mul_pow5(f);
  // q = d * 2^s / b with 63 or 64 bits: s = bits(b) - bits(d) + 63 (b shifted instead when s < 0).
  const int s2 = b.bit_length() - d.bit_length() + 63;
  if (s2 > 0) d.shl(s2); else b.shl(-s2);
  b.shl(63);
  std::uint64_t q = 0;
  for (int k = 63; k >= 0; --k) {
    if (b.compare(d) <= 0) { d.sub(b); q |= std::uint64_t{1} << k; }
    b.shr1();
  }
  out = round_to_double(q, -f - s2, truncated || !d.zero());
  return true;
}

}  // namespace ctfx::detail
#include "diagnostics_pop.hpp"
