// The compile-time plan (exec/compiled.hpp) against the run-time plan and the reference.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <cstdint>
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

namespace {
// prod in its two orders (a row of 70: PyTorch's 32 lanes, then the rest; a column: sequential),
// an int64 prod, and the bitwise, exp2 and hypot elementwise ops, on the compile-time plan.
constexpr auto prod_bits = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 70});
  auto i = b.input("i", ctfx::i32, {3, 70});
  b.output(x.prod(1), x.prod(0), ctfx::hypot(ctfx::exp2(x), x), i.prod(),
           ctfx::bitwise_xor(ctfx::bitwise_left_shift(i, 3), ctfx::bitwise_right_shift(ctfx::bitwise_not(i), 1)));
});

// PyTorch's CPU product of a unit-stride run at AVX2 width (f32: 4 vectors of 8 lanes).
float torch_prod_row(const float* p, int n) {
  float out = 1.0f;
  const int rounds = n / 32;
  if (rounds > 0) {
    float acc[32];
    for (int l = 0; l < 32; ++l) acc[l] = p[l];
    for (int r = 1; r < rounds; ++r)
      for (int l = 0; l < 32; ++l) acc[l] *= p[r * 32 + l];
    float b = (acc[0] * acc[8]) * (acc[16] * acc[24]);
    for (int j = 1; j < 8; ++j) b *= (acc[j] * acc[8 + j]) * (acc[16 + j] * acc[24 + j]);
    out *= b;
  }
  for (int k = rounds * 32; k < n; ++k) out *= p[k];
  return out;
}
}  // namespace

TEST_CASE("compiled plan: prod in PyTorch's orders, and the bitwise, exp2 and hypot ops, as the run-time plan") {
  std::vector<float> x(3 * 70);
  std::vector<std::int32_t> iv(3 * 70);
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] = 0.96f + static_cast<float>((k * 29) % 97) * 0.001f;
    iv[k] = static_cast<std::int32_t>((k * 13) % 7) - 3 + (k % 5 == 0 ? 1000 : 0);
  }
  std::vector<float> a1(3), a2(70), a3(210), r1(3), r2(70), r3(210);
  std::vector<std::int64_t> a4(1), r4(1);
  std::vector<std::int32_t> a5(210), r5(210);
  auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 70}),
                                          ctfx::tensor_ref::contiguous(iv.data(), ctfx::i32, {3, 70})};
  auto out = [](std::vector<float>& o1, std::vector<float>& o2, std::vector<float>& o3, std::vector<std::int64_t>& o4,
                std::vector<std::int32_t>& o5) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {3}),
                                         ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {70}),
                                         ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {3, 70}),
                                         ctfx::tensor_ref::contiguous(o4.data(), ctfx::i64, {}),
                                         ctfx::tensor_ref::contiguous(o5.data(), ctfx::i32, {3, 70})};
  };
  auto st = ctfx::compiled<decltype(prod_bits)>::run(in, out(a1, a2, a3, a4, a5));
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::runtime_plan(prod_bits.get()).run(in, out(r1, r2, r3, r4, r5)).ok);
  CHECK(std::memcmp(a1.data(), r1.data(), a1.size() * 4) == 0);
  CHECK(std::memcmp(a2.data(), r2.data(), a2.size() * 4) == 0);
  CHECK(std::memcmp(a3.data(), r3.data(), a3.size() * 4) == 0);
  CHECK(a4 == r4);
  CHECK(a5 == r5);
  std::int64_t p = 1;
  for (std::int32_t v : iv) p = static_cast<std::int64_t>(static_cast<std::uint64_t>(p) * static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
  CHECK(a4[0] == p);
  for (int r = 0; r < 3; ++r) CHECK(a1[static_cast<std::size_t>(r)] == torch_prod_row(x.data() + r * 70, 70));
  for (int c = 0; c < 70; ++c) {
    float s = x[static_cast<std::size_t>(c)];
    for (int r = 1; r < 3; ++r) s *= x[static_cast<std::size_t>(r * 70 + c)];
    CHECK(a2[static_cast<std::size_t>(c)] == s);
  }
  for (std::size_t k = 0; k < iv.size(); ++k) CHECK(a5[k] == ((iv[k] << 3) ^ (~iv[k] >> 1)));
}
