// Ops PyTorch prints that ctfx takes: tanh, sigmoid and rsqrt (in the DSL and from the text; fused,
// bit-identical to the reference, equal to the math in f32 and f16), scalar_tensor (x[i] = 0.5), the
// tensor constants (inputs bound by name); comparisons, logical ops, where,
// clamp_min/clamp_max and mean (graphs, values, printing, messages).
#include <doctest/doctest.h>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/detail/python_mod.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr auto text = R"(def forward(self, x: "f32[3, 5][5, 1]cpu"):
    tanh = torch.ops.aten.tanh.default(x)
    sigmoid = torch.ops.aten.sigmoid.default(tanh)
    rsqrt = torch.ops.aten.rsqrt.default(sigmoid)
    return (rsqrt,)
)";
static_assert(ctfx::parse_fx(text).error.ok());
static_assert(ctfx::parse_fx(text).graph[1].op == ctfx::op_kind::tanh);
static_assert(ctfx::parse_fx(text).graph[2].op == ctfx::op_kind::sigmoid);
static_assert(ctfx::parse_fx(text).graph[3].op == ctfx::op_kind::rsqrt);
}  // namespace

TEST_CASE("unary ops: tanh, sigmoid, rsqrt parse, fuse, and compute as the reference") {
  const ctfx::ir g = ctfx::parse_fx(text).graph;
  REQUIRE(g.error.ok());
  ctfx::runtime_plan p(g);
  CHECK(p.fused().groups_with_members() == 1);
  std::vector<float> x(15), y(15), r(15);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 2.5f;
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {3, 5});
  REQUIRE(p.run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), d)}, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(y.data(), d)}).ok);
  REQUIRE(ctfx::reference_run(g, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), d)}, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(r.data(), d)}).ok);
  CHECK(std::memcmp(y.data(), r.data(), 60) == 0);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float t = std::tanh(x[i]);
    const float s = 1.0f / (1.0f + std::exp(-t));
    CHECK(y[i] == 1.0f / std::sqrt(s));
  }

  auto h = ctfx::build_checked([](ctfx::builder& b) {
    auto a = b.input("a", ctfx::f16, {7});
    b.output(ctfx::sigmoid(ctfx::tanh(a) * 2.0));
  });
  std::vector<ctfx::half_t> a(7), o(7), ro(7);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = ctfx::half_t(static_cast<float>(i) - 3.0f);
  const auto dh = ctfx::tensor_desc::contiguous(ctfx::f16, {7});
  REQUIRE(ctfx::runtime_plan(h).run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(a.data(), dh)}, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(o.data(), dh)}).ok);
  REQUIRE(ctfx::reference_run(h, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(a.data(), dh)}, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(ro.data(), dh)}).ok);
  CHECK(std::memcmp(o.data(), ro.data(), 14) == 0);
  const float t = static_cast<float>(ctfx::half_t(std::tanh(-3.0f)));
  const float m = static_cast<float>(ctfx::half_t(t * 2.0f));
  CHECK(o[0].bits == ctfx::half_t(1.0f / (1.0f + std::exp(-m))).bits);
}

TEST_CASE("scalar_tensor: x[i] = 0.5 as PyTorch prints it (index_put of a 0-d full)") {
  constexpr auto t = R"(def forward(self, x: "f32[6][1]cpu", i: "i64[2][1]cpu"):
    scalar_tensor = torch.ops.aten.scalar_tensor.default(0.5, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'))
    index_put = torch.ops.aten.index_put.default(x, [i], scalar_tensor)
    copy_ = torch.ops.aten.copy_.default(x, index_put)
    return ()
)";
  const auto r = ctfx::parse_fx(t);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  CHECK(r.graph[2].op == ctfx::op_kind::full);
  CHECK(r.graph[2].meta.rank == 0);
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<std::int64_t> i = {4, 1};
  REQUIRE(ctfx::runtime_plan(r.graph).run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {6}),
                                                                        ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2})}, {}).ok);
  CHECK(x == std::vector<float>{1, 0.5f, 3, 4, 0.5f, 6});
}

TEST_CASE("fx: a tensor constant (self._tensor_constant0) becomes an input bound by name, after the parameters") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu", i: "i64[2][1]cpu"):
    _tensor_constant0: "f32[4][1]cpu" = self._tensor_constant0
    lift_fresh_copy: "f32[4][1]cpu" = torch.ops.aten.lift_fresh_copy.default(_tensor_constant0);  _tensor_constant0 = None
    add: "f32[4][1]cpu" = torch.ops.aten.add.Tensor(x, lift_fresh_copy)
    return (add,)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  REQUIRE(r.constants.size() == 1);
  CHECK(r.constants[0].attribute.view() == "_tensor_constant0");
  CHECK(r.constants[0].input == 2);  // after x and i
  CHECK(r.graph[r.constants[0].node].op == ctfx::op_kind::placeholder);
  CHECK(r.graph[r.constants[0].node].name.view() == "_tensor_constant0");
  CHECK(r.graph[3].op == ctfx::op_kind::clone);  // lift_fresh_copy: a copy of the constant
  std::vector<float> x = {1, 2, 3, 4}, c = {0.5f, 0.25f, -1, 8}, out(4);
  std::vector<std::int64_t> i = {0, 1};
  REQUIRE(ctfx::runtime_plan(r.graph)
              .run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4}),
                                                 ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2}),
                                                 ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {4})},
                   std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {4})})
              .ok);
  CHECK(out == std::vector<float>{1.5f, 2.25f, 2, 12});
}

TEST_CASE("fx: a module attribute without a tensor annotation is refused naming it") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu"):
    _tensor_constant0 = self._tensor_constant0
    add = torch.ops.aten.add.Tensor(x, _tensor_constant0)
    return (add,)
)");
  REQUIRE_FALSE(r.ok());
  CHECK(ctfx::to_string(r.error).find("'self._tensor_constant0' is a module attribute without a tensor type annotation") !=
        std::string::npos);
}

// ----- split and repeat -----
namespace {
constexpr auto split_text = R"(def forward(self, x: "f32[7, 2][2, 1]cpu"):
    split = torch.ops.aten.split.Tensor(x, 3)
    getitem: "f32[3, 2][2, 1]cpu" = split[0]
    getitem_2: "f32[1, 2][2, 1]cpu" = split[2]
    repeat: "f32[2, 6][6, 1]cpu" = torch.ops.aten.repeat.default(getitem_2, [2, 3])
    return (getitem, repeat)
)";
static_assert(ctfx::parse_fx(split_text).ok());  // also in the compiler
}  // namespace

TEST_CASE("fx: split is a tuple of slices read with [k], repeat is unsqueeze, expand, a contiguous clone and a view") {
  const auto r = ctfx::parse_fx(split_text);
  REQUIRE(r.ok());
  const std::string printed = ctfx::to_text(r.graph);
  CHECK(printed.find("%getitem : f32[3, 2] = slice(%x, dim=0, start=0, end=3)") != std::string::npos);
  CHECK(printed.find("%getitem_2 : f32[1, 2] = slice(%x, dim=0, start=6, end=7)") != std::string::npos);  // the short last piece
  CHECK(printed.find("%repeat_expand") != std::string::npos);
  CHECK(printed.find("%repeat : f32[2, 6] = view(%repeat_clone") != std::string::npos);
  std::vector<float> x(14), a(6), rep(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  REQUIRE(ctfx::runtime_plan(r.graph)
              .run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {7, 2})},
                   {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {3, 2}), ctfx::tensor_ref::contiguous(rep.data(), ctfx::f32, {2, 6})})
              .ok);
  CHECK(a == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(rep == std::vector<float>{12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13});
}

TEST_CASE("fx: a split's tuple used as a tensor, an element past its end, and too few repeats are refused") {
  auto error_of = [](const char* body) {
    const auto r = ctfx::parse_fx(std::string(R"(def forward(self, x: "f32[6, 2][2, 1]cpu"):
    split = torch.ops.aten.split.Tensor(x, 3)
)") + body);
    return r.ok() ? std::string("ok") : ctfx::to_string(r.error);
  };
  CHECK(error_of("    add = torch.ops.aten.add.Tensor(split, 1)\n    return (add,)\n").find("'split' is a split's tuple of views: use one of its elements") != std::string::npos);
  CHECK(error_of("    g = split[2]\n    return (g,)\n").find("index out of range of the split 'split'") != std::string::npos);
  CHECK(error_of("    r = torch.ops.aten.repeat.default(x, [2])\n    return (r,)\n").find("repeat needs as many repeats as dimensions") != std::string::npos);
  CHECK(error_of("    g = split[-1]\n    return (g,)\n") == "ok");
}

// ----- comparisons, logical ops, where, clamp, mean -----
namespace {
// Every new elementwise op in one chain, so that the groups fuse them: a compare feeding a where
// feeding a clamp, int and f16 operands against float scalars, a NaN in the input.
constexpr auto cmp_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto y = b.input("y", ctfx::f32, {6});
  auto i = b.input("i", ctfx::i64, {4, 6});
  auto h = b.input("h", ctfx::f16, {4, 6});
  auto m = ctfx::logical_and(ctfx::gt(x, y), ctfx::logical_not(ctfx::eq(i, 2.5)));
  b.output(ctfx::clamp(ctfx::where(m, x, y) * 2.0, -1.0, 1.5),                      // f32
           ctfx::logical_or(ctfx::le(i, 1.5), ctfx::ne(x, 0.1)),                      // b8
           ctfx::ge(h, 0.1),                                                          // b8: 0.1 rounded to f16
           ctfx::where(ctfx::lt(x, 0), ctfx::clamp_min(i, 0), ctfx::clamp_max(x, y)),  // f32 (i64 and f32)
           x.mean({1}), x.mean({}, true));
});
using cmp_plan = ctfx::compiled<decltype(cmp_graph)>;
static_assert(cmp_graph.get()[4].meta.dt == ctfx::b8);                   // gt
static_assert(cmp_graph.get()[6].meta.dt == ctfx::b8);                   // eq(i, 2.5)
static_assert(cmp_plan::graph().size() > 0);

struct cmp_data {
  std::vector<float> x = std::vector<float>(24), y = std::vector<float>(6), o0 = std::vector<float>(24), o3 = std::vector<float>(24),
                     o4 = std::vector<float>(4), o5 = std::vector<float>(1);
  std::vector<std::int64_t> i = std::vector<std::int64_t>(24);
  std::vector<ctfx::half_t> h = std::vector<ctfx::half_t>(24);
  std::vector<std::uint8_t> o1 = std::vector<std::uint8_t>(24), o2 = std::vector<std::uint8_t>(24);
  cmp_data() {
    for (std::size_t k = 0; k < 24; ++k) {
      x[k] = static_cast<float>(k % 7) * 0.35f - 1.0f;
      i[k] = static_cast<std::int64_t>(k % 5) - 1;
      h[k] = ctfx::half_t(static_cast<float>(k % 3) * 0.1f);
    }
    x[3] = std::nanf("");
    x[5] = 0.1f;
    for (std::size_t k = 0; k < 6; ++k) y[k] = static_cast<float>(k) * 0.25f - 0.5f;
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {6}),
            ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {4, 6}), ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {4, 6})};
  }
  std::vector<ctfx::tensor_ref> out() {
    return {ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {4, 6}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::b8, {4, 6}),
            ctfx::tensor_ref::contiguous(o2.data(), ctfx::b8, {4, 6}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {4, 6}),
            ctfx::tensor_ref::contiguous(o4.data(), ctfx::f32, {4}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::f32, {1, 1})};
  }
  bool operator==(const cmp_data& o) const {  // bitwise: NaN results compare by their bits
    auto same = [](const auto& a, const auto& b) { return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0; };
    return same(o0, o.o0) && same(o1, o.o1) && same(o2, o.o2) && same(o3, o.o3) && same(o4, o.o4) && same(o5, o.o5);
  }
};
}  // namespace

TEST_CASE("comparisons, logical ops, where, clamp: fused, compiled, run-time and reference plans agree with the math") {
  cmp_data a, b, c;
  REQUIRE(cmp_plan::run(a.in(), a.out()).ok);
  const ctfx::runtime_plan p(cmp_graph.get());
  CHECK(p.fused().groups_with_members() >= 2);
  REQUIRE(p.run(b.in(), b.out()).ok);
  REQUIRE(ctfx::reference_run(cmp_graph.get(), c.in(), c.out()).ok);
  CHECK(a == c);
  CHECK(b == c);
  for (std::size_t k = 0; k < 24; ++k) {
    CAPTURE(k);
    const float x = c.x[k], y = c.y[k % 6];
    const std::int64_t i = c.i[k];
    const bool m = x > y && !(static_cast<float>(i) == 2.5f);
    const float w = (m ? x : y) * 2.0f;
    const float e0 = w != w ? w : std::min(std::max(w, -1.0f), 1.5f);
    CHECK(std::memcmp(&c.o0[k], &e0, 4) == 0);
    CHECK(c.o1[k] == ((i <= 1.5 || x != 0.1f) ? 1 : 0));  // NaN != 0.1f is true
    CHECK(c.o2[k] == (static_cast<float>(c.h[k]) >= static_cast<float>(ctfx::half_t(0.1f)) ? 1 : 0));
    const float e3 = x < 0 ? static_cast<float>(std::max<std::int64_t>(i, 0)) : (x != x || y != y) ? std::nanf("") : std::min(x, y);
    CHECK(std::memcmp(&c.o3[k], &e3, 4) == 0);
  }
  // 0.1 as f16 is 0.0999755859375: an f16 0.1 compares >= 0.1 only in half precision.
  CHECK(c.o2[1] == 1);
  // Means: row 0 holds the NaN; the others sum in row-major order and divide once.
  CHECK(std::isnan(c.o4[0]));
  float s1 = 0;
  for (std::size_t k = 6; k < 12; ++k) s1 += c.x[k];
  CHECK(c.o4[1] == s1 / 6.0f);
  CHECK(std::isnan(c.o5[0]));
}

TEST_CASE("comparisons and where parse from PyTorch's text and print back with their overloads") {
  constexpr auto t = R"(def forward(self, x: "f32[4][1]cpu", y: "i32[4][1]cpu"):
    eq = torch.ops.aten.eq.Scalar(x, 0.5)
    lt = torch.ops.aten.lt.Tensor(y, x)
    logical_or = torch.ops.aten.logical_or.default(eq, lt)
    full_default = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    where = torch.ops.aten.where.self(logical_or, x, full_default)
    clamp_min = torch.ops.aten.clamp_min.default(where, -1)
    clamp_max = torch.ops.aten.clamp_max.Tensor(clamp_min, x)
    mean = torch.ops.aten.mean.dim(clamp_max, [0], True)
    return (mean, logical_or)
)";
  static_assert(ctfx::parse_fx(t).error.ok());
  const auto r = ctfx::parse_fx(t);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::ir& g = r.graph;
  CHECK(g[2].op == ctfx::op_kind::eq);
  CHECK(g[2].meta.dt == ctfx::b8);
  CHECK(g[4].op == ctfx::op_kind::logical_or);
  CHECK(g[6].op == ctfx::op_kind::where);
  CHECK(g[6].meta.dt == ctfx::f32);
  CHECK(g[9].op == ctfx::op_kind::mean);
  CHECK(g[9].meta.rank == 1);
  const std::string fx = ctfx::to_fx(g);
  CHECK(fx.find("torch.ops.aten.eq.Scalar(x, 0.5)") != std::string::npos);
  CHECK(fx.find("torch.ops.aten.lt.Tensor(y, x)") != std::string::npos);
  CHECK(fx.find("torch.ops.aten.where.self(logical_or, x, full_default)") != std::string::npos);
  CHECK(fx.find("torch.ops.aten.clamp_min.default(where, -1)") != std::string::npos);
  CHECK(fx.find("torch.ops.aten.clamp_max.Tensor(clamp_min, x)") != std::string::npos);
  CHECK(fx.find("torch.ops.aten.mean.dim(clamp_max, [0], True)") != std::string::npos);
  const auto again = ctfx::parse_fx(fx);
  REQUIRE(again.ok());
  CHECK(ctfx::to_text(again.graph) == ctfx::to_text(g));
  CHECK(ctfx::to_text(g).find("= where(%logical_or, %x, %full_default)") != std::string::npos);
}

TEST_CASE("where with a non-bool condition and mean of integers are refused naming the node, the rule and the fix") {
  auto w = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto c = b.input("c", ctfx::f32, {4});
    b.output(ctfx::where(c, x, x));
  });
  REQUIRE_FALSE(w.error.ok());
  CHECK(w.error.r == ctfx::rule::dtype_mismatch);
  const std::string m = ctfx::to_string(w.error);
  CHECK(m.find("'where'") != std::string::npos);
  CHECK(m.find("where needs a bool (b8) condition: compare it (x != 0) or convert it") != std::string::npos);

  const auto r = ctfx::parse_fx(R"(def forward(self, i: "i64[4][1]cpu"):
    mean = torch.ops.aten.mean.dim(i, [0])
    return (mean,)
)");
  REQUIRE_FALSE(r.ok());
  const std::string mm = ctfx::to_string(r.error);
  CHECK(mm.find("mean needs a floating input (convert it to f32 first)") != std::string::npos);
  CHECK(mm.find("dtype-mismatch") != std::string::npos);

  auto s = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4});
    auto c = b.input("c", ctfx::b8, {3});
    b.output(ctfx::where(c, x, x));
  });
  REQUIRE_FALSE(s.error.ok());
  CHECK(s.error.r == ctfx::rule::broadcast_shapes);
}

// ----- index.Tensor (gather) -----
TEST_CASE("index: x[i], x[i, j], x[:, j] gather as PyTorch does, an index out of range fails before any write") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {5, 4});
    auto i = b.input("i", ctfx::i64, {3});
    auto j = b.input("j", ctfx::i32, {3});
    b.update(x, x * 2.0);  // a write into the caller's x, after the gathers read it
    b.output(ctfx::index(x, {i}), ctfx::index(x, {i, j}), ctfx::index(x, {ctfx::none, j}));
  });
  REQUIRE(g.error.ok());
  CHECK(g[4].op == ctfx::op_kind::index);
  CHECK(ctfx::to_text(g).find("index(%x, [%i, %j])") != std::string::npos);
  const ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  std::vector<float> x(20), r0(12), r1(3), r2(15);
  for (std::size_t k = 0; k < 20; ++k) x[k] = static_cast<float>(k);
  std::vector<std::int64_t> i = {4, 0, -2};
  std::vector<std::int32_t> j = {1, -1, 0};
  auto in = [&] {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {5, 4}),
                                         ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {3}),
                                         ctfx::tensor_ref::contiguous(j.data(), ctfx::i32, {3})};
  };
  const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(r0.data(), ctfx::f32, {3, 4}),
                                             ctfx::tensor_ref::contiguous(r1.data(), ctfx::f32, {3}),
                                             ctfx::tensor_ref::contiguous(r2.data(), ctfx::f32, {5, 3})};
  auto st = plan.run(in(), out);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(r0 == std::vector<float>{16, 17, 18, 19, 0, 1, 2, 3, 12, 13, 14, 15});
  CHECK(r1 == std::vector<float>{17, 3, 12});  // x[4, 1], x[0, 3], x[3, 0]
  CHECK(r2[0] == 1.0f);
  CHECK(r2[1] == 3.0f);
  CHECK(r2[14] == 16.0f);
  CHECK(x[5] == 10.0f);  // the update ran

  // Out of range (5 in a dimension of 5): refused before the update writes x.
  for (std::size_t k = 0; k < 20; ++k) x[k] = static_cast<float>(k);
  i[2] = 5;
  st = plan.run(in(), out);
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("rule index-in-range") != std::string::npos);
  CHECK(st.message.find("node 'index") != std::string::npos);  // (the call's arguments build in either order)
  CHECK(st.message.find("index 5 (from 'i') is out of range for dimension 0 of size 5") != std::string::npos);
  CHECK(x[5] == 5.0f);
  i[2] = -2;
  j[0] = -5;  // below -4 in dimension 1
  st = ctfx::reference_run(g, in(), out);
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("index -5 (from 'j') is out of range for dimension 1 of size 4") != std::string::npos);
  CHECK(x[5] == 5.0f);

  // A bool mask would give a size known only from its values: refused, naming the fix.
  auto m = ctfx::build_checked([](ctfx::builder& b) {
    auto x2 = b.input("x", ctfx::f32, {5});
    auto mask = b.input("mask", ctfx::b8, {5});
    b.output(ctfx::index(x2, {mask}));
  });
  REQUIRE_FALSE(m.error.ok());
  CHECK(m.error.r == ctfx::rule::index_dtype);
  CHECK(ctfx::to_string(m.error).find("is a bool mask") != std::string::npos);
  CHECK(ctfx::to_string(m.error).find("use where") != std::string::npos);
}

TEST_CASE("index: parses from PyTorch's text (None entries) and prints back as aten.index.Tensor") {
  constexpr auto t = R"(def forward(self, x: "f32[5, 4][4, 1]cpu", j: "i64[3][1]cpu"):
    index = torch.ops.aten.index.Tensor(x, [None, j])
    return (index,)
)";
  static_assert(ctfx::parse_fx(t).error.ok());
  static_assert(ctfx::parse_fx(t).graph[2].meta.rank == 2);
  const auto r = ctfx::parse_fx(t);
  REQUIRE(r.ok());
  CHECK(ctfx::to_fx(r.graph).find("torch.ops.aten.index.Tensor(x, [None, j])") != std::string::npos);
}

// ----- index_put with a bool mask -----
TEST_CASE("index_put with a bool mask: x[mask] = v and += v, a computed mask after an input write, mixed indices refused") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 4});
    auto y = b.input("y", ctfx::f32, {3, 4});
    auto v = b.input("v", ctfx::f32, {4});
    b.update(y, y + 1.0);                                           // a caller write
    auto m = ctfx::gt(x, 0);                                        // a mask computed in the graph
    b.update(x, ctfx::index_put(x, {m}, b.full({}, 0.5)));          // x[x > 0] = 0.5
    b.output(ctfx::index_put(y, {ctfx::lt(y.sum({1}), 8.0)}, v, true));  // y[y.sum(1) < 8] += v: rows
  });
  REQUIRE_MESSAGE(g.error.ok(), ctfx::to_string(g.error));
  const ctfx::runtime_plan plan(g);
  REQUIRE_MESSAGE(plan.error().ok(), plan.error().message());
  auto data = [] {
    std::vector<float> x(12), y(12), v = {10, 20, 30, 40};
    for (std::size_t k = 0; k < 12; ++k) {
      x[k] = static_cast<float>(k % 5) - 2.0f;
      y[k] = static_cast<float>(k) * 0.25f;
    }
    return std::vector<std::vector<float>>{x, y, v, std::vector<float>(12)};
  };
  auto run = [](auto&& f, std::vector<std::vector<float>>& d) {
    return f(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(d[0].data(), ctfx::f32, {3, 4}),
                                           ctfx::tensor_ref::contiguous(d[1].data(), ctfx::f32, {3, 4}),
                                           ctfx::tensor_ref::contiguous(d[2].data(), ctfx::f32, {4})},
             std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(d[3].data(), ctfx::f32, {3, 4})});
  };
  auto a = data(), r = data();
  REQUIRE(run([&](auto in, auto out) { return plan.run(in, out); }, a).ok);
  REQUIRE(run([&](auto in, auto out) { return ctfx::reference_run(g, in, out); }, r).ok);
  CHECK(a == r);
  const auto d = data();
  for (std::size_t k = 0; k < 12; ++k) {
    CAPTURE(k);
    CHECK(a[0][k] == (d[0][k] > 0 ? 0.5f : d[0][k]));
    const float y1 = d[1][k];  // the graph reads y's value before its update (the epilogue writes it)
    float row = 0;
    for (std::size_t c = 0; c < 4; ++c) row += d[1][k / 4 * 4 + c];
    CHECK(a[3][k] == (row < 8.0f ? y1 + d[2][k % 4] : y1));
    CHECK(a[1][k] == d[1][k] + 1.0f);
  }

  auto mixed = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {3, 4});
    auto m = b.input("m", ctfx::b8, {3});
    auto j = b.input("j", ctfx::i64, {1});
    b.output(ctfx::index_put(x, {m, j}, b.full({}, 1.0)));
  });
  REQUIRE(mixed.error.ok());
  const ctfx::runtime_plan p2(mixed);
  REQUIRE_FALSE(p2.error().ok());
  CHECK(std::string(p2.error().message()).find("rule bool-mask-index") != std::string::npos);
  CHECK(std::string(p2.error().message()).find("a mask only as the one index") != std::string::npos);
}

TEST_CASE("fused kernels: comparisons and where in the per-element kernel (CUDA's) equal the host's chunked loop") {
  // out = clamp_min(where(x < 0.1, i, x), -0.5), x strided (a transposed view), i an i32 row.
  std::vector<float> xt(6 * 300);
  std::vector<std::int32_t> iv(300);
  for (std::size_t k = 0; k < xt.size(); ++k) xt[k] = static_cast<float>(k % 23) * 0.05f - 0.6f;
  xt[7] = std::nanf("");
  for (std::size_t k = 0; k < iv.size(); ++k) iv[k] = static_cast<std::int32_t>(k % 7) - 3;
  std::vector<float> o1(1800), o2(1800);
  ctfx::kernels::fused_kernel k;
  k.n_leaves = 2;
  k.leaf_dt[0] = ctfx::dtype::f32;
  k.leaf_dt[1] = ctfx::dtype::i32;
  k.leaf[0] = ctfx::strided{reinterpret_cast<std::byte*>(xt.data()), ctfx::dtype::f32, 2, {6, 300}, {1, 6}};
  k.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(iv.data()), ctfx::dtype::i32, 2, {6, 300}, {0, 1}};
  ctfx::kernels::fused_op lt{ctfx::op_kind::lt, ctfx::dtype::b8, ctfx::kernels::leaf_ref(0), -1, true,
                             static_cast<double>(0.1f)};  // the scalar as the plan rounds it: to f32
  lt.cdt = ctfx::dtype::f32;
  ctfx::kernels::fused_op wh{ctfx::op_kind::where, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), ctfx::kernels::leaf_ref(0)};
  wh.c = 0;
  ctfx::kernels::fused_op cm{ctfx::op_kind::clamp_min, ctfx::dtype::f32, 1, -1, true, -0.5};
  ctfx::kernels::resolve(lt, ctfx::dtype::f32, ctfx::dtype::b8);
  ctfx::kernels::resolve(wh, ctfx::dtype::i32, ctfx::dtype::f32);
  ctfx::kernels::resolve(cm, ctfx::dtype::f32, ctfx::dtype::f32);
  k.ops[0] = lt;
  k.ops[1] = wh;
  k.ops[2] = cm;
  k.n_ops = 3;
  k.out = ctfx::strided{reinterpret_cast<std::byte*>(o1.data()), ctfx::dtype::f32, 2, {6, 300}, {300, 1}};
  ctfx::kernels::run_fused(ctfx::device_ctx{}, k);
  k.out.p = reinterpret_cast<std::byte*>(o2.data());
  ctfx::parallel_for(ctfx::device_ctx{}, 1800, ctfx::kernels::fused_elem_fn{k});
  CHECK(std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 300; ++c) {
      const float x = xt[c * 6 + r];
      const float w = x < 0.1f ? static_cast<float>(iv[c]) : x;
      const float e = w != w ? w : std::max(w, -0.5f);
      REQUIRE(std::memcmp(&o1[r * 300 + c], &e, 4) == 0);
    }
}

TEST_CASE("fx: bitwise and/or/not of bool masks (m1 & m2) are the logical ops, of integers the bitwise ops, of floats refused") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu"):
    gt = torch.ops.aten.gt.Scalar(x, 0)
    lt = torch.ops.aten.lt.Scalar(x, 1)
    bitwise_not = torch.ops.aten.bitwise_not.default(lt)
    bitwise_or = torch.ops.aten.bitwise_or.Tensor(gt, bitwise_not)
    bitwise_and = torch.ops.aten.bitwise_and.Tensor(bitwise_or, lt)
    return (bitwise_and,)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  CHECK(r.graph[3].op == ctfx::op_kind::logical_not);
  CHECK(r.graph[4].op == ctfx::op_kind::logical_or);
  CHECK(r.graph[5].op == ctfx::op_kind::logical_and);
  const auto ints = ctfx::parse_fx(R"(def forward(self, i: "i64[4][1]cpu"):
    bitwise_and = torch.ops.aten.bitwise_and.Tensor(i, i)
    return (bitwise_and,)
)");
  REQUIRE_MESSAGE(ints.ok(), ctfx::to_string(ints.error));
  CHECK(ints.graph[1].op == ctfx::op_kind::bitwise_and);
  const auto bad = ctfx::parse_fx(R"(def forward(self, f: "f32[4][1]cpu"):
    bitwise_and = torch.ops.aten.bitwise_and.Tensor(f, f)
    return (bitwise_and,)
)");
  REQUIRE_FALSE(bad.ok());
  CHECK(ctfx::to_string(bad.error).find("node 'bitwise_and'") != std::string::npos);
}

TEST_CASE("clamp: aten.clamp.default with either bound optional parses as clamp_min / clamp_max, the DSL's clamp too") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu"):
    clamp = torch.ops.aten.clamp.default(x, -0.5, 0.5)
    clamp_1 = torch.ops.aten.clamp.default(x, None, 2)
    clamp_2 = torch.ops.aten.clamp.default(x, min = 0.25)
    return (clamp, clamp_1, clamp_2)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::ir& g = r.graph;
  CHECK(g[1].op == ctfx::op_kind::clamp_min);
  CHECK(g[1].name.view() == "clamp_min");
  CHECK(g[2].op == ctfx::op_kind::clamp_max);
  CHECK(g[2].name.view() == "clamp");
  CHECK(g[3].op == ctfx::op_kind::clamp_max);
  CHECK(g[3].aux == 2);  // an integral bound
  CHECK(g[4].op == ctfx::op_kind::clamp_min);
  CHECK(ctfx::to_fx(g).find("torch.ops.aten.clamp_max.default(clamp_min, 0.5)") != std::string::npos);
  const auto tb = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu", lo: "f32[4][1]cpu", hi: "f32[][]cpu"):
    clamp = torch.ops.aten.clamp.Tensor(x, lo, hi)
    clamp_1 = torch.ops.aten.clamp.Tensor(x, None, hi)
    return (clamp, clamp_1)
)");
  REQUIRE_MESSAGE(tb.ok(), ctfx::to_string(tb.error));
  CHECK(tb.graph[3].op == ctfx::op_kind::clamp_min);
  CHECK(tb.graph[3].nargs == 2);
  CHECK(tb.graph[4].op == ctfx::op_kind::clamp_max);
  CHECK(tb.graph[5].op == ctfx::op_kind::clamp_max);
  CHECK(ctfx::to_fx(tb.graph).find("torch.ops.aten.clamp_max.Tensor(clamp_min, hi)") != std::string::npos);
  std::vector<float> x = {-2, 0.5f, std::nanf(""), 3}, lo = {-1, 1, 0, std::nanf("")}, hi = {2}, o0(4), o1(4);
  REQUIRE(ctfx::runtime_plan(tb.graph).run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4}),
                                                                         ctfx::tensor_ref::contiguous(lo.data(), ctfx::f32, {4}),
                                                                         ctfx::tensor_ref::contiguous(hi.data(), ctfx::f32, {})},
                                           std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {4}),
                                                                         ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {4})}).ok);
  CHECK(o0[0] == -1.0f);
  CHECK(o0[1] == 1.0f);
  CHECK(std::isnan(o0[2]));  // NaN input
  CHECK(std::isnan(o0[3]));  // NaN bound
  CHECK(o1[3] == 2.0f);
  const auto none = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu"):
    clamp = torch.ops.aten.clamp.default(x)
    return (clamp,)
)");
  REQUIRE_FALSE(none.ok());
  CHECK(ctfx::to_string(none.error).find("node 'clamp': clamp needs a min or a max") != std::string::npos);

  auto d = ctfx::build_checked([](ctfx::builder& b) {
    auto v = b.input("x", ctfx::f32, {4});
    b.output(ctfx::clamp(v, std::nullopt, 1.0), ctfx::clamp(v, -1.0, std::nullopt), ctfx::clamp(v, -1.0, 1.0));
  });
  REQUIRE(d.error.ok());
  int mins = 0, maxs = 0;
  for (const auto& n : d.nodes) {
    mins += n.op == ctfx::op_kind::clamp_min;
    maxs += n.op == ctfx::op_kind::clamp_max;
  }
  CHECK(mins == 2);
  CHECK(maxs == 2);
  auto bad = ctfx::build_checked([](ctfx::builder& b) { b.output(ctfx::clamp(b.input("x", ctfx::f32, {4}), std::nullopt, std::nullopt)); });
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("clamp needs a min or a max") != std::string::npos);
}

namespace {
constexpr auto gather_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 3});
  auto i = b.input("i", ctfx::i64, {4});
  b.update(x, ctfx::index_put(x, {ctfx::lt(x, 0)}, b.full({}, 0.0)));  // x[x < 0] = 0
  b.output(ctfx::index(x, {i}).mean({0}), ctfx::index(x, {i}) * 2.0);
});
using gather_plan = ctfx::compiled<decltype(gather_graph)>;
}  // namespace

TEST_CASE("compiled: index, a bool-mask put and mean run in the compile-time plan as in the run-time plan and the reference") {
  auto data = [] {
    std::vector<float> x(18);
    for (std::size_t k = 0; k < 18; ++k) x[k] = static_cast<float>(k % 7) * 0.75f - 2.0f;
    return x;
  };
  std::vector<std::int64_t> i = {5, 0, -1, 2};
  auto run = [&](auto&& f, std::vector<float>& x, std::vector<float>& m, std::vector<float>& y) {
    return f(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {6, 3}),
                                           ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {4})},
             std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(m.data(), ctfx::f32, {3}),
                                           ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {4, 3})});
  };
  std::vector<float> xa = data(), xb = data(), xc = data(), ma(3), mb(3), mc(3), ya(12), yb(12), yc(12);
  auto st = run([](auto in, auto out) { return gather_plan::run(in, out); }, xa, ma, ya);
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(run([](auto in, auto out) { return ctfx::runtime_plan(gather_graph.get()).run(in, out); }, xb, mb, yb).ok);
  REQUIRE(run([](auto in, auto out) { return ctfx::reference_run(gather_graph.get(), in, out); }, xc, mc, yc).ok);
  CHECK(xa == xc);
  CHECK(xb == xc);
  CHECK(ma == mc);
  CHECK(mb == mc);
  CHECK(ya == yc);
  CHECK(yb == yc);
  const auto x0 = data();
  for (std::size_t k = 0; k < 18; ++k) CHECK(xc[k] == (x0[k] < 0 ? 0.0f : x0[k]));
  // The gathers read x before its update: rows 5, 0, 5 (-1), 2 of the original x.
  CHECK(yc[0] == x0[15] * 2.0f);
  CHECK(mc[1] == (x0[16] + x0[1] + x0[16] + x0[7]) / 4.0f);
  // An out-of-range index fails before the update writes x.
  i[3] = 6;
  std::vector<float> xd = data();
  st = run([](auto in, auto out) { return gather_plan::run(in, out); }, xd, ma, ya);
  CHECK_FALSE(st.ok);
  CHECK(st.message.find("rule index-in-range") != std::string::npos);
  CHECK(xd == data());
}

TEST_CASE("fx: where.ScalarOther / ScalarSelf / Scalar take a number for a branch (a 0-d full of the result's dtype)") {
  const auto r = ctfx::parse_fx(R"(def forward(self, c: "b8[4][1]cpu", x: "f16[4][1]cpu", i: "i64[4][1]cpu"):
    where = torch.ops.aten.where.ScalarOther(c, x, 0.1)
    where_1 = torch.ops.aten.where.ScalarSelf(c, 2.5, i)
    where_2 = torch.ops.aten.where.Scalar(c, 1, 0)
    return (where, where_1, where_2)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::ir& g = r.graph;
  CHECK(g[3].op == ctfx::op_kind::full);
  CHECK(g[3].name.view() == "where_other");
  CHECK(g[3].meta.dt == ctfx::f16);  // a float number does not widen an f16 tensor
  CHECK(g[4].op == ctfx::op_kind::where);
  CHECK(g[4].meta.dt == ctfx::f16);
  CHECK(g[6].meta.dt == ctfx::f32);  // a float number against i64: the default float dtype
  CHECK(g[9].meta.dt == ctfx::i64);  // two ints
  CHECK(ctfx::to_fx(g).find("torch.ops.aten.where.self(c, x, where_other)") != std::string::npos);
  std::vector<std::uint8_t> c = {1, 0, 1, 0};
  std::vector<ctfx::half_t> x = {ctfx::half_t(1.0f), ctfx::half_t(2.0f), ctfx::half_t(3.0f), ctfx::half_t(4.0f)}, o0(4);
  std::vector<std::int64_t> i = {-1, 7, 9, 11}, o2(4);
  std::vector<float> o1(4);
  const auto st = ctfx::runtime_plan(g).run(
      std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(c.data(), ctfx::b8, {4}), ctfx::tensor_ref::contiguous(x.data(), ctfx::f16, {4}),
                                    ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {4})},
      std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(o0.data(), ctfx::f16, {4}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {4}),
                                    ctfx::tensor_ref::contiguous(o2.data(), ctfx::i64, {4})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(o0[0].bits == ctfx::half_t(1.0f).bits);
  CHECK(o0[1].bits == ctfx::half_t(0.1f).bits);
  CHECK(o1 == std::vector<float>{2.5f, 7.0f, 2.5f, 11.0f});
  CHECK(o2 == std::vector<std::int64_t>{1, 0, 1, 0});
}

// ----- remainder (Python's modulo) -----
static_assert(ctfx::ops::detail::python_mod(-7, 3) == 2 && ctfx::ops::detail::python_mod(7, -3) == -2);
static_assert(ctfx::ops::detail::python_mod(6, 3) == 0 && ctfx::ops::detail::python_mod(5, 0) == 0);

TEST_CASE("fx: remainder.Scalar and remainder.Tensor take the divisor's sign, on integers and floats") {
  const auto r = ctfx::parse_fx(R"(def forward(self, n: "i64[6][1]cpu", x: "f32[6][1]cpu", y: "f32[6][1]cpu"):
    remainder: "i64[6][1]cpu" = torch.ops.aten.remainder.Scalar(n, 4)
    remainder_1: "f32[6][1]cpu" = torch.ops.aten.remainder.Tensor(x, y)
    return (remainder, remainder_1)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  CHECK(r.graph[3].op == ctfx::op_kind::remainder);
  CHECK(ctfx::to_fx(r.graph).find("torch.ops.aten.remainder.Scalar(n, 4)") != std::string::npos);
  CHECK(ctfx::to_fx(r.graph).find("torch.ops.aten.remainder.Tensor(x, y)") != std::string::npos);
  std::vector<std::int64_t> n = {-7, -4, -1, 0, 5, 9}, nr(6);
  std::vector<float> x = {-7.5f, 7.5f, -0.0f, 3.0f, 1e-3f, -2.0f}, y = {2.0f, -2.0f, 3.0f, 1.5f, -1.0f, 2.0f}, xr(6);
  const auto run = [&](auto&& go) {
    return go(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(n.data(), ctfx::i64, {6}),
                                            ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {6}),
                                            ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {6})},
              std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(nr.data(), ctfx::i64, {6}),
                                            ctfx::tensor_ref::contiguous(xr.data(), ctfx::f32, {6})});
  };
  REQUIRE(run([&](auto in, auto out) { return ctfx::runtime_plan(r.graph).run(in, out); }).ok);
  CHECK(nr == std::vector<std::int64_t>{1, 0, 3, 0, 1, 1});
  // fmod(-7.5, 2) = -1.5 -> 0.5; fmod(7.5, -2) = 1.5 -> -0.5; -0.0 stays; 1e-3 % -1 = 1e-3 - 1
  CHECK(xr == std::vector<float>{0.5f, -0.5f, -0.0f, 0.0f, 1e-3f - 1.0f, 0.0f});
  CHECK(std::signbit(xr[2]));
  std::vector<std::int64_t> nr2 = nr;
  std::vector<float> xr2 = xr;
  REQUIRE(run([&](auto in, auto out) { return ctfx::reference_run(r.graph, in, out); }).ok);
  CHECK(nr == nr2);
  CHECK(xr == xr2);
}
