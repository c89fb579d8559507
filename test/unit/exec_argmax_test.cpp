// argmax and argmin (and PyTorch's max.dim / min.dim from the FX side): the int64 index of the
// first maximum (minimum) along a dim or in the flattened tensor, a NaN counting as the maximum
// (minimum) and its first index winning, on the run-time and compile-time plans and the host and
// OMP backends, against a sequential scan written here. Empty or symbolic reduced extents and bool
// inputs to aten.argmax are refused, as PyTorch raises.
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
constexpr long A = 4, B = 6, C = 45;

constexpr auto arg_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {A, B, C});
  auto k = b.input("k", ctfx::i32, {B, C});
  b.output(x.argmax(2), x.argmin(2, true), x.argmax(0), x.argmin(1), x.argmax(), x.argmin(std::nullopt, true), (x * 2.0).argmax(-1),
           x.transpose(0, 2).argmax(1), k.argmax(1), k.argmin(0));
});
using arg_plan = ctfx::compiled<decltype(arg_graph)>;

// The index of the first maximum (minimum) of v as PyTorch's CPU kernel scans: a NaN wins.
std::int64_t scan(const std::vector<float>& v, bool is_min) {
  std::int64_t at = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const float b = v[static_cast<std::size_t>(at)], x = v[i];
    if (b != b) break;
    if (x != x || (is_min ? x < b : x > b)) at = static_cast<std::int64_t>(i);
  }
  return at;
}
// x[a, b, c] gathered along dimension d (the other two fixed at o's position in row-major order
// of the kept dimensions).
std::vector<std::int64_t> along(const std::vector<float>& x, int d, bool is_min, float scale = 1.0f) {
  const long n[3] = {A, B, C};
  std::vector<std::int64_t> out;
  const int e0 = d == 0 ? 1 : 0, e1 = d == 2 ? 1 : 2;
  for (long i = 0; i < n[e0]; ++i)
    for (long j = 0; j < n[e1]; ++j) {
      std::vector<float> v;
      for (long r = 0; r < n[d]; ++r) {
        long idx[3];
        idx[d] = r;
        idx[e0] = i;
        idx[e1] = j;
        v.push_back(x[static_cast<std::size_t>((idx[0] * B + idx[1]) * C + idx[2])] * scale);
      }
      out.push_back(scan(v, is_min));
    }
  return out;
}

struct arg_data {
  std::vector<float> x = std::vector<float>(A * B * C);
  std::vector<std::int32_t> k = std::vector<std::int32_t>(B * C);
  std::vector<std::vector<std::int64_t>> out{std::vector<std::int64_t>(A * B), std::vector<std::int64_t>(A * B), std::vector<std::int64_t>(B * C),
                                             std::vector<std::int64_t>(A * C), std::vector<std::int64_t>(1), std::vector<std::int64_t>(1),
                                             std::vector<std::int64_t>(A * B), std::vector<std::int64_t>(C * A), std::vector<std::int64_t>(B),
                                             std::vector<std::int64_t>(C)};
  arg_data() {
    std::uint32_t s = 11;
    for (auto& v : x) {
      s = s * 1664525u + 1013904223u;
      v = static_cast<float>(s % 17) - 8.0f;  // many ties
    }
    x[2 * C + 30] = NAN;  // row 2: a NaN, and a later one
    x[2 * C + 40] = NAN;
    for (long c = 0; c < C; ++c) x[static_cast<std::size_t>(3 * C + c)] = (c % 2) ? 0.0f : -0.0f;  // row 3: zeros of both signs
    for (auto& v : k) {
      s = s * 1664525u + 1013904223u;
      v = static_cast<std::int32_t>(s % 9) - 4;
    }
    k[7] = std::numeric_limits<std::int32_t>::min();
    k[C + 3] = std::numeric_limits<std::int32_t>::max();
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {A, B, C}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {B, C})};
  }
  std::vector<ctfx::tensor_ref> outs() {
    auto r = [&](std::size_t i, std::initializer_list<ctfx::index_t> s) { return ctfx::tensor_ref::contiguous(out[i].data(), ctfx::i64, s); };
    return {r(0, {A, B}), r(1, {A, B, 1}), r(2, {B, C}), r(3, {A, C}), r(4, {}), r(5, {1, 1, 1}), r(6, {A, B}), r(7, {C, A}), r(8, {B}), r(9, {C})};
  }
  void check() const {
    CHECK(out[0] == along(x, 2, false));
    CHECK(out[1] == along(x, 2, true));
    CHECK(out[2] == along(x, 0, false));
    CHECK(out[3] == along(x, 1, true));
    CHECK(out[4][0] == scan(x, false));
    CHECK(out[5][0] == scan(x, true));
    CHECK(out[4][0] == 2 * C + 30);  // the first NaN of the flattened tensor
    CHECK(out[6] == along(x, 2, false, 2.0f));
    const std::vector<std::int64_t> u = along(x, 1, false);  // [A, C]: out7[c, a] = argmax over b of x[a, b, c]
    for (long c = 0; c < C; ++c)
      for (long a = 0; a < A; ++a) CHECK(out[7][static_cast<std::size_t>(c * A + a)] == u[static_cast<std::size_t>(a * C + c)]);
    CHECK(out[0][2] == 30);
    CHECK(out[1][2] == 30);
    CHECK(out[0][3] == 0);  // -0 at 0 and +0 at 1 are equal: the first
    CHECK(out[1][3] == 0);
    for (long b = 0; b < B; ++b) {
      std::int64_t want = 0;
      for (long c = 1; c < C; ++c) if (k[static_cast<std::size_t>(b * C + c)] > k[static_cast<std::size_t>(b * C + want)]) want = c;
      CHECK(out[8][static_cast<std::size_t>(b)] == want);
    }
    for (long c = 0; c < C; ++c) {
      std::int64_t want = 0;
      for (long b = 1; b < B; ++b) if (k[static_cast<std::size_t>(b * C + c)] < k[static_cast<std::size_t>(want * C + c)]) want = b;
      CHECK(out[9][static_cast<std::size_t>(c)] == want);
    }
    CHECK(out[8][1] == 3);
    CHECK(out[9][7] == 0);
  }
};
}  // namespace

TEST_CASE("argmax and argmin: every plan and backend gives the first index, NaN first, as a sequential scan") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    arg_data r, c;
    const auto st = ctfx::runtime_plan(arg_graph.get()).run(r.in(), r.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    r.check();
    const auto sc = arg_plan::run(c.in(), c.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(sc.ok, sc.message);
    c.check();
  }
}

TEST_CASE("argmax and argmin: an empty reduced extent is refused, an empty result is fine, a 0-d input gives 0") {
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {3, 0}).argmax(1)); }, &d);
  REQUIRE_FALSE(d.ok());
  CHECK(ctfx::to_string(d).find("no index") != std::string::npos);
  ctfx::diagnostic flat{};
  (void)ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {3, 0}).argmin()); }, &flat);
  CHECK_FALSE(flat.ok());
  ctfx::diagnostic fine{};
  (void)ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {3, 0}).argmax(0)); }, &fine);
  CHECK(fine.ok());
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto s = b.input("s", ctfx::f64, {});
    b.output(s.argmax(), s.argmin(-1), s.argmax(0, true));
  });
  REQUIRE(g.error.ok());
  double s = 3.5;
  std::vector<std::int64_t> o(3, 7);
  const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(&s, ctfx::f64, {})},
                                            {ctfx::tensor_ref::contiguous(&o[0], ctfx::i64, {}), ctfx::tensor_ref::contiguous(&o[1], ctfx::i64, {}),
                                             ctfx::tensor_ref::contiguous(&o[2], ctfx::i64, {})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(o == std::vector<std::int64_t>{0, 0, 0});
}

namespace {
constexpr auto max_fx = R"fx(def forward(self, arg0_1: "f32[3, 5][5, 1]cpu"):
    max_1 = torch.ops.aten.max.dim(arg0_1, 1)
    getitem: "f32[3][1]cpu" = max_1[0]
    getitem_1: "i64[3][1]cpu" = max_1[1];  max_1 = None
    min_1 = torch.ops.aten.min.dim(arg0_1, 0, True)
    getitem_2: "f32[1, 5][5, 1]cpu" = min_1[0]
    getitem_3: "i64[1, 5][5, 1]cpu" = min_1[1];  min_1 = None
    argmax: "i64[][]cpu" = torch.ops.aten.argmax.default(arg0_1)
    argmin: "i64[3, 1][1, 1]cpu" = torch.ops.aten.argmin.default(arg0_1, -1, True)
    return (getitem, getitem_1, getitem_2, getitem_3, argmax, argmin)
)fx";
static_assert(ctfx::parse_fx(max_fx).error.ok());
static_assert(ctfx::fx::aten_name(ctfx::op_kind::argmax) == "aten.argmax.default");
static_assert(ctfx::fx::aten_name(ctfx::op_kind::argmin) == "aten.argmin.default");
}  // namespace

TEST_CASE("argmax and argmin from FX text: max.dim and min.dim as (amax, argmax) and (amin, argmin), printed back") {
  const auto r = ctfx::parse_fx(max_fx);
  REQUIRE(r.error.ok());
  std::vector<float> x = {1, 5, 5, -2, NAN, 3, 3, 0, -0.0f, 9, -7, 4, -7, 8, -1};
  std::vector<float> mv(3), nv(5);
  std::vector<std::int64_t> mi(3), ni(5), am(1), an(3);
  const auto st = ctfx::runtime_plan(r.graph).run(
      {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 5})},
      {ctfx::tensor_ref::contiguous(mv.data(), ctfx::f32, {3}), ctfx::tensor_ref::contiguous(mi.data(), ctfx::i64, {3}),
       ctfx::tensor_ref::contiguous(nv.data(), ctfx::f32, {1, 5}), ctfx::tensor_ref::contiguous(ni.data(), ctfx::i64, {1, 5}),
       ctfx::tensor_ref::contiguous(am.data(), ctfx::i64, {}), ctfx::tensor_ref::contiguous(an.data(), ctfx::i64, {3, 1})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(std::isnan(mv[0]));
  CHECK(mi == std::vector<std::int64_t>{4, 4, 3});
  CHECK(mv[1] == 9.0f);
  CHECK(mv[2] == 8.0f);
  CHECK(ni == std::vector<std::int64_t>{2, 1, 2, 0, 0});
  CHECK(std::isnan(nv[4]));
  CHECK(nv[0] == -7.0f);
  CHECK(am[0] == 4);
  CHECK(an == std::vector<std::int64_t>{4, 2, 0});  // row 1: 0 at 2 before -0 at 3
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.argmax.default(arg0_1, 1)") != std::string::npos);
  CHECK(text.find("torch.ops.aten.amin.default(arg0_1, [0], True)") != std::string::npos);
  CHECK(text.find("torch.ops.aten.argmin.default(arg0_1, -1, True)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  CHECK_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  const auto bad = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "b8[4][1]cpu"):
    argmax: "i64[][]cpu" = torch.ops.aten.argmax.default(arg0_1)
    return (argmax,)
)fx");
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("bool") != std::string::npos);
}
