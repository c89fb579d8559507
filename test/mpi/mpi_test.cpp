// Graphs across 4 MPI ranks (mpirun -np 4): every collective against its reference on every rank,
// the halo exchange of a 2 x 2 decomposition, a distributed Jacobi solver equal bit for bit to the
// same solver on one rank, and failures on one rank that leave every rank's buffers untouched.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <mpi.h>
#include <ctfx.hpp>
#include <ctfx/comm/mpi.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <climits>
#include <cstdint>
#include <vector>

namespace {

int rank() { int r = 0; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
int world() { int n = 1; MPI_Comm_size(MPI_COMM_WORLD, &n); return n; }
ctfx::device_ctx on(ctfx::communicator& c) { return {ctfx::backend::host, nullptr, &c}; }
template <class T>
ctfx::tensor_ref ref(std::vector<T>& v, ctfx::dtype dt, std::initializer_list<ctfx::index_t> shape) {
  return ctfx::tensor_ref::contiguous(static_cast<void*>(v.data()), dt, shape);  // dt chosen by the caller
}

// ---- collectives
constexpr auto reductions = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {5});
  auto y = b.input("y", ctfx::i64, {3});
  auto mx = ctfx::all_reduce(x, ctfx::reduce_op::max);
  auto mn = ctfx::all_reduce(y, ctfx::reduce_op::min);
  b.update(x, ctfx::all_reduce(x));  // in place: MPI_IN_PLACE on the caller's x
  b.output(mx, mn);
});
using reductions_plan = ctfx::compiled<decltype(reductions)>;
constexpr int count(const ctfx::ir& g, ctfx::op_kind k) {
  int c = 0;
  for (const auto& n : g.nodes) c += n.op == k;
  return c;
}
static_assert(count(reductions_plan::graph(), ctfx::op_kind::all_reduce_) == 1);

constexpr auto moves = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f64, {2, 3});
  auto z = b.input("z", ctfx::i32, {8});
  b.update(z, ctfx::broadcast(z, 2));  // in place
  b.output(ctfx::broadcast(x * 2.0, 1), ctfx::all_gather(x, 4), ctfx::reduce_scatter(z, 4, ctfx::reduce_op::sum),
           ctfx::reduce_scatter(x.to(ctfx::f32).view({6}).slice(0, 0, 4), 4, ctfx::reduce_op::max));
});
using moves_plan = ctfx::compiled<decltype(moves)>;
static_assert(count(moves_plan::graph(), ctfx::op_kind::broadcast_) == 1);

// ---- the halo exchange of a 2 x 2 decomposition of a 12 x 16 global grid (6 x 8 per rank, h = 1)
constexpr ctfx::index_t LY = 6, LX = 8;
template <bool Periodic>
constexpr auto halo_graph = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {LY + 2, LX + 2});
  b.update(u, ctfx::halo_exchange(u, 1, {2, 2, Periodic, Periodic}));
});
// The same with the block's extents symbolic: a static plan that sizes the scratch it packs edges
// into on each call.
constexpr auto halo_symbolic = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {b.sym("ny"), b.sym("nx")});
  b.update(u, ctfx::halo_exchange(u, 1, {2, 2, true, true}));
});
static_assert(ctfx::compiled<decltype(halo_symbolic)>::run_plan.usable && ctfx::compiled<decltype(halo_symbolic)>::run_plan.n_symbols == 2);
// The value of global cell (gy, gx) (wrapped into the domain).
float cell(ctfx::index_t gy, ctfx::index_t gx) {
  gy = (gy + 2 * LY) % (2 * LY);
  gx = (gx + 2 * LX) % (2 * LX);
  return static_cast<float>(gy * 100 + gx);
}
std::vector<float> local_block(int r) {
  std::vector<float> u(static_cast<std::size_t>((LY + 2) * (LX + 2)), -1.0f);  // ghosts: -1
  const ctfx::index_t oy = (r / 2) * LY, ox = (r % 2) * LX;
  for (ctfx::index_t y = 1; y <= LY; ++y)
    for (ctfx::index_t x = 1; x <= LX; ++x) u[static_cast<std::size_t>(y * (LX + 2) + x)] = cell(oy + y - 1, ox + x - 1);
  return u;
}

// ---- Jacobi on a 16 x 16 interior with fixed boundary values
constexpr ctfx::index_t N = 16;
template <ctfx::index_t NY, ctfx::index_t NX, int PX, int PY>
constexpr auto jacobi = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {NY + 2, NX + 2});
  auto g = ctfx::halo_exchange(u, 1, {PX, PY, false, false});
  auto rows = [&](ctfx::index_t r0, ctfx::index_t c0) { return g.slice(0, r0, r0 + NY).slice(1, c0, c0 + NX); };
  auto next = (rows(0, 1) + rows(2, 1) + rows(1, 0) + rows(1, 2)) * 0.25f;
  b.update(u, ctfx::slice_scatter(g, ctfx::slice_scatter(g.slice(0, 1, NY + 1), next, 1, 1, NX + 1), 0, 1, NY + 1));
});
float initial(ctfx::index_t gy, ctfx::index_t gx) {  // global coordinates, boundary included
  if (gy == 0) return 1.0f;
  if (gx == N + 1) return 0.5f;
  return static_cast<float>((gy * 7 + gx * 3) % 5) * 0.125f;
}

}  // namespace

TEST_CASE("all_reduce: sum in place, max and min functional, on every rank") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank(), n = world();
  std::vector<float> x(5);
  for (int i = 0; i < 5; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(r * 10 + i);
  std::vector<std::int64_t> y{r, -r, 7}, mn(3);
  std::vector<float> mx(5);
  auto st = reductions_plan::run({ref(x, ctfx::f32, {5}), ref(y, ctfx::i64, {3})}, {ref(mx, ctfx::f32, {5}), ref(mn, ctfx::i64, {3})}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  for (int i = 0; i < 5; ++i) {
    float sum = 0;
    for (int q = 0; q < n; ++q) sum += static_cast<float>(q * 10 + i);
    CHECK(x[static_cast<std::size_t>(i)] == sum);
    CHECK(mx[static_cast<std::size_t>(i)] == static_cast<float>((n - 1) * 10 + i));
  }
  CHECK(mn == std::vector<std::int64_t>{0, -(n - 1), 7});
}

TEST_CASE("broadcast, all_gather, reduce_scatter against their references") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  REQUIRE(world() == 4);
  std::vector<double> x(6);
  for (int i = 0; i < 6; ++i) x[static_cast<std::size_t>(i)] = r + 0.25 * i;
  std::vector<std::int32_t> z(8);
  for (int i = 0; i < 8; ++i) z[static_cast<std::size_t>(i)] = 100 * r + i;
  std::vector<double> b1(6), g(24);
  std::vector<std::int32_t> rs(2);
  std::vector<float> rm(1);
  const auto x0 = x;
  auto st = moves_plan::run({ref(x, ctfx::f64, {2, 3}), ref(z, ctfx::i32, {8})},
                            {ref(b1, ctfx::f64, {2, 3}), ref(g, ctfx::f64, {8, 3}), ref(rs, ctfx::i32, {2}), ref(rm, ctfx::f32, {1})}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(x == x0);
  for (int i = 0; i < 8; ++i) CHECK(z[static_cast<std::size_t>(i)] == 200 + i);  // rank 2's z, in place
  for (int i = 0; i < 6; ++i) CHECK(b1[static_cast<std::size_t>(i)] == (1 + 0.25 * i) * 2.0);  // rank 1's x * 2
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 6; ++i) CHECK(g[static_cast<std::size_t>(q * 6 + i)] == q + 0.25 * i);
  // reduce_scatter of z (read before its in-place broadcast): block r of the sum over ranks.
  for (int i = 0; i < 2; ++i) CHECK(rs[static_cast<std::size_t>(i)] == 100 * (0 + 1 + 2 + 3) + 4 * (2 * r + i));
  CHECK(rm[0] == static_cast<float>(3 + 0.25 * r));  // max over ranks of element r of x
  // The same graph through the functional reference: equal on every rank.
  std::vector<double> xr = x0, b2(6), g2(24);
  std::vector<std::int32_t> zr(8), rs2(2);
  std::vector<float> rm2(1);
  for (int i = 0; i < 8; ++i) zr[static_cast<std::size_t>(i)] = 100 * r + i;
  st = ctfx::reference_run(moves.get(), {ref(xr, ctfx::f64, {2, 3}), ref(zr, ctfx::i32, {8})},
                           {ref(b2, ctfx::f64, {2, 3}), ref(g2, ctfx::f64, {8, 3}), ref(rs2, ctfx::i32, {2}), ref(rm2, ctfx::f32, {1})},
                           nullptr, &w);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(zr == z);
  CHECK(b2 == b1);
  CHECK(g2 == g);
  CHECK(rs2 == rs);
  CHECK(rm2 == rm);
}

// Gather and reduce-scatter inside the caller's buffer: written back, both run in place (the rank's
// block at its offset: MPI_IN_PLACE for the gather, each block reduced into its owner for the
// scatter), with no clone and no workspace.
constexpr auto in_blocks = ctfx::graph([](ctfx::builder& b) {
  auto params = b.input("params", ctfx::f32, {8, 3});
  auto grads = b.input("grads", ctfx::f64, {4, 5});
  b.update(params, ctfx::all_gather_blocks(params, 4));
  b.update(grads, ctfx::reduce_scatter_blocks(grads, 4, ctfx::reduce_op::sum));
});
using in_blocks_plan = ctfx::compiled<decltype(in_blocks)>;
static_assert(count(in_blocks_plan::graph(), ctfx::op_kind::all_gather_blocks_) == 1);
static_assert(count(in_blocks_plan::graph(), ctfx::op_kind::reduce_scatter_blocks_) == 1);
static_assert(in_blocks_plan::static_buffer_bytes() == 0);

TEST_CASE("all_gather_blocks and reduce_scatter_blocks in place in the caller's buffers, against the reference") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  REQUIRE(world() == 4);
  auto fill = [&](std::vector<float>& p, std::vector<double>& gr) {
    p.assign(24, -1.0f);  // only this rank's block holds its values
    for (int i = 0; i < 6; ++i) p[static_cast<std::size_t>(6 * r + i)] = static_cast<float>(10 * r + i);
    gr.resize(20);
    for (int i = 0; i < 20; ++i) gr[static_cast<std::size_t>(i)] = 1000.0 * r + i;
  };
  std::vector<float> p;
  std::vector<double> gr;
  fill(p, gr);
  auto st = in_blocks_plan::run({ref(p, ctfx::f32, {8, 3}), ref(gr, ctfx::f64, {4, 5})}, {}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 6; ++i) CHECK(p[static_cast<std::size_t>(6 * q + i)] == static_cast<float>(10 * q + i));
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 5; ++i) {
      const double own = 1000.0 * r + (5 * q + i);
      // block r: the sum over ranks of their block r; the other blocks as they were.
      CHECK(gr[static_cast<std::size_t>(5 * q + i)] == (q == r ? 1000.0 * (0 + 1 + 2 + 3) + 4 * (5 * q + i) : own));
    }
  // The functional graph, run as written: the same values on every rank.
  std::vector<float> p2;
  std::vector<double> gr2;
  fill(p2, gr2);
  st = ctfx::reference_run(in_blocks.get(), {ref(p2, ctfx::f32, {8, 3}), ref(gr2, ctfx::f64, {4, 5})}, {}, nullptr, &w);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(p2 == p);
  CHECK(gr2 == gr);
  // And at run time.
  fill(p2, gr2);
  st = ctfx::runtime_plan(in_blocks.get()).run({ref(p2, ctfx::f32, {8, 3}), ref(gr2, ctfx::f64, {4, 5})}, {}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(p2 == p);
  CHECK(gr2 == gr);
}

TEST_CASE("halo_exchange, 2 x 2 ranks, periodic: every ghost cell holds its neighbour's value, corners included") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  auto u = local_block(r);
  auto v = u;
  auto st = ctfx::compiled<decltype(halo_graph<true>)>::run({ref(u, ctfx::f32, {LY + 2, LX + 2})}, {}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  const ctfx::index_t oy = (r / 2) * LY, ox = (r % 2) * LX;
  int wrong = 0;
  for (ctfx::index_t y = 0; y < LY + 2; ++y)
    for (ctfx::index_t x = 0; x < LX + 2; ++x) wrong += u[static_cast<std::size_t>(y * (LX + 2) + x)] != cell(oy + y - 1, ox + x - 1);
  CHECK(wrong == 0);
  // The graph of symbolic extents, bound to this block's: the same cells.
  st = ctfx::compiled<decltype(halo_symbolic)>::run({ref(v, ctfx::f32, {LY + 2, LX + 2})}, {}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(v == u);
  // And to a larger block (40 x 300 cells per rank), whose edges need more scratch than the plan's
  // static 256 bytes: each cell holds its global coordinates' value.
  constexpr ctfx::index_t ly = 40, lx = 300;
  auto big_cell = [&](ctfx::index_t gy, ctfx::index_t gx) {
    return static_cast<float>(((gy + 2 * ly) % (2 * ly)) * 1000 + (gx + 2 * lx) % (2 * lx));
  };
  std::vector<float> big(static_cast<std::size_t>((ly + 2) * (lx + 2)), -1.0f);
  const ctfx::index_t by = (r / 2) * ly, bx = (r % 2) * lx;
  for (ctfx::index_t y = 1; y <= ly; ++y)
    for (ctfx::index_t x = 1; x <= lx; ++x) big[static_cast<std::size_t>(y * (lx + 2) + x)] = big_cell(by + y - 1, bx + x - 1);
  using sym_plan = ctfx::compiled<decltype(halo_symbolic)>;
  const std::vector<ctfx::tensor_desc> descs{ctfx::tensor_desc::contiguous(ctfx::f32, {ly + 2, lx + 2})};
  CHECK(sym_plan::bind(descs).workspace_bytes == sym_plan::prog().bind(descs).workspace_bytes);
  CHECK(sym_plan::bind(descs).workspace_bytes > 256);
  std::vector<std::byte> ws(sym_plan::bind(descs).workspace_bytes);
  st = sym_plan::run({ref(big, ctfx::f32, {ly + 2, lx + 2})}, {}, on(w), ws);
  REQUIRE_MESSAGE(st.ok, st.message);
  wrong = 0;
  for (ctfx::index_t y = 0; y < ly + 2; ++y)
    for (ctfx::index_t x = 0; x < lx + 2; ++x) wrong += big[static_cast<std::size_t>(y * (lx + 2) + x)] != big_cell(by + y - 1, bx + x - 1);
  CHECK(wrong == 0);
}

TEST_CASE("halo_exchange, 2 x 2 ranks, not periodic: ghosts past the domain's edge keep their values") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  auto u = local_block(r);
  auto rt = local_block(r);
  REQUIRE(ctfx::compiled<decltype(halo_graph<false>)>::run({ref(u, ctfx::f32, {LY + 2, LX + 2})}, {}, on(w)).ok);
  REQUIRE(ctfx::runtime_plan(halo_graph<false>.get()).run({ref(rt, ctfx::f32, {LY + 2, LX + 2})}, {}, on(w)).ok);
  CHECK(rt == u);
  const ctfx::index_t oy = (r / 2) * LY, ox = (r % 2) * LX;
  for (ctfx::index_t y = 0; y < LY + 2; ++y)
    for (ctfx::index_t x = 0; x < LX + 2; ++x) {
      const ctfx::index_t gy = oy + y - 1, gx = ox + x - 1;
      const bool outside = gy < 0 || gy >= 2 * LY || gx < 0 || gx >= 2 * LX;
      CHECK(u[static_cast<std::size_t>(y * (LX + 2) + x)] == (outside ? -1.0f : cell(gy, gx)));
    }
}

TEST_CASE("Jacobi on 4 ranks equals Jacobi on one rank, bit for bit, after 100 steps") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  constexpr ctfx::index_t n = N / 2;
  using local = ctfx::compiled<decltype(jacobi<n, n, 2, 2>)>;
  using whole = ctfx::compiled<decltype(jacobi<N, N, 1, 1>)>;
  const ctfx::index_t oy = (r / 2) * n, ox = (r % 2) * n;
  std::vector<float> u(static_cast<std::size_t>((n + 2) * (n + 2))), g(static_cast<std::size_t>((N + 2) * (N + 2)));
  for (ctfx::index_t y = 0; y < n + 2; ++y)
    for (ctfx::index_t x = 0; x < n + 2; ++x) u[static_cast<std::size_t>(y * (n + 2) + x)] = initial(oy + y, ox + x);
  for (ctfx::index_t y = 0; y < N + 2; ++y)
    for (ctfx::index_t x = 0; x < N + 2; ++x) g[static_cast<std::size_t>(y * (N + 2) + x)] = initial(y, x);
  for (int step = 0; step < 100; ++step) {
    REQUIRE(local::run({ref(u, ctfx::f32, {n + 2, n + 2})}, {}, on(w)).ok);
    REQUIRE(whole::run({ref(g, ctfx::f32, {N + 2, N + 2})}, {}).ok);  // one rank: no communicator
  }
  int differ = 0;
  for (ctfx::index_t y = 1; y <= n; ++y)
    for (ctfx::index_t x = 1; x <= n; ++x)
      differ += u[static_cast<std::size_t>(y * (n + 2) + x)] != g[static_cast<std::size_t>((oy + y) * (N + 2) + ox + x)];
  CHECK(differ == 0);
  CHECK(g[static_cast<std::size_t>(1 * (N + 2) + 1)] != initial(1, 1));  // the solver moved
}

TEST_CASE("a failure on one rank: every rank returns it, named by rank, and no rank writes a caller buffer") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 3});
    auto i = b.input("i", ctfx::i64, {2});
    auto v = b.input("v", ctfx::f32, {2, 3});
    auto y = ctfx::all_reduce(ctfx::index_put(x, {i}, v));
    b.update(x, y);
    b.output(y.sum({0}));
  });
  using plan = ctfx::compiled<decltype(g)>;
  std::vector<float> x(12, 1.0f), v(6, 2.0f), o(3, -5.0f);
  std::vector<std::int64_t> i{0, r == 1 ? 9 : 2};  // rank 1's index is out of range
  auto st = plan::run({ref(x, ctfx::f32, {4, 3}), ref(i, ctfx::i64, {2}), ref(v, ctfx::f32, {2, 3})}, {ref(o, ctfx::f32, {3})}, on(w));
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.rfind("rank 1 of 4: rule index-in-range", 0) == 0);
  CHECK(x == std::vector<float>(12, 1.0f));
  CHECK(o == std::vector<float>(3, -5.0f));
  // A shape error on rank 3 (found while binding): the same on every rank, through the run-time plan.
  std::vector<float> x5(15, 1.0f);
  i = {0, 1};
  ctfx::runtime_plan p(g.get());
  st = r == 3 ? p.run({ref(x5, ctfx::f32, {5, 3}), ref(i, ctfx::i64, {2}), ref(v, ctfx::f32, {2, 3})}, {ref(o, ctfx::f32, {3})}, on(w))
              : p.run({ref(x, ctfx::f32, {4, 3}), ref(i, ctfx::i64, {2}), ref(v, ctfx::f32, {2, 3})}, {ref(o, ctfx::f32, {3})}, on(w));
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.rfind("rank 3 of 4: rule input-shape", 0) == 0);
  CHECK(x == std::vector<float>(12, 1.0f));
  CHECK(x5 == std::vector<float>(15, 1.0f));
  CHECK(o == std::vector<float>(3, -5.0f));
}

TEST_CASE("indices the graph computes are checked before the ranks agree: a bad one on one rank stops every rank") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6});
    auto i = b.input("i", ctfx::i64, {1});
    auto v = b.input("v", ctfx::f32, {1});
    b.update(x, ctfx::index_put(x, {i + 1}, v));  // the put is the first write: its check comes first
  });
  std::vector<float> x(6, 1.0f), v{7.0f};
  std::vector<std::int64_t> i{r == 2 ? 5 : r};  // rank 2's i + 1 = 6 is out of range
  for (bool at_run_time : {false, true}) {
    const std::vector<ctfx::tensor_ref> in{ref(x, ctfx::f32, {6}), ref(i, ctfx::i64, {1}), ref(v, ctfx::f32, {1})};
    auto st = at_run_time ? ctfx::runtime_plan(g.get()).run(in, {}, on(w)) : ctfx::compiled<decltype(g)>::run(in, {}, on(w));
    REQUIRE_FALSE(st.ok);
    CHECK(st.message.rfind("rank 2 of 4: rule index-in-range", 0) == 0);
    CHECK(x == std::vector<float>(6, 1.0f));
  }
  i = {r};
  REQUIRE(ctfx::compiled<decltype(g)>::run({ref(x, ctfx::f32, {6}), ref(i, ctfx::i64, {1}), ref(v, ctfx::f32, {1})}, {}, on(w)).ok);
  for (int k = 0; k < 6; ++k) CHECK(x[static_cast<std::size_t>(k)] == (k == r + 1 ? 7.0f : 1.0f));
}

TEST_CASE("a graph built for another world size fails on every rank before any write") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2});
    b.update(x, x * 3.0f);
    b.output(ctfx::all_gather(x, 2));
  });
  std::vector<float> x{1.0f, 2.0f}, o(4, 0.0f);
  auto st = ctfx::compiled<decltype(g)>::run({ref(x, ctfx::f32, {2})}, {ref(o, ctfx::f32, {4})}, on(w));
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rank 0 of 4: rule comm-world") == 0);
  CHECK(x == std::vector<float>{1.0f, 2.0f});
}

TEST_CASE("PyTorch's functional collectives, parsed at run time, on 4 ranks") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = rank();
  const auto parsed = ctfx::parse_fx(R"(def forward(self, x: "f32[8, 4][4, 1]cpu"):
    all_reduce = torch.ops._c10d_functional.all_reduce.default(x, 'max', '0')
    wait_tensor = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
    all_gather_into_tensor = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 4, '0')
    reduce_scatter_tensor = torch.ops._c10d_functional.reduce_scatter_tensor.default(x, 'sum', 4, '0')
    broadcast = torch.ops._c10d_functional.broadcast.default(x, 1, '0')
    copy_ = torch.ops.aten.copy_.default(x, wait_tensor)
    return (all_gather_into_tensor, reduce_scatter_tensor, broadcast)
)");
  REQUIRE(parsed.error.ok());
  std::vector<float> x(32), a(128), b(8), c(32);
  for (int i = 0; i < 32; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(r * 100 + i);
  auto st = ctfx::runtime_plan(parsed.graph).run({ref(x, ctfx::f32, {8, 4})}, {ref(a, ctfx::f32, {32, 4}), ref(b, ctfx::f32, {2, 4}), ref(c, ctfx::f32, {8, 4})}, on(w));
  REQUIRE_MESSAGE(st.ok, st.message);
  for (int i = 0; i < 32; ++i) {
    CHECK(x[static_cast<std::size_t>(i)] == static_cast<float>(300 + i));  // max, in place
    CHECK(c[static_cast<std::size_t>(i)] == static_cast<float>(100 + i));  // rank 1's x
    for (int q = 0; q < 4; ++q) CHECK(a[static_cast<std::size_t>(q * 32 + i)] == static_cast<float>(q * 100 + i));
  }
  for (int k = 0; k < 8; ++k) CHECK(b[static_cast<std::size_t>(k)] == static_cast<float>(600 + 4 * (r * 8 + k)));
}

TEST_CASE("mpi_communicator: device buffers as the MPI says, or as the caller says") {
  ctfx::mpi_communicator asked(MPI_COMM_WORLD);
  CHECK(asked.device_buffers() == ctfx::mpi_cuda_aware());
  ctfx::mpi_communicator host_only(MPI_COMM_WORLD, INT_MAX, ctfx::mpi_device_buffers::no);
  CHECK_FALSE(host_only.device_buffers());
  ctfx::mpi_communicator told(MPI_COMM_WORLD, INT_MAX, ctfx::mpi_device_buffers::yes);
  CHECK(told.device_buffers());
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  doctest::Context ctx(argc, argv);
  if (rank() != 0) ctx.setOption("minimal", true);  // rank 0 prints the summary; every rank prints its failures
  int failed = ctx.run();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}
