// A halo exchange: the four edges of a G x G grid (rows 0 and G-1, columns 0 and G-1, without the
// corners) written in place, each from its own buffer of G - 2 values: a program the copy-siblings
// test, the host benchmarks (bench/runtime/workloads.hpp, inplace_workloads.hpp) and the CUDA
// benchmark share.
#pragma once
#include <ctfx.hpp>

namespace ctfx_test {

// Adds the inputs grid, n, s, w, e and the halo's update of the grid to the graph being built.
constexpr void halo_edges(ctfx::builder& b, long G) {
  auto grid = b.input("grid", ctfx::f32, {G, G});
  auto n = b.input("n", ctfx::f32, {G - 2});
  auto s = b.input("s", ctfx::f32, {G - 2});
  auto we = b.input("w", ctfx::f32, {G - 2});
  auto e = b.input("e", ctfx::f32, {G - 2});
  auto g = ctfx::select_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), n, 0, 1, G - 1), 0, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(0, G - 1), s, 0, 1, G - 1), 0, G - 1);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, 0), we, 0, 1, G - 1), 1, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, G - 1), e, 0, 1, G - 1), 1, G - 1);
  b.update(grid, g);
}

}  // namespace ctfx_test
