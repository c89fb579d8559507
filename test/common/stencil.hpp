// The 5-point stencil on a G x G grid with periodic ghost rows and columns, its interior written
// back in place (copy_): a program the host and CUDA tests and the compute benchmark
// (bench/runtime/compute_bench.cpp) share.
#pragma once
#include <ctfx.hpp>

namespace ctfx_test {

// Adds the stencil's update of the grid `x` to the graph being built.
constexpr void periodic_stencil(ctfx::builder& b, const ctfx::tensor& x, long G) {
  auto y = ctfx::slice_scatter(x, x.slice(0, G - 2, G - 1), 0, 0, 1);
  y = ctfx::slice_scatter(y, y.slice(0, 1, 2), 0, G - 1, G);
  y = ctfx::slice_scatter(y, y.slice(1, G - 2, G - 1), 1, 0, 1);
  y = ctfx::slice_scatter(y, y.slice(1, 1, 2), 1, G - 1, G);
  auto c = y.slice(0, 1, G - 1).slice(1, 1, G - 1);
  auto n = y.slice(0, 0, G - 2).slice(1, 1, G - 1), s = y.slice(0, 2, G).slice(1, 1, G - 1);
  auto w = y.slice(0, 1, G - 1).slice(1, 0, G - 2), e = y.slice(0, 1, G - 1).slice(1, 2, G);
  auto nw = c + ((n + s) + (w + e) - c * 4.0f) * 0.2f;
  b.update(x, ctfx::slice_scatter(y, ctfx::slice_scatter(y.slice(0, 1, G - 1), nw, 1, 1, G - 1), 0, 1, G - 1));
}

}  // namespace ctfx_test
