// gather, scatter and scatter_add (builder side): values against plain loops written here as
// PyTorch's CPU kernels define them (duplicates applied in the index's row-major order), on
// compiled<G>, the run-time plan (host and omp) and the functional reference; an index out of
// range or negative refused before any write into a caller's buffer; the functional scatter
// reinplaced into scatter_ for ctfx's executors; shapes PyTorch rejects refused when built.
#include <doctest/doctest.h>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

using ctfx::tensor_ref;

// out = gather(x.t(), 1, i) (a strided x: [4, 3] seen as [3, 4]); y = gather(x, 0, j) + 0.5
constexpr auto gather_graph = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4, 3});
  auto i = g.input("i", ctfx::i64, {3, 2});
  auto j = g.input("j", ctfx::i64, {2, 3});
  g.output(ctfx::gather(x.transpose(0, 1), 1, i), ctfx::gather(x, -2, j) + 0.5);
});

// x ends up holding scatter_add(x, 1, i, s) (reinplaced: scatter_ with add); out = scatter(z, 0, k, s)
constexpr auto scatter_graph = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {2, 3});
  auto i = g.input("i", ctfx::i64, {2, 4});
  auto s = g.input("s", ctfx::f32, {2, 5});
  auto z = g.input("z", ctfx::f32, {3, 5});
  auto k = g.input("k", ctfx::i64, {2, 4});
  g.update(x, ctfx::scatter_add(x, 1, i, s));
  g.output(ctfx::scatter(z, 0, k, s), ctfx::scatter(z, 1, k, 9.25));
});

template <class G>
ctfx::run_status run_how(int how, const G& g, std::span<const tensor_ref> in, std::span<const tensor_ref> out) {
  switch (how) {
    case 0: return ctfx::compiled<G>::run(in, out);
    case 1: return ctfx::runtime_plan(g.get()).run(in, out);
    case 2: return ctfx::runtime_plan(g.get()).run(in, out, ctfx::device_ctx{ctfx::backend::omp});
    default: return ctfx::reference_run(g.get(), in, out);
  }
}

}  // namespace

TEST_CASE("gather: a strided input along dims 1 and -2 equals the loop over the index") {
  std::vector<float> x(12);
  for (std::size_t k = 0; k < 12; ++k) x[k] = static_cast<float>(k) * 1.5f - 4.0f;
  std::vector<std::int64_t> i = {3, 0, 1, 1, 2, 3}, j = {3, 0, 2, 1, 1, 0};
  std::vector<float> want_a(6), want_b(6);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) want_a[static_cast<std::size_t>(r * 2 + c)] = x[static_cast<std::size_t>(i[static_cast<std::size_t>(r * 2 + c)] * 3 + r)];  // x.t()[r][i]
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) want_b[static_cast<std::size_t>(r * 3 + c)] = x[static_cast<std::size_t>(j[static_cast<std::size_t>(r * 3 + c)] * 3 + c)] + 0.5f;
  for (int how = 0; how < 4; ++how) {
    std::vector<float> a(6, -1.0f), b(6, -1.0f);
    const std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {4, 3}), tensor_ref::contiguous(i.data(), ctfx::i64, {3, 2}),
                                        tensor_ref::contiguous(j.data(), ctfx::i64, {2, 3})};
    const std::vector<tensor_ref> out = {tensor_ref::contiguous(a.data(), ctfx::f32, {3, 2}), tensor_ref::contiguous(b.data(), ctfx::f32, {2, 3})};
    const auto st = run_how(how, gather_graph, in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(a == want_a);
    CHECK(b == want_b);
  }
}

TEST_CASE("gather: a negative or too large index is refused naming the node and the rule, nothing written") {
  std::vector<float> x(12, 1.0f);
  for (const std::int64_t bad : {-1LL, 4LL}) {
    for (int how = 0; how < 4; ++how) {
      std::vector<std::int64_t> i = {0, 1, 2, 3, bad, 0}, j = {0, 0, 0, 0, 0, 0};
      std::vector<float> a(6, -1.0f), b(6, -1.0f);
      const std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {4, 3}), tensor_ref::contiguous(i.data(), ctfx::i64, {3, 2}),
                                          tensor_ref::contiguous(j.data(), ctfx::i64, {2, 3})};
      const std::vector<tensor_ref> out = {tensor_ref::contiguous(a.data(), ctfx::f32, {3, 2}), tensor_ref::contiguous(b.data(), ctfx::f32, {2, 3})};
      const auto st = run_how(how, gather_graph, in, out);
      REQUIRE_FALSE(st.ok);
      CHECK_MESSAGE(st.message.find("rule index-in-range") != std::string::npos, st.message);
      CHECK_MESSAGE(st.message.find("index " + std::to_string(bad) + " ") != std::string::npos, st.message);
      CHECK(a == std::vector<float>(6, -1.0f));
      CHECK(b == std::vector<float>(6, -1.0f));
    }
  }
}

TEST_CASE("scatter_add adds duplicates in the index's order, scatter keeps the last, both on every executor") {
  // Row 0 sends 1e8, 1, -1e8 and 0.25 to column 2: (((x + 1e8) + 1) - 1e8) + 0.25 in float is
  // 0.25 + x's 0.5 rounded as that sequence rounds (another order gives another value).
  std::vector<float> x0 = {0.5f, 1.0f, 0.5f, -2.0f, 3.0f, 4.0f};
  std::vector<std::int64_t> i = {2, 2, 2, 2, 0, 1, 0, 0};
  std::vector<float> s = {1e8f, 1.0f, -1e8f, 0.25f, 99.0f, 7.0f, -3.0f, 0.125f, 11.0f, 12.0f};  // [2, 5], read at [2, 4]
  std::vector<std::int64_t> k = {1, 1, 2, 0, 1, 2, 2, 0};
  std::vector<float> want_x = x0, want_o(15), want_v(15);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) {
      float& d = want_x[static_cast<std::size_t>(r * 3 + i[static_cast<std::size_t>(r * 4 + c)])];
      d = d + s[static_cast<std::size_t>(r * 5 + c)];
    }
  for (std::size_t e = 0; e < 15; ++e) want_o[e] = want_v[e] = static_cast<float>(e) * 0.5f;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 4; ++c) {
      const auto kv = k[static_cast<std::size_t>(r * 4 + c)];
      want_o[static_cast<std::size_t>(kv * 5 + c)] = s[static_cast<std::size_t>(r * 5 + c)];  // the last write wins
      want_v[static_cast<std::size_t>(r * 5 + kv)] = 9.25f;
    }
  CHECK(want_x[2] != 0.5f + (1e8f - 1e8f) + 1.0f + 0.25f);  // the order matters for these values
  for (int how = 0; how < 4; ++how) {
    std::vector<float> x = x0, z(15), o(15, -1.0f), v(15, -1.0f);
    for (std::size_t e = 0; e < 15; ++e) z[e] = static_cast<float>(e) * 0.5f;
    const std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3}), tensor_ref::contiguous(i.data(), ctfx::i64, {2, 4}),
                                        tensor_ref::contiguous(s.data(), ctfx::f32, {2, 5}), tensor_ref::contiguous(z.data(), ctfx::f32, {3, 5}),
                                        tensor_ref::contiguous(k.data(), ctfx::i64, {2, 4})};
    const std::vector<tensor_ref> out = {tensor_ref::contiguous(o.data(), ctfx::f32, {3, 5}), tensor_ref::contiguous(v.data(), ctfx::f32, {3, 5})};
    const auto st = run_how(how, scatter_graph, in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(x == want_x);
    CHECK(o == want_o);
    CHECK(v == want_v);
  }
}

TEST_CASE("scatter: the executors run scatter_add in place, and an index out of range leaves every buffer as it was") {
  ctfx::runtime_plan plan(scatter_graph.get());
  REQUIRE(plan.error().ok());
  int inplace = 0;
  for (const auto& n : plan.graph().nodes) {
    CHECK(n.op != ctfx::op_kind::clone);
    inplace += n.op == ctfx::op_kind::scatter_;
  }
  CHECK(inplace == 1);
  for (const std::int64_t bad : {-1LL, 3LL}) {
    for (int how = 0; how < 4; ++how) {
      std::vector<float> x = {1, 2, 3, 4, 5, 6}, s(10, 1.0f), z(15, 2.0f), o(15, -1.0f), v(15, -1.0f);
      std::vector<std::int64_t> i = {0, 1, 2, 0, 1, 2, 0, bad}, k = {0, 1, 2, 0, 1, 2, 0, 1};
      const std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3}), tensor_ref::contiguous(i.data(), ctfx::i64, {2, 4}),
                                          tensor_ref::contiguous(s.data(), ctfx::f32, {2, 5}), tensor_ref::contiguous(z.data(), ctfx::f32, {3, 5}),
                                          tensor_ref::contiguous(k.data(), ctfx::i64, {2, 4})};
      const std::vector<tensor_ref> out = {tensor_ref::contiguous(o.data(), ctfx::f32, {3, 5}), tensor_ref::contiguous(v.data(), ctfx::f32, {3, 5})};
      const auto st = run_how(how, scatter_graph, in, out);
      REQUIRE_FALSE(st.ok);
      CHECK_MESSAGE(st.message.find("rule index-in-range") != std::string::npos, st.message);
      CHECK(x == std::vector<float>{1, 2, 3, 4, 5, 6});
      CHECK(o == std::vector<float>(15, -1.0f));
      CHECK(v == std::vector<float>(15, -1.0f));
    }
  }
}

TEST_CASE("gather and scatter: shapes and dtypes PyTorch rejects are refused when the graph is built") {
  auto error_of = [](auto f) {
    ctfx::diagnostic d;
    (void)ctfx::build_checked(f, &d);
    return d.ok() ? std::string() : ctfx::to_string(d);
  };
  // the index larger than x in a dimension other than dim
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::gather(g.input("x", ctfx::f32, {2, 3}), 1, g.input("i", ctfx::i64, {3, 1})));
        }).find("not provably at most") != std::string::npos);
  // an int32 index
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::gather(g.input("x", ctfx::f32, {2, 3}), 1, g.input("i", ctfx::i32, {2, 1})));
        }).find("int64 index") != std::string::npos);
  // ranks that differ, a dim out of range
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::gather(g.input("x", ctfx::f32, {2, 3}), 0, g.input("i", ctfx::i64, {2})));
        }).find("one rank") != std::string::npos);
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::gather(g.input("x", ctfx::f32, {2, 3}), 2, g.input("i", ctfx::i64, {2, 3})));
        }).find("rule dimension-in-range") != std::string::npos);
  // a source smaller than the index, a source of another dtype
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::scatter(g.input("x", ctfx::f32, {4, 3}), 0, g.input("i", ctfx::i64, {2, 3}), g.input("s", ctfx::f32, {1, 3})));
        }).find("source") != std::string::npos);
  CHECK(error_of([](ctfx::builder& g) {
          g.output(ctfx::scatter(g.input("x", ctfx::f32, {4, 3}), 0, g.input("i", ctfx::i64, {2, 3}), g.input("s", ctfx::f64, {2, 3})));
        }).find("rule dtype-mismatch") != std::string::npos);
  // an empty index gathers nothing and scatters nothing
  CHECK(error_of([](ctfx::builder& g) {
          auto x = g.input("x", ctfx::f32, {4, 3});
          auto i = g.input("i", ctfx::i64, {0, 3});
          g.output(ctfx::gather(x, 0, i), ctfx::scatter(x, 0, i, g.input("s", ctfx::f32, {0, 3})));
        }).empty());
}

namespace {
// x <- scatter(x, 0, i, x): the source is x itself, so running it in place would read its own writes.
constexpr auto rotate_graph = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {5});
  auto i = g.input("i", ctfx::i64, {5});
  g.update(x, ctfx::scatter(x, 0, i, x));
});
}  // namespace

TEST_CASE("scatter: a source that is x itself stays functional, and x is rotated as eager rotates it") {
  ctfx::runtime_plan plan(rotate_graph.get());
  REQUIRE(plan.error().ok());
  for (const auto& n : plan.graph().nodes) CHECK(n.op != ctfx::op_kind::scatter_);
  for (int how = 0; how < 4; ++how) {
    std::vector<float> x = {10, 11, 12, 13, 14};
    std::vector<std::int64_t> i = {1, 2, 3, 4, 0};
    const std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {5}), tensor_ref::contiguous(i.data(), ctfx::i64, {5})};
    const auto st = run_how(how, rotate_graph, in, {});
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(x == std::vector<float>{14, 10, 11, 12, 13});
  }
}

namespace {

// scatter_reduce along dim 0 of an f32 [3, 4] with a [5, 4] index (repeated destinations, row 2 of
// x never written), every reduction with and without self; i32 mean (floor division); an f16
// sum and mean over 1-D (accumulated in f32, rounded once).
constexpr const char* reductions[] = {"sum", "prod", "mean", "amax", "amin"};
constexpr auto reduce_graph = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {3, 4});
  auto i = g.input("i", ctfx::i64, {5, 4});
  auto s = g.input("s", ctfx::f32, {5, 4});
  auto xi = g.input("xi", ctfx::i32, {3, 4});
  auto si = g.input("si", ctfx::i32, {5, 4});
  auto h = g.input("h", ctfx::f16, {3});
  auto j = g.input("j", ctfx::i64, {6});
  auto sh = g.input("sh", ctfx::f16, {6});
  g.output(ctfx::scatter_reduce(x, 0, i, s, "sum", true), ctfx::scatter_reduce(x, 0, i, s, "sum", false),
           ctfx::scatter_reduce(x, 0, i, s, "prod", true), ctfx::scatter_reduce(x, 0, i, s, "prod", false),
           ctfx::scatter_reduce(x, 0, i, s, "mean", true), ctfx::scatter_reduce(x, 0, i, s, "mean", false),
           ctfx::scatter_reduce(x, 0, i, s, "amax", true), ctfx::scatter_reduce(x, 0, i, s, "amax", false),
           ctfx::scatter_reduce(x, 0, i, s, "amin", true), ctfx::scatter_reduce(x, 0, i, s, "amin", false),
           ctfx::scatter_reduce(xi, 0, i, si, "mean", true), ctfx::scatter_reduce(xi, 0, i, si, "mean", false),
           ctfx::scatter_add(h, 0, j, sh), ctfx::scatter_reduce(h, 0, j, sh, "mean", false));
});

// PyTorch's CPU loop, written out: out = x; without self each destination first takes the
// identity; then out[d] = op(out[d], s) in the index's order, at T's precision (A: the
// accumulator's type, f32 for f16); mean divides by the count (floor for integers).
template <class T, class A = T>
std::vector<T> scatter_reduce_loop(const std::vector<T>& x, int rows_s, int cols, const std::vector<std::int64_t>& idx, const std::vector<T>& s,
                                   const std::string& how, bool self) {
  std::vector<A> acc(x.size());
  std::vector<long long> count(x.size(), self ? 1 : 0);
  for (std::size_t e = 0; e < x.size(); ++e) acc[e] = static_cast<A>(x[e]);
  const auto at = [&](int r, int c) { return static_cast<std::size_t>(idx[static_cast<std::size_t>(r * cols + c)] * cols + c); };
  if (!self)
    for (int r = 0; r < rows_s; ++r)
      for (int c = 0; c < cols; ++c) {
        A id{};
        if (how == "prod") id = A(1);
        if (how == "amax") id = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
        if (how == "amin") id = std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
        acc[at(r, c)] = id;
      }
  for (int r = 0; r < rows_s; ++r)
    for (int c = 0; c < cols; ++c) {
      A& d = acc[at(r, c)];
      const A v = static_cast<A>(s[static_cast<std::size_t>(r * cols + c)]);
      if (how == "sum" || how == "mean") d = static_cast<A>(d + v);
      if (how == "prod") d = static_cast<A>(d * v);
      if (how == "amax") d = v != v ? v : (d < v ? v : d);
      if (how == "amin") d = v != v ? v : (v < d ? v : d);
      ++count[at(r, c)];
    }
  std::vector<T> out(x.size());
  for (std::size_t e = 0; e < x.size(); ++e) {
    out[e] = static_cast<T>(acc[e]);
    if (how != "mean") continue;
    const long long n = count[e] == 0 ? 1 : count[e];
    if constexpr (std::is_integral_v<T>) {
      const long long q = static_cast<long long>(out[e]) / n;
      out[e] = static_cast<T>(q * n > static_cast<long long>(out[e]) ? q - 1 : q);  // floor
    } else {
      out[e] = static_cast<T>(static_cast<float>(out[e]) / static_cast<float>(static_cast<T>(n)));  // T's division (f16: in float, rounded)
    }
  }
  return out;
}

// reduce_graph run by executor `how` on these inputs, its outputs written into these buffers.
ctfx::run_status run_reduce_graph(int how, std::vector<float>& x, std::vector<std::int64_t>& i, std::vector<float>& s,
                                  std::vector<std::int32_t>& xi, std::vector<std::int32_t>& si, std::vector<ctfx::half_t>& h,
                                  std::vector<std::int64_t>& j, std::vector<ctfx::half_t>& sh, std::vector<std::vector<float>>& got,
                                  std::vector<std::int32_t>& mi, std::vector<std::int32_t>& mo, std::vector<ctfx::half_t>& oh,
                                  std::vector<ctfx::half_t>& ohm) {
  std::vector<tensor_ref> in = {tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), tensor_ref::contiguous(i.data(), ctfx::i64, {5, 4}),
                                tensor_ref::contiguous(s.data(), ctfx::f32, {5, 4}), tensor_ref::contiguous(xi.data(), ctfx::i32, {3, 4}),
                                tensor_ref::contiguous(si.data(), ctfx::i32, {5, 4}), tensor_ref::contiguous(h.data(), ctfx::f16, {3}),
                                tensor_ref::contiguous(j.data(), ctfx::i64, {6}), tensor_ref::contiguous(sh.data(), ctfx::f16, {6})};
  std::vector<tensor_ref> out;
  for (auto& o : got) out.push_back(tensor_ref::contiguous(o.data(), ctfx::f32, {3, 4}));
  out.push_back(tensor_ref::contiguous(mi.data(), ctfx::i32, {3, 4}));
  out.push_back(tensor_ref::contiguous(mo.data(), ctfx::i32, {3, 4}));
  out.push_back(tensor_ref::contiguous(oh.data(), ctfx::f16, {3}));
  out.push_back(tensor_ref::contiguous(ohm.data(), ctfx::f16, {3}));
  return run_how(how, reduce_graph, in, out);
}

}  // namespace

TEST_CASE("scatter_reduce: sum, prod, mean, amax, amin with and without self equal PyTorch's CPU loop on every executor") {
  std::vector<float> x = {0.5f, -1.0f, 2.0f, 3.5f, 1e8f, 0.0f, -0.0f, 7.0f, 4.0f, 5.0f, 6.0f, -8.0f};
  std::vector<std::int64_t> i = {0, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1};  // column 2 sends only -0 to row 1
  std::vector<float> s = {1.25f, -3.0f, 0.1f, NAN, 1e8f, 2.0f, -0.0f, 0.3f, -1e8f, 0.7f, 3.0f, 2.5f, 1.0f, -2.0f, 0.9f, -7.0f, 0.25f, 5.0f, 1.5f, 1.0f};
  std::vector<std::int32_t> xi = {7, -7, 3, 0, 5, 9, -4, 1, 2, 2, 2, 2}, si = {-3, 4, 1, 2, 6, -5, 0, 0, 1, 1, 8, -9, 2, 3, -1, 4, 5, 5, 5, 5};
  std::vector<ctfx::half_t> h(3), sh(6);
  const float hv[3] = {1.0f, 2048.0f, -0.5f}, shv[6] = {0.0009765625f, 1.0f, 1.0f, 0.0009765625f, 3.0f, 1.0f};
  for (int e = 0; e < 3; ++e) h[static_cast<std::size_t>(e)] = ctfx::half_t(hv[e]);
  for (int e = 0; e < 6; ++e) sh[static_cast<std::size_t>(e)] = ctfx::half_t(shv[e]);
  std::vector<std::int64_t> j = {0, 1, 1, 0, 1, 1};
  std::vector<std::vector<float>> want;
  for (const char* how : reductions)
    for (const bool self : {true, false}) want.push_back(scatter_reduce_loop(x, 5, 4, i, s, how, self));
  const auto want_mi = scatter_reduce_loop(xi, 5, 4, i, si, "mean", true), want_mo = scatter_reduce_loop(xi, 5, 4, i, si, "mean", false);
  const auto want_h = scatter_reduce_loop<ctfx::half_t, float>(h, 6, 1, j, sh, "sum", true);
  const auto want_hm = scatter_reduce_loop<ctfx::half_t, float>(h, 6, 1, j, sh, "mean", false);
  // f16 sums in f32: 2048 + 1 + 1 + 3 + 1 = 2054 (in f16, 2048 + 1 rounds back to 2048 at every step)
  CHECK(static_cast<float>(want_h[1]) == 2054.0f);
  CHECK(want[1][6] == 0.0f);
  CHECK_FALSE(std::signbit(want[1][6]));  // -0 summed without self starts from +0: +0
  CHECK(std::signbit(want[0][6]));        // with self: -0 + -0
  CHECK(std::isnan(want[6][3]));  // amax takes the NaN source
  for (int how = 0; how < 4; ++how) {
    std::vector<std::vector<float>> got(10, std::vector<float>(12, -1.0f));
    std::vector<std::int32_t> mi(12), mo(12);
    std::vector<ctfx::half_t> oh(3), ohm(3);
    const auto st = run_reduce_graph(how, x, i, s, xi, si, h, j, sh, got, mi, mo, oh, ohm);
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t k = 0; k < 10; ++k) {
      CAPTURE(how);
      CAPTURE(k);
      CHECK(std::memcmp(got[k].data(), want[k].data(), 12 * sizeof(float)) == 0);  // bits: NaN, -0
    }
    CHECK(mi == want_mi);
    CHECK(mo == want_mo);
    CHECK(std::memcmp(oh.data(), want_h.data(), 3 * sizeof(ctfx::half_t)) == 0);
    CHECK(std::memcmp(ohm.data(), want_hm.data(), 3 * sizeof(ctfx::half_t)) == 0);
  }
}

TEST_CASE("scatter_reduce: a negative index is refused before any write, an unknown reduction and bool amax when built") {
  std::vector<float> x(12, 1.0f), s(20, 2.0f);
  std::vector<std::int64_t> i(20, 0);
  i[7] = -1;
  std::vector<std::int32_t> xi(12), si(20);
  std::vector<ctfx::half_t> h(3), sh(6);
  std::vector<std::int64_t> j(6, 0);
  for (int how = 0; how < 4; ++how) {
    std::vector<std::vector<float>> got(10, std::vector<float>(12, -1.0f));
    std::vector<std::int32_t> mi(12, -1), mo(12, -1);
    std::vector<ctfx::half_t> oh(3), ohm(3);
    const auto st = run_reduce_graph(how, x, i, s, xi, si, h, j, sh, got, mi, mo, oh, ohm);
    REQUIRE_FALSE(st.ok);
    CHECK_MESSAGE(st.message.find("rule index-in-range") != std::string::npos, st.message);
    CHECK_MESSAGE(st.message.find("index -1 ") != std::string::npos, st.message);
    for (auto& o : got) CHECK(o == std::vector<float>(12, -1.0f));
    CHECK(mi == std::vector<std::int32_t>(12, -1));
  }
  auto error_of = [](auto f) {
    ctfx::diagnostic d;
    (void)ctfx::build_checked(f, &d);
    return d.ok() ? std::string() : ctfx::to_string(d);
  };
  std::string e = error_of([](ctfx::builder& g) {
    auto v = g.input("x", ctfx::f32, {3});
    g.output(ctfx::scatter_reduce(v, 0, g.input("k", ctfx::i64, {3}), v, "max"));
  });
  CHECK_MESSAGE(e.find("unknown reduction") != std::string::npos, e);
  e = error_of([](ctfx::builder& g) {
    auto v = g.input("x", ctfx::b8, {3});
    g.output(ctfx::scatter_reduce(v, 0, g.input("k", ctfx::i64, {3}), v, "amax"));
  });
  CHECK_MESSAGE(e.find("rule valid-argument") != std::string::npos, e);
}
