// ctfx/detail/fnv.hpp — FNV-1a: the hashes of names (the verifier's and rewrites' name sets, the FX
// parser's symbol table) and the constants of buffer keys (plan/reuse.hpp).
#pragma once
#include <cstdint>
#include <string_view>
#include "../core/name.hpp"

namespace ctfx::detail {

inline constexpr std::uint64_t fnv_basis = 1469598103934665603ull;
inline constexpr std::uint64_t fnv_prime = 1099511628211ull;

// FNV-1a over a text's characters.
constexpr std::uint64_t hash_text(std::string_view s) {
  std::uint64_t h = fnv_basis;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * fnv_prime;
  return h;
}

// FNV-1a over a name's characters (up to its first NUL): equal to hash_text(n.view()).
constexpr std::uint64_t hash_name(const name_t& n) {
  std::uint64_t h = fnv_basis;
  for (char c : n.s) {
    if (!c) break;
    h = (h ^ static_cast<unsigned char>(c)) * fnv_prime;
  }
  return h;
}

}  // namespace ctfx::detail
