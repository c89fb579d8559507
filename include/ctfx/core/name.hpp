// ctfx/core/name.hpp — short inline identifiers (node and symbol names) and a fixed string usable
// as a template argument.
#pragma once
#include "diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <string_view>
#include "config.hpp"

namespace ctfx {

/// A name stored inline so that nodes stay structural values. Longer names are cut, not rejected.
///
/// Invariant: every character after the first NUL is NUL too (the constructors stop at a NUL, and
/// code that appends characters writes into a zeroed tail). So two names are equal exactly when
/// their bytes are, and names are compared and hashed four 8-byte words at a time
/// (__builtin_bit_cast): in constant evaluation a loop over characters costs ~10x more (g++ 12:
/// ~2.5 us per character; bench/RESULTS.md §1).
struct name_t {
  char s[max_name]{};  ///< the characters, zero-terminated (fixed room: a name fits a constant)
  constexpr name_t() = default;
  constexpr name_t(std::string_view v) {  ///< NOLINT: implicit from string literals on purpose
    std::size_t n = v.size() < max_name - 1 ? v.size() : max_name - 1;
    for (std::size_t i = 0; i < n && v[i]; ++i) s[i] = v[i];
  }
  /// From a C string (truncated to max_name - 1 characters).
  constexpr name_t(const char* c) : name_t(std::string_view(c)) {}
  /// The name as a string_view.
  constexpr std::string_view view() const {
    std::size_t n = 0;
    while (n < max_name && s[n]) ++n;
    return {s, n};
  }
  /// Whether the name is empty.
  constexpr bool empty() const { return s[0] == 0; }
  /// Equal names.
  friend constexpr bool operator==(const name_t& a, const name_t& b);
};

namespace detail {
static_assert(max_name == 32, "name_words: a name is four 8-byte words");
struct name_words { std::uint64_t w0, w1, w2, w3; };
constexpr name_words words_of(const name_t& n) { return __builtin_bit_cast(name_words, n); }
}  // namespace detail

/// Whether two names are the same text.
constexpr bool operator==(const name_t& a, const name_t& b) {
  const detail::name_words x = detail::words_of(a), y = detail::words_of(b);
  return x.w0 == y.w0 && x.w1 == y.w1 && x.w2 == y.w2 && x.w3 == y.w3;
}

/// FX's unique-name form: `base` (its first len characters, the rest zero) with "_<c>" appended
/// for c > 0. The suffix goes into the zeroed tail, keeping the invariant above; when base and
/// suffix exceed max_name - 1 characters the base is cut, never the suffix, so that different c
/// always give different names (a cut suffix made base_1 and base_10 one name, and a search for a
/// free name could run forever). Used by the builder's and the rewrites' name makers, which keep
/// their bases.
constexpr name_t with_suffix(const name_t& base, std::size_t len, int c) {
  name_t t = base;
  if (c <= 0) return t;
  char digits[12]{};
  int nd = 0;
  for (int v = c; v; v /= 10) digits[nd++] = static_cast<char>('0' + v % 10);
  // The base characters that fit before "_<digits>"; the suffix then ends at max_name - 2 and
  // overwrites every character of the base after the cut.
  const std::size_t room = static_cast<std::size_t>(max_name - 2 - nd);
  if (len > room) len = room;
  t.s[len++] = '_';
  for (int i = nd - 1; i >= 0; --i) t.s[len++] = digits[i];
  return t;
}

/// A string literal as a class-type template argument, as in CTRE: ctfx::op<"my_op">.
template <std::size_t N>
struct fixed_string {
  char s[N]{};  ///< the characters, with the terminating zero
  constexpr fixed_string(const char (&c)[N]) {  ///< from a string literal (implicit by design) NOLINT
    for (std::size_t i = 0; i < N; ++i) s[i] = c[i];
  }
  /// The string without its terminating zero.
  constexpr std::string_view view() const { return {s, N - 1}; }
};

}  // namespace ctfx
#include "diagnostics_pop.hpp"
