// A stencil halo exchange: the ghost cells of a padded N x N grid are filled from the neighbours'
// edge rows and columns (slice_scatter / select_scatter, as PyTorch traces `grid[0, 1:-1] = north`),
// then one Jacobi step reads the grid. ctfx writes the ghost cells in place — four small copies
// instead of four copies of the whole grid — and runs the step with reused buffers.
#include <cstdio>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/listing.hpp>

constexpr long N = 258;  // 256 x 256 interior

constexpr auto halo = ctfx::graph([](ctfx::builder& b) {
  auto grid = b.input("grid", ctfx::f32, {N, N});
  auto north = b.input("north", ctfx::f32, {N - 2});
  auto south = b.input("south", ctfx::f32, {N - 2});
  auto west = b.input("west", ctfx::f32, {N - 2});
  auto east = b.input("east", ctfx::f32, {N - 2});
  auto g = ctfx::select_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), north, 0, 1, N - 1), 0, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(0, N - 1), south, 0, 1, N - 1), 0, N - 1);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, 0), west, 0, 1, N - 1), 1, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, N - 1), east, 0, 1, N - 1), 1, N - 1);
  b.update(grid, g);
  // One Jacobi step on the interior: the mean of the four neighbours.
  auto up = g.slice(0, 0, N - 2).slice(1, 1, N - 1), down = g.slice(0, 2, N).slice(1, 1, N - 1);
  auto left = g.slice(0, 1, N - 1).slice(1, 0, N - 2), right = g.slice(0, 1, N - 1).slice(1, 2, N);
  b.output(((up + down) + (left + right)) * 0.25);
});
using plan = ctfx::compiled<decltype(halo)>;

// No copy of the whole grid is left: the four ghost-cell writes run in place.
constexpr bool no_grid_clone() {
  for (const auto& n : plan::graph().nodes)
    if (n.op == ctfx::op_kind::clone && n.meta.rank == 2) return false;
  return true;
}
static_assert(no_grid_clone(), "the halo exchange must not clone the grid");

int main() {
  std::puts("== what reinplacing decided\n");
  std::puts(ctfx::to_text(plan::report).c_str());
  std::puts("== the plan\n");
  std::puts(ctfx::listing<plan>().c_str());  // its kernels, reuse lines and rows run together

  std::vector<float> grid(N * N, 0.0f), edge(N - 2), out((N - 2) * (N - 2)), ref_out(out.size());
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>(i % 17) * 0.5f;
  for (std::size_t i = 0; i < edge.size(); ++i) edge[i] = 100.0f + static_cast<float>(i);
  auto ref_grid = grid;
  auto inputs = [&](std::vector<float>& gr) {
    return std::vector<ctfx::tensor_ref>{
        ctfx::tensor_ref::contiguous(gr.data(), {N, N}), ctfx::tensor_ref::contiguous(edge.data(), {N - 2}),
        ctfx::tensor_ref::contiguous(edge.data(), {N - 2}), ctfx::tensor_ref::contiguous(edge.data(), {N - 2}),
        ctfx::tensor_ref::contiguous(edge.data(), {N - 2})};
  };
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref::contiguous(out.data(), {N - 2, N - 2})};
  std::vector<ctfx::tensor_ref> ro = {ctfx::tensor_ref::contiguous(ref_out.data(), {N - 2, N - 2})};
  const auto st = plan::run(inputs(grid), o);
  if (!st) { std::printf("run failed: %s\n", st.message.c_str()); return 1; }
  if (!ctfx::reference_run(halo.get(), inputs(ref_grid), ro)) return 1;
  const bool same = grid == ref_grid && out == ref_out;
  std::printf("== run on the host: grid[0, 1] = %g, step[0, 0] = %g; equal to the functional reference: %s\n",
              static_cast<double>(grid[1]), static_cast<double>(out[0]), same ? "yes" : "NO");
  return same ? 0 : 1;
}
