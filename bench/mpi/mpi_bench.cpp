// Graphs across ranks against the MPI a user would write by hand, in one run (mpirun -np 4):
//   halo      the ghost layer of a 2 x 2 decomposition (each rank a 1024 x 1024 f32 block):
//             ctfx's halo_exchange, hand-written MPI_Sendrecv with hand packing of the columns, and
//             MPI derived datatypes (MPI_Type_create_subarray) for the columns
//   allreduce 64 MiB of f32 summed in place: ctfx's all_reduce_ and MPI_Allreduce(MPI_IN_PLACE)
//   blocks    a 64 MiB f32 buffer gathered and reduce-scattered in place in blocks of 16 MiB:
//             ctfx's all_gather_blocks_ against MPI_Allgather(MPI_IN_PLACE), and its
//             reduce_scatter_blocks_ against MPI_Reduce_scatter_block into a separate 16 MiB buffer
//   jacobi    one step of the distributed solver (halo exchange + interior update into the second
//             buffer, then swap): ctfx's graph and the hand-written loop with MPI_Sendrecv
// Each figure is the median over repetitions of the slowest rank's time (ranks start together).
#include <mpi.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/comm/mpi.hpp>
#include <ctfx/exec/compiled.hpp>

namespace {

constexpr ctfx::index_t n = 1024, S = n + 2;  // a rank's block, with one ghost layer
constexpr ctfx::halo_grid grid2x2{2, 2, true, true};

constexpr auto halo = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {S, S});
  b.update(u, ctfx::halo_exchange(u, 1, grid2x2));
});
constexpr ctfx::index_t big = 16 * 1024 * 1024;  // 64 MiB of f32
constexpr auto allreduce = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {big});
  b.update(x, ctfx::all_reduce(x));
});
constexpr auto gather_blocks = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {big});
  b.update(x, ctfx::all_gather_blocks(x, 4));
});
constexpr auto scatter_blocks = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {big});
  b.update(x, ctfx::reduce_scatter_blocks(x, 4));
});
// Double-buffered Jacobi: u's ghosts refreshed in place, v's interior written from u.
constexpr auto jacobi = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {S, S});
  auto v = b.input("v", ctfx::f32, {S, S});
  auto g = ctfx::halo_exchange(u, 1, grid2x2);
  b.update(u, g);
  auto at = [&](ctfx::index_t r0, ctfx::index_t c0) { return g.slice(0, r0, r0 + n).slice(1, c0, c0 + n); };
  auto mean = (at(0, 1) + at(2, 1) + at(1, 0) + at(1, 2)) * 0.25f;
  b.update(v, ctfx::slice_scatter(v, ctfx::slice_scatter(v.slice(0, 1, n + 1), mean, 1, 1, n + 1), 0, 1, n + 1));
});
static_assert(ctfx::compiled<decltype(jacobi)>::static_buffer_bytes() == 0, "no temporary: v's interior is written directly");

double timed(int reps, MPI_Comm c, auto&& f) {
  std::vector<double> t;
  f();
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(c);
    const double a = MPI_Wtime();
    f();
    double mine = MPI_Wtime() - a, worst = 0;
    MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, c);
    t.push_back(worst);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1e6;
}

// The hand-written halo exchange: rows straight from the grid, columns packed by loops.
struct hand_halo {
  MPI_Comm c;
  int east, west, north, south;
  std::vector<float> sbuf = std::vector<float>(2 * n), rbuf = std::vector<float>(2 * n);
  void operator()(float* u) {
    float *se = sbuf.data(), *sw = sbuf.data() + n, *re = rbuf.data(), *rw = rbuf.data() + n;
    for (ctfx::index_t y = 0; y < n; ++y) { se[y] = u[(y + 1) * S + n]; sw[y] = u[(y + 1) * S + 1]; }
    MPI_Sendrecv(se, n, MPI_FLOAT, east, 0, rw, n, MPI_FLOAT, west, 0, c, MPI_STATUS_IGNORE);
    MPI_Sendrecv(sw, n, MPI_FLOAT, west, 1, re, n, MPI_FLOAT, east, 1, c, MPI_STATUS_IGNORE);
    for (ctfx::index_t y = 0; y < n; ++y) { u[(y + 1) * S] = rw[y]; u[(y + 1) * S + n + 1] = re[y]; }
    MPI_Sendrecv(u + 1 * S, S, MPI_FLOAT, north, 2, u + (n + 1) * S, S, MPI_FLOAT, south, 2, c, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + n * S, S, MPI_FLOAT, south, 3, u, S, MPI_FLOAT, north, 3, c, MPI_STATUS_IGNORE);
  }
};

// The same with derived datatypes for the columns (MPI packs).
struct typed_halo {
  MPI_Comm c;
  int east, west, north, south;
  MPI_Datatype col_send_e, col_send_w, col_recv_e, col_recv_w;
  typed_halo(MPI_Comm comm, int e, int w, int no, int so) : c(comm), east(e), west(w), north(no), south(so) {
    const int sizes[2] = {static_cast<int>(S), static_cast<int>(S)}, sub[2] = {static_cast<int>(n), 1};
    auto make = [&](int col, MPI_Datatype& t) {
      const int start[2] = {1, col};
      MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_FLOAT, &t);
      MPI_Type_commit(&t);
    };
    make(static_cast<int>(n), col_send_e);
    make(1, col_send_w);
    make(static_cast<int>(n) + 1, col_recv_e);
    make(0, col_recv_w);
  }
  ~typed_halo() {
    for (auto* t : {&col_send_e, &col_send_w, &col_recv_e, &col_recv_w}) MPI_Type_free(t);
  }
  void operator()(float* u) {
    MPI_Sendrecv(u, 1, col_send_e, east, 0, u, 1, col_recv_w, west, 0, c, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u, 1, col_send_w, west, 1, u, 1, col_recv_e, east, 1, c, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + 1 * S, S, MPI_FLOAT, north, 2, u + (n + 1) * S, S, MPI_FLOAT, south, 2, c, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + n * S, S, MPI_FLOAT, south, 3, u, S, MPI_FLOAT, north, 3, c, MPI_STATUS_IGNORE);
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    ctfx::mpi_communicator world(MPI_COMM_WORLD);
    const int r = world.rank();
    if (world.size() != 4) {
      if (r == 0) std::fprintf(stderr, "run with mpirun -np 4\n");
      MPI_Finalize();
      return 2;
    }
    const int reps = argc > 1 ? std::atoi(argv[1]) : 50;
    const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &world};
    std::vector<float> u(static_cast<std::size_t>(S * S)), v(u.size(), 0.0f), hu, hv;
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(r)) % 11);
    hu = u;
    hv = v;
    const int e = grid2x2.neighbour(r, 1, 0), w = grid2x2.neighbour(r, -1, 0), no = grid2x2.neighbour(r, 0, -1),
              so = grid2x2.neighbour(r, 0, 1);
    hand_halo hand{MPI_COMM_WORLD, e, w, no, so};
    typed_halo typed(MPI_COMM_WORLD, e, w, no, so);
    auto U = [&](std::vector<float>& x) { return ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {S, S}); };
    using halo_plan = ctfx::compiled<decltype(halo)>;
    const double t_ctfx = timed(reps, MPI_COMM_WORLD, [&] { (void)halo_plan::run({U(u)}, {}, ctx); });
    const double t_hand = timed(reps, MPI_COMM_WORLD, [&] { hand(hu.data()); });
    std::vector<float> tu = u;
    const double t_typed = timed(reps, MPI_COMM_WORLD, [&] { typed(tu.data()); });
    const bool same = u == hu && u == tu;
    // What ranks pay to agree before a run's first write, as the halo exchange's run does it: the
    // digest of its collective and graph, and one MPI_Allreduce of 15 words (validation, and every
    // rank about to post the same collectives); against one MPI_Allreduce of an int (what agreeing
    // on validation alone takes).
    const double t_agree = timed(reps, MPI_COMM_WORLD, [&] {
      std::int32_t node = -1;
      const ctfx::static_plan_ref p = halo_plan::plan_ref();
      (void)ctfx::detail::agree_world(world, true, {}, node, ctfx::detail::static_digest(p, p.layouts.data()));
    });
    const double t_int = timed(reps, MPI_COMM_WORLD, [&] {
      int mine = 1, all = 0;
      MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, world.handle());
    });
    // all_reduce of 64 MiB, in place. Values stay small integers: every sum is exact.
    std::vector<float> x(static_cast<std::size_t>(big), 0.0f), hx(x.size(), 0.0f);
    using ar_plan = ctfx::compiled<decltype(allreduce)>;
    const double a_ctfx = timed(std::max(5, reps / 5), MPI_COMM_WORLD,
                                [&] { (void)ar_plan::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {big})}, {}, ctx); });
    const double a_hand = timed(std::max(5, reps / 5), MPI_COMM_WORLD, [&] {
      MPI_Allreduce(MPI_IN_PLACE, hx.data(), static_cast<int>(big), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    // Jacobi steps, double-buffered.
    using jac_plan = ctfx::compiled<decltype(jacobi)>;
    std::vector<float> ju = u, jv = v, ku = u, kv = v;
    const double j_ctfx = timed(reps, MPI_COMM_WORLD, [&] {
      (void)jac_plan::run({U(ju), U(jv)}, {}, ctx);
      std::swap(ju, jv);
    });
    const double j_hand = timed(reps, MPI_COMM_WORLD, [&] {
      hand(ku.data());
      const float* a = ku.data();
      float* o = kv.data();
      for (ctfx::index_t y = 1; y <= n; ++y)
        for (ctfx::index_t c = 1; c <= n; ++c)
          o[y * S + c] = (a[(y - 1) * S + c] + a[(y + 1) * S + c] + a[y * S + c - 1] + a[y * S + c + 1]) * 0.25f;
      std::swap(ku, kv);
    });
    const bool jsame = ju == ku && jv == kv;
    // The same buffer gathered and reduce-scattered in blocks, in place (after the Jacobi steps:
    // measured before them, these 64 MiB exchanges slowed the steps that followed by ~10%).
    const int breps = std::max(5, reps / 5);
    const auto X = [&](std::vector<float>& buf) { return ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {big}); };
    using gb_plan = ctfx::compiled<decltype(gather_blocks)>;
    using sb_plan = ctfx::compiled<decltype(scatter_blocks)>;
    const int quarter = static_cast<int>(big / 4);
    const double g_ctfx = timed(breps, MPI_COMM_WORLD, [&] { (void)gb_plan::run({X(x)}, {}, ctx); });
    const double g_hand = timed(breps, MPI_COMM_WORLD, [&] {
      MPI_Allgather(MPI_IN_PLACE, quarter, MPI_FLOAT, hx.data(), quarter, MPI_FLOAT, MPI_COMM_WORLD);
    });
    std::vector<float> block(static_cast<std::size_t>(quarter));
    const double s_ctfx = timed(breps, MPI_COMM_WORLD, [&] { (void)sb_plan::run({X(x)}, {}, ctx); });
    const double s_hand = timed(breps, MPI_COMM_WORLD, [&] {
      MPI_Reduce_scatter_block(hx.data(), block.data(), quarter, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    if (r == 0) {
      std::printf("4 ranks, %d repetitions (median of the slowest rank)\n", reps);
      std::printf("halo exchange, 1024^2 f32 per rank: ctfx %.1f us, hand packing %.1f us (%.2fx), subarray types %.1f us (%.2fx)%s\n",
                  t_ctfx, t_hand, t_ctfx / t_hand, t_typed, t_ctfx / t_typed, same ? "" : "  RESULTS DIFFER");
      std::printf("the agreement a ctfx run adds (digest + an MPI_Allreduce of 15 words): %.1f us; an MPI_Allreduce of one int: %.1f us\n",
                  t_agree, t_int);
      std::printf("all_reduce 64 MiB f32 in place: ctfx %.0f us, MPI_Allreduce %.0f us (%.2fx)\n", a_ctfx, a_hand, a_ctfx / a_hand);
      std::printf("all_gather in blocks, 64 MiB f32 in place: ctfx %.0f us, MPI_Allgather(MPI_IN_PLACE) %.0f us (%.2fx)\n",
                  g_ctfx, g_hand, g_ctfx / g_hand);
      std::printf("reduce_scatter in blocks, 64 MiB f32: ctfx in place %.0f us, MPI_Reduce_scatter_block into a 16 MiB buffer %.0f us (%.2fx)\n",
                  s_ctfx, s_hand, s_ctfx / s_hand);
      std::printf("Jacobi step, 1024^2 per rank: ctfx %.1f us, hand-written %.1f us (%.2fx)%s\n", j_ctfx, j_hand, j_ctfx / j_hand,
                  jsame ? "" : "  RESULTS DIFFER");
    }
  }
  MPI_Finalize();
  return 0;
}
