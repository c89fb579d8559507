// From the FX side: aten.unbind (a tuple of selects), aten.gather, aten.scatter (.src, .value), aten.scatter_add and
// aten.scatter_reduce.two (sum, prod, mean, amax, amin, include_self either way). What ctfx does not
// compute (an unknown reduction, a sparse gradient) is refused by name; an index out of range in
// a captured program is refused before the program's in-place write; printed back, a graph parses
// to the same program. (The captured programs label_smoothing_gather, scatter_add_histogram,
// segment_sum_scatter_reduce, scatter_duplicates, scatter_inplace_input, gather_empty_index,
// embedding_bag_max, segment_mean, scatter_prod_amin and scatter_reduce_half check the values
// against eager, in fx_values_test.)
#include <doctest/doctest.h>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr auto along_text = R"fx(def forward(self, x: "f32[3, 4][4, 1]cpu", k: "i64[2, 3][3, 1]cpu", s: "f32[2, 3][3, 1]cpu"):
    scatter: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter.src(x, 1, k, s)
    scatter_add: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_add.default(scatter, 0, k, s)
    scatter_1: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter.value(x, -1, k, 7)
    gather: "f32[2, 3][3, 1]cpu" = torch.ops.aten.gather.default(scatter_add, -2, k)
    copy_: "f32[3, 4][4, 1]cpu" = torch.ops.aten.copy_.default(x, scatter_add)
    return (gather, scatter_1)
)fx";
static_assert(ctfx::parse_fx(along_text).error.ok());
// every reduction, and f16's widening, also at compile time
constexpr auto reduce_text = R"fx(def forward(self, x: "f32[3, 4][4, 1]cpu", k: "i64[2, 3][3, 1]cpu", s: "f32[2, 3][3, 1]cpu", h: "f16[3, 4][4, 1]cpu", t: "f16[2, 3][3, 1]cpu", i: "i32[3, 4][4, 1]cpu", j: "i32[2, 3][3, 1]cpu"):
    a: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(x, 0, k, s, 'amin', include_self = False)
    b: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(a, 1, k, s, 'prod')
    c: "f16[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(h, 0, k, t, 'mean', include_self = False)
    d: "i32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(i, 0, k, j, 'mean')
    return (b, c, d)
)fx";
static_assert(ctfx::parse_fx(reduce_text).error.ok());
static_assert(ctfx::fx::aten_name(ctfx::op_kind::gather) == "aten.gather.default");
static_assert(ctfx::fx::aten_name(ctfx::op_kind::scatter) == "aten.scatter.src");

std::string parse_error(const std::string& text) {
  const auto r = ctfx::parse_fx(text);
  return r.error.ok() ? std::string() : ctfx::to_string(r.error);
}

// The program of along_text on plain loops: PyTorch's definitions, duplicates in the index's order.
void along_loops(std::vector<float>& x, const std::vector<std::int64_t>& k, const std::vector<float>& s, std::vector<float>& gather,
                 std::vector<float>& filled) {
  filled = x;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) filled[static_cast<std::size_t>(r * 4 + k[static_cast<std::size_t>(r * 3 + c)])] = 7.0f;
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) x[static_cast<std::size_t>(r * 4 + k[static_cast<std::size_t>(r * 3 + c)])] = s[static_cast<std::size_t>(r * 3 + c)];
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      float& d = x[static_cast<std::size_t>(k[static_cast<std::size_t>(r * 3 + c)] * 4 + c)];
      d = d + s[static_cast<std::size_t>(r * 3 + c)];
    }
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) gather[static_cast<std::size_t>(r * 3 + c)] = x[static_cast<std::size_t>(k[static_cast<std::size_t>(r * 3 + c)] * 4 + c)];
}
}  // namespace

TEST_CASE("fx gather and scatter: values as PyTorch defines them, in place into the input, and printed back the same program") {
  const ctfx::ir g = ctfx::parse_fx(along_text).graph;
  REQUIRE(g.error.ok());
  const std::string text = ctfx::to_fx(g);
  CHECK(text.find("torch.ops.aten.scatter_add.default(scatter, 0, k, s)") != std::string::npos);
  CHECK(text.find("torch.ops.aten.gather.default(scatter_add, 0, k)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  for (const ctfx::ir* graph : {&g, &again.graph}) {
    ctfx::runtime_plan p(*graph);
    REQUIRE(p.error().ok());
    for (int how = 0; how < 3; ++how) {
      std::vector<float> x = {0.5f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, s = {0.25f, -1, 1e8f, 3, -1e8f, 2}, a(6, -1.0f), v(12, -1.0f);
      std::vector<std::int64_t> k = {2, 0, 2, 1, 1, 1};
      std::vector<float> wx = x, wa(6), wv;
      along_loops(wx, k, s, wa, wv);
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i64, {2, 3}),
                                                ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {2, 3})};
      const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {2, 3}), ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {3, 4})};
      const auto st = how == 0 ? p.run(in, out) : how == 1 ? p.run(in, out, ctfx::device_ctx{ctfx::backend::omp}) : ctfx::reference_run(*graph, in, out);
      REQUIRE_MESSAGE(st.ok, st.message);
      CHECK(x == wx);
      CHECK(a == wa);
      CHECK(v == wv);
      // An index past x's dimension 0 (the scatter_add's dim; the scatter's dim 1 accepts it):
      // refused naming the node, x as it was.
      k[4] = 3;
      const auto before = x;
      const auto bad = how == 0 ? p.run(in, out) : how == 1 ? p.run(in, out, ctfx::device_ctx{ctfx::backend::omp}) : ctfx::reference_run(*graph, in, out);
      REQUIRE_FALSE(bad.ok);
      CHECK_MESSAGE(bad.message.find("rule index-in-range") != std::string::npos, bad.message);
      CHECK_MESSAGE(bad.message.find("'scatter_add'") != std::string::npos, bad.message);
      CHECK(x == before);
    }
  }
}

TEST_CASE("fx gather and scatter: an unknown reduction, a multi-node in-place reduction, a sparse gradient and a dim out of range are refused by name") {
  const std::string head = R"fx(def forward(self, x: "f32[3, 4][4, 1]cpu", k: "i64[2, 3][3, 1]cpu", s: "f32[2, 3][3, 1]cpu"):
)fx";
  std::string e = parse_error(head + "    r: \"f32[3, 4][4, 1]cpu\" = torch.ops.aten.scatter_reduce.two(x, 0, k, s, 'max')\n    return (r,)\n");
  CHECK_MESSAGE(e.find("node 'r': scatter_reduce's reduce must be one of sum, prod, mean, amax, amin") != std::string::npos, e);
  // in place, what takes more than one node (a mean, an f16 sum) is refused
  e = parse_error(head + "    r: \"f32[3, 4][4, 1]cpu\" = torch.ops.aten.scatter_reduce_.two(x, 0, k, s, 'mean')\n    return (r,)\n");
  CHECK_MESSAGE(e.find("node 'r': this in-place scatter reduction takes more than one node") != std::string::npos, e);
  e = parse_error(head + "    r: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.gather.default(x, 0, k, sparse_grad = True)\n    return (r,)\n");
  CHECK_MESSAGE(e.find("sparse_grad=True") != std::string::npos, e);
  e = parse_error(head + "    r: \"f32[2, 3][3, 1]cpu\" = torch.ops.aten.gather.default(x, 2, k)\n    return (r,)\n");
  CHECK_MESSAGE(e.find("node 'r': the dim of gather or scatter is out of range") != std::string::npos, e);
  // an index wider than x in a dimension other than dim, as PyTorch refuses it
  e = parse_error(R"fx(def forward(self, x: "f32[3, 2][2, 1]cpu", k: "i64[2, 3][3, 1]cpu"):
    r: "f32[2, 3][3, 1]cpu" = torch.ops.aten.gather.default(x, 0, k)
    return (r,)
)fx");
  CHECK_MESSAGE(e.find("not provably at most") != std::string::npos, e);
}

TEST_CASE("fx unbind: a tuple of selects read with [k], an element past its length and a dim out of range refused") {
  const std::string head = R"fx(def forward(self, x: "f32[3, 4][4, 1]cpu", k: "i64[2, 3][3, 1]cpu", s: "f32[2, 3][3, 1]cpu"):
)fx";
  const auto r = ctfx::parse_fx(head + R"fx(    u = torch.ops.aten.unbind.int(x, 1)
    a: "f32[3][4]cpu" = u[3]
    b: "f32[3][4]cpu" = u[-4]
    m: "f32[3][1]cpu" = torch.ops.aten.mul.Tensor(a, b)
    return (m,)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  ctfx::runtime_plan p(r.graph);
  std::vector<float> x(12), m(3), sv(6);
  std::vector<std::int64_t> k(6);
  for (std::size_t i = 0; i < 12; ++i) x[i] = static_cast<float>(i);
  const auto st = p.run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i64, {2, 3}),
                         ctfx::tensor_ref::contiguous(sv.data(), ctfx::f32, {2, 3})},
                        {ctfx::tensor_ref::contiguous(m.data(), ctfx::f32, {3})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(m == std::vector<float>{0 * 3, 4 * 7, 8 * 11});  // column 3 times column 0
  std::string e = parse_error(head + "    u = torch.ops.aten.unbind.int(k)\n    g: \"i64[3][1]cpu\" = u[2]\n    return (g,)\n");
  CHECK_MESSAGE(e.find("index out of range of the split 'u'") != std::string::npos, e);
  e = parse_error(head + "    u = torch.ops.aten.unbind.int(k, 2)\n    g: \"i64[3][1]cpu\" = u[0]\n    return (g,)\n");
  CHECK_MESSAGE(e.find("node 'u': unbind's dim is out of range") != std::string::npos, e);
}

TEST_CASE("fx scatter_reduce: printed back as PyTorch writes it (the reduction by name, include_self when False), parsed to the same graph") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, x: "f32[3, 4][4, 1]cpu", k: "i64[2, 3][3, 1]cpu", s: "f32[2, 3][3, 1]cpu", h: "f16[3, 4][4, 1]cpu", t: "f16[2, 3][3, 1]cpu"):
    a: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(x, 0, k, s, 'amax', include_self = False)
    b: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(a, 1, k, s, 'prod')
    c: "f32[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(b, 0, k, s, 'mean', include_self = False)
    d: "f16[3, 4][4, 1]cpu" = torch.ops.aten.scatter_reduce.two(h, 1, k, t, 'sum')
    return (c, d)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  const std::string text = ctfx::to_fx(r.graph);
  CHECK_MESSAGE(text.find("torch.ops.aten.scatter_reduce.two(x, 0, k, s, 'amax', include_self = False)") != std::string::npos, text);
  CHECK_MESSAGE(text.find("torch.ops.aten.scatter_reduce.two(a, 1, k, s, 'prod')") != std::string::npos, text);
  // mean: a sum without self divided by a count; f16: a sum of f32 copies (PyTorch's float accumulator)
  CHECK_MESSAGE(text.find("torch.ops.aten.scatter_reduce.two(b, 0, k, s, 'sum', include_self = False)") != std::string::npos, text);
  CHECK_MESSAGE(text.find("torch.ops.aten.div.Tensor(") != std::string::npos, text);
  CHECK_MESSAGE(text.find("torch.ops.aten.scatter_add.default(d__0, 1, k, d__1)") != std::string::npos, text);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  CHECK(ctfx::to_fx(again.graph) == text);
  // values: x = 1..12, k, s; the reparsed graph computes the same bits
  std::vector<float> x(12), s = {0.5f, -2.0f, 3.0f, 1.5f, 4.0f, -1.0f}, c1(12), c2(12);
  for (std::size_t i = 0; i < 12; ++i) x[i] = static_cast<float>(i) + 1.0f;
  std::vector<std::int64_t> k = {2, 0, 2, 1, 1, 1};
  std::vector<ctfx::half_t> h(12, ctfx::half_t(2048.0f)), t(6, ctfx::half_t(1.0f)), d1(12), d2(12);
  for (int pass = 0; pass < 2; ++pass) {
    ctfx::runtime_plan p(pass == 0 ? r.graph : again.graph);
    REQUIRE(p.error().ok());
    auto& c = pass == 0 ? c1 : c2;
    auto& d = pass == 0 ? d1 : d2;
    const auto st = p.run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i64, {2, 3}),
                           ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {2, 3}), ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {3, 4}),
                           ctfx::tensor_ref::contiguous(t.data(), ctfx::f16, {2, 3})},
                          {ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(d.data(), ctfx::f16, {3, 4})});
    REQUIRE_MESSAGE(st.ok, st.message);
  }
  CHECK(c1 == c2);
  // a: amax without self (each destination one source); b: prod along dim 1 with self; c: mean
  // without self (count 1 each)
  CHECK(c1 == std::vector<float>{-2, -2, 4.5f, 4, 1.5f, 4, -1, 8, 0.5f, 10, 3, 12});
  // d[1][1] takes 1 three times: 2048 + 3 = 2051 in f32, 2052 in f16 (added in f16 step by step
  // it would stay 2048); every other destination at most once (2049 rounds to 2048)
  CHECK(static_cast<float>(d1[1 * 4 + 1]) == 2052.0f);
  CHECK(static_cast<float>(d1[0]) == 2048.0f);
  CHECK(std::memcmp(d1.data(), d2.data(), 12 * sizeof(ctfx::half_t)) == 0);
}
