// Views after the copy_ epilogue, as PyTorch prints `x[0] += 7; return x[:, 1], x.t()`: they read
// the inputs as the epilogue leaves them (Inductor accepts such graphs; so does ctfx).
#include <doctest/doctest.h>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

namespace {
constexpr auto text = R"(def forward(self, x: "f32[3, 4][4, 1]cpu"):
    select = torch.ops.aten.select.int(x, 0, 0)
    add = torch.ops.aten.add.Tensor(select, 7)
    select_scatter = torch.ops.aten.select_scatter.default(x, add, 0, 0)
    copy_ = torch.ops.aten.copy_.default(x, select_scatter)
    select_1 = torch.ops.aten.select.int(x, 1, 1)
    permute = torch.ops.aten.permute.default(x, [1, 0])
    return (select_1, permute)
)";
static_assert(ctfx::parse_fx(text).ok());
}  // namespace

TEST_CASE("fx: views after the copy_ epilogue read the updated inputs, on the plan and the reference") {
  const auto r = ctfx::parse_fx(text);
  REQUIRE(r.ok());
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, col(3), t(12);
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4})};
    auto out = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(col.data(), ctfx::f32, {3}),
                                             ctfx::tensor_ref::contiguous(t.data(), ctfx::f32, {4, 3})};
    const ctfx::run_status st = mode == 0 ? ctfx::runtime_plan(r.graph).run(in, out) : ctfx::reference_run(r.graph, in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(x == std::vector<float>{7, 8, 9, 10, 4, 5, 6, 7, 8, 9, 10, 11});
    CHECK(col == std::vector<float>{8, 5, 9});
    CHECK(t == std::vector<float>{7, 4, 8, 8, 5, 9, 9, 6, 10, 10, 7, 11});
  }
}
