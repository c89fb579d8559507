// ctfx/comm/types.hpp — the values a graph says about communication: the reduction of a collective
// and the rank layout of a 2-D domain decomposition (what the builder and the executor share).
#pragma once
#include "../core/diagnostics_push.hpp"
#include <cstdint>

namespace ctfx {

/// The reduction of `all_reduce` and `reduce_scatter` (PyTorch's reduce_op strings).
enum class reduce_op : std::uint8_t { sum, max, min };

/// "sum", "max" or "min".
constexpr const char* name_of(reduce_op r) { return r == reduce_op::sum ? "sum" : r == reduce_op::max ? "max" : "min"; }

/// The rank layout of a 2-D domain decomposition: `px * py` ranks, rank = ry * px + rx, each
/// holding a [ny + 2h, nx + 2h] block of the global grid with `h` ghost rows and columns.
struct halo_grid {
  int px = 1;  ///< ranks along x (columns, dimension 1)
  int py = 1;  ///< ranks along y (rows, dimension 0)
  bool periodic_x = false;  ///< whether the domain wraps along x
  bool periodic_y = false;  ///< whether the domain wraps along y
  /// The rank at offset (dx, dy) from `rank`, or -1 past a non-periodic edge.
  constexpr int neighbour(int rank, int dx, int dy) const {
    int rx = rank % px + dx, ry = rank / px + dy;
    if (rx < 0 || rx >= px) { if (!periodic_x) return -1; rx = (rx + px) % px; }
    if (ry < 0 || ry >= py) { if (!periodic_y) return -1; ry = (ry + py) % py; }
    return ry * px + rx;
  }
};

}  // namespace ctfx
#include "../core/diagnostics_pop.hpp"
