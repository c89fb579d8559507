// Runs across 4 MPI ranks that cannot hang or corrupt: ranks that are about to post different
// collectives (an extent, a count, a missing collective, a halo grid, a reduce op, a dtype, a root)
// all return the same error before any byte moves, with their buffers bit-identical; the library's
// traffic never meets the application's on the caller's communicator; f16 and bf16 collectives; and
// messages split into pieces equal to whole ones.
#include <doctest/doctest.h>
#include <mpi.h>
#include <ctfx.hpp>
#include <ctfx/comm/mpi.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

int my_rank() { int r = 0; MPI_Comm_rank(MPI_COMM_WORLD, &r); return r; }
ctfx::device_ctx host_on(ctfx::communicator& c) { return {ctfx::backend::host, nullptr, &c}; }
template <class T>
ctfx::tensor_ref tref(std::vector<T>& v, ctfx::dtype dt, std::initializer_list<ctfx::index_t> shape) {
  return ctfx::tensor_ref::contiguous(static_cast<void*>(v.data()), dt, shape);  // the dtype is chosen at run time
}
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}
// Whether `text` is the same on every rank (rank 0's, compared on each; the verdict agreed).
bool same_everywhere(std::string text) {
  int n = static_cast<int>(text.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string first(static_cast<std::size_t>(n), '\0');
  if (my_rank() == 0) first = text;
  MPI_Bcast(first.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = first == text, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
// A refusal every rank returns alike, naming `who` and the rule, with `field` in its words.
void check_refused(const ctfx::run_status& st, const std::string& who, const std::string& field) {
  REQUIRE_FALSE(st.ok);
  CHECK_MESSAGE(st.message.rfind(who + ": rule comm-agree", 0) == 0, st.message);
  CHECK_MESSAGE(st.message.find(field) != std::string::npos, st.message);
  CHECK(same_everywhere(st.message));
}

// ---- the same graph, its extent symbolic
constexpr auto sym_sum = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n")});
  auto s = ctfx::all_reduce(x);
  b.update(x, s);
  b.output(s * 2.0f);
});
// ---- graphs that differ in one collective (each rank picks one)
template <ctfx::index_t N, ctfx::dtype DT = ctfx::dtype::f32, ctfx::reduce_op Op = ctfx::reduce_op::sum>
constexpr auto reduce_n = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", DT, {N});
  b.update(x, ctfx::all_reduce(x, Op));
});
constexpr auto no_collective = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {16});
  b.update(x, x * 2.0f);
});
template <int PX, int PY>
constexpr auto halo_on = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {6, 6});
  b.update(u, ctfx::halo_exchange(u, 1, {PX, PY, true, true}));
});
constexpr auto halo_sym = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {b.sym("ny"), b.sym("nx")});
  b.update(u, ctfx::halo_exchange(u, 1, {2, 2, true, true}));
});
template <int Root>
constexpr auto bcast_from = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {16});
  b.update(x, ctfx::broadcast(x, Root));
});

// Runs `run(at_run_time)` through compiled<G> and the run-time plan; each must refuse alike.
template <class Run>
void both_ways(Run&& run) {
  for (bool at_run_time : {false, true}) {
    CAPTURE(at_run_time);
    run(at_run_time);
  }
}
template <class G>
ctfx::run_status run_graph(const G& g, bool at_run_time, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out,
                           ctfx::communicator& w) {
  return at_run_time ? ctfx::runtime_plan(g.get()).run(in, out, host_on(w)) : ctfx::compiled<G>::run(in, out, host_on(w));
}

}  // namespace

TEST_CASE("disagreement: a symbolic extent differs on one rank (8 elements against 16)") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = my_rank();
  const ctfx::index_t n = r == 3 ? 8 : 16;
  both_ways([&](bool at_run_time) {
    std::vector<float> x(static_cast<std::size_t>(n), static_cast<float>(r + 1)), o(static_cast<std::size_t>(n), -3.0f);
    const auto x0 = x, o0 = o;
    auto st = run_graph(sym_sum, at_run_time, {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n})},
                        {ctfx::tensor_ref::contiguous(o.data(), ctfx::f32, {n})}, w);
    check_refused(st, "rank 3 of 4", "element count");
    CHECK_MESSAGE(st.message.find("8 elements") != std::string::npos, st.message);
    CHECK(same_bytes(x, x0));
    CHECK(same_bytes(o, o0));
  });
  // With equal extents the same graph runs: the sum over ranks, in place and doubled.
  std::vector<float> x(16, static_cast<float>(r + 1)), o(16);
  REQUIRE(ctfx::compiled<decltype(sym_sum)>::run({tref(x, ctfx::f32, {16})}, {tref(o, ctfx::f32, {16})}, host_on(w)).ok);
  CHECK(x == std::vector<float>(16, 10.0f));
  CHECK(o == std::vector<float>(16, 20.0f));
}

TEST_CASE("disagreement: the element count of an all_reduce differs (32 against 16)") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = my_rank();
  both_ways([&](bool at_run_time) {
    std::vector<float> x(r == 1 ? 32 : 16, 1.5f);
    const auto x0 = x;
    auto st = r == 1 ? run_graph(reduce_n<32>, at_run_time, {tref(x, ctfx::f32, {32})}, {}, w)
                     : run_graph(reduce_n<16>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w);
    check_refused(st, "rank 1 of 4", "element count");
    CHECK(same_bytes(x, x0));
  });
}

TEST_CASE("disagreement: the graph has no collective on rank 0") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = my_rank();
  both_ways([&](bool at_run_time) {
    std::vector<float> x(16, 2.0f);
    const auto x0 = x;
    auto st = r == 0 ? run_graph(no_collective, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w)
                     : run_graph(reduce_n<16>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w);
    check_refused(st, "rank 1 of 4", "rank 1 posts 1 collective, rank 0 posts no collective; rank 1's first: all_reduce_");
    CHECK(same_bytes(x, x0));
  });
  // A graph without collectives still agrees (every rank the same): it runs.
  std::vector<float> x(16, 2.0f);
  REQUIRE(ctfx::compiled<decltype(no_collective)>::run({tref(x, ctfx::f32, {16})}, {}, host_on(w)).ok);
  CHECK(x == std::vector<float>(16, 4.0f));
}

TEST_CASE("disagreement: the halo grid differs (4 x 1 against 2 x 2)") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = my_rank();
  both_ways([&](bool at_run_time) {
    std::vector<float> u(36);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(100 * r) + static_cast<float>(i);
    const auto u0 = u;
    auto st = r == 2 ? run_graph(halo_on<4, 1>, at_run_time, {tref(u, ctfx::f32, {6, 6})}, {}, w)
                     : run_graph(halo_on<2, 2>, at_run_time, {tref(u, ctfx::f32, {6, 6})}, {}, w);
    check_refused(st, "rank 2 of 4", "halo grid");
    CHECK_MESSAGE(st.message.find("over 4 x 1 ranks") != std::string::npos, st.message);
    CHECK(same_bytes(u, u0));
  });
  // The same number of cells, transposed on rank 1 (edges of other lengths than its neighbours').
  both_ways([&](bool at_run_time) {
    const ctfx::index_t ny = r == 1 ? 8 : 6, nx = r == 1 ? 6 : 8;
    std::vector<float> u(48, static_cast<float>(r));
    const auto u0 = u;
    auto st = run_graph(halo_sym, at_run_time, {ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {ny, nx})}, {}, w);
    check_refused(st, "rank 1 of 4", "element count");
    CHECK_MESSAGE(st.message.find("([8, 6] grid)") != std::string::npos, st.message);
    CHECK(same_bytes(u, u0));
  });
}

TEST_CASE("disagreement: the reduce op, the dtype or a broadcast's root differs") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  const int r = my_rank();
  both_ways([&](bool at_run_time) {
    {  // max on rank 1, sum elsewhere
      std::vector<float> x(16, static_cast<float>(r));
      const auto x0 = x;
      auto st = r == 1 ? run_graph(reduce_n<16, ctfx::dtype::f32, ctfx::reduce_op::max>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w)
                       : run_graph(reduce_n<16>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w);
      check_refused(st, "rank 1 of 4", "reduce op");
      CHECK(same_bytes(x, x0));
    }
    {  // f64 on rank 2, f32 elsewhere
      std::vector<float> x(16, 1.0f);
      std::vector<double> y(16, 1.0);
      const auto x0 = x;
      const auto y0 = y;
      auto st = r == 2 ? run_graph(reduce_n<16, ctfx::dtype::f64>, at_run_time, {tref(y, ctfx::f64, {16})}, {}, w)
                       : run_graph(reduce_n<16>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w);
      check_refused(st, "rank 2 of 4", "dtype");
      CHECK(same_bytes(x, x0));
      CHECK(same_bytes(y, y0));
    }
    {  // root 1 on rank 3, root 0 elsewhere
      std::vector<float> x(16, static_cast<float>(r));
      const auto x0 = x;
      auto st = r == 3 ? run_graph(bcast_from<1>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w)
                       : run_graph(bcast_from<0>, at_run_time, {tref(x, ctfx::f32, {16})}, {}, w);
      check_refused(st, "rank 3 of 4", "root");
      CHECK(same_bytes(x, x0));
    }
  });
}

TEST_CASE("the library's messages never meet the application's: a posted tag-0 receive on the caller's communicator is untouched") {
  const int r = my_rank();
  MPI_Errhandler before = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &before);
  // The application's own receive, from any rank, tag 0, posted before the library runs.
  int got = -1;
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &req);
  {
    ctfx::mpi_communicator w(MPI_COMM_WORLD);
    MPI_Errhandler during = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &during);
    CHECK(during == before);  // the caller's error handler is never changed
    MPI_Errhandler_free(&during);
    std::vector<float> u(36);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<float>(100 * r) + static_cast<float>(i);
    auto st = ctfx::compiled<decltype(halo_on<2, 2>)>::run({tref(u, ctfx::f32, {6, 6})}, {}, host_on(w));
    REQUIRE_MESSAGE(st.ok, st.message);
    // The west ghost of row 1 is the east interior cell of row 1 of the rank to the west.
    const int west = (r % 2 == 0 ? r + 1 : r - 1);
    CHECK(u[6] == static_cast<float>(100 * west) + 10.0f);
    int done = 1;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    CHECK(done == 0);  // nothing of the exchange matched it
  }
  MPI_Errhandler after = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &after);
  CHECK(after == before);
  MPI_Errhandler_free(&after);
  MPI_Errhandler_free(&before);
  // The application's own message completes it (sent once every rank has looked).
  MPI_Barrier(MPI_COMM_WORLD);
  const int mine = 1000 + r;
  MPI_Send(&mine, 1, MPI_INT, (r + 1) % 4, 0, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(got == 1000 + (r + 3) % 4);
}

namespace {
template <ctfx::dtype DT>
constexpr auto half_collectives = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", DT, {3});
  b.output(ctfx::broadcast(x, 2), ctfx::all_gather(x, 4), ctfx::all_reduce(x), ctfx::all_reduce(x, ctfx::reduce_op::max),
           ctfx::reduce_scatter(ctfx::all_gather(x, 4), 4, ctfx::reduce_op::min));
});
template <class H, ctfx::dtype DT>
void check_half(ctfx::communicator& w, bool at_run_time) {
  const int r = my_rank();
  auto h = [](float f) { return H(f); };
  auto f = [](H v) { return static_cast<float>(v); };
  std::vector<H> x{h(static_cast<float>(r)), h(0.5f * static_cast<float>(r)), h(-static_cast<float>(r))};
  std::vector<H> b(3), g(12), s(3), m(3), rs(3);
  const auto& graph = half_collectives<DT>;
  auto st = run_graph(graph, at_run_time, {tref(x, DT, {3})},
                      {tref(b, DT, {3}), tref(g, DT, {12}), tref(s, DT, {3}), tref(m, DT, {3}), tref(rs, DT, {3})}, w);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(f(b[0]) == 2.0f);  // rank 2's x
  CHECK(f(b[1]) == 1.0f);
  CHECK(f(b[2]) == -2.0f);
  for (int q = 0; q < 4; ++q) {  // rank q's x at block q: concatenated along dimension 0
    CHECK(f(g[static_cast<std::size_t>(3 * q)]) == static_cast<float>(q));
    CHECK(f(g[static_cast<std::size_t>(3 * q + 1)]) == 0.5f * static_cast<float>(q));
    CHECK(f(g[static_cast<std::size_t>(3 * q + 2)]) == -static_cast<float>(q));
  }
  CHECK(f(s[0]) == 6.0f);
  CHECK(f(s[1]) == 3.0f);
  CHECK(f(s[2]) == -6.0f);
  CHECK(f(m[0]) == 3.0f);
  CHECK(f(m[1]) == 1.5f);
  CHECK(f(m[2]) == 0.0f);
  // Block r of the gathered 12 (the same on every rank): rank r's x.
  CHECK(f(rs[0]) == static_cast<float>(r));
  CHECK(f(rs[2]) == -static_cast<float>(r));
}
}  // namespace

TEST_CASE("f16 and bf16: broadcast and all_gather move bytes, all_reduce and reduce_scatter reduce with the library's ops") {
  ctfx::mpi_communicator w(MPI_COMM_WORLD);
  both_ways([&](bool at_run_time) {
    check_half<ctfx::half_t, ctfx::dtype::f16>(w, at_run_time);
    check_half<ctfx::bfloat16_t, ctfx::dtype::bf16>(w, at_run_time);
  });
}

TEST_CASE("messages split into pieces (at most 3 elements a call) equal whole ones, bit for bit") {
  ctfx::mpi_communicator whole(MPI_COMM_WORLD), split(MPI_COMM_WORLD, 3);
  const int r = my_rank();
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {8, 5});
    auto h = b.input("h", ctfx::f16, {7});
    auto u = b.input("u", ctfx::f64, {7, 9});
    b.update(u, ctfx::halo_exchange(u, 2, {2, 2, true, false}));
    b.output(ctfx::all_reduce(x), ctfx::broadcast(x, 3), ctfx::all_gather(x, 4), ctfx::reduce_scatter(x, 4, ctfx::reduce_op::max),
             ctfx::all_reduce(h, ctfx::reduce_op::min), ctfx::reduce_scatter_blocks(x, 4, ctfx::reduce_op::sum));
  });
  auto run = [&](ctfx::communicator& w, std::vector<std::vector<float>>& o, std::vector<ctfx::half_t>& ho, std::vector<double>& u) {
    std::vector<float> x(40);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(r) * 1.25f + static_cast<float>(i) / 7.0f;
    std::vector<ctfx::half_t> h(7);
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = ctfx::half_t(static_cast<float>(r) - static_cast<float>(i) / 3.0f);
    u.assign(63, 0.0);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = static_cast<double>(r) * 1000.0 + static_cast<double>(i);
    o = {std::vector<float>(40), std::vector<float>(40), std::vector<float>(160), std::vector<float>(10), std::vector<float>(40)};
    ho.assign(7, ctfx::half_t(0.0f));
    return ctfx::compiled<decltype(g)>::run(
        {tref(x, ctfx::f32, {8, 5}), tref(h, ctfx::f16, {7}), tref(u, ctfx::f64, {7, 9})},
        {tref(o[0], ctfx::f32, {8, 5}), tref(o[1], ctfx::f32, {8, 5}), tref(o[2], ctfx::f32, {32, 5}), tref(o[3], ctfx::f32, {2, 5}),
         tref(ho, ctfx::f16, {7}), tref(o[4], ctfx::f32, {8, 5})},
        host_on(w));
  };
  std::vector<std::vector<float>> a, b;
  std::vector<ctfx::half_t> ha, hb;
  std::vector<double> ua, ub;
  auto st = run(whole, a, ha, ua);
  REQUIRE_MESSAGE(st.ok, st.message);
  st = run(split, b, hb, ub);
  REQUIRE_MESSAGE(st.ok, st.message);
  for (std::size_t k = 0; k < a.size(); ++k) CHECK(same_bytes(a[k], b[k]));
  CHECK(same_bytes(ha, hb));
  CHECK(same_bytes(ua, ub));
  CHECK(a[1][0] == 3.75f);  // rank 3's x[0]
  CHECK(ua != std::vector<double>(63, 0.0));
}
