// cumsum: each prefix along a dimension summed sequentially in PyTorch's accumulation type (double
// for f32 and f64, f32 for f16), rounded once; integers and bools converted to int64 first (and
// to the dtype= asked), on the run-time and compile-time plans and the host and OMP backends,
// against a loop written here. (The captured program cumulative_sums checks eager's bits.)
#include <doctest/doctest.h>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr long R = 3, N = 500;

constexpr auto scan_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {R, N});
  auto k = b.input("k", ctfx::i32, {R, N});
  auto m = b.input("m", ctfx::b8, {R, N});
  b.output(x.cumsum(1), x.cumsum(0), k.cumsum(-1), m.cumsum(1), k.cumsum(1, ctfx::f32), x.transpose(0, 1).cumsum(1), (x * 2.0).cumsum(1));
});
using scan_plan = ctfx::compiled<decltype(scan_graph)>;

struct scan_data {
  std::vector<float> x = std::vector<float>(R * N);
  std::vector<std::int32_t> k = std::vector<std::int32_t>(R * N);
  std::vector<std::uint8_t> m = std::vector<std::uint8_t>(R * N);
  std::vector<float> o0 = std::vector<float>(R * N), o1 = std::vector<float>(R * N), o4 = std::vector<float>(R * N), o5 = std::vector<float>(N * R),
                     o6 = std::vector<float>(R * N);
  std::vector<std::int64_t> o2 = std::vector<std::int64_t>(R * N), o3 = std::vector<std::int64_t>(R * N);
  scan_data() {
    std::uint32_t s = 3;
    for (long i = 0; i < R * N; ++i) {
      s = s * 1664525u + 1013904223u;
      x[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(s % 20001) - 10000) * 0.0137f;
      k[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(s ^ (s << 7));
      m[static_cast<std::size_t>(i)] = (s >> 9) & 1;
    }
    x[0] = 1e8f;  // row 0: 1e8 then small values: a float accumulator would lose them, a double keeps them
    for (long j = 1; j < 8; ++j) x[static_cast<std::size_t>(j)] = 1.0f;
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {R, N}),
            ctfx::tensor_ref::contiguous(m.data(), ctfx::b8, {R, N})};
  }
  std::vector<ctfx::tensor_ref> outs() {
    return {ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {R, N}),
            ctfx::tensor_ref::contiguous(o2.data(), ctfx::i64, {R, N}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::i64, {R, N}),
            ctfx::tensor_ref::contiguous(o4.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::f32, {N, R}),
            ctfx::tensor_ref::contiguous(o6.data(), ctfx::f32, {R, N})};
  }
  void check() const {
    for (long r = 0; r < R; ++r) {
      double a = 0, a6 = 0, a4 = 0;
      std::int64_t ai = 0, am = 0;
      for (long j = 0; j < N; ++j) {
        const auto i = static_cast<std::size_t>(r * N + j);
        a += static_cast<double>(x[i]);
        a6 += static_cast<double>(x[i] * 2.0f);
        a4 += static_cast<double>(static_cast<float>(k[i]));
        ai = static_cast<std::int64_t>(static_cast<std::uint64_t>(ai) + static_cast<std::uint64_t>(static_cast<std::int64_t>(k[i])));
        am += m[i];
        CHECK(o0[i] == static_cast<float>(a));
        CHECK(o6[i] == static_cast<float>(a6));
        CHECK(o4[i] == static_cast<float>(a4));
        CHECK(o2[i] == ai);
        CHECK(o3[i] == am);
      }
    }
    for (long j = 0; j < N; ++j) {
      double a = 0;
      for (long r = 0; r < R; ++r) {
        a += static_cast<double>(x[static_cast<std::size_t>(r * N + j)]);
        CHECK(o1[static_cast<std::size_t>(r * N + j)] == static_cast<float>(a));
      }
      double t = 0;  // the transposed input's row j: x[0, j], x[1, j], ...
      for (long r = 0; r < R; ++r) {
        t += static_cast<double>(x[static_cast<std::size_t>(r * N + j)]);
        CHECK(o5[static_cast<std::size_t>(j * R + r)] == static_cast<float>(t));
      }
    }
    CHECK(o0[7] == 100000008.0f);  // 1e8 + 7 in double, rounded once (a float sum would stay 1e8)
  }
};
}  // namespace

TEST_CASE("cumsum: every plan and backend sums each prefix in double for f32, int64 for integers and bools") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    scan_data r, c;
    const auto st = ctfx::runtime_plan(scan_graph.get()).run(r.in(), r.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    r.check();
    const auto sc = scan_plan::run(c.in(), c.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(sc.ok, sc.message);
    c.check();
  }
}

TEST_CASE("cumsum: f16 accumulates in f32, a 0-d input is itself, an i32 cumsum node is refused") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto h = b.input("h", ctfx::f16, {1, 300});
    auto s = b.input("s", ctfx::f64, {});
    b.output(h.cumsum(1), s.cumsum(0));
  });
  REQUIRE(g.error.ok());
  std::vector<ctfx::half_t> h(300), oh(300);
  for (int j = 0; j < 300; ++j) h[static_cast<std::size_t>(j)] = ctfx::half_t(j == 0 ? 2048.0f : 1.0f);  // f16 alone would stay at 2048
  double s = -2.5, os = 0;
  const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {1, 300}), ctfx::tensor_ref::contiguous(&s, ctfx::f64, {})},
                                            {ctfx::tensor_ref::contiguous(oh.data(), ctfx::f16, {1, 300}), ctfx::tensor_ref::contiguous(&os, ctfx::f64, {})});
  REQUIRE_MESSAGE(st.ok, st.message);
  float a = 0;
  for (int j = 0; j < 300; ++j) {
    a += static_cast<float>(h[static_cast<std::size_t>(j)]);
    CHECK(static_cast<float>(oh[static_cast<std::size_t>(j)]) == static_cast<float>(ctfx::half_t(a)));
  }
  CHECK(static_cast<float>(oh[299]) == 2348.0f);  // 2347 in f32, rounded once to f16's even neighbour
  CHECK(os == -2.5);
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto k = b.input("k", ctfx::i32, {4});
    b.output(b.make(ctfx::op_kind::cumsum, {k}, {ctfx::sym_expr(0)}));
  }, &d);
  REQUIRE_FALSE(d.ok());
  CHECK(ctfx::to_string(d).find("int64") != std::string::npos);
}

TEST_CASE("cumsum from FX text: the dtype= conversion is a node of its own, printed back as PyTorch writes it") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "i32[2, 3][3, 1]cpu"):
    cumsum: "i64[2, 3][3, 1]cpu" = torch.ops.aten.cumsum.default(arg0_1, 1)
    cumsum_1: "f32[2, 3][3, 1]cpu" = torch.ops.aten.cumsum.default(arg0_1, 0, dtype = torch.float32)
    return (cumsum, cumsum_1)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<std::int32_t> k = {1, -2, 3, 2147483647, 1, 1};
  std::vector<std::int64_t> a(6);
  std::vector<float> b(6);
  const auto st = ctfx::runtime_plan(r.graph).run({ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {2, 3})},
                                                  {ctfx::tensor_ref::contiguous(a.data(), ctfx::i64, {2, 3}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 3})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(a == std::vector<std::int64_t>{1, -1, 2, 2147483647, 2147483648LL, 2147483649LL});  // in int64: no wrap at 2^31
  CHECK(b == std::vector<float>{1.0f, -2.0f, 3.0f, 2147483648.0f, -1.0f, 4.0f});
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.cumsum.default(cumsum_convert, 1)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  CHECK_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
}
