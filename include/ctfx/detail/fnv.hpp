// ctfx/detail/fnv.hpp — FNV-1a: the hashes of texts (the FX parser's symbol table) and of names (the
// verifier's and rewrites' name sets), and the constants of buffer keys (plan/reuse.hpp).
#pragma once
#include "../core/diagnostics_push.hpp"
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

// A name's hash, from its four words (see name_t): not FNV-1a of its text, and not equal to
// hash_text(n.view()); names are hashed only against names.
constexpr std::uint64_t hash_name(const name_t& n) {
  // A name's last characters sit in the high bytes of a word; each step folds the high half down so
  // that they reach the low bits that pick a hash table's slot.
  const name_words w = words_of(n);
  std::uint64_t h = fnv_basis;
  h = (h ^ w.w0) * fnv_prime; h ^= h >> 32;
  h = (h ^ w.w1) * fnv_prime; h ^= h >> 32;
  h = (h ^ w.w2) * fnv_prime; h ^= h >> 32;
  h = (h ^ w.w3) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 31);
}

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
