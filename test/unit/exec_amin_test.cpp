// amin, the mirror of amax: over any dimensions, fused into its input's group or not, on the
// run-time and compile-time plans and the host and OMP backends, against a sequential fold written
// here (PyTorch's CPU semantics: a NaN is the result; of equal values, -0 and +0 among them, the
// first is kept), and from the FX side. An empty or symbolic reduced extent is refused.
#include <doctest/doctest.h>
#include <bit>
#include <cmath>
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
constexpr long A = 5, B = 7, C = 300;  // rows of 300: longer than a warp, the integer-key loop's runs

// Every amin the plans take different paths for: the last dimension (a row each, keys), the first
// (neighbouring outputs vectorized), a middle one (strided), all of them, a fused input (exp(x)
// folded as computed), and a transposed input.
constexpr auto amin_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {A, B, C});
  b.output(x.amin({2}), x.amin({0}), x.amin({1}, true), x.amin(), (x * -0.5 + 1.0).amin({-1, -2}), x.transpose(0, 2).amin({1}));
});
using amin_plan = ctfx::compiled<decltype(amin_graph)>;
static_assert(amin_plan::static_buffer_bytes() == 0);  // the fused amin's input gets no buffer

// out[o] = the sequential fold of x's elements reduced into o, in row-major order.
std::vector<float> fold_min(const std::vector<float>& x, const std::vector<long>& size, unsigned dims, float (*f)(float)) {
  const int r = static_cast<int>(size.size());
  std::vector<long> keep(size);
  for (int d = 0; d < r; ++d) if ((dims >> d) & 1) keep[static_cast<std::size_t>(d)] = 1;
  long outs = 1, n = 1;
  for (long k : keep) outs *= k;
  for (long s : size) n *= s;
  std::vector<float> out(static_cast<std::size_t>(outs));
  std::vector<bool> seen(static_cast<std::size_t>(outs), false);
  for (long i = 0; i < n; ++i) {
    long rem = i, o = 0, mul = 1;
    for (int d = r - 1; d >= 0; --d) {
      const long c = rem % size[static_cast<std::size_t>(d)];
      rem /= size[static_cast<std::size_t>(d)];
      if (!((dims >> d) & 1)) o += c * mul;
      mul *= keep[static_cast<std::size_t>(d)];
    }
    const float v = f(x[static_cast<std::size_t>(i)]);
    float& a = out[static_cast<std::size_t>(o)];
    if (!seen[static_cast<std::size_t>(o)]) { a = v; seen[static_cast<std::size_t>(o)] = true; }
    else if (a == a && (v != v || v < a)) a = v;
  }
  return out;
}
float same(float v) { return v; }
float scaled(float v) { return v * -0.5f + 1.0f; }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct amin_data {
  std::vector<float> x = std::vector<float>(A * B * C);
  std::vector<std::vector<float>> out{std::vector<float>(A * B), std::vector<float>(B * C), std::vector<float>(A * C),
                                      std::vector<float>(1), std::vector<float>(A), std::vector<float>(C * A)};
  amin_data() {
    std::uint32_t s = 7;
    for (auto& v : x) {
      s = s * 1664525u + 1013904223u;
      v = static_cast<float>(s % 2003) * 0.01f - 10.0f;
    }
    const long row = B * C;
    x[3 * C + 17] = std::bit_cast<float>(0x7fc00005u);  // a NaN in row 3 of image 0, then a second one
    x[3 * C + 200] = std::bit_cast<float>(0xffc00009u);
    for (long k = 0; k < C; ++k) x[static_cast<std::size_t>(row + k)] = (k % 3) ? 0.0f : -0.0f;  // -0 first
    for (long k = 0; k < C; ++k) x[static_cast<std::size_t>(row + C + k)] = (k % 3) ? -0.0f : 0.0f;  // +0 first
    for (long k = 0; k < C; ++k) x[static_cast<std::size_t>(row + 2 * C + k)] = 5.0f + static_cast<float>(k % 4);
    x[static_cast<std::size_t>(row + 2 * C + 150)] = -0.0f;  // a lone -0 minimum (keys decide it)
  }
  std::vector<ctfx::tensor_ref> in() { return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {A, B, C})}; }
  std::vector<ctfx::tensor_ref> outs() {
    return {ctfx::tensor_ref::contiguous(out[0].data(), ctfx::f32, {A, B}), ctfx::tensor_ref::contiguous(out[1].data(), ctfx::f32, {B, C}),
            ctfx::tensor_ref::contiguous(out[2].data(), ctfx::f32, {A, 1, C}), ctfx::tensor_ref::contiguous(out[3].data(), ctfx::f32, {}),
            ctfx::tensor_ref::contiguous(out[4].data(), ctfx::f32, {A}), ctfx::tensor_ref::contiguous(out[5].data(), ctfx::f32, {C, A})};
  }
  void check() const {
    const std::vector<long> s = {A, B, C};
    CHECK(same_bits(out[0], fold_min(x, s, 4u, same)));
    CHECK(same_bits(out[1], fold_min(x, s, 1u, same)));
    CHECK(same_bits(out[2], fold_min(x, s, 2u, same)));
    CHECK(same_bits(out[3], fold_min(x, s, 7u, same)));
    CHECK(same_bits(out[4], fold_min(x, s, 6u, scaled)));
    // the transposed input [C, B, A] reduced over B: out[c, a] = min over b of x[a, b, c]
    const std::vector<float> t = fold_min(x, s, 2u, same);  // [A, C]
    for (long c = 0; c < C; ++c)
      for (long a = 0; a < A; ++a)
        CHECK(std::bit_cast<std::uint32_t>(out[5][static_cast<std::size_t>(c * A + a)]) == std::bit_cast<std::uint32_t>(t[static_cast<std::size_t>(a * C + c)]));
    CHECK(std::bit_cast<std::uint32_t>(out[0][3]) == 0x7fc00005u);  // the first NaN
    CHECK(std::bit_cast<std::uint32_t>(out[0][B]) == 0x80000000u);   // -0 came first
    CHECK(std::bit_cast<std::uint32_t>(out[0][B + 1]) == 0u);        // +0 came first
    CHECK(std::bit_cast<std::uint32_t>(out[0][B + 2]) == 0x80000000u);
    CHECK(std::isnan(out[3][0]));
  }
};
}  // namespace

TEST_CASE("amin: every plan and backend folds the first NaN, the first of equal zeros, as a sequential fold") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    amin_data r, c;
    const auto st = ctfx::runtime_plan(amin_graph.get()).run(r.in(), r.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    r.check();
    const auto sc = amin_plan::run(c.in(), c.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(sc.ok, sc.message);
    c.check();
  }
  // the amin of x * -0.5 + 1 takes its input's two ops into its group, on both plans alike
  const ctfx::ir g = amin_plan::graph();
  const ctfx::fusion f = amin_plan::fused();
  int members = 0;
  for (std::size_t i = 0; i < f.root.size(); ++i)
    members += f.root[i] != static_cast<std::int32_t>(i) && g[f.root[i]].op == ctfx::op_kind::amin;
  CHECK(members == 2);
  const ctfx::fusion rf = ctfx::runtime_plan(amin_graph.get()).fused();
  CHECK(std::vector<std::int32_t>(f.root.begin(), f.root.end()) == std::vector<std::int32_t>(rf.root.begin(), rf.root.end()));
}

TEST_CASE("amin: integers keep their dtype, the smallest of each (INT_MIN, -128 of int8, false of bool)") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto i = b.input("i", ctfx::i32, {3, 40});
    auto u = b.input("u", ctfx::i8, {3, 40});
    auto k = b.input("k", ctfx::b8, {3, 40});
    b.output(i.amin({1}), u.amin({1}), k.amin({1}), (i * 2).amin({0}));
  });
  std::vector<std::int32_t> i(120);
  std::vector<std::int8_t> u(120);
  std::vector<std::uint8_t> k(120, 1);
  for (int j = 0; j < 120; ++j) {
    i[static_cast<std::size_t>(j)] = (j * 7919) % 1000 - 500;
    u[static_cast<std::size_t>(j)] = static_cast<std::int8_t>(j % 50 - 20);
  }
  i[45] = std::numeric_limits<std::int32_t>::min();
  u[100] = -128;
  k[5] = 0;
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<std::int32_t> oi(3), o4(40);
    std::vector<std::int8_t> ou(3);
    std::vector<std::uint8_t> ok(3);
    const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(i.data(), ctfx::i32, {3, 40}), ctfx::tensor_ref::contiguous(u.data(), ctfx::i8, {3, 40}),
                                               ctfx::tensor_ref::contiguous(k.data(), ctfx::b8, {3, 40})},
                                              {ctfx::tensor_ref::contiguous(oi.data(), ctfx::i32, {3}), ctfx::tensor_ref::contiguous(ou.data(), ctfx::i8, {3}),
                                               ctfx::tensor_ref::contiguous(ok.data(), ctfx::b8, {3}), ctfx::tensor_ref::contiguous(o4.data(), ctfx::i32, {40})},
                                              ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (int r = 0; r < 3; ++r) {
      std::int32_t mi = i[static_cast<std::size_t>(r * 40)];
      std::int8_t mu = u[static_cast<std::size_t>(r * 40)];
      std::uint8_t mk = 1;
      for (int j = 0; j < 40; ++j) {
        mi = std::min(mi, i[static_cast<std::size_t>(r * 40 + j)]);
        mu = std::min(mu, u[static_cast<std::size_t>(r * 40 + j)]);
        mk = std::min(mk, k[static_cast<std::size_t>(r * 40 + j)]);
      }
      CHECK(oi[static_cast<std::size_t>(r)] == mi);
      CHECK(ou[static_cast<std::size_t>(r)] == mu);
      CHECK(ok[static_cast<std::size_t>(r)] == mk);
    }
    CHECK(oi[1] == std::numeric_limits<std::int32_t>::min());
    CHECK(ou[2] == -128);
    CHECK(ok[0] == 0);
    CHECK(ok[1] == 1);
    for (int j = 0; j < 40; ++j) {
      std::int32_t m = std::numeric_limits<std::int32_t>::max();
      for (int r = 0; r < 3; ++r) m = std::min(m, static_cast<std::int32_t>(static_cast<std::uint32_t>(i[static_cast<std::size_t>(r * 40 + j)]) * 2u));
      CHECK(o4[static_cast<std::size_t>(j)] == m);
    }
  }
}

TEST_CASE("amin: a reduced dimension of extent 0 is refused, as PyTorch raises") {
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 0});
    b.output(x.amin({1}));
  }, &d);
  REQUIRE_FALSE(d.ok());
  const std::string m = ctfx::to_string(d);
  CHECK(m.find("amin of") != std::string::npos);
  CHECK(m.find("no minimum") != std::string::npos);
  // reducing another dimension is fine: the result is empty
  ctfx::diagnostic fine{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 0});
    b.output(x.amin({0}));
  }, &fine);
  CHECK(fine.ok());
}

namespace {
constexpr auto amin_fx = R"fx(def forward(self, arg0_1: "f32[4, 6][6, 1]cpu"):
    amin: "f32[4][1]cpu" = torch.ops.aten.amin.default(arg0_1, [1])
    amin_1: "f32[1, 6][6, 1]cpu" = torch.ops.aten.amin.default(arg0_1, [0], True)
    amin_2: "f32[][]cpu" = torch.ops.aten.amin.default(arg0_1)
    return (amin, amin_1, amin_2)
)fx";
static_assert(ctfx::parse_fx(amin_fx).error.ok());
static_assert(ctfx::fx::aten_name(ctfx::op_kind::amin) == "aten.amin.default");
}  // namespace

TEST_CASE("amin: from FX text, printed back as aten.amin, the same values") {
  const auto r = ctfx::parse_fx(amin_fx);
  REQUIRE(r.error.ok());
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.amin.default(arg0_1, [1])") != std::string::npos);
  CHECK(text.find("torch.ops.aten.amin.default(arg0_1, [0], True)") != std::string::npos);
  std::vector<float> x(24), a(4), b(6), c(1);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>((k * 5) % 11) - 3.0f;
  const auto st = ctfx::runtime_plan(r.graph).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6})},
                                                  {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {4}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {1, 6}),
                                                   ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(same_bits(a, fold_min(x, {4, 6}, 2u, same)));
  CHECK(same_bits(b, fold_min(x, {4, 6}, 1u, same)));
  CHECK(same_bits(c, fold_min(x, {4, 6}, 3u, same)));
  const auto bad = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "f32[4, 0][1, 1]cpu"):
    amin: "f32[4][1]cpu" = torch.ops.aten.amin.default(arg0_1, [1])
    return (amin,)
)fx");
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("no minimum") != std::string::npos);
}
