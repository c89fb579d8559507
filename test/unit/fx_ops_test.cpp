// Ops PyTorch prints that ctfx takes: tanh, sigmoid and rsqrt (in the DSL and from the text; fused,
// bit-identical to the reference, equal to the math in f32 and f16), scalar_tensor (x[i] = 0.5), and
// the message for a tensor constant whose values the text does not hold.
#include <doctest/doctest.h>
#include <cmath>
#include <cstring>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

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

TEST_CASE("fx: a tensor constant (self._tensor_constant0) is refused naming the constant and why") {
  const auto r = ctfx::parse_fx(R"(def forward(self, x: "f32[4][1]cpu"):
    _tensor_constant0 = self._tensor_constant0
    add = torch.ops.aten.add.Tensor(x, _tensor_constant0)
    return (add,)
)");
  REQUIRE_FALSE(r.ok());
  CHECK(ctfx::to_string(r.error).find("'self._tensor_constant0' is a tensor constant whose values are not in the printed graph") !=
        std::string::npos);
}
