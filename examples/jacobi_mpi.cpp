// A distributed 2-D Jacobi heat solver: the N x N plate is split over 2 x 2 MPI ranks (or runs
// whole on one rank), each rank holding its block with one layer of ghost cells, twice (u and v,
// swapped after each step). One step is one compiled graph: the halo exchange, in place in u's
// ghost cells (MPI_Sendrecv; columns packed), then the interior update, fused into one kernel (the
// mean of four neighbours) that writes v's interior directly: no temporary, no copy.
// The top edge is held at 1.0, the others at 0.0. At the end rank 0 gathers the plate and checks
// it against the same solver as a plain loop on one rank, bit for bit; the program exits non-zero
// on every rank when they differ. Run it as
//   mpirun -np 4 ./example_jacobi_mpi [steps]     (or -np 1)
#include <mpi.h>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/comm/mpi.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr ctfx::index_t N = 256;  // the plate's interior, N x N

// One step on an NY x NX block of a plate split over PX x PY ranks: u's ghosts refreshed, v's
// interior = the mean of u's four neighbours.
template <ctfx::index_t NY, ctfx::index_t NX, int PX, int PY>
constexpr auto jacobi_step = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {NY + 2, NX + 2});
  auto v = b.input("v", ctfx::f32, {NY + 2, NX + 2});
  auto g = ctfx::halo_exchange(u, 1, {PX, PY, false, false});
  b.update(u, g);
  auto at = [&](ctfx::index_t r0, ctfx::index_t c0) { return g.slice(0, r0, r0 + NY).slice(1, c0, c0 + NX); };
  auto mean = (at(0, 1) + at(2, 1) + at(1, 0) + at(1, 2)) * 0.25f;
  b.update(v, ctfx::slice_scatter(v, ctfx::slice_scatter(v.slice(0, 1, NY + 1), mean, 1, 1, NX + 1), 0, 1, NY + 1));
});
// The heat in the plate: the sum of the interior over every rank.
template <ctfx::index_t NY, ctfx::index_t NX>
constexpr auto heat = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {NY + 2, NX + 2});
  b.output(ctfx::all_reduce(u.slice(0, 1, NY + 1).slice(1, 1, NX + 1).to(ctfx::f64).sum()));
});

// The same solver as a plain loop over the whole (N + 2) x (N + 2) plate, on one rank: the mean of
// the four neighbours summed in the graph's order (north, south, west, east).
std::vector<float> single_rank(int steps) {
  const auto W = static_cast<std::size_t>(N + 2);
  std::vector<float> u(W * W, 0.0f);
  for (std::size_t x = 0; x < W; ++x) u[x] = 1.0f;
  std::vector<float> v = u;
  for (int s = 0; s < steps; ++s) {
    for (std::size_t y = 1; y <= static_cast<std::size_t>(N); ++y)
      for (std::size_t x = 1; x <= static_cast<std::size_t>(N); ++x)
        v[y * W + x] = (u[(y - 1) * W + x] + u[(y + 1) * W + x] + u[y * W + x - 1] + u[y * W + x + 1]) * 0.25f;
    std::swap(u, v);
  }
  return u;
}

// Rank 0 gathers every rank's interior (n x n blocks of a P x P split) and counts the cells that
// differ from the single-rank loop; every rank returns the verdict.
int check(const float* u, ctfx::index_t n, int P, int steps, int r) {
  std::vector<float> mine;
  for (ctfx::index_t y = 1; y <= n; ++y)
    for (ctfx::index_t x = 1; x <= n; ++x) mine.push_back(u[y * (n + 2) + x]);
  std::vector<float> all(r == 0 ? mine.size() * static_cast<std::size_t>(P * P) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_FLOAT, all.data(), static_cast<int>(mine.size()), MPI_FLOAT, 0,
             MPI_COMM_WORLD);
  long differ = 0;
  if (r == 0) {
    const std::vector<float> ref = single_rank(steps);
    const auto W = static_cast<std::size_t>(N + 2), nn = static_cast<std::size_t>(n);
    for (int q = 0; q < P * P; ++q)
      for (std::size_t y = 0; y < nn; ++y)
        for (std::size_t x = 0; x < nn; ++x) {
          const std::size_t gy = static_cast<std::size_t>(q / P) * nn + y + 1, gx = static_cast<std::size_t>(q % P) * nn + x + 1;
          differ += all[static_cast<std::size_t>(q) * nn * nn + y * nn + x] != ref[gy * W + gx];
        }
    std::printf("%s: %ld of %ld cells differ from the single-rank loop\n", differ == 0 ? "ok" : "WRONG", differ,
                static_cast<long>(N * N));
  }
  MPI_Bcast(&differ, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return differ == 0 ? 0 : 1;
}

template <int P>
int solve(ctfx::mpi_communicator& world, int steps) {
  constexpr ctfx::index_t n = N / P;
  using step = ctfx::compiled<decltype(jacobi_step<n, n, P, P>)>;
  // Both writes run in place in the caller's grids, and the stencil needs no temporary.
  static_assert(step::static_buffer_bytes() == 0, "no workspace: the halo exchange and the update run in place");
  const int r = world.rank();
  std::vector<float> u(static_cast<std::size_t>((n + 2) * (n + 2)), 0.0f);
  if (r / P == 0)  // the ranks on the top edge hold the boundary value in their top ghost row
    for (ctfx::index_t x = 0; x < n + 2; ++x) u[static_cast<std::size_t>(x)] = 1.0f;
  std::vector<float> v = u;
  const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &world};
  auto grid = ctfx::tensor_ref::contiguous(u.data(), {n + 2, n + 2});
  auto next = ctfx::tensor_ref::contiguous(v.data(), {n + 2, n + 2});
  const double t0 = MPI_Wtime();
  for (int s = 0; s < steps; ++s) {
    if (auto st = step::run({grid, next}, {}, ctx); !st) {
      std::fprintf(stderr, "rank %d: %s\n", r, st.message.c_str());
      return 1;
    }
    std::swap(grid, next);
  }
  const double t1 = MPI_Wtime();
  double total = 0;
  if (auto st = ctfx::compiled<decltype(heat<n, n>)>::run({grid}, {ctfx::tensor_ref::contiguous(&total, {})}, ctx); !st) {
    std::fprintf(stderr, "rank %d: %s\n", r, st.message.c_str());
    return 1;
  }
  if (r == 0)
    std::printf("%d x %d ranks, %ld x %ld plate, %d steps: heat %.6f, %.2f ms per step\n", P, P, static_cast<long>(N),
                static_cast<long>(N), steps, total, (t1 - t0) * 1e3 / steps);
  return check(static_cast<const float*>(grid.data), n, P, steps, r);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  {
    ctfx::mpi_communicator world(MPI_COMM_WORLD);
    const int steps = argc > 1 ? std::atoi(argv[1]) : 100;
    if (world.size() == 4) rc = solve<2>(world, steps);
    else if (world.size() == 1) rc = solve<1>(world, steps);
    else {
      if (world.rank() == 0) std::fprintf(stderr, "run with mpirun -np 4 (2 x 2 ranks) or -np 1\n");
      rc = 2;
    }
  }
  MPI_Finalize();
  return rc;
}
