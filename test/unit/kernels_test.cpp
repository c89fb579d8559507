// The kernels against values computed by hand (the fuzzer compares plans with the reference, which
// share these kernels; here they are checked on their own).
#include <doctest/doctest.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

TEST_CASE("kernels: float16 and bfloat16 round to nearest even") {
  CHECK(ctfx::half_t(1.0f).bits == 0x3c00);
  CHECK(ctfx::half_t(65504.0f).bits == 0x7bff);
  CHECK(ctfx::half_t(65520.0f).bits == 0x7c00);          // rounds to infinity
  CHECK(ctfx::half_t(1.0f + 1.0f / 2048).bits == 0x3c00);  // a tie: to even
  CHECK(ctfx::half_t(1.0f + 3.0f / 2048).bits == 0x3c02);  // a tie: to even (up)
  CHECK(ctfx::half_t(5.960464477539063e-08f).bits == 0x0001);  // the smallest subnormal
  CHECK(static_cast<float>(ctfx::half_t(-2.5f)) == -2.5f);
  CHECK(std::isnan(static_cast<float>(ctfx::half_t(NAN))));
  CHECK(ctfx::bfloat16_t(1.0f).bits == 0x3f80);
  CHECK(ctfx::bfloat16_t(1.00390625f).bits == 0x3f80);  // 1 + 2^-8: a tie, to even
  CHECK(ctfx::bfloat16_t(1.01171875f).bits == 0x3f82);  // 1 + 3*2^-8: a tie, to even (up)
  CHECK(static_cast<float>(ctfx::bfloat16_t(3.0f)) == 3.0f);
}

TEST_CASE("kernels: index_put with accumulate and duplicates, rows and elements") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 3});
    auto i = b.input("i", ctfx::i64, {5});
    auto v = b.input("v", ctfx::f32, {5, 3});
    b.output(ctfx::index_put(x, {i}, v, true), ctfx::index_put(x, {i}, v, false));
  });
  std::vector<float> x(12, 1.0f), v(15);
  for (int k = 0; k < 15; ++k) v[static_cast<std::size_t>(k)] = static_cast<float>(k);
  std::vector<std::int64_t> i = {2, 0, 2, -1, 2};
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 3}),
                                      ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {5}),
                                      ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {5, 3})};
  std::vector<float> acc(12), put(12);
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref::contiguous(acc.data(), ctfx::f32, {4, 3}),
                                     ctfx::tensor_ref::contiguous(put.data(), ctfx::f32, {4, 3})};
  REQUIRE(ctfx::runtime_plan(g).run(in, o).ok);
  // row 2 gets rows 0, 2, 4 of v; row 0 gets row 1; row 3 (index -1) gets row 3
  CHECK(acc == std::vector<float>{1 + 3, 1 + 4, 1 + 5, 1, 1, 1, 1 + 0 + 6 + 12, 1 + 1 + 7 + 13, 1 + 2 + 8 + 14, 1 + 9, 1 + 10, 1 + 11});
  CHECK(put == std::vector<float>{3, 4, 5, 1, 1, 1, 12, 13, 14, 9, 10, 11});  // the last write wins
}

// Rows accumulated in place (an embedding backward), rows long enough for vector loops and their
// tails, duplicates and a negative index; integers wrap as PyTorch's do. Checked against a plain
// loop over the same values.
template <class T>
void check_rows_accumulate(ctfx::dtype dt, T big) {
  constexpr ctfx::index_t V = 7, D = 37, N = 11;
  auto g = ctfx::build_checked([dt](ctfx::builder& b) {
    auto acc = b.input("acc", dt, {V, D});
    auto idx = b.input("idx", ctfx::i64, {N});
    auto v = b.input("v", dt, {N, D});
    b.update(acc, ctfx::index_put(acc, {idx}, v, true));
  });
  std::vector<T> acc(V * D), v(N * D);
  for (std::size_t e = 0; e < acc.size(); ++e) acc[e] = e % 5 == 0 ? big : static_cast<T>(static_cast<int>(e % 9) - 4);
  for (std::size_t e = 0; e < v.size(); ++e) v[e] = e % 7 == 0 ? big : static_cast<T>(static_cast<int>(e % 11) - 5) / static_cast<T>(4);
  std::vector<std::int64_t> idx = {3, 0, 3, -1, 6, 3, 2, -7, 5, 0, 3};
  std::vector<T> want = acc;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const std::size_t row = static_cast<std::size_t>(idx[k] < 0 ? idx[k] + V : idx[k]);
    for (std::size_t j = 0; j < D; ++j) {
      T& w = want[row * D + j];
      if constexpr (std::is_integral_v<T>)  // two's complement wrap, as PyTorch's integer add
        w = static_cast<T>(static_cast<std::make_unsigned_t<T>>(w) + static_cast<std::make_unsigned_t<T>>(v[k * D + j]));
      else
        w = w + v[k * D + j];
    }
  }
  // (untyped pointers: the dtype is this function's argument)
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(static_cast<void*>(acc.data()), dt, {V, D}),
                                      ctfx::tensor_ref::contiguous(idx.data(), ctfx::i64, {N}),
                                      ctfx::tensor_ref::contiguous(static_cast<void*>(v.data()), dt, {N, D})};
  auto st = ctfx::runtime_plan(g).run(in, {});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(std::memcmp(acc.data(), want.data(), acc.size() * sizeof(T)) == 0);
}

TEST_CASE("kernels: rows accumulated in place, every arithmetic dtype, against a plain loop") {
  check_rows_accumulate<float>(ctfx::f32, 1e30f);
  check_rows_accumulate<double>(ctfx::f64, 1e300);
  check_rows_accumulate<std::int32_t>(ctfx::i32, std::numeric_limits<std::int32_t>::max());
  check_rows_accumulate<std::int64_t>(ctfx::i64, std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("kernels: index_put on an inner dimension, values broadcast") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 4});
    auto i = b.input("i", ctfx::i64, {2});
    auto v = b.input("v", ctfx::f32, {2});
    b.output(ctfx::index_put(x, {ctfx::none, i}, v, true));
  });
  std::vector<float> x(8, 0.0f), v = {10, 20}, out(8);
  std::vector<std::int64_t> i = {3, 1};
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 4}),
                                      ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2}),
                                      ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {2})};
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {2, 4})};
  REQUIRE(ctfx::runtime_plan(g).run(in, o).ok);
  // x[:, i] has shape [2, 2]; v broadcasts along the rows: x[r, 3] += 10, x[r, 1] += 20
  CHECK(out == std::vector<float>{0, 20, 0, 10, 0, 20, 0, 10});
}

// x[i] += v in place on a 1-D x with one 1-D i64 index: the host checks the indices inside the
// put (into a private copy of x, written back after the last check). Below and above the size of
// that private copy (32 KiB), with duplicates and negative indices.
TEST_CASE("kernels: in-place 1-D scatter, duplicates and negative indices, checked inside the put") {
  for (const long B : {5L, 10000L}) {
    auto g = ctfx::build_checked([B](ctfx::builder& b) {
      auto h = b.input("h", ctfx::f32, {B});
      auto i = b.input("i", ctfx::i64, {6});
      auto v = b.input("v", ctfx::f32, {6});
      b.update(h, ctfx::index_put(h, {i}, v, true));
    });
    auto g2 = ctfx::build_checked([B](ctfx::builder& b) {
      auto h = b.input("h", ctfx::f32, {B});
      auto i = b.input("i", ctfx::i64, {6});
      auto v = b.input("v", ctfx::f32, {6});
      b.update(h, ctfx::index_put(h, {i}, v, false));
    });
    std::vector<float> h(static_cast<std::size_t>(B), 1.0f), v = {1, 2, 4, 8, 16, 32};
    std::vector<std::int64_t> i = {0, 3, -1, 0, -B, B - 1};  // bin 0 three times, bin B-1 twice
    auto in = [&] {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(h.data(), ctfx::f32, {B}),
                                           ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {6}),
                                           ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {6})};
    };
    ctfx::runtime_plan acc(g), put(g2);
    REQUIRE(acc.run(in(), {}).ok);
    CHECK(h[0] == 1 + 1 + 8 + 16);
    CHECK(h[3] == 1 + 2);
    CHECK(h[static_cast<std::size_t>(B) - 1] == 1 + 4 + 32);
    CHECK(h[1] == 1);
    std::fill(h.begin(), h.end(), 1.0f);
    REQUIRE(put.run(in(), {}).ok);
    CHECK(h[0] == 16);  // the last write wins
    CHECK(h[3] == 2);
    CHECK(h[static_cast<std::size_t>(B) - 1] == 32);
    CHECK(h[1] == 1);
    // An index out of range, last: nothing written, and the message names the first bad one.
    std::fill(h.begin(), h.end(), 1.0f);
    i = {0, 3, B, 0, -B - 1, 1};
    auto st = acc.run(in(), {});
    CHECK_FALSE(st.ok);
    CHECK(st.message.find("rule index-in-range") != std::string::npos);
    CHECK(st.message.find("index " + std::to_string(B) + " ") != std::string::npos);
    CHECK(std::all_of(h.begin(), h.end(), [](float e) { return e == 1.0f; }));
    i = {0, 0, 0, 0, 0, -B - 1};
    CHECK_FALSE(put.run(in(), {}).ok);
    CHECK(std::all_of(h.begin(), h.end(), [](float e) { return e == 1.0f; }));
  }
}

// The put checks its indices a block at a time (kernels/index_put.hpp): clean blocks run without a
// check per element, a block with a negative or bad index runs element by element. Whichever path a
// block takes, the values are the sequential loop's and a bad index anywhere leaves x untouched.
TEST_CASE("kernels: a long in-place 1-D scatter checks its indices by blocks, at every ISA level") {
  constexpr long B = 37, N = 1000;  // 15 full blocks of 64 and a partial one
  for (const bool accumulate : {true, false}) {
    auto g = ctfx::build_checked([accumulate](ctfx::builder& b) {
      auto h = b.input("h", ctfx::f32, {B});
      auto i = b.input("i", ctfx::i64, {N});
      auto v = b.input("v", ctfx::f32, {N});
      b.update(h, ctfx::index_put(h, {i}, v, accumulate));
    });
    ctfx::runtime_plan plan(g);
    std::vector<float> v(N);
    for (long k = 0; k < N; ++k) v[static_cast<std::size_t>(k)] = 0.1f * static_cast<float>(k % 13) - 0.3f;
    for (const auto level : {ctfx::isa::level::baseline, ctfx::isa::level::avx2, ctfx::isa::level::avx512}) {
      const auto saved = ctfx::isa::use(level);
      CAPTURE(accumulate);
      CAPTURE(ctfx::isa::name(ctfx::isa::current()));
      std::vector<std::int64_t> i(N);
      for (long k = 0; k < N; ++k) i[static_cast<std::size_t>(k)] = (k * 17) % B;
      // Negative indices in block 2 (its first position) and in the last, partial block.
      i[128] = -1;
      i[N - 1] = -B;
      std::vector<float> h(B), want(B);
      for (long e = 0; e < B; ++e) h[static_cast<std::size_t>(e)] = want[static_cast<std::size_t>(e)] = static_cast<float>(e) * 0.5f;
      for (long k = 0; k < N; ++k) {
        const std::int64_t at = i[static_cast<std::size_t>(k)] < 0 ? i[static_cast<std::size_t>(k)] + B : i[static_cast<std::size_t>(k)];
        float& w = want[static_cast<std::size_t>(at)];
        w = accumulate ? w + v[static_cast<std::size_t>(k)] : v[static_cast<std::size_t>(k)];
      }
      auto in = [&] {
        return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(h.data(), ctfx::f32, {B}),
                                             ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {N}),
                                             ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {N})};
      };
      REQUIRE(plan.run(in(), {}).ok);
      CHECK(std::memcmp(h.data(), want.data(), sizeof(float) * B) == 0);
      // A bad index after clean blocks, in the middle of a block (the first of two bad ones is
      // named), and one in the last position: h stays as it was.
      const std::vector<float> before = h;
      for (const long bad_at : {451L, N - 1}) {
        CAPTURE(bad_at);
        auto j = i;
        j[static_cast<std::size_t>(bad_at)] = B;
        if (bad_at + 3 < N) j[static_cast<std::size_t>(bad_at) + 3] = -B - 1;
        i.swap(j);
        const auto st = plan.run(in(), {});
        i.swap(j);
        CHECK_FALSE(st.ok);
        CHECK(st.message.find("index " + std::to_string(B) + " (from 'i')") != std::string::npos);
        CHECK(std::memcmp(h.data(), before.data(), sizeof(float) * B) == 0);
      }
      ctfx::isa::use(saved);
    }
  }
}

TEST_CASE("kernels: a long 16-bit float scatter-add, put by clean blocks, rounds after every add") {
  constexpr long B = 29, N = 700;  // 10 full blocks of 64 and a partial one; block 3 has a negative index
  for (const ctfx::dtype dt : {ctfx::f16, ctfx::bf16}) {
    CAPTURE(ctfx::name_of(dt));
    auto g = ctfx::build_checked([dt](ctfx::builder& b) {
      auto h = b.input("h", dt, {B});
      auto i = b.input("i", ctfx::i64, {N});
      auto v = b.input("v", dt, {N});
      b.update(h, ctfx::index_put(h, {i}, v, true));
    });
    // Each add rounded to the element type, in index order (PyTorch's CPU scatter-add).
    auto to_float = [dt](std::uint16_t b) {
      ctfx::half_t x;
      ctfx::bfloat16_t y;
      x.bits = y.bits = b;
      return dt == ctfx::f16 ? static_cast<float>(x) : static_cast<float>(y);
    };
    auto round = [dt](float f) { return dt == ctfx::f16 ? ctfx::half_t(f).bits : ctfx::bfloat16_t(f).bits; };
    std::vector<std::uint16_t> v(N), h0(B);
    for (long k = 0; k < N; ++k) {
      const float f = 0.37f * static_cast<float>(k % 11) - 1.1f;
      v[static_cast<std::size_t>(k)] = round(f);
    }
    for (long e = 0; e < B; ++e) h0[static_cast<std::size_t>(e)] = round(100.0f + static_cast<float>(e));
    std::vector<std::int64_t> i(N);
    for (long k = 0; k < N; ++k) i[static_cast<std::size_t>(k)] = (k * 7) % B;
    i[200] = -3;
    auto in = [&](std::vector<std::uint16_t>& h) {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(static_cast<void*>(h.data()), dt, {B}),
                                           ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {N}),
                                           ctfx::tensor_ref::contiguous(static_cast<void*>(v.data()), dt, {N})};
    };
    std::vector<std::uint16_t> want = h0;
    for (long k = 0; k < N; ++k) {
      const std::int64_t at = i[static_cast<std::size_t>(k)] < 0 ? i[static_cast<std::size_t>(k)] + B : i[static_cast<std::size_t>(k)];
      std::uint16_t& w = want[static_cast<std::size_t>(at)];
      w = round(to_float(w) + to_float(v[static_cast<std::size_t>(k)]));
    }
    std::vector<std::uint16_t> ref = h0;
    REQUIRE(ctfx::reference_run(g, in(ref), {}).ok);
    CHECK(ref == want);
    ctfx::runtime_plan plan(g);
    for (const auto level : {ctfx::isa::level::baseline, ctfx::isa::level::avx2, ctfx::isa::level::avx512}) {
      const auto saved = ctfx::isa::use(level);
      CAPTURE(ctfx::isa::name(ctfx::isa::current()));
      std::vector<std::uint16_t> h = h0;
      REQUIRE(plan.run(in(h), {}).ok);
      CHECK(h == want);
      ctfx::isa::use(saved);
    }
  }
}

TEST_CASE("kernels: in-place 1-D scatter-add in float16 rounds after every add, in order") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto h = b.input("h", ctfx::f16, {4});
    auto i = b.input("i", ctfx::i64, {5});
    auto v = b.input("v", ctfx::f16, {5});
    b.update(h, ctfx::index_put(h, {i}, v, true));
  });
  std::vector<ctfx::half_t> h = {ctfx::half_t(2048.0f), ctfx::half_t(0.0f), ctfx::half_t(0.0f), ctfx::half_t(1.0f)};
  std::vector<ctfx::half_t> v = {ctfx::half_t(1.0f), ctfx::half_t(1.0f), ctfx::half_t(1.0f), ctfx::half_t(0.5f), ctfx::half_t(-3.0f)};
  std::vector<std::int64_t> i = {0, -4, 0, 2, -1};
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {4}),
                                      ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {5}),
                                      ctfx::tensor_ref::contiguous(v.data(), ctfx::f16, {5})};
  REQUIRE(ctfx::runtime_plan(g).run(in, {}).ok);
  // 2048 + 1 = 2049 rounds to 2048 (a tie, to even) at every store: three adds leave 2048 (a sum
  // in float rounded once would give 2052).
  CHECK(static_cast<float>(h[0]) == 2048.0f);
  CHECK(static_cast<float>(h[1]) == 0.0f);
  CHECK(static_cast<float>(h[2]) == 0.5f);
  CHECK(static_cast<float>(h[3]) == -2.0f);
}

// An output computed in the caller's buffer before the put: a bad index must still leave it unwritten.
TEST_CASE("kernels: a bad index in an in-place scatter leaves an earlier direct output unwritten") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto h = b.input("h", ctfx::f32, {8});
    auto i = b.input("i", ctfx::i64, {3});
    auto v = b.input("v", ctfx::f32, {3});
    b.output(v.clone());
    b.update(h, ctfx::index_put(h, {i}, v, true));
  });
  std::vector<float> h(8, 0.0f), v = {1, 2, 3}, out(3, -1.0f);
  std::vector<std::int64_t> i = {1, 9, 2};
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(h.data(), ctfx::f32, {8}),
                                      ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {3}),
                                      ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {3})};
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {3})};
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  CHECK_FALSE(plan.run(in, o).ok);
  CHECK(out == std::vector<float>(3, -1.0f));
  CHECK(h == std::vector<float>(8, 0.0f));
  i = {1, -6, 1};  // -6 is bin 2
  REQUIRE(plan.run(in, o).ok);
  CHECK(out == v);
  CHECK(h == std::vector<float>{0, 1 + 3, 2, 0, 0, 0, 0, 0});
}

TEST_CASE("kernels: strided copies, reductions, cat and dtype conversion") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 3});
    b.output(x.transpose(0, 1).clone(), x.sum({0}), x.amax({1}, true), ctfx::cat({x, x * 2.0}, 1), (x * 1.5).to(ctfx::i32));
  });
  std::vector<float> x = {1, -2, 3, 4, 5, -6.5f};
  std::vector<float> t(6), s(3), m(2), c(12);
  std::vector<std::int32_t> n(6);
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3})};
  std::vector<ctfx::tensor_ref> o = {
      ctfx::tensor_ref::contiguous(t.data(), ctfx::f32, {3, 2}), ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {3}),
      ctfx::tensor_ref::contiguous(m.data(), ctfx::f32, {2, 1}), ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {2, 6}),
      ctfx::tensor_ref::contiguous(n.data(), ctfx::i32, {2, 3})};
  auto st = ctfx::runtime_plan(g).run(in, o);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(t == std::vector<float>{1, 4, -2, 5, 3, -6.5f});
  CHECK(s == std::vector<float>{5, 3, -3.5f});
  CHECK(m == std::vector<float>{3, 5});
  CHECK(c == std::vector<float>{1, -2, 3, 2, -4, 6, 4, 5, -6.5f, 8, 10, -13});
  CHECK(n == std::vector<std::int32_t>{1, -3, 4, 6, 7, -9});  // truncation toward zero
}

TEST_CASE("kernels: a transposed output buffer is written through its strides") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 3});
    b.output(x + 1.0);
  });
  std::vector<float> x = {0, 1, 2, 3, 4, 5}, out(6, -1.0f);
  ctfx::tensor_desc od = ctfx::tensor_desc::contiguous(ctfx::f32, {2, 3});
  od.stride[0] = 1;
  od.stride[1] = 2;  // column-major
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3})};
  std::vector<ctfx::tensor_ref> o = {ctfx::tensor_ref(out.data(), od)};
  REQUIRE(ctfx::runtime_plan(g).run(in, o).ok);
  CHECK(out == std::vector<float>{1, 4, 2, 5, 3, 6});
}

TEST_CASE("kernels: relu on the bits equals x < 0 ? 0 : x on every special value, f32 and f64") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (float v : {0.0f, -0.0f, 1.5f, -1.5f, inf, -inf, nan, -nan, 1e-45f, -1e-45f, 3e38f, -3e38f}) {
    const float a = ctfx::kernels::relu_bits(v), b = v < 0.0f ? 0.0f : v;
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
  const double dinf = std::numeric_limits<double>::infinity(), dnan = std::numeric_limits<double>::quiet_NaN();
  for (double v : {0.0, -0.0, 2.0, -2.0, dinf, -dinf, dnan, -dnan, 5e-324, -5e-324}) {
    const double a = ctfx::kernels::relu_bits(v), b = v < 0.0 ? 0.0 : v;
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
  // The ends of the range of bit patterns it zeroes: the smallest negative subnormal up to -inf;
  // -0 before it and the first negative NaN after it are kept.
  for (std::uint32_t u : {0x80000000u, 0x80000001u, 0xff7fffffu, 0xff800000u, 0xff800001u, 0xffffffffu, 0x7fffffffu}) {
    float v;
    std::memcpy(&v, &u, 4);
    const float a = ctfx::kernels::relu_bits(v), b = v < 0.0f ? 0.0f : v;
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
  for (std::uint64_t u : {0x8000000000000000ull, 0x8000000000000001ull, 0xfff0000000000000ull, 0xfff0000000000001ull}) {
    double v;
    std::memcpy(&v, &u, 8);
    const double a = ctfx::kernels::relu_bits(v), b = v < 0.0 ? 0.0 : v;
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
}

TEST_CASE("kernels: pow by a scalar exponent as PyTorch's CPU kernel computes it, by a tensor, std::pow") {
  // x.pow(3) is x*x*x (two roundings), not the correctly rounded cube; x.pow(t) with t = 3 is std::pow.
  constexpr auto g = ctfx::graph([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6});
    auto t = b.input("t", ctfx::f32, {6});
    b.output(ctfx::pow(x, 3.0f), ctfx::pow(x, 2.0f), ctfx::pow(x, -2.0f), ctfx::pow(x, 0.5f), ctfx::pow(x, -0.5f),
             ctfx::pow(x, -1.0f), ctfx::pow(x, t), ctfx::pow(x, 1.5f));
  });
  std::vector<float> x{1.1f, 2.7182817f, 0.3f, 7.77f, 1e-3f, 123.456f}, t(6, 3.0f);
  std::vector<std::vector<float>> o(8, std::vector<float>(6));
  std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {6}), ctfx::tensor_ref::contiguous(t.data(), ctfx::f32, {6})};
  std::vector<ctfx::tensor_ref> out;
  for (auto& v : o) out.push_back(ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {6}));
  for (int how = 0; how < 3; ++how) {
    for (auto& v : o) std::fill(v.begin(), v.end(), -7.0f);
    auto st = how == 0 ? ctfx::compiled<decltype(g)>::run(in, out) : how == 1 ? ctfx::runtime_plan(g.get()).run(in, out)
                                                                               : ctfx::reference_run(g.get(), in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    bool cube_differs = false;
    for (std::size_t i = 0; i < 6; ++i) {
      const float a = x[i];
      CHECK(o[0][i] == a * a * a);
      CHECK(o[1][i] == a * a);
      CHECK(o[2][i] == 1.0f / (a * a));
      CHECK(o[3][i] == std::sqrt(a));
      CHECK(o[4][i] == 1.0f / std::sqrt(a));
      CHECK(o[5][i] == 1.0f / a);
      CHECK(o[6][i] == std::pow(a, 3.0f));
      CHECK(o[7][i] == std::pow(a, 1.5f));
      cube_differs = cube_differs || a * a * a != std::pow(a, 3.0f);
    }
    CHECK(cube_differs);  // the inputs tell the two cubes apart
  }
}

namespace {
// A sum in ctfx's order, written out plainly: element r of the row-major sequence goes to lane
// r mod 32, each lane adds from +0 in order, then the 32 lanes add in order (all of them, even
// those no element reached).
float lane_sum(const std::vector<float>& v) {
  float lane[32] = {};
  for (std::size_t r = 0; r < v.size(); ++r) lane[r % 32] = lane[r % 32] + v[r];
  float t = 0.0f;
  for (float l : lane) t = t + l;
  return t;
}

// out[o] = the fold of x's elements that reduce into o, taken in row-major order: amax in that
// order; a sum in lane order (lane_sum) where they are a run of x (the reduced dimensions are the
// last ones), else sequentially. x is [a, b, c] row-major; `dims` flags the reduced dimensions.
std::vector<float> fold(const std::vector<float>& x, int a, int b, int c, unsigned dims, bool is_max) {
  const int n[3] = {a, b, c};
  int on[3];
  for (int d = 0; d < 3; ++d) on[d] = (dims >> d) & 1 ? 1 : n[d];
  std::vector<std::vector<float>> values(static_cast<std::size_t>(on[0] * on[1] * on[2]));
  for (int i = 0; i < a; ++i)
    for (int j = 0; j < b; ++j)
      for (int k = 0; k < c; ++k) {
        const int idx[3] = {i, j, k};
        int o = 0;
        for (int d = 0; d < 3; ++d) o = o * on[d] + ((dims >> d) & 1 ? 0 : idx[d]);
        values[static_cast<std::size_t>(o)].push_back(x[static_cast<std::size_t>((i * b + j) * c + k)]);
      }
  bool runs = true, reduced = false;
  for (int d = 0; d < 3; ++d) {
    if ((dims >> d) & 1) reduced = true;
    else if (reduced && n[d] > 1) runs = false;
  }
  std::vector<float> out;
  for (const auto& v : values) {
    if (!is_max) {
      float seq = 0.0f;
      for (float e : v) seq = seq + e;
      out.push_back(runs ? lane_sum(v) : seq);
      continue;
    }
    float acc = v[0];
    for (std::size_t r = 1; r < v.size(); ++r) acc = acc != acc ? acc : v[r] != v[r] ? v[r] : acc < v[r] ? v[r] : acc;
    out.push_back(acc);
  }
  return out;
}
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
}  // namespace

TEST_CASE("kernels: sums fold each output in lane order, amax in row-major order, on one thread and on OMP's") {
  // Values whose sum depends on the order (large and small magnitudes), a NaN and signed zeros for amax.
  constexpr int A = 5, B = 67, C = 203;
  std::vector<float> x(A * B * C);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 7919) % 1013) * ((i % 3) ? 1e-3f : 1e5f) * ((i % 5) ? 1.0f : -1.0f);
  x[9 * C + 4] = std::numeric_limits<float>::quiet_NaN();
  for (int k = 0; k < C; ++k) x[static_cast<std::size_t>(3 * C + k)] = (k % 2) ? 0.0f : -0.0f;
  for (int k = 0; k < C; ++k) x[static_cast<std::size_t>(4 * C + k)] = (k % 3) ? -2.5f * static_cast<float>(k) : -0.0f;
  x[11 * C + 7] = -std::numeric_limits<float>::infinity();
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto t = b.input("x", ctfx::f32, {A, B, C});
    b.output(t.sum({2}), t.amax({2}), t.sum({0}), t.sum({0, 2}), t.amax({1}), t.sum({1, 2}));
  });
  const struct { unsigned dims; bool is_max; } want[] = {{4u, false}, {4u, true}, {1u, false}, {5u, false}, {2u, true}, {6u, false}};
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    std::vector<std::vector<float>> out = {std::vector<float>(A * B), std::vector<float>(A * B), std::vector<float>(B * C),
                                           std::vector<float>(B), std::vector<float>(A * C), std::vector<float>(A)};
    std::vector<ctfx::tensor_ref> o = {
        ctfx::tensor_ref::contiguous(out[0].data(), ctfx::f32, {A, B}), ctfx::tensor_ref::contiguous(out[1].data(), ctfx::f32, {A, B}),
        ctfx::tensor_ref::contiguous(out[2].data(), ctfx::f32, {B, C}), ctfx::tensor_ref::contiguous(out[3].data(), ctfx::f32, {B}),
        ctfx::tensor_ref::contiguous(out[4].data(), ctfx::f32, {A, C}), ctfx::tensor_ref::contiguous(out[5].data(), ctfx::f32, {A})};
    auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {A, B, C})}, o,
                                        ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t i = 0; i < out.size(); ++i) {
      CAPTURE(i);
      CHECK(same_bits(out[i], fold(x, A, B, C, want[i].dims, want[i].is_max)));
    }
    int order_matters = 0;  // the values tell the orders apart: a sequential sum differs
    for (int r = 0; r < A * B; ++r) {
      float seq = 0.0f;
      for (int k = 0; k < C; ++k) seq += x[static_cast<std::size_t>(r * C + k)];
      order_matters += seq != out[0][static_cast<std::size_t>(r)] && seq == seq;
    }
    CHECK(order_matters > 0);
    CHECK(std::isnan(out[1][9]));
    CHECK(std::signbit(out[1][3]));  // amax over -0, 0, -0, ...: the first of equal values is kept
    CHECK((out[1][4] == 0.0f && std::signbit(out[1][4])));  // over -0 and negatives: -0
  }
  // A row sum of a transposed input: its outputs lie side by side in memory (the chunked loop over
  // neighbouring outputs) yet each folds a run of the logical input, so in lanes.
  auto gt = ctfx::build_checked([](ctfx::builder& b) {
    auto y = b.input("y", ctfx::f32, {C, B});
    b.output(y.transpose(0, 1).sum({1}));
  });
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> got(B);
    REQUIRE(ctfx::runtime_plan(gt).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {C, B})},
                                       {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {B})}, ctfx::device_ctx{where}).ok);
    for (int j = 0; j < B; ++j) {
      std::vector<float> col;
      for (int i = 0; i < C; ++i) col.push_back(x[static_cast<std::size_t>(i * B + j)]);
      const float lanes = lane_sum(col);
      CHECK(std::memcmp(&got[static_cast<std::size_t>(j)], &lanes, 4) == 0);
    }
  }
  // The per-output kernel CUDA runs (reduce_fn), called here on the host, folds the same bits.
  const ctfx::strided in{reinterpret_cast<std::byte*>(x.data()), ctfx::dtype::f32, 3, {A, B, C}, {B * C, C, 1}};
  const struct { ctfx::index_t size[2]; int rank; } shapes[] = {{{A, B}, 2}, {{A, B}, 2}, {{B, C}, 2}, {{B, 0}, 1}, {{A, C}, 2}, {{A, 0}, 1}};
  for (std::size_t i = 0; i < 6; ++i) {
    CAPTURE(i);
    std::vector<float> got(static_cast<std::size_t>(shapes[i].size[0] * (shapes[i].rank == 2 ? shapes[i].size[1] : 1)));
    ctfx::strided out{reinterpret_cast<std::byte*>(got.data()), ctfx::dtype::f32, shapes[i].rank, {}, {}};
    for (int d = 0; d < shapes[i].rank; ++d) out.size[d] = shapes[i].size[d];
    if (shapes[i].rank == 2) out.stride[0] = shapes[i].size[1];
    out.stride[shapes[i].rank - 1] = 1;
    ctfx::strided kept, red;
    ctfx::kernels::split_reduction(out, in, want[i].dims, kept, red);
    const ctfx::kernels::reduce_fn<ctfx::dtype::f32, ctfx::dtype::f32> fn{out, kept, ctfx::kernels::reduced_dims(red), (want[i].is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum), 0.0,
                                                                                ctfx::kernels::folds_runs(in, want[i].dims)};
    for (ctfx::index_t o = 0; o < out.numel(); ++o) fn(o);
    CHECK(same_bits(got, fold(x, A, B, C, want[i].dims, want[i].is_max)));
    // Outputs that each read one unit-stride run: CUDA folds them a warp each (warp_fold.hpp).
    const ctfx::kernels::reduced_dims rd(red);
    if (!rd.unit_run() || !(want[i].is_max || ctfx::kernels::folds_runs(in, want[i].dims))) continue;
    std::fill(got.begin(), got.end(), -1.0f);
    ctfx::kernels::fold_by_warps<float>(ctfx::device_ctx{}, ctfx::kernels::reduce_run_fold<ctfx::dtype::f32, ctfx::dtype::f32>{out, kept, 0.0},
                                        out.numel(), rd.n, (want[i].is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum));
    CHECK(same_bits(got, fold(x, A, B, C, want[i].dims, want[i].is_max)));
  }
}

namespace {
// A fold over one vector per output, for fold_by_warps.
struct vector_fold {
  const std::vector<std::vector<float>>* in;
  std::vector<float>* out;
  const float* source(ctfx::index_t o) const { return (*in)[static_cast<std::size_t>(o)].data(); }
  float value(const float* p, ctfx::index_t r) const { return p[r]; }
  void store(ctfx::index_t o, float v) const { (*out)[static_cast<std::size_t>(o)] = v; }
};
float with_payload(std::uint32_t payload) { return std::bit_cast<float>(0x7fc00000u | payload); }
// The same bits, or both NaN: which NaN a sum of two NaNs returns depends on which operand the
// compiler puts first (x86 returns the first's; IEEE leaves it open), a maximum's does not.
bool same_bits_or_nans(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0 && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  return true;
}
}  // namespace

TEST_CASE("kernels: a warp per output (CUDA's fold) gives the host fold's bits: sums in lanes, amax by position") {
  // Outputs of every length around the warp's 32, whose sums depend on the order, and maxima that
  // depend on positions: NaNs told apart by payload (the first is the answer), signed zeros (the
  // first of equal values), all equal values.
  std::vector<std::vector<float>> rows;
  std::uint32_t seed = 12345;
  auto next = [&] { return seed = seed * 1664525u + 1013904223u; };
  for (std::size_t n : {0u, 1u, 2u, 31u, 32u, 33u, 63u, 64u, 65u, 95u, 1000u, 4097u}) {
    for (int kind = 0; kind < 5; ++kind) {
      std::vector<float> v(n);
      for (auto& x : v) {
        const std::uint32_t u = next();
        x = static_cast<float>(u % 1013) * ((u >> 12) % 3 ? 1e-3f : 1e5f) * ((u >> 20) % 5 ? 1.0f : -1.0f);
      }
      if (n > 0 && kind == 1) {  // two NaNs, the later one in a lower lane
        v[next() % n] = with_payload(1);
        v[n - 1] = with_payload(2);
        if (n > 40) v[33] = with_payload(3);
      }
      if (kind == 2) for (std::size_t i = 0; i < n; ++i) v[i] = (next() % 2) ? 0.0f : -0.0f;
      if (kind == 3) for (std::size_t i = 0; i < n; ++i) v[i] = (i % 7 == 5) ? ((i % 2) ? 0.0f : -0.0f) : -1.0f - static_cast<float>(i);
      if (kind == 4) for (auto& x : v) x = 2.5f;
      rows.push_back(v);
    }
  }
  const auto outputs = static_cast<ctfx::index_t>(rows.size());
  for (ctfx::kernels::fold_op fold : {ctfx::kernels::fold_op::sum, ctfx::kernels::fold_op::max, ctfx::kernels::fold_op::min}) {
    const bool is_max = fold != ctfx::kernels::fold_op::sum;  // a maximum or minimum: by position
    CAPTURE(static_cast<int>(fold));
    std::vector<float> got(rows.size()), want(rows.size());
    for (std::size_t o = 0; o < rows.size(); ++o) {  // fold_acc fed one value at a time: the host's order
      ctfx::kernels::fold_acc<float> a(fold);
      for (float x : rows[o]) a.add(x);
      want[o] = a.result();
    }
    std::vector<ctfx::index_t> lengths;
    for (const auto& r : rows) lengths.push_back(static_cast<ctfx::index_t>(r.size()));
    for (ctfx::index_t o = 0; o < outputs; ++o)  // each output with its own length
      got[static_cast<std::size_t>(o)] = ctfx::kernels::fold_by_lanes<float>(vector_fold{&rows, &got}, o, lengths[static_cast<std::size_t>(o)], fold);
    CHECK((is_max ? same_bits(got, want) : same_bits_or_nans(got, want)));
  }
  // The first NaN by position is the answer, not the first by lane.
  std::vector<std::vector<float>> nan_rows = {std::vector<float>(100, 1.0f)};
  nan_rows[0][40] = with_payload(7);  // lane 8
  nan_rows[0][70] = with_payload(9);  // lane 6
  std::vector<float> one(1);
  ctfx::kernels::fold_by_warps<float>(ctfx::device_ctx{}, vector_fold{&nan_rows, &one}, 1, 100, ctfx::kernels::fold_op::max);
  CHECK(std::bit_cast<std::uint32_t>(one[0]) == 0x7fc00007u);
}

TEST_CASE("kernels: a fold fed in runs of any length and offset keeps the lane order") {
  // fold_acc::add_run aligns to the lanes, adds whole rounds of 32 and a rest; one value at a time
  // (add), as CUDA feeds it, must give the same bits, and so must any split into runs.
  std::vector<float> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7919) % 1013) * ((i % 3) ? 1e-3f : 1e5f) * ((i % 5) ? 1.0f : -1.0f);
  for (std::size_t n : {0u, 1u, 3u, 31u, 32u, 33u, 95u, 1000u}) {
    CAPTURE(n);
    const std::vector<float> head(v.begin(), v.begin() + static_cast<long>(n));
    const float want = lane_sum(head);
    ctfx::kernels::fold_acc<float> one(ctfx::kernels::fold_op::sum);
    for (float x : head) one.add(x);
    const float by_one = one.result();
    CHECK(std::memcmp(&want, &by_one, 4) == 0);
    for (std::size_t step : {1u, 5u, 31u, 40u, 77u}) {
      CAPTURE(step);
      ctfx::kernels::fold_acc<float> runs(ctfx::kernels::fold_op::sum);
      for (std::size_t at = 0; at < n; at += step) runs.add_run<ctfx::dtype::f32>(head.data() + at, static_cast<ctfx::index_t>(std::min(step, n - at)));
      const float got = runs.result();
      CHECK(std::memcmp(&want, &got, 4) == 0);
      CHECK(runs.count == static_cast<ctfx::index_t>(n));
    }
  }
  // Lanes never hold -0: a sum of negative zeros is +0 (result() skips the lanes no value reached).
  ctfx::kernels::fold_acc<float> z(ctfx::kernels::fold_op::sum);
  const float nz[40] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f,
                        -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f,
                        -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
  z.add_run<ctfx::dtype::f32>(nz, 40);
  CHECK((z.result() == 0.0f && !std::signbit(z.result())));
  // An integer sum wraps, in any order the same.
  ctfx::kernels::fold_acc<std::int64_t> w(ctfx::kernels::fold_op::sum);
  const std::int64_t big[3] = {INT64_MAX, 1, 5};
  w.add_run<ctfx::dtype::i64>(big, 3);
  CHECK(w.result() == INT64_MIN + 5);
}

namespace {
// A dense chain over one run of values: its nest is a single row, which the OMP backend splits.
constexpr long DN = 50001;
constexpr auto dense_chain = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {DN});
  b.output(ctfx::relu(x * 0.5 - 1.0) + x);
});
}  // namespace

TEST_CASE("kernels: a dense group of one row is split across OMP threads, bit-identical to the reference") {
  std::vector<float> x(DN), c(DN), r(DN), want(DN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.07f - 3.0f;
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {DN});
  const ctfx::device_ctx omp{ctfx::backend::omp};
  REQUIRE(ctfx::compiled<decltype(dense_chain)>::run({ctfx::tensor_ref(x.data(), d)}, {ctfx::tensor_ref(c.data(), d)}, omp).ok);
  REQUIRE(ctfx::runtime_plan(dense_chain.get()).run({ctfx::tensor_ref(x.data(), d)}, {ctfx::tensor_ref(r.data(), d)}, omp).ok);
  REQUIRE(ctfx::reference_run(dense_chain.get(), {ctfx::tensor_ref(x.data(), d)}, {ctfx::tensor_ref(want.data(), d)}).ok);
  CHECK(same_bits(c, want));
  CHECK(same_bits(r, want));
}

namespace {
// Folds over a matrix's rows: one row of outputs, whose columns the OMP backend splits.
constexpr long CR = 48, CC = 1003;
constexpr auto column_folds = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CR, CC});
  b.output(x.sum({0}), x.amax({0}), x.mean({0}, true));
});
}  // namespace

TEST_CASE("kernels: folds over a matrix's rows split their columns across OMP threads, bit-identical to the reference") {
  std::vector<float> x(CR * CC);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 1009) * 0.013f - 6.5f + (i % 3 == 0 ? 1e5f : 0.0f);
  x[5] = -0.0f;
  const auto xd = ctfx::tensor_desc::contiguous(ctfx::f32, {CR, CC});
  const auto rd = ctfx::tensor_desc::contiguous(ctfx::f32, {CC}), kd = ctfx::tensor_desc::contiguous(ctfx::f32, {1, CC});
  std::vector<std::vector<float>> got(9, std::vector<float>(CC));
  auto outs = [&](int k) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(got[k].data(), rd), ctfx::tensor_ref(got[k + 1].data(), rd),
                                         ctfx::tensor_ref(got[k + 2].data(), kd)};
  };
  const ctfx::device_ctx omp{ctfx::backend::omp};
  REQUIRE(ctfx::compiled<decltype(column_folds)>::run({ctfx::tensor_ref(x.data(), xd)}, outs(0), omp).ok);
  REQUIRE(ctfx::runtime_plan(column_folds.get()).run({ctfx::tensor_ref(x.data(), xd)}, outs(3), omp).ok);
  REQUIRE(ctfx::reference_run(column_folds.get(), {ctfx::tensor_ref(x.data(), xd)}, outs(6)).ok);
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(same_bits(got[k], got[k + 6]));
    CHECK(same_bits(got[k + 3], got[k + 6]));
  }
}

TEST_CASE("kernels: a select on the bits gives c ? a : b's bits: NaN payloads, -0, integers, bool") {
  auto check_all = [](auto... vs) {
    for (const auto a : {vs...})
      for (const auto b : {vs...})
        for (const bool c : {false, true}) {
          const auto got = ctfx::kernels::select_bits(c, a, b), want = c ? a : b;
          CHECK(std::memcmp(&got, &want, sizeof got) == 0);
        }
  };
  const float nan_payload = std::bit_cast<float>(0x7fc01234u), neg_nan = std::bit_cast<float>(0xffa00001u);
  check_all(0.0f, -0.0f, 1.5f, -std::numeric_limits<float>::infinity(), nan_payload, neg_nan, 1e-45f);
  check_all(0.0, -0.0, std::bit_cast<double>(0x7ff8000000000abcull), -2.5, 5e-324);
  check_all(std::int64_t{0}, std::int64_t{-1}, std::numeric_limits<std::int64_t>::min(), std::int64_t{42});
  check_all(std::int32_t{-7}, std::int32_t{0}, std::numeric_limits<std::int32_t>::max());
  check_all(std::uint8_t{0}, std::uint8_t{1}, std::uint8_t{255});
  check_all(false, true);
}

namespace {
// x[mask] = v by the definition, one element at a time (masked_put_fn), against the host's row loop.
template <ctfx::dtype D, class E>
void masked_put_both_ways(std::vector<E> x, std::vector<std::uint8_t> mask, std::vector<E> v, ctfx::strided xs, ctfx::strided ms,
                          ctfx::strided vs, int dim0, bool accumulate) {
  std::vector<E> want = x;
  ctfx::strided m, vv, xw = xs;
  xw.p = reinterpret_cast<std::byte*>(want.data());
  ms.p = reinterpret_cast<std::byte*>(mask.data());
  vs.p = reinterpret_cast<std::byte*>(v.data());
  ctfx::kernels::masked_put_operands(xw, ms, dim0, vs, m, vv);
  const ctfx::kernels::masked_put_fn<D> one{xw, m, vv, accumulate};
  for (ctfx::index_t i = 0; i < xw.numel(); ++i) one(i);
  xs.p = reinterpret_cast<std::byte*>(x.data());
  ctfx::kernels::masked_put_typed<D>(ctfx::device_ctx{ctfx::backend::host}, xs, ms, dim0, vs, accumulate);
  CHECK(std::memcmp(x.data(), want.data(), x.size() * sizeof(E)) == 0);
}
ctfx::strided view_of(ctfx::dtype dt, std::initializer_list<ctfx::index_t> size, std::initializer_list<ctfx::index_t> stride) {
  ctfx::strided s;
  s.dt = dt;
  s.rank = static_cast<int>(size.size());
  std::copy(size.begin(), size.end(), s.size);
  std::copy(stride.begin(), stride.end(), s.stride);
  return s;
}
}  // namespace

TEST_CASE("kernels: a mask put row by row (whole rows selected, or element by element) equals it element by element") {
  std::uint64_t h = 12345;
  auto next = [&] { h ^= h << 13; h ^= h >> 7; h ^= h << 17; return h; };
  std::vector<float> x(5 * 37), v(37);
  std::vector<std::uint8_t> mask(5 * 37);
  for (float& e : x) e = static_cast<float>(next() % 1000) * 0.01f - 5.0f;
  for (float& e : v) e = static_cast<float>(next() % 1000) * 0.5f;
  for (auto& e : mask) e = static_cast<std::uint8_t>(next() & 1);
  x[3] = std::bit_cast<float>(0x7fc01234u);  // a NaN payload kept where the mask is false
  mask[3] = 0;
  const auto xs = view_of(ctfx::dtype::f32, {5, 37}, {37, 1}), ms = view_of(ctfx::dtype::b8, {5, 37}, {37, 1});
  for (const bool acc : {false, true}) {
    masked_put_both_ways<ctfx::dtype::f32>(x, mask, {v[0]}, xs, ms, view_of(ctfx::dtype::f32, {1}, {1}), 0, acc);  // one value
    // values along the row (v [37] over the selected shape [1, 37])
    masked_put_both_ways<ctfx::dtype::f32>(x, std::vector<std::uint8_t>(mask.begin(), mask.begin() + 5), v, xs,
                                           view_of(ctfx::dtype::b8, {5}, {1}), view_of(ctfx::dtype::f32, {1, 37}, {37, 1}), 0, acc);
    masked_put_both_ways<ctfx::dtype::f32>(x, mask, v, xs, ms, view_of(ctfx::dtype::f32, {37}, {1}), 0, acc);  // v per column
    // x transposed in memory (its rows strided): element by element
    masked_put_both_ways<ctfx::dtype::f32>(x, mask, {v[1]}, view_of(ctfx::dtype::f32, {37, 5}, {1, 37}), view_of(ctfx::dtype::b8, {37, 5}, {5, 1}),
                                           view_of(ctfx::dtype::f32, {1}, {1}), 0, acc);
  }
  // float16 accumulate: each sum rounds to half
  std::vector<ctfx::half_t> hx(4 * 8), hv(8);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = ctfx::half_t(static_cast<float>(i) * 1000.5f);
  for (std::size_t i = 0; i < hv.size(); ++i) hv[i] = ctfx::half_t(static_cast<float>(i) * 0.3f + 60000.0f);
  masked_put_both_ways<ctfx::dtype::f16>(hx, std::vector<std::uint8_t>(mask.begin(), mask.begin() + 32), hv, view_of(ctfx::dtype::f16, {4, 8}, {8, 1}),
                                         view_of(ctfx::dtype::b8, {4, 8}, {8, 1}), view_of(ctfx::dtype::f16, {8}, {1}), 0, true);
}

TEST_CASE("kernels: no_internal_overlap tells layouts whose elements share memory") {
  using ctfx::kernels::no_internal_overlap;
  CHECK(no_internal_overlap(view_of(ctfx::dtype::f32, {4, 5}, {5, 1})));
  CHECK(no_internal_overlap(view_of(ctfx::dtype::f32, {4, 5}, {1, 4})));    // transposed
  CHECK(no_internal_overlap(view_of(ctfx::dtype::f32, {4, 5}, {10, 2})));   // every other element
  CHECK(no_internal_overlap(view_of(ctfx::dtype::f32, {1, 5}, {0, 1})));    // an extent-1 dimension's stride is moot
  CHECK(no_internal_overlap(view_of(ctfx::dtype::f32, {4, 5}, {-5, 1})));   // flipped rows
  CHECK_FALSE(no_internal_overlap(view_of(ctfx::dtype::f32, {4, 5}, {0, 1})));  // expanded rows
  CHECK_FALSE(no_internal_overlap(view_of(ctfx::dtype::f32, {3, 3}, {2, 1})));  // rows overlap by one element
  CHECK_FALSE(no_internal_overlap(view_of(ctfx::dtype::f32, {3, 4}, {1, 2})));  // interleaved
}

namespace {
// A masked fill written as where, in place: one fused group whose select is on the bits.
constexpr long WR = 3, WC = 67;
constexpr auto where_fill = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {WR, WC});
  auto m = b.input("m", ctfx::f32, {WR, WC});
  auto v = b.input("v", ctfx::f32, {1});
  b.update(x, ctfx::where(ctfx::gt(m, 0.5), v, x));
});
}  // namespace

TEST_CASE("kernels: a fused where selects the bits the reference's where selects, in place, both executors") {
  std::vector<float> x(WR * WC), m(WR * WC);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 5 == 0 ? std::bit_cast<float>(0x7fc00000u + static_cast<std::uint32_t>(i)) : (i % 7 == 0 ? -0.0f : static_cast<float>(i) * 0.25f);
    m[i] = i % 11 == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 37) % 101) * 0.01f;  // NaN > 0.5 is false
  }
  const std::vector<float> v{std::bit_cast<float>(0xffc00abcu)};
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {WR, WC});
  const auto dv = ctfx::tensor_desc::contiguous(ctfx::f32, {1});
  std::vector<float> c = x, r = x, want = x;
  using plan = ctfx::compiled<decltype(where_fill)>;
  static_assert(plan::run_plan.usable, "where_fill runs as a static plan");
  REQUIRE(plan::run({ctfx::tensor_ref(c.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(const_cast<float*>(v.data()), dv)}, {}).ok);
  REQUIRE(ctfx::runtime_plan(where_fill.get())
              .run({ctfx::tensor_ref(r.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(const_cast<float*>(v.data()), dv)}, {}, ctfx::backend::host)
              .ok);
  REQUIRE(ctfx::reference_run(where_fill.get(), {ctfx::tensor_ref(want.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(const_cast<float*>(v.data()), dv)}, {})
              .ok);
  CHECK(same_bits(c, want));
  CHECK(same_bits(r, want));
  std::size_t filled = 0;  // and by hand: v's bits where m > 0.5, x's own elsewhere
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float e = m[i] > 0.5f ? v[0] : x[i];
    filled += m[i] > 0.5f;
    CHECK(std::bit_cast<std::uint32_t>(want[i]) == std::bit_cast<std::uint32_t>(e));
  }
  CHECK(filled > 50);
  CHECK(filled < x.size() - 50);
}

namespace {
// A select by a comparison of two tensors (runtime_plan runs the comparison inside the select's loop).
constexpr auto where_less = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {WR, WC});
  auto m = b.input("m", ctfx::f32, {WR, WC});
  b.output(ctfx::where(ctfx::lt(x, m), m * 2.0, x) + 1.0);
});
}  // namespace

TEST_CASE("kernels: a select by a comparison of two tensors, computed in one loop, equals the reference") {
  std::vector<float> x(WR * WC), m(WR * WC);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 9 == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 53) % 97) * 0.1f - 4.0f;
    m[i] = i % 13 == 0 ? -std::numeric_limits<float>::infinity() : static_cast<float>((i * 29) % 89) * 0.1f - 4.0f;
  }
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {WR, WC});
  std::vector<float> c(x.size()), r(x.size()), want(x.size());
  REQUIRE(ctfx::compiled<decltype(where_less)>::run({ctfx::tensor_ref(x.data(), d), ctfx::tensor_ref(m.data(), d)}, {ctfx::tensor_ref(c.data(), d)}).ok);
  REQUIRE(ctfx::runtime_plan(where_less.get()).run({ctfx::tensor_ref(x.data(), d), ctfx::tensor_ref(m.data(), d)}, {ctfx::tensor_ref(r.data(), d)}, ctfx::backend::host).ok);
  REQUIRE(ctfx::reference_run(where_less.get(), {ctfx::tensor_ref(x.data(), d), ctfx::tensor_ref(m.data(), d)}, {ctfx::tensor_ref(want.data(), d)}).ok);
  CHECK(same_bits(c, want));
  CHECK(same_bits(r, want));
}

namespace {
// Buffer of n elements of dtype D with values from a seeded sequence (some negative, some NaN for
// floating types).
template <ctfx::dtype D>
std::vector<std::byte> filled(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> b(n * ctfx::size_of(D));
  for (std::size_t i = 0; i < n; ++i) {
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    double v = static_cast<double>(seed % 20001) * 0.0137 - 137.0;
    if (ctfx::is_floating(D) && seed % 97 == 0) v = std::nan("");
    ctfx::store_as<D, double>(b.data() + i * ctfx::size_of(D), v);
  }
  return b;
}

// out = a K b (or a K scalar) as a group of one op (binary_op_typed, binary_op; host and OMP)
// against binary_fn, the element-by-element kernel the reference runs: the same bytes.
template <ctfx::op_kind K, ctfx::dtype O, ctfx::dtype A, ctfx::dtype B, bool Scalar>
void binary_both_ways(ctfx::strided out, ctfx::strided a, ctfx::strided b, std::size_t out_n, std::size_t a_n, std::size_t b_n) {
  const double scalar = 0.37;
  auto va = filled<A>(a_n, 7), vb = filled<B>(b_n, 11);
  a.p = va.data();
  b.p = vb.data();
  auto expect = filled<O>(out_n, 3);
  ctfx::kernels::binary_fn<O, ctfx::static_op<K>> fn{};
  fn.out = out;
  fn.out.p = expect.data();
  fn.a = a.broadcast_to(out.rank, out.size);
  if (Scalar) { fn.has_scalar = true; fn.scalar = scalar; }
  else fn.b = b.broadcast_to(out.rank, out.size);
  ctfx::parallel_for(ctfx::device_ctx{}, out.numel(), fn);
  const ctfx::dtype bdt = B;
  for (const auto where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (const bool typed : {true, false}) {
      auto got = filled<O>(out_n, 3);  // the elements out does not cover keep their bytes
      out.p = got.data();
      const auto o = typed ? ctfx::kernels::binary_op_typed<K, O, A, B, Scalar>(scalar)
                           : ctfx::kernels::binary_op(K, O, A, Scalar ? nullptr : &bdt, scalar);
      ctfx::kernels::run_binary(ctfx::device_ctx{where}, o, out, a, Scalar ? nullptr : &b);
      CAPTURE(typed);
      CHECK(got == expect);
    }
  }
}
}  // namespace

TEST_CASE("kernels: a binary op outside any group (a list op's element) runs as a group of one op, the reference's bytes") {
  using ctfx::dtype;
  using ctfx::op_kind;
  // out [7, 300] contiguous, a stored transposed, b a row broadcast down the columns
  binary_both_ways<op_kind::add, dtype::f32, dtype::f32, dtype::f32, false>(
      view_of(dtype::f32, {7, 300}, {300, 1}), view_of(dtype::f32, {7, 300}, {1, 7}), view_of(dtype::f32, {300}, {1}), 2100, 2100, 300);
  // half by a scalar: each product rounds to half; out strided (every other column)
  binary_both_ways<op_kind::mul, dtype::f16, dtype::f16, dtype::f16, true>(
      view_of(dtype::f16, {7, 300}, {600, 2}), view_of(dtype::f16, {7, 300}, {300, 1}), view_of(dtype::f16, {1}, {1}), 4200, 2100, 1);
  // mixed dtypes: i32 + f32 into f32; i32 * i64 into i64 (wraps)
  binary_both_ways<op_kind::add, dtype::f32, dtype::i32, dtype::f32, false>(
      view_of(dtype::f32, {9000}, {1}), view_of(dtype::i32, {9000}, {1}), view_of(dtype::f32, {9000}, {1}), 9000, 9000, 9000);
  binary_both_ways<op_kind::mul, dtype::i64, dtype::i32, dtype::i64, false>(
      view_of(dtype::i64, {30, 31}, {31, 1}), view_of(dtype::i32, {30, 31}, {31, 1}), view_of(dtype::i64, {30, 1}, {1, 1}), 930, 930, 30);
}

TEST_CASE("kernels: a strided copy walks its rows from any element, and OMP's split of a large one gives the host's values") {
  // out: a [301, 257] view of a [301, 514] f32 buffer (every other column: no unit-stride rows);
  // src: a [257] f16 row broadcast over the rows (stride 0), and a [301, 257] transposed f64 block.
  // 77,357 elements: OMP splits them into ranges that start and end inside rows.
  constexpr ctfx::index_t R = 301, C = 257;
  auto view = [](void* p, ctfx::dtype dt, ctfx::index_t s0, ctfx::index_t s1) {
    ctfx::strided v;
    v.p = static_cast<std::byte*>(p);
    v.dt = dt;
    v.rank = 2;
    v.size[0] = R;
    v.size[1] = C;
    v.stride[0] = s0;
    v.stride[1] = s1;
    return v;
  };
  std::vector<ctfx::half_t> row(C);
  for (ctfx::index_t j = 0; j < C; ++j) row[static_cast<std::size_t>(j)] = ctfx::half_t(static_cast<float>(j % 17) * 0.25f - 2.0f);
  std::vector<double> block(R * C);
  for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<double>((i * 37) % 101) * 0.01 - 0.5;
  for (const ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> a(R * 2 * C, -7.0f), b(R * 2 * C, -7.0f);
    ctfx::kernels::copy_typed<ctfx::dtype::f16, ctfx::dtype::f32>(ctfx::device_ctx{where}, view(a.data(), ctfx::dtype::f32, 2 * C, 2),
                                                                  view(row.data(), ctfx::dtype::f16, 0, 1));
    ctfx::kernels::copy_typed<ctfx::dtype::f64, ctfx::dtype::f32>(ctfx::device_ctx{where}, view(b.data() + 1, ctfx::dtype::f32, 2 * C, 2),
                                                                  view(block.data(), ctfx::dtype::f64, 1, R));
    int wrong = 0;
    for (ctfx::index_t i = 0; i < R; ++i)
      for (ctfx::index_t j = 0; j < 2 * C; ++j) {
        const auto k = static_cast<std::size_t>(i * 2 * C + j);
        const float want_a = j % 2 == 0 ? static_cast<float>(row[static_cast<std::size_t>(j / 2)]) : -7.0f;
        const float want_b = j % 2 == 1 ? static_cast<float>(block[static_cast<std::size_t>((j / 2) * R + i)]) : -7.0f;
        wrong += a[k] != want_a || b[k] != want_b;
      }
    CHECK(wrong == 0);
  }
}

// Every elementwise op run by the executor against the scalar function that defines it
// (kernels/pointwise.hpp: unary_value, binary_value), bit for bit, on the values where
// implementations part ways: NaN of either sign, +-inf, +-0, subnormals, the largest and smallest
// finite values, integer extremes. The inputs are repeated past a vector's width so that the
// vectorized loops and their tails both see each value.
namespace sweep {
template <class T>
std::vector<T> specials() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_integral_v<T>) {
    return {0, 1, -1, 2, -3, 7, 63, 64, L::max(), L::min(), static_cast<T>(L::min() + 1), static_cast<T>(L::max() - 1)};
  } else {
    return {T(0), -T(0), T(1), T(-1), T(0.5), T(-2.5), T(3), L::infinity(), -L::infinity(), L::quiet_NaN(),
            -L::quiet_NaN(), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), L::lowest()};
  }
}
template <class T>
constexpr ctfx::dtype dtype_of() {
  return std::is_same_v<T, float> ? ctfx::f32 : std::is_same_v<T, double> ? ctfx::f64 : ctfx::i64;
}
template <class T>
std::vector<T> repeated(const std::vector<T>& v, std::size_t n) {
  std::vector<T> r(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = v[i % v.size()];
  return r;
}
template <class T>
bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }
template <class T>
std::string show(T v) {
  if constexpr (std::is_integral_v<T>) return std::to_string(v);
  else return (std::signbit(v) ? "-" : "+") + std::to_string(std::fabs(v));
}

// op(x) through runtime_plan against unary_value<T>(k, x).
template <class T>
void unary(ctfx::op_kind k, ctfx::tensor (*op)(ctfx::tensor)) {
  const std::vector<T> s = specials<T>();
  const std::int64_t n = static_cast<std::int64_t>(3 * s.size() + 5);
  auto g = ctfx::build_checked([&](ctfx::builder& b) { b.output(op(b.input("x", dtype_of<T>(), {n}))); });
  std::vector<T> x = repeated(s, static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), dtype_of<T>(), {n})};
  std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(y.data(), dtype_of<T>(), {n})};
  REQUIRE(ctfx::runtime_plan(g).run(in, out).ok);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T want = ctfx::kernels::unary_value<T>(k, x[i]);
    INFO(ctfx::name_of(k), "(", show(x[i]), ") at ", i, ": kernel ", show(y[i]), ", scalar function ", show(want));
    CHECK(same_bits(y[i], want));
  }
}

// op(a, b) on every pair of special values through runtime_plan against binary_value<T>(k, a, b);
// a comparison's bool result against the scalar function's 0 or 1.
template <class T>
void binary(ctfx::op_kind k, ctfx::tensor (*op)(ctfx::tensor, ctfx::tensor)) {
  const std::vector<T> s = specials<T>();
  const std::int64_t n = static_cast<std::int64_t>(s.size() * s.size());
  std::vector<T> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < s.size(); ++i)
    for (std::size_t j = 0; j < s.size(); ++j) { a[i * s.size() + j] = s[i]; b[i * s.size() + j] = s[j]; }
  const bool predicate = ctfx::yields_bool(k);
  auto g = ctfx::build_checked([&](ctfx::builder& bb) {
    auto x = bb.input("a", dtype_of<T>(), {n});  // (declared in order: the plan's inputs are a, b)
    bb.output(op(x, bb.input("b", dtype_of<T>(), {n})));
  });
  std::vector<T> y(static_cast<std::size_t>(n));
  std::vector<std::uint8_t> yb(static_cast<std::size_t>(n));
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(a.data(), dtype_of<T>(), {n}),
                                      ctfx::tensor_ref::contiguous(b.data(), dtype_of<T>(), {n})};
  std::vector<ctfx::tensor_ref> out = {predicate ? ctfx::tensor_ref::contiguous(yb.data(), ctfx::b8, {n})
                                                 : ctfx::tensor_ref::contiguous(y.data(), dtype_of<T>(), {n})};
  REQUIRE(ctfx::runtime_plan(g).run(in, out).ok);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const T want = ctfx::kernels::binary_value<T>(k, a[i], b[i]);
    const T got = predicate ? T(yb[i]) : y[i];
    INFO(ctfx::name_of(k), "(", show(a[i]), ", ", show(b[i]), "): kernel ", show(got), ", scalar function ", show(want));
    // Where both operands are NaN, which one comes out IEEE 754 leaves open (x86 gives the first
    // operand's, and a compiler may swap an add's or a mul's operands): a NaN, of either sign.
    if (!predicate && a[i] != a[i] && b[i] != b[i]) CHECK(got != got);
    else CHECK(same_bits(got, want));
  }
}
}  // namespace sweep

TEST_CASE("kernels: every unary op on special values gives its scalar function's bits, f32, f64 and i64") {
  using ctfx::op_kind;
  using ctfx::tensor;
  struct entry { op_kind k; tensor (*op)(tensor); bool integers; };
  const entry ops[] = {
      {op_kind::neg, [](tensor t) { return ctfx::neg(t); }, true},
      {op_kind::abs, [](tensor t) { return ctfx::abs(t); }, true},
      {op_kind::exp, [](tensor t) { return ctfx::exp(t); }, false},
      {op_kind::exp2, [](tensor t) { return ctfx::exp2(t); }, false},
      {op_kind::log, [](tensor t) { return ctfx::log(t); }, false},
      {op_kind::log2, [](tensor t) { return ctfx::log2(t); }, false},
      {op_kind::log10, [](tensor t) { return ctfx::log10(t); }, false},
      {op_kind::sin, [](tensor t) { return ctfx::sin(t); }, false},
      {op_kind::cos, [](tensor t) { return ctfx::cos(t); }, false},
      {op_kind::sqrt, [](tensor t) { return ctfx::sqrt(t); }, false},
      {op_kind::relu, [](tensor t) { return ctfx::relu(t); }, true},
      {op_kind::ceil, [](tensor t) { return ctfx::ceil(t); }, true},
      {op_kind::floor, [](tensor t) { return ctfx::floor(t); }, true},
      {op_kind::round, [](tensor t) { return ctfx::round(t); }, true},
      {op_kind::trunc, [](tensor t) { return ctfx::trunc(t); }, true},
      {op_kind::tanh, [](tensor t) { return ctfx::tanh(t); }, false},
      {op_kind::erf, [](tensor t) { return ctfx::erf(t); }, false},
      {op_kind::log1p, [](tensor t) { return ctfx::log1p(t); }, false},
      {op_kind::expm1, [](tensor t) { return ctfx::expm1(t); }, false},
      {op_kind::sigmoid, [](tensor t) { return ctfx::sigmoid(t); }, false},
      {op_kind::rsqrt, [](tensor t) { return ctfx::rsqrt(t); }, false},
      {op_kind::sign, [](tensor t) { return ctfx::sign(t); }, true},
  };
  // Every unary op is swept (convert and logical_not change the dtype: their own tests;
  // bitwise_not takes integers only).
  for (int k = static_cast<int>(op_kind::neg); k <= static_cast<int>(op_kind::logical_not); ++k) {
    const auto kind = static_cast<op_kind>(k);
    const bool listed = std::any_of(std::begin(ops), std::end(ops), [&](const entry& e) { return e.k == kind; });
    CHECK_MESSAGE((listed || kind == op_kind::convert || kind == op_kind::logical_not || kind == op_kind::bitwise_not),
                  ctfx::facts(kind).name);
  }
  for (const entry& e : ops) {
    sweep::unary<float>(e.k, e.op);
    sweep::unary<double>(e.k, e.op);
    if (e.integers) sweep::unary<std::int64_t>(e.k, e.op);
  }
  sweep::unary<std::int64_t>(op_kind::bitwise_not, [](tensor t) { return ctfx::bitwise_not(t); });
}

TEST_CASE("kernels: every binary op on pairs of special values gives its scalar function's bits, f32, f64 and i64") {
  using ctfx::op_kind;
  using ctfx::tensor;
  struct entry { op_kind k; tensor (*op)(tensor, tensor); bool integers; };
  const entry ops[] = {
      {op_kind::add, [](tensor a, tensor b) { return a + b; }, true},
      {op_kind::sub, [](tensor a, tensor b) { return a - b; }, true},
      {op_kind::mul, [](tensor a, tensor b) { return a * b; }, true},
      {op_kind::div, [](tensor a, tensor b) { return a / b; }, false},  // integers divide in f32
      {op_kind::maximum, [](tensor a, tensor b) { return ctfx::maximum(a, b); }, true},
      {op_kind::minimum, [](tensor a, tensor b) { return ctfx::minimum(a, b); }, true},
      {op_kind::pow, [](tensor a, tensor b) { return ctfx::pow(a, b); }, true},
      {op_kind::remainder, [](tensor a, tensor b) { return ctfx::remainder(a, b); }, true},
      {op_kind::fmod, [](tensor a, tensor b) { return ctfx::fmod(a, b); }, true},
      {op_kind::hypot, [](tensor a, tensor b) { return ctfx::hypot(a, b); }, false},  // floats only
      {op_kind::atan2, [](tensor a, tensor b) { return ctfx::atan2(a, b); }, false},  // integers in f32
      {op_kind::floor_divide, [](tensor a, tensor b) { return ctfx::floor_divide(a, b); }, true},
      {op_kind::trunc_divide, [](tensor a, tensor b) { return ctfx::trunc_divide(a, b); }, true},
      {op_kind::eq, [](tensor a, tensor b) { return ctfx::eq(a, b); }, true},
      {op_kind::ne, [](tensor a, tensor b) { return ctfx::ne(a, b); }, true},
      {op_kind::lt, [](tensor a, tensor b) { return ctfx::lt(a, b); }, true},
      {op_kind::le, [](tensor a, tensor b) { return ctfx::le(a, b); }, true},
      {op_kind::gt, [](tensor a, tensor b) { return ctfx::gt(a, b); }, true},
      {op_kind::ge, [](tensor a, tensor b) { return ctfx::ge(a, b); }, true},
      {op_kind::logical_and, [](tensor a, tensor b) { return ctfx::logical_and(a, b); }, true},
      {op_kind::logical_or, [](tensor a, tensor b) { return ctfx::logical_or(a, b); }, true},
  };
  // The bitwise ops take integers only.
  const entry integer_ops[] = {
      {op_kind::bitwise_and, [](tensor a, tensor b) { return ctfx::bitwise_and(a, b); }, true},
      {op_kind::bitwise_or, [](tensor a, tensor b) { return ctfx::bitwise_or(a, b); }, true},
      {op_kind::bitwise_xor, [](tensor a, tensor b) { return ctfx::bitwise_xor(a, b); }, true},
      {op_kind::bitwise_left_shift, [](tensor a, tensor b) { return ctfx::bitwise_left_shift(a, b); }, true},
      {op_kind::bitwise_right_shift, [](tensor a, tensor b) { return ctfx::bitwise_right_shift(a, b); }, true},
  };
  // Every binary op but the in-place twins (their functional forms' arithmetic) is swept.
  for (int k = static_cast<int>(op_kind::add); k <= static_cast<int>(op_kind::logical_or); ++k) {
    const auto kind = static_cast<op_kind>(k);
    auto has = [&](const entry& e) { return e.k == kind; };
    const bool listed = std::any_of(std::begin(ops), std::end(ops), has) ||
                        std::any_of(std::begin(integer_ops), std::end(integer_ops), has);
    CHECK_MESSAGE((listed || ctfx::is_mutating(kind) || kind == op_kind::clamp_min || kind == op_kind::clamp_max),
                  ctfx::facts(kind).name);
  }
  for (const entry& e : ops) {
    sweep::binary<float>(e.k, e.op);
    sweep::binary<double>(e.k, e.op);
    if (e.integers) sweep::binary<std::int64_t>(e.k, e.op);
  }
  for (const entry& e : integer_ops) sweep::binary<std::int64_t>(e.k, e.op);
}

// The narrow integer dtypes compute in int64 and store truncated: the bits PyTorch's i8 and i32
// kernels give, shifts by counts out of range included (values from torch 2.x eager).
TEST_CASE("kernels: bitwise ops and shifts on i8 and i32 give PyTorch's values") {
  using ctfx::tensor;
  auto run_i8 = [](tensor (*op)(tensor, tensor), std::vector<std::int8_t> a, std::vector<std::int8_t> b) {
    const auto n = static_cast<std::int64_t>(a.size());
    auto g = ctfx::build_checked([&](ctfx::builder& bb) {
      auto x = bb.input("a", ctfx::i8, {n});
      bb.output(op(x, bb.input("b", ctfx::i8, {n})));
    });
    std::vector<std::int8_t> y(a.size());
    std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(a.data(), ctfx::i8, {n}),
                                        ctfx::tensor_ref::contiguous(b.data(), ctfx::i8, {n})};
    std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(y.data(), ctfx::i8, {n})};
    REQUIRE(ctfx::runtime_plan(g).run(in, out).ok);
    return y;
  };
  const std::vector<std::int8_t> a = {-128, -1, 5, 127};
  // x << 7: the low 8 bits; x << -1 and x << 8 are 0; x >> 9 and x >> -1 are the sign
  CHECK(run_i8([](tensor x, tensor y) { return ctfx::bitwise_left_shift(x, y); }, a, {7, 7, 7, 7}) ==
        std::vector<std::int8_t>{0, -128, -128, -128});
  CHECK(run_i8([](tensor x, tensor y) { return ctfx::bitwise_left_shift(x, y); }, a, {-1, 8, 100, -128}) ==
        std::vector<std::int8_t>{0, 0, 0, 0});
  CHECK(run_i8([](tensor x, tensor y) { return ctfx::bitwise_right_shift(x, y); }, a, {9, -1, 9, 7}) ==
        std::vector<std::int8_t>{-1, -1, 0, 0});
  CHECK(run_i8([](tensor x, tensor y) { return ctfx::bitwise_right_shift(x, y); }, a, {1, 1, 1, 6}) ==
        std::vector<std::int8_t>{-64, -1, 2, 1});
  CHECK(run_i8([](tensor x, tensor y) { return ctfx::bitwise_xor(x, y); }, a, {-1, -1, 3, -128}) ==
        std::vector<std::int8_t>{127, 0, 6, -1});
  // A number operand wraps to the tensor's dtype first: i8 << 256 is i8 << 0 (PyTorch: x itself).
  auto g = ctfx::build_checked([&](ctfx::builder& bb) {
    auto x = bb.input("a", ctfx::i8, {4});
    bb.output(ctfx::bitwise_left_shift(x, 256), ctfx::bitwise_right_shift(x, 256), ctfx::bitwise_not(x));
  });
  std::vector<std::int8_t> x = a, l(4), r(4), nt(4);
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::i8, {4})};
  std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(l.data(), ctfx::i8, {4}),
                                       ctfx::tensor_ref::contiguous(r.data(), ctfx::i8, {4}),
                                       ctfx::tensor_ref::contiguous(nt.data(), ctfx::i8, {4})};
  REQUIRE(ctfx::runtime_plan(g).run(in, out).ok);
  CHECK(l == a);
  CHECK(r == a);
  CHECK(nt == std::vector<std::int8_t>{127, 0, -6, -128});
  // i32 << 40 is 0 (PyTorch: counts at least 32 give 0); i32 >> 40 the sign
  auto g32 = ctfx::build_checked([&](ctfx::builder& bb) {
    auto v = bb.input("a", ctfx::i32, {2});
    bb.output(ctfx::bitwise_left_shift(v, 40), ctfx::bitwise_right_shift(v, 40), ctfx::bitwise_left_shift(v, 31));
  });
  std::vector<std::int32_t> v = {3, -3}, l32(2), r32(2), m32(2);
  std::vector<ctfx::tensor_ref> in32 = {ctfx::tensor_ref::contiguous(v.data(), ctfx::i32, {2})};
  std::vector<ctfx::tensor_ref> out32 = {ctfx::tensor_ref::contiguous(l32.data(), ctfx::i32, {2}),
                                         ctfx::tensor_ref::contiguous(r32.data(), ctfx::i32, {2}),
                                         ctfx::tensor_ref::contiguous(m32.data(), ctfx::i32, {2})};
  REQUIRE(ctfx::runtime_plan(g32).run(in32, out32).ok);
  CHECK(l32 == std::vector<std::int32_t>{0, 0});
  CHECK(r32 == std::vector<std::int32_t>{0, -1});
  CHECK(m32 == std::vector<std::int32_t>{INT32_MIN, INT32_MIN});
}

TEST_CASE("kernels: bitwise ops refuse floats, shifts refuse bools, hypot refuses integers") {
  auto refused = [](auto&& body) {
    ctfx::builder b;
    body(b);
    return !b.g.error.ok() && b.g.error.r == ctfx::rule::dtype_mismatch;
  };
  CHECK(refused([](ctfx::builder& b) { (void)ctfx::bitwise_and(b.input("x", ctfx::f32, {2}), 1); }));
  CHECK(refused([](ctfx::builder& b) { (void)ctfx::bitwise_not(b.input("x", ctfx::f64, {2})); }));
  CHECK(refused([](ctfx::builder& b) { (void)ctfx::bitwise_left_shift(b.input("x", ctfx::b8, {2}), b.input("y", ctfx::b8, {2})); }));
  CHECK(refused([](ctfx::builder& b) { (void)ctfx::hypot(b.input("x", ctfx::i32, {2}), b.input("y", ctfx::i32, {2})); }));
  // bools: and, or, xor are the logical ops' values; ~ is logical_not
  ctfx::builder b;
  const ctfx::tensor m = b.input("m", ctfx::b8, {2});
  CHECK(ctfx::bitwise_not(m).meta().dt == ctfx::b8);
  CHECK(b.g[ctfx::bitwise_not(m).id].op == ctfx::op_kind::logical_not);
  CHECK(ctfx::bitwise_xor(m, m).meta().dt == ctfx::b8);
  CHECK(b.g.error.ok());
}
