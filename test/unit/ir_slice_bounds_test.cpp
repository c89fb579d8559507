// Slice bounds as PyTorch takes them: negative bounds count from the end, and both are clamped to
// the dimension (x[2:100] on 6 rows is x[2:6]); a slice_scatter into such a view writes what it
// covers. In the compiler and at run time.
#include <doctest/doctest.h>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {
constexpr auto clamped = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {6, 3});
  b.output(x.slice(0, 2, 100).clone(), x.slice(0, -100, 2).clone(), x.slice(0, 5, 2).clone(), x.slice(1, -2, 1000).clone());
});
constexpr ctfx::index_t rows(int out) {
  const ctfx::ir g = clamped.get();
  return g.meta(g.args_of(g.output_node())[static_cast<std::size_t>(out)]).size[0].value();
}
static_assert(rows(0) == 4);  // [2:6]
static_assert(rows(1) == 2);  // [0:2]
static_assert(rows(2) == 0);  // end before start: empty
}  // namespace

TEST_CASE("slice bounds: clamped to the dimension, negative ones from the end, a scatter into the clamped view") {
  const ctfx::ir& g0 = clamped.get();
  const auto o = g0.args_of(g0.output_node());
  CHECK(g0.meta(o[3]).size[1].value() == 2);  // x[:, -2:1000] is x[:, 1:3]
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6, 3});
    auto v = b.input("v", ctfx::f32, {2, 3});
    b.update(x, ctfx::slice_scatter(x, v * 2.0, 0, 4, 100));  // x[4:100] = v * 2
  });
  REQUIRE(g.error.ok());
  std::vector<float> x(18, 1.0f), xr(18, 1.0f), v = {1, 2, 3, 4, 5, 6};
  const auto dx = ctfx::tensor_desc::contiguous(ctfx::f32, {6, 3}), dv = ctfx::tensor_desc::contiguous(ctfx::f32, {2, 3});
  REQUIRE(ctfx::runtime_plan(g).run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), dx), ctfx::tensor_ref(v.data(), dv)}, {}).ok);
  REQUIRE(ctfx::reference_run(g, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(xr.data(), dx), ctfx::tensor_ref(v.data(), dv)}, {}).ok);
  CHECK(x == xr);
  CHECK(x[12] == 2.0f);
  CHECK(x[17] == 12.0f);
  CHECK(x[11] == 1.0f);
}
