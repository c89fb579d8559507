// ctfx/detail/fnv.hpp — the FNV-1a constants, for the hashes of names (passes/rewrite.hpp) and of
// buffer keys (plan/reuse.hpp).
#pragma once
#include <cstdint>

namespace ctfx::detail {

inline constexpr std::uint64_t fnv_basis = 1469598103934665603ull;
inline constexpr std::uint64_t fnv_prime = 1099511628211ull;

}  // namespace ctfx::detail
