// ctfx/plan/arena_util.hpp — small constexpr helpers shared by the arena planner (arena.hpp) and
// its exact search (arena_search.hpp).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ctfx::detail {

// A vector of n copies of v (no vector(n, v) or assign: clang 14 rejects them in constant evaluation).
template <class T>
constexpr std::vector<T> filled(std::size_t n, T v) {
  std::vector<T> r;
  r.reserve(n);
  for (std::size_t i = 0; i < n; ++i) r.push_back(v);
  return r;
}

// x rounded up to a multiple of a (a <= 1: x).
constexpr std::int64_t align_up(std::int64_t x, std::int64_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

}  // namespace ctfx::detail
#include "../core/diagnostics_pop.hpp"
