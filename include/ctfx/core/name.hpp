// ctfx/core/name.hpp — short inline identifiers (node and symbol names) and a fixed string usable
// as a template argument.
#pragma once
#include <cstddef>
#include <string_view>
#include "config.hpp"

namespace ctfx {

// A name stored inline so that nodes stay structural values. Longer names are cut, not rejected.
struct name_t {
  char s[max_name]{};
  constexpr name_t() = default;
  constexpr name_t(std::string_view v) {  // NOLINT: implicit from string literals on purpose
    std::size_t n = v.size() < max_name - 1 ? v.size() : max_name - 1;
    for (std::size_t i = 0; i < n; ++i) s[i] = v[i];
  }
  constexpr name_t(const char* c) : name_t(std::string_view(c)) {}
  constexpr std::string_view view() const {
    std::size_t n = 0;
    while (n < max_name && s[n]) ++n;
    return {s, n};
  }
  constexpr bool empty() const { return s[0] == 0; }
  friend constexpr bool operator==(const name_t& a, const name_t& b) { return a.view() == b.view(); }
};

// A string literal as a class-type template argument, as in CTRE: ctfx::op<"my_op">.
template <std::size_t N>
struct fixed_string {
  char s[N]{};
  constexpr fixed_string(const char (&c)[N]) {  // NOLINT
    for (std::size_t i = 0; i < N; ++i) s[i] = c[i];
  }
  constexpr std::string_view view() const { return {s, N - 1}; }
};

}  // namespace ctfx
