// The compile-time plan (exec/compiled.hpp) against the run-time plan and the reference.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstring>
#include <limits>
#include <vector>

namespace {

// A halo exchange: ghost rows and columns of a padded grid are written from neighbours' edges.
constexpr auto halo = ctfx::graph([](ctfx::builder& b) {
  auto grid = b.input("grid", ctfx::f32, {10, 10});
  auto north = b.input("north", ctfx::f32, {8});
  auto west = b.input("west", ctfx::f32, {8});
  auto g1 = ctfx::slice_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), north, 0, 1, 9).unsqueeze(0), 0, 0, 1);
  auto g2 = ctfx::select_scatter(g1, ctfx::slice_scatter(g1.select(1, 0), west * 0.5, 0, 1, 9), 1, 0);
  b.update(grid, g2);
  b.output(ctfx::relu(g2 - 1.0), g2.select(0, 0).sum({0}).to(ctfx::f64));
});
using halo_plan = ctfx::compiled<decltype(halo)>;

// Reinplacing happened in the compiler: no full-grid copy is left.
static_assert(halo_plan::report.reinplaced() >= 1);
static_assert(halo_plan::static_buffer_bytes() > 0);
constexpr bool no_clone() {
  for (const auto& n : halo_plan::graph().nodes)
    if (n.op == ctfx::op_kind::clone) return false;
  return true;
}
static_assert(no_clone());

struct halo_data {
  std::vector<float> grid = std::vector<float>(100), north = std::vector<float>(8), west = std::vector<float>(8), o1 = std::vector<float>(100);
  std::vector<double> o2 = std::vector<double>(1);
  halo_data() {
    for (int i = 0; i < 100; ++i) grid[static_cast<std::size_t>(i)] = static_cast<float>(i % 9) - 3.0f;
    for (int i = 0; i < 8; ++i) {
      north[static_cast<std::size_t>(i)] = 10.0f + static_cast<float>(i);
      west[static_cast<std::size_t>(i)] = -20.0f - static_cast<float>(i);
    }
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(grid.data(), ctfx::f32, {10, 10}), ctfx::tensor_ref::contiguous(north.data(), ctfx::f32, {8}),
            ctfx::tensor_ref::contiguous(west.data(), ctfx::f32, {8})};
  }
  std::vector<ctfx::tensor_ref> out() {
    return {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {10, 10}), ctfx::tensor_ref::contiguous(o2.data(), ctfx::f64, {})};
  }
};

}  // namespace

TEST_CASE("compiled: the compile-time plan equals the run-time plan and the reference, bit for bit") {
  halo_data a, b, c;
  auto st = halo_plan::run(a.in(), a.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::runtime_plan(halo.get()).run(b.in(), b.out()).ok);
  REQUIRE(ctfx::reference_run(halo.get(), c.in(), c.out()).ok);
  CHECK(a.grid == c.grid);
  CHECK(a.o1 == c.o1);
  CHECK(a.o2 == c.o2);
  CHECK(b.grid == c.grid);
  CHECK(b.o1 == c.o1);
  // The ghost cells hold the neighbours' edges.
  CHECK(a.grid[1] == 10.0f);
  CHECK(a.grid[8] == 17.0f);
  CHECK(a.grid[10] == -10.0f);
  CHECK(a.o2[0] == static_cast<double>(a.grid[0] + 10 + 11 + 12 + 13 + 14 + 15 + 16 + 17 + a.grid[9]));
  // Both plans are the same graph: the run-time pipeline is the compile-time one, run later.
  CHECK(ctfx::to_text(halo_plan::graph()) == ctfx::to_text(ctfx::runtime_plan(halo.get()).graph()));
}

TEST_CASE("compiled: a failed check leaves the caller's grid untouched") {
  halo_data a;
  auto in = a.in();
  in[2].size[0] = 7;
  const auto before = a.grid;
  auto st = halo_plan::run(in, a.out());
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("rule input-shape") != std::string::npos);
  CHECK(a.grid == before);
}

namespace {
// Softmax rows of 37 (no multiple of a vector width) times a 0-d scale: the row maximum and sum are
// broadcast along each row (the kernels' inner loop reads one value per row), the scale along
// everything. The second output is the same values transposed: its inner loop is strided.
constexpr auto row_softmax = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 37});
  auto s = b.input("s", ctfx::f32, {});
  auto e = ctfx::exp(x - x.amax({1}, true)) * s;
  auto y = e / e.sum({1}, true);
  b.output(y, y.transpose(0, 1) + 1.0f);
});
}  // namespace

TEST_CASE("compiled: operands broadcast along a row (softmax's maximum and sum, a 0-d scale) equal the reference") {
  std::vector<float> x(6 * 37), s{0.75f};
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.05f - 2.0f;
  x[40] = -std::numeric_limits<float>::infinity();
  std::vector<float> o1(6 * 37), o2(37 * 6), r1(o1.size()), r2(o2.size());
  auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {6, 37}),
                                          ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {})};
  auto out = [](std::vector<float>& a, std::vector<float>& b) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {6, 37}),
                                         ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {37, 6})};
  };
  auto st = ctfx::compiled<decltype(row_softmax)>::run(in, out(o1, o2));
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(row_softmax.get(), in, out(r1, r2)).ok);
  CHECK(std::memcmp(o1.data(), r1.data(), o1.size() * 4) == 0);
  CHECK(std::memcmp(o2.data(), r2.data(), o2.size() * 4) == 0);
  float row0 = 0;
  for (int j = 0; j < 37; ++j) row0 += o1[static_cast<std::size_t>(j)];
  CHECK(row0 == doctest::Approx(1.0f).epsilon(1e-5));  // the scale cancels
  CHECK(o2[37 * 6 - 1] == o1[6 * 37 - 1] + 1.0f);
}
