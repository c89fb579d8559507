// Collectives and the halo exchange in a world of one rank (no communicator): what reinplacing makes
// of them, the values they compute, and the run-time checks of the world they need. The same ops
// across ranks: test/mpi.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/comm/communicator.hpp>
#include <ctfx/graph/fx_print.hpp>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr ctfx::index_t H = 7, W = 9;

// A periodic grid's ghost layer refreshed, then one Jacobi sweep of its interior written back.
constexpr auto periodic_step = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {H, W});
  auto g = ctfx::halo_exchange(u, 1, {1, 1, true, true});
  auto c = g.slice(0, 1, H - 1).slice(1, 1, W - 1);
  auto n = g.slice(0, 0, H - 2).slice(1, 1, W - 1), s = g.slice(0, 2, H).slice(1, 1, W - 1);
  auto w = g.slice(0, 1, H - 1).slice(1, 0, W - 2), e = g.slice(0, 1, H - 1).slice(1, 2, W);
  auto next = ctfx::slice_scatter(g, ctfx::slice_scatter(g.slice(0, 1, H - 1), (n + s + w + e) * 0.25f - c * 0.0f, 1, 1, W - 1), 0, 1, H - 1);
  b.update(u, next);
});
using periodic_plan = ctfx::compiled<decltype(periodic_step)>;

// The halo exchange was reinplaced: it writes the caller's grid, no clone of it is left.
constexpr bool has(ctfx::op_kind k) {
  for (const auto& n : periodic_plan::graph().nodes)
    if (n.op == k) return true;
  return false;
}
static_assert(has(ctfx::op_kind::halo_exchange_) && !has(ctfx::op_kind::halo_exchange));
static_assert(!has(ctfx::op_kind::clone));

std::vector<float> grid() {
  std::vector<float> v(static_cast<std::size_t>(H * W));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 23) - 11.0f;
  return v;
}
float at(const std::vector<float>& v, ctfx::index_t r, ctfx::index_t c) { return v[static_cast<std::size_t>(r * W + c)]; }

}  // namespace

TEST_CASE("halo_exchange on one rank, periodic: ghosts hold the opposite edges, corners included") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto u = b.input("u", ctfx::f32, {H, W});
    b.update(u, ctfx::halo_exchange(u, 1, {1, 1, true, true}));
  });
  using plan = ctfx::compiled<decltype(g)>;
  static_assert(plan::static_buffer_bytes() == 0);
  const auto before = grid();
  auto u = before;
  REQUIRE(plan::run({ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {H, W})}, {}).ok);
  // Interior untouched; ghost column 0 = interior column W-2, ghost column W-1 = column 1; then rows.
  for (ctfx::index_t r = 1; r < H - 1; ++r) {
    for (ctfx::index_t c = 1; c < W - 1; ++c) CHECK(at(u, r, c) == at(before, r, c));
    CHECK(at(u, r, 0) == at(before, r, W - 2));
    CHECK(at(u, r, W - 1) == at(before, r, 1));
  }
  for (ctfx::index_t c = 0; c < W; ++c) {
    CHECK(at(u, 0, c) == at(u, H - 2, c));
    CHECK(at(u, H - 1, c) == at(u, 1, c));
  }
  CHECK(at(u, 0, 0) == at(before, H - 2, W - 2));  // the corner came from the diagonal neighbour
  // The reference (functional graph) and the run-time plan agree.
  auto r = before, q = before;
  REQUIRE(ctfx::reference_run(g.get(), {ctfx::tensor_ref::contiguous(r.data(), ctfx::f32, {H, W})}, {}).ok);
  REQUIRE(ctfx::runtime_plan(g.get()).run({ctfx::tensor_ref::contiguous(q.data(), ctfx::f32, {H, W})}, {}).ok);
  CHECK(r == u);
  CHECK(q == u);
}

TEST_CASE("halo_exchange on one rank, not periodic: ghosts keep their values") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto u = b.input("u", ctfx::f32, {H, W});
    b.update(u, ctfx::halo_exchange(u, 2, {1, 1, false, false}));
  });
  const auto before = grid();
  auto u = before;
  REQUIRE(ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {H, W})}, {}).ok);
  CHECK(u == before);
}

TEST_CASE("a periodic Jacobi step: halo exchange in place, then the interior, equal to the reference") {
  auto a = grid(), r = grid();
  REQUIRE(periodic_plan::run({ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {H, W})}, {}).ok);
  REQUIRE(ctfx::reference_run(periodic_step.get(), {ctfx::tensor_ref::contiguous(r.data(), ctfx::f32, {H, W})}, {}).ok);
  CHECK(a == r);
  const auto g0 = grid();
  // One interior value by hand: the ghosts were refreshed before the sweep read them.
  const float n = at(g0, H - 2, 1), s = at(g0, 2, 1), w = at(g0, 1, W - 2), e = at(g0, 1, 2);
  CHECK(at(a, 1, 1) == (n + s + w + e) * 0.25f - at(g0, 1, 1) * 0.0f);
}

TEST_CASE("collectives on one rank are the identity, reinplaced where the table says") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 3});
    auto y = b.input("y", ctfx::i64, {4});
    auto scattered = ctfx::reduce_scatter(x * 2.0f, 1);
    b.update(x, ctfx::all_reduce(x, ctfx::reduce_op::max));
    b.output(ctfx::broadcast(y, 0), ctfx::all_gather(y, 1), scattered, ctfx::all_reduce(y));
  });
  using plan = ctfx::compiled<decltype(g)>;
  constexpr auto count = [](ctfx::op_kind k) {
    int c = 0;
    for (const auto& n : plan::graph().nodes) c += n.op == k;
    return c;
  };
  static_assert(count(ctfx::op_kind::all_reduce_) == 1);  // the epilogue's all_reduce runs in place
  static_assert(count(ctfx::op_kind::all_reduce) == 1);   // y's stays functional: y is not written back
  std::vector<float> x(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.5f * static_cast<float>(i) - 2.0f;
  std::vector<std::int64_t> y{3, -1, 4, 1}, o1(4), o2(4), o4(4);
  std::vector<float> o3(12);
  const auto x0 = x;
  auto st = plan::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 3}), ctfx::tensor_ref::contiguous(y.data(), ctfx::i64, {4})},
                      {ctfx::tensor_ref::contiguous(o1.data(), ctfx::i64, {4}), ctfx::tensor_ref::contiguous(o2.data(), ctfx::i64, {4}),
                       ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {4, 3}), ctfx::tensor_ref::contiguous(o4.data(), ctfx::i64, {4})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(x == x0);
  CHECK(o1 == y);
  CHECK(o2 == y);
  CHECK(o4 == y);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(o3[i] == x0[i] * 2.0f);
}

TEST_CASE("collectives check their world before any write: group size, source rank, rank grid") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 3});
    b.update(x, x + 1.0f);
    b.output(ctfx::all_gather(x, 4));
  });
  std::vector<float> x(12, 1.0f), o(48, 0.0f);
  auto st = ctfx::runtime_plan(g.get()).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 3})},
                                            {ctfx::tensor_ref::contiguous(o.data(), ctfx::f32, {16, 3})});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rule comm-world") != std::string::npos);
  CHECK(st.message.find("group size is 4") != std::string::npos);
  CHECK(x == std::vector<float>(12, 1.0f));  // the epilogue write did not happen

  constexpr auto h = ctfx::graph([](ctfx::builder& b) {
    auto u = b.input("u", ctfx::f32, {H, W});
    b.update(u, ctfx::halo_exchange(u, 1, {2, 2, true, false}));
  });
  auto u = grid();
  st = ctfx::compiled<decltype(h)>::run({ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {H, W})}, {});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rule comm-world: ") != std::string::npos);
  CHECK(st.message.find("2 x 2 ranks") != std::string::npos);
  CHECK(u == grid());
}

TEST_CASE("collective arguments that no world can satisfy are graph errors") {
  const ctfx::ir bad_group = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6});
    b.output(ctfx::reduce_scatter(x, 4));
  });
  REQUIRE_FALSE(bad_group.error.ok());
  CHECK(std::string(bad_group.error.message()).find("multiple of the group size 4") != std::string::npos);
  const ctfx::ir bad_halo = ctfx::build_checked([](ctfx::builder& b) {
    auto u = b.input("u", ctfx::f32, {5, 9});
    b.output(ctfx::halo_exchange(u, 2, {1, 1, true, true}));
  });
  REQUIRE_FALSE(bad_halo.error.ok());
  CHECK(std::string(bad_halo.error.message()).find("two ghost layers") != std::string::npos);
}

TEST_CASE("the printer names the collectives' parameters") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto u = b.input("u", ctfx::f32, {H, W});
    b.output(ctfx::halo_exchange(u, 1, {1, 1, true, false}), ctfx::all_reduce(u, ctfx::reduce_op::min));
  });
  const std::string text = ctfx::to_text(g.get());
  CHECK(text.find("halo=1, ranks=1x1, periodic_x") != std::string::npos);
  CHECK(text.find("'min'") != std::string::npos);
}

namespace {
// What PyTorch prints for functional collectives (wait_tensor is an alias: ctfx's calls complete
// within their step).
constexpr auto fx_text = R"(def forward(self, x: "f32[8, 4][4, 1]cpu"):
    all_reduce = torch.ops._c10d_functional.all_reduce.default(x, 'max', '0')
    wait_tensor = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
    all_gather_into_tensor = torch.ops._c10d_functional.all_gather_into_tensor.default(x, 4, '0')
    reduce_scatter_tensor = torch.ops._c10d_functional.reduce_scatter_tensor.default(x, 'sum', 4, '0')
    broadcast = torch.ops._c10d_functional.broadcast.default(x, 1, '0')
    copy_ = torch.ops.aten.copy_.default(x, wait_tensor)
    return (all_gather_into_tensor, reduce_scatter_tensor, broadcast)
)";
static_assert(ctfx::parse_fx(fx_text).error.ok());
}  // namespace

TEST_CASE("the FX parser reads PyTorch's functional collectives, and prints them back") {
  const ctfx::ir g = ctfx::parse_fx(fx_text).graph;
  REQUIRE(g.error.ok());
  auto find = [&](ctfx::op_kind k) {
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == k) return i;
    return -1;
  };
  const auto ar = find(ctfx::op_kind::all_reduce), ag = find(ctfx::op_kind::all_gather), rs = find(ctfx::op_kind::reduce_scatter),
             bc = find(ctfx::op_kind::broadcast);
  REQUIRE((ar >= 0 && ag >= 0 && rs >= 0 && bc >= 0));
  CHECK(g[ar].aux == static_cast<int>(ctfx::reduce_op::max));
  CHECK(g.meta(ag).size[0] == ctfx::sym_expr(32));
  CHECK(g.meta(rs).size[0] == ctfx::sym_expr(2));
  CHECK(g[bc].aux == 1);
  // The printed FX parses back to the same graph.
  const ctfx::ir again = ctfx::parse_fx(ctfx::to_fx(g)).graph;
  REQUIRE(again.error.ok());
  CHECK(ctfx::to_text(again) == ctfx::to_text(g));
  // The reinplaced plan runs all_reduce in place in x; in a world of one rank it refuses the group size 4.
  ctfx::runtime_plan p(g);
  std::vector<float> x(32, 1.0f), a(128), b(8), c(32);
  auto st = p.run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {8, 4})},
                  {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {32, 4}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 4}),
                   ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {8, 4})});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rule comm-world") != std::string::npos);
}

TEST_CASE("the FX parser refuses reductions the engines do not have, naming them") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[8][1]cpu"):
    all_reduce = torch.ops._c10d_functional.all_reduce.default(x, 'avg', '0')
    return (all_reduce,)
)");
  REQUIRE_FALSE(r.error.ok());
  CHECK(std::string(r.error.message()).find("'sum', 'max' or 'min'") != std::string::npos);
}

namespace {
// A one-rank world that says what an engine says of itself, to check the backend rules without a
// GPU: stream-ordered with device buffers (as NCCL's), or neither, or device buffers only (as an MPI
// that is CUDA-aware or not).
struct engine_world final : ctfx::communicator {
  const char* name = "nccl";
  bool ordered = true;  // calls enqueued on the run's stream
  bool device = true;   // device pointers accepted
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char* engine() const override { return name; }
  bool stream_ordered() const override { return ordered; }
  bool device_buffers() const override { return device; }
  bool supports(ctfx::dtype, ctfx::reduce_op) const override { return true; }
  std::string all_reduce(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return {}; }
  std::string broadcast(void*, std::size_t, ctfx::dtype, int) override { return {}; }
  std::string all_gather(const void*, void*, std::size_t, ctfx::dtype) override { return {}; }
  std::string reduce_scatter(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return {}; }
  std::string sendrecv(const void*, std::size_t, int, void*, std::size_t, int) override { return {}; }
  int agree(bool ok, std::span<std::uint64_t>) override { return ok ? -1 : 0; }
  void share(std::string&, std::int32_t&, int) override {}
};
}  // namespace

TEST_CASE("a stream-ordered (NCCL) communicator on a host backend is refused before any write") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    b.update(x, ctfx::all_reduce(x));
  });
  engine_world w;  // NCCL's
  std::vector<float> x{1, 2, 3, 4};
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4})}, {},
                                             ctfx::device_ctx{ctfx::backend::host, nullptr, &w});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rank 0 of 1: rule comm-backend") == 0);
  CHECK(x == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("device buffers go only to an engine that takes them, checked with the run's other rules") {
  engine_world w;  // an MPI that is not CUDA-aware
  w.name = "mpi";
  w.ordered = false;
  w.device = false;
  float cell[4] = {};
  ctfx::strided x;
  x.p = reinterpret_cast<std::byte*>(cell);
  x.rank = 1;
  x.size[0] = 4;
  x.stride[0] = 1;
  const ctfx::kernels::collective_node c{ctfx::op_kind::all_reduce_, 0, {1, 0, 0}};
  const ctfx::device_ctx on_gpu{ctfx::backend::cuda, nullptr, &w};
  const std::string no = ctfx::kernels::check_collective(on_gpu, c, x);
  CHECK(no.find("rule comm-backend: the mpi communicator may not be given device buffers") == 0);
  CHECK(no.find("mpi_device_buffers::yes") != std::string::npos);
  // The same collective on the host, or with an engine that takes device pointers, passes.
  CHECK(ctfx::kernels::check_collective(ctfx::device_ctx{ctfx::backend::host, nullptr, &w}, c, x).empty());
  w.device = true;
  CHECK(ctfx::kernels::check_collective(on_gpu, c, x).empty());
  // A stream-ordered engine (NCCL) off the CUDA backend is the other half of the rule.
  engine_world nccl;
  CHECK(ctfx::kernels::check_collective(ctfx::device_ctx{ctfx::backend::host, nullptr, &nccl}, c, x).find("rule comm-backend") == 0);
}

namespace {
// Rank 2 of a world of 4 whose other ranks hold `100 * r + i` in every block: records where the
// engine was asked to send and receive, and answers as the other ranks would.
struct blocks_world final : ctfx::communicator {
  const void* send = nullptr;
  const void* recv = nullptr;
  std::size_t count = 0;
  int rank() const override { return 2; }
  int size() const override { return 4; }
  const char* engine() const override { return "fake"; }
  bool supports(ctfx::dtype, ctfx::reduce_op) const override { return true; }
  std::string all_reduce(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return "unused"; }
  std::string broadcast(void*, std::size_t, ctfx::dtype, int) override { return "unused"; }
  std::string all_gather(const void* s, void* r, std::size_t n, ctfx::dtype) override {
    send = s; recv = r; count = n;
    const std::vector<float> mine(static_cast<const float*>(s), static_cast<const float*>(s) + n);
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t i = 0; i < n; ++i) static_cast<float*>(r)[k * n + i] = k == 2 ? mine[i] : static_cast<float>(100 * k + i);
    return {};
  }
  std::string reduce_scatter(const void* s, void* r, std::size_t n, ctfx::dtype, ctfx::reduce_op) override {
    send = s; recv = r; count = n;
    // The sum over the ranks of block 2: this rank's plus the others' 100 * k + i.
    for (std::size_t i = 0; i < n; ++i)
      static_cast<float*>(r)[i] = static_cast<const float*>(s)[2 * n + i] + static_cast<float>(100 * (0 + 1 + 3) + 3 * i);
    return {};
  }
  std::string sendrecv(const void*, std::size_t, int, void*, std::size_t, int) override { return "unused"; }
  int agree(bool ok, std::span<std::uint64_t>) override { return ok ? -1 : 2; }
  void share(std::string&, std::int32_t&, int) override {}
};
std::vector<float> blocks() {
  std::vector<float> v(8 * 3);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) + 0.5f;
  return v;
}

constexpr auto gather_in_place = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {8, 3});
  b.update(buf, ctfx::all_gather_blocks(buf, 4));
});
constexpr auto scatter_in_place = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {8, 3});
  b.update(buf, ctfx::reduce_scatter_blocks(buf, 4));
});
template <class G>
constexpr bool plan_has(ctfx::op_kind k) {
  for (const auto& n : ctfx::compiled<G>::graph().nodes)
    if (n.op == k) return true;
  return false;
}
// Written back into their buffer, both run in place in the caller's buffer: no clone, no workspace.
static_assert(plan_has<decltype(gather_in_place)>(ctfx::op_kind::all_gather_blocks_) &&
              !plan_has<decltype(gather_in_place)>(ctfx::op_kind::all_gather_blocks));
static_assert(plan_has<decltype(scatter_in_place)>(ctfx::op_kind::reduce_scatter_blocks_) &&
              !plan_has<decltype(scatter_in_place)>(ctfx::op_kind::reduce_scatter_blocks));
static_assert(ctfx::compiled<decltype(gather_in_place)>::static_buffer_bytes() == 0);
static_assert(ctfx::compiled<decltype(scatter_in_place)>::static_buffer_bytes() == 0);
}  // namespace

TEST_CASE("all_gather_blocks written back runs in place: the rank's block is sent from its place in the buffer") {
  for (bool at_run_time : {false, true}) {
    blocks_world w;
    auto buf = blocks();
    const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &w};
    const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {8, 3})};
    auto st = at_run_time ? ctfx::runtime_plan(gather_in_place.get()).run(in, {}, ctx)
                          : ctfx::compiled<decltype(gather_in_place)>::run(in, {}, ctx);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(w.recv == buf.data());
    CHECK(w.send == buf.data() + 2 * 6);  // MPI_IN_PLACE's and NCCL's convention: block `rank` of recv
    CHECK(w.count == 6);
    const auto before = blocks();
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t i = 0; i < 6; ++i)
        CHECK(buf[k * 6 + i] == (k == 2 ? before[k * 6 + i] : static_cast<float>(100 * k + i)));
  }
}

TEST_CASE("reduce_scatter_blocks written back runs in place, the other blocks keep their values") {
  for (bool at_run_time : {false, true}) {
    blocks_world w;
    auto buf = blocks();
    const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &w};
    const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {8, 3})};
    auto st = at_run_time ? ctfx::runtime_plan(scatter_in_place.get()).run(in, {}, ctx)
                          : ctfx::compiled<decltype(scatter_in_place)>::run(in, {}, ctx);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(w.send == buf.data());
    CHECK(w.recv == buf.data() + 2 * 6);  // NCCL's in-place convention
    const auto before = blocks();
    for (std::size_t k = 0; k < 4; ++k)
      for (std::size_t i = 0; i < 6; ++i)
        CHECK(buf[k * 6 + i] == (k == 2 ? before[k * 6 + i] + static_cast<float>(400 + 3 * i) : before[k * 6 + i]));
  }
}

TEST_CASE("the functional forms leave their input as it was and fill a fresh result") {
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto buf = b.input("buf", ctfx::f32, {8, 3});
    b.output(ctfx::all_gather_blocks(buf, 4), ctfx::reduce_scatter_blocks(buf, 4));
  });
  blocks_world w;
  auto buf = blocks();
  std::vector<float> gathered(24, -1.0f), scattered(24, -1.0f);
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {8, 3})},
                                             {ctfx::tensor_ref::contiguous(gathered.data(), ctfx::f32, {8, 3}),
                                              ctfx::tensor_ref::contiguous(scattered.data(), ctfx::f32, {8, 3})},
                                             ctfx::device_ctx{ctfx::backend::host, nullptr, &w});
  REQUIRE_MESSAGE(st.ok, st.message);
  const auto before = blocks();
  CHECK(buf == before);
  for (std::size_t k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < 6; ++i) {
      CHECK(gathered[k * 6 + i] == (k == 2 ? before[k * 6 + i] : static_cast<float>(100 * k + i)));
      CHECK(scattered[k * 6 + i] == (k == 2 ? before[k * 6 + i] + static_cast<float>(400 + 3 * i) : before[k * 6 + i]));
    }
}

TEST_CASE("collectives in blocks check the group size and print their parameters") {
  const ctfx::ir bad = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6});
    b.output(ctfx::all_gather_blocks(x, 4));
  });
  REQUIRE_FALSE(bad.error.ok());
  CHECK(std::string(bad.error.message()).find("multiple of the group size 4") != std::string::npos);
  const std::string text = ctfx::to_text(ctfx::compiled<decltype(scatter_in_place)>::graph());
  CHECK(text.find("reduce_scatter_blocks_(%buf, 'sum', group_size=4)") != std::string::npos);
  // A world of one rank runs them as the identity, but a graph for 4 ranks is refused there, unwritten.
  auto buf = blocks();
  auto st = ctfx::compiled<decltype(gather_in_place)>::run({ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {8, 3})}, {});
  REQUIRE_FALSE(st.ok);
  CHECK(st.message.find("rule comm-world") != std::string::npos);
  CHECK(buf == blocks());
}

namespace {
// Rank 0 of two, whose other rank holds zeros: records what a run asked of it, in order: 'x' an
// exchange, 'a' an agreement (ranks learn whether any check failed).
struct recording_world final : ctfx::communicator {
  std::string events;
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const char* engine() const override { return "fake"; }
  bool supports(ctfx::dtype, ctfx::reduce_op) const override { return true; }
  std::string all_reduce(const void* s, void* r, std::size_t n, ctfx::dtype dt, ctfx::reduce_op) override {
    events += 'x';
    if (s != r) std::memcpy(r, s, n * static_cast<std::size_t>(ctfx::size_of(dt)));
    return {};
  }
  std::string broadcast(void*, std::size_t, ctfx::dtype, int) override { return "unused"; }
  std::string all_gather(const void*, void*, std::size_t, ctfx::dtype) override { return "unused"; }
  std::string reduce_scatter(const void*, void*, std::size_t, ctfx::dtype, ctfx::reduce_op) override { return "unused"; }
  std::string sendrecv(const void*, std::size_t, int, void*, std::size_t, int) override { return "unused"; }
  int agree(bool ok, std::span<std::uint64_t>) override {
    events += 'a';
    return ok ? -1 : 0;
  }
  void share(std::string&, std::int32_t&, int) override {}
};

// The exchange comes first in program order, the index computation after it.
constexpr auto gather_after_exchange = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto i = b.input("i", ctfx::i64, {2});
  auto r = ctfx::all_reduce(x);
  auto j = i + 1;
  b.output(ctfx::index(r, {j}));
});
}  // namespace

TEST_CASE("indices computed after an exchange in program order are computed and checked before it") {
  ctfx::runtime_plan plan(gather_after_exchange.get());
  REQUIRE_MESSAGE(plan.error().ok(), plan.error().message());
  for (int how = 0; how < 2; ++how) {
    recording_world w;
    const ctfx::device_ctx ctx{ctfx::backend::host, nullptr, &w};
    std::vector<float> x{1, 2, 3, 4}, out(2, -1.0f);
    std::vector<std::int64_t> i{0, 2};
    auto run = [&] {
      const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4}),
                                             ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2})};
      const std::vector<ctfx::tensor_ref> o{ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {2})};
      return how == 0 ? ctfx::compiled<decltype(gather_after_exchange)>::run(in, o, ctx) : plan.run(in, o, ctx);
    };
    auto st = run();
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(out == std::vector<float>{2, 4});
    CHECK(w.events == "ax");  // ranks agree, then exchange
    // j = {1, 4}: refused before the exchange, every rank told.
    i = {0, 3};
    w.events.clear();
    const auto out0 = out;
    st = run();
    REQUIRE_FALSE(st.ok);
    CHECK(st.message.find("rule index-in-range") != std::string::npos);
    CHECK(w.events == "a");
    CHECK(out == out0);
  }
}

TEST_CASE("indices computed from what an exchange receives are refused at plan time") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto i = b.input("i", ctfx::i64, {2});
    auto y = x * 2.0f;  // a first caller-independent step
    b.output(ctfx::index(y, {ctfx::all_reduce(i)}));
  });
  ctfx::runtime_plan plan(g);
  REQUIRE_FALSE(plan.error().ok());
  const std::string m(plan.error().message());
  CHECK(m.find("rule validate-before-mutate: node 'index'") == 0);
  CHECK(m.find("from what node 'all_reduce' receives from other ranks") != std::string::npos);
  CHECK(m.find("compute the indices from local values, or pass them as an input") != std::string::npos);
}
