// From the FX side: table lookups (aten.embedding, weight[indices], and aten.index_select, the index
// at one dimension) become index gathers; any/all become amax of a test; squeeze() of every size-1
// dimension a chain of squeezes. What PyTorch would reject, index differently, or what ctfx cannot
// know at compile time is refused with the node's name. (The captured programs embedding_lookup and
// squeeze_any_all check the values against eager.)
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr auto select_text = R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2][1]cpu", w: "f32[5, 2][2, 1]cpu", ids: "i32[2, 2][2, 1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    index_select_1: "f32[2, 4][4, 1]cpu" = torch.ops.aten.index_select.default(x, -2, j)
    embedding: "f32[2, 2, 2][4, 2, 1]cpu" = torch.ops.aten.embedding.default(w, ids, 0)
    return (index_select, index_select_1, embedding)
)";
static_assert(ctfx::parse_fx(select_text).error.ok());
static_assert(ctfx::parse_fx(R"(def forward(self, m: "b8[2, 3][3, 1]cpu", y: "f32[2, 3][3, 1]cpu"):
    sum_1: "i32[2][1]cpu" = torch.ops.aten.sum.dim_IntList(m, [1], dtype = torch.int32)
    mean: "f64[][]cpu" = torch.ops.aten.mean.default(y, dtype = torch.float64)
    return (sum_1, mean)
)").error.ok());
// Printed back, the nodes these calls become keep their own names (not embedding's, any's or all's).
static_assert(ctfx::fx::aten_name(ctfx::op_kind::index) == "aten.index.Tensor");
static_assert(ctfx::fx::aten_name(ctfx::op_kind::logical_not) == "aten.logical_not.default");
static_assert(ctfx::fx::aten_name(ctfx::op_kind::squeeze) == "aten.squeeze.dim");
static_assert(ctfx::fx::aten_name(ctfx::op_kind::amax) == "aten.amax.default");

std::string parse_error(const char* text) {
  const auto r = ctfx::parse_fx(text);
  return r.error.ok() ? std::string() : ctfx::to_string(r.error);
}
}  // namespace

TEST_CASE("fx lookups: index_select on a dimension (negative too) and embedding with int32 ids gather PyTorch's elements") {
  const ctfx::ir g = ctfx::parse_fx(select_text).graph;
  REQUIRE(g.error.ok());
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  std::vector<float> x(12), w(10), a(6), b(8), e(8);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = 100.0f + static_cast<float>(k);
  std::vector<std::int64_t> j = {2, 0};
  std::vector<std::int32_t> ids = {4, 0, 1, 4};
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(j.data(), ctfx::i64, {2}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {5, 2}), ctfx::tensor_ref::contiguous(ids.data(), ctfx::i32, {2, 2})};
  const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {3, 2}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 4}),
                                             ctfx::tensor_ref::contiguous(e.data(), ctfx::f32, {2, 2, 2})};
  const auto st = p.run(in, out);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(a == std::vector<float>{2, 0, 6, 4, 10, 8});
  CHECK(b == std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3});
  CHECK(e == std::vector<float>{108, 109, 100, 101, 102, 103, 108, 109});
  // printed as PyTorch text, the graph parses back to the same program
  const std::string text = ctfx::to_fx(g);
  CHECK(text.find("torch.ops.aten.index.Tensor(w, [ids])") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  std::vector<float> e2(8);
  const std::vector<ctfx::tensor_ref> out2 = {out[0], out[1], ctfx::tensor_ref::contiguous(e2.data(), ctfx::f32, {2, 2, 2})};
  REQUIRE(ctfx::runtime_plan(again.graph).run(in, out2).ok);
  CHECK(e2 == e);

  // An id out of the table's range: refused before any output is written.
  ids[1] = 5;
  std::fill(e.begin(), e.end(), -1.0f);
  CHECK_FALSE(p.run(in, out).ok);
  CHECK(e == std::vector<float>(8, -1.0f));
}

TEST_CASE("fx lookups: a 1-d embedding table, a 2-d or 0-d index_select index and a dim out of range are refused by name") {
  CHECK(parse_error(R"(def forward(self, w: "f32[5][1]cpu", ids: "i64[2][1]cpu"):
    embedding: "f32[2][1]cpu" = torch.ops.aten.embedding.default(w, ids)
    return (embedding,)
)").find("node 'embedding': embedding's weight is a 2-d table") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2, 1][1, 1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    return (index_select,)
)").find("index_select's index must be 1-d") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[][]cpu"):
    index_select: "f32[3, 1][1, 1]cpu" = torch.ops.aten.index_select.default(x, 1, j)
    return (index_select,)
)").find("a 0-d index keeps the dimension") != std::string::npos);
  CHECK(parse_error(R"(def forward(self, x: "f32[3, 4][4, 1]cpu", j: "i64[2][1]cpu"):
    index_select: "f32[3, 2][2, 1]cpu" = torch.ops.aten.index_select.default(x, 2, j)
    return (index_select,)
)").find("node 'index_select': index_select's dim is out of range") != std::string::npos);
}

TEST_CASE("fx any/all and squeeze(): an empty or symbolic reduced dimension and a symbolic squeeze are refused, no size-1 dim is an alias") {
  CHECK(parse_error(R"fx(def forward(self, m: "b8[2, 0][1, 1]cpu"):
    any_1: "b8[2][1]cpu" = torch.ops.aten.any.dim(m, 1)
    return (any_1,)
)fx").find("node 'any_1': any over dimension 1, whose size is 0 or symbolic") != std::string::npos);
  CHECK(parse_error(R"fx(def forward(self, arg0_1: "Sym(s0)", x: "f32[s0, 3][3, 1]cpu"):
    squeeze: "f32[s0, 3][3, 1]cpu" = torch.ops.aten.squeeze.default(x)
    return (squeeze,)
)fx").find("node 'squeeze': squeeze of dimension 0, whose size is symbolic") != std::string::npos);
  // all over the rows of a float: NaN is true, -0.0 is false
  const auto r = ctfx::parse_fx(R"fx(def forward(self, y: "f32[2, 3][3, 1]cpu", x: "f32[2, 3][3, 1]cpu"):
    all_1: "b8[2][1]cpu" = torch.ops.aten.all.dim(y, 1)
    any_1: "b8[3][1]cpu" = torch.ops.aten.any.dims(y, [0])
    squeeze: "f32[2, 3][3, 1]cpu" = torch.ops.aten.squeeze.default(x)
    return (all_1, any_1, squeeze)
)fx");
  REQUIRE(r.error.ok());
  std::vector<float> y = {NAN, 1.0f, -2.0f, 0.5f, -0.0f, 3.0f}, x = {1, 2, 3, 4, 5, 6}, sq(6);
  std::vector<std::uint8_t> al(2), an(3);
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {2, 3});
  const auto st = ctfx::runtime_plan(r.graph).run(
      {ctfx::tensor_ref(y.data(), d), ctfx::tensor_ref(x.data(), d)},
      {ctfx::tensor_ref::contiguous(al.data(), ctfx::b8, {2}), ctfx::tensor_ref::contiguous(an.data(), ctfx::b8, {3}), ctfx::tensor_ref(sq.data(), d)});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(al == std::vector<std::uint8_t>{1, 0});
  CHECK(an == std::vector<std::uint8_t>{1, 1, 1});
  CHECK(sq == x);
}

TEST_CASE("fx sum and mean with dtype=: converted first and reduced in that dtype (an int32 sum stays int32), printed back the same") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, x: "f16[2, 3][3, 1]cpu", m: "b8[2, 3][3, 1]cpu", i: "i32[2, 3][3, 1]cpu"):
    sum_1: "f32[][]cpu" = torch.ops.aten.sum.default(x, dtype = torch.float32)
    sum_2: "i32[2][1]cpu" = torch.ops.aten.sum.dim_IntList(m, [1], dtype = torch.int32)
    sum_3: "i32[1, 3][3, 1]cpu" = torch.ops.aten.sum.dim_IntList(i, [0], True, dtype = torch.int32)
    sum_4: "i64[][]cpu" = torch.ops.aten.sum.default(i)
    mean: "f64[2][1]cpu" = torch.ops.aten.mean.dim(i, [1], dtype = torch.float64)
    return (sum_1, sum_2, sum_3, sum_4, mean)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  const std::string text = ctfx::to_fx(r.graph);
  CHECK_MESSAGE(text.find("torch.ops.aten.sum.dim_IntList(sum_1_convert, [], dtype = torch.float32)") != std::string::npos, text);
  CHECK_MESSAGE(text.find("torch.ops.aten.sum.dim_IntList(i, [0], True, dtype = torch.int32)") != std::string::npos, text);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  CHECK(ctfx::to_fx(again.graph) == text);
  // x: 2048 and five 1s: in f16 steps the sum would stay 2048, in f32 it is 2053; i wraps in int32
  std::vector<ctfx::half_t> x(6, ctfx::half_t(1.0f));
  x[0] = ctfx::half_t(2048.0f);
  bool m[6] = {true, false, true, true, true, true};
  std::vector<std::int32_t> i = {2147483647, 5, -7, 1, 2, 3};
  for (const ctfx::ir* g : {&r.graph, &again.graph}) {
    ctfx::runtime_plan p(*g);
    REQUIRE(p.error().ok());
    for (int how = 0; how < 3; ++how) {
      float s1 = 0;
      std::vector<std::int32_t> s2(2), s3(3);
      std::int64_t s4 = 0;
      std::vector<double> mean(2);
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f16, {2, 3}), ctfx::tensor_ref::contiguous(m, ctfx::b8, {2, 3}),
                                                ctfx::tensor_ref::contiguous(i.data(), ctfx::i32, {2, 3})};
      const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(&s1, ctfx::f32, {}), ctfx::tensor_ref::contiguous(s2.data(), ctfx::i32, {2}),
                                                 ctfx::tensor_ref::contiguous(s3.data(), ctfx::i32, {1, 3}), ctfx::tensor_ref::contiguous(&s4, ctfx::i64, {}),
                                                 ctfx::tensor_ref::contiguous(mean.data(), ctfx::f64, {2})};
      const auto st = how == 0 ? p.run(in, out) : how == 1 ? p.run(in, out, ctfx::device_ctx{ctfx::backend::omp}) : ctfx::reference_run(*g, in, out);
      REQUIRE_MESSAGE(st.ok, st.message);
      CHECK(s1 == 2053.0f);
      CHECK(s2 == std::vector<std::int32_t>{2, 3});
      CHECK(s3 == std::vector<std::int32_t>{-2147483647 - 1 + 0, 7, -4});  // 2147483647 + 1 wraps in int32
      CHECK(s4 == 2147483647LL + 5 - 7 + 1 + 2 + 3);
      CHECK(mean == std::vector<double>{(2147483647.0 + 5 - 7) / 3, 2.0});
    }
  }
  // dtype=bool, and a dtype on amax, are refused by name
  std::string e = parse_error(R"fx(def forward(self, m: "b8[2, 3][3, 1]cpu"):
    sum_1: "b8[][]cpu" = torch.ops.aten.sum.default(m, dtype = torch.bool)
    return (sum_1,)
)fx");
  CHECK_MESSAGE(e.find("node 'sum_1': a reduction in bool") != std::string::npos, e);
}

namespace {
// The builder's sum / mean with a dtype, on compiled<G> and the run-time plan.
constexpr auto sum_dtype_graph = ctfx::graph([](ctfx::builder& g) {
  auto m = g.input("m", ctfx::b8, {2, 3});
  auto y = g.input("y", ctfx::f32, {2, 3});
  g.output(m.sum({1}, false, ctfx::i32), y.sum({}, false, ctfx::f64), y.mean({0}, true, ctfx::f64), m.sum());
});
}  // namespace

TEST_CASE("builder sum and mean with a dtype: the result in that dtype, on compiled and the run-time plan") {
  bool m[6] = {true, true, false, true, true, true};
  std::vector<float> y = {0.1f, 0.2f, 0.3f, 1e8f, 1.0f, -1e8f};
  double want_sum = 0;
  for (float v : y) want_sum += static_cast<double>(v);
  for (int how = 0; how < 2; ++how) {
    std::vector<std::int32_t> a(2);
    double b = 0;
    std::vector<double> c(3);
    std::int64_t d = 0;
    const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(m, ctfx::b8, {2, 3}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {2, 3})};
    const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(a.data(), ctfx::i32, {2}), ctfx::tensor_ref::contiguous(&b, ctfx::f64, {}),
                                               ctfx::tensor_ref::contiguous(c.data(), ctfx::f64, {1, 3}), ctfx::tensor_ref::contiguous(&d, ctfx::i64, {})};
    const auto st = how == 0 ? ctfx::compiled<decltype(sum_dtype_graph)>::run(in, out) : ctfx::runtime_plan(sum_dtype_graph.get()).run(in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(a == std::vector<std::int32_t>{2, 3});
    CHECK(b == want_sum);  // in f64: 1e8 - 1e8 cancels exactly, the small terms survive
    CHECK(c == std::vector<double>{(0.1f + 1e8) / 2, (static_cast<double>(0.2f) + 1.0) / 2, (static_cast<double>(0.3f) - 1e8) / 2});
    CHECK(d == 5);
  }
}
