// ctfx/graph/fingerprint.hpp — a graph's hash as ranks compare it before a run (comm/agreement.hpp):
// per node its op, integer operand, scalar, arguments and element type and rank. Names and extents
// are left out: a symbolic extent's value is compared through the collectives' element counts.
#pragma once
#include "../core/diagnostics_push.hpp"
#include <bit>
#include <cstdint>
#include "ir.hpp"

namespace ctfx {

/// The hash of `g`'s structure (the same for the same graph in every process that builds it).
constexpr std::uint64_t fingerprint(const ir& g) {
  std::uint64_t h = 1469598103934665603ull;
  auto fold = [&](std::uint64_t v) {
    h = (h ^ v) * 1099511628211ull;
    h ^= h >> 31;
  };
  fold(static_cast<std::uint64_t>(g.size()));
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const node& n = g[i];
    fold(static_cast<std::uint64_t>(n.op));
    fold(static_cast<std::uint64_t>(static_cast<std::uint32_t>(n.aux)));
    fold(std::bit_cast<std::uint64_t>(n.scalar.d));
    fold(static_cast<std::uint64_t>(n.scalar.i) ^ static_cast<std::uint64_t>(n.scalar.kind) << 62);
    fold(static_cast<std::uint64_t>(n.meta.dt) << 8 | static_cast<std::uint64_t>(static_cast<std::uint8_t>(n.meta.rank)));
    for (std::int32_t a : g.args_of(i)) fold(static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)));
  }
  return h;
}

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
