// What `run` takes: braced lists of tensor_ref, std::vector, std::array, C arrays and spans, for the
// compile-time plan, the run-time plan and the reference run (exec/tensor.hpp's tensor_refs).
#include <doctest/doctest.h>
#include <array>
#include <span>
#include <type_traits>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

// y = x * 2 + b; x += b (written back by the epilogue)
constexpr auto axpy = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {4});
  auto b = g.input("b", ctfx::f32, {4});
  g.output(x * 2.0 + b);
  g.update(x, x + b);
});
using axpy_plan = ctfx::compiled<decltype(axpy)>;

struct data {
  std::vector<float> x{1, 2, 3, 4}, b{10, 20, 30, 40}, y = std::vector<float>(4);
  ctfx::tensor_ref xr() { return ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4}); }
  ctfx::tensor_ref br() { return ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {4}); }
  ctfx::tensor_ref yr() { return ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {4}); }
  void check() const {
    CHECK(y == std::vector<float>{12, 24, 36, 48});
    CHECK(x == std::vector<float>{11, 22, 33, 44});
  }
};

// The forms a caller can pass, as types: what the overloads must accept.
static_assert(std::is_convertible_v<std::vector<ctfx::tensor_ref>&, ctfx::tensor_refs>);
static_assert(std::is_convertible_v<std::vector<ctfx::tensor_ref>&&, ctfx::tensor_refs>);
static_assert(std::is_convertible_v<const std::vector<ctfx::tensor_ref>&, ctfx::tensor_refs>);
static_assert(std::is_convertible_v<std::array<ctfx::tensor_ref, 2>&, ctfx::tensor_refs>);
static_assert(std::is_convertible_v<ctfx::tensor_ref (&)[2], ctfx::tensor_refs>);
static_assert(std::is_convertible_v<std::span<ctfx::tensor_ref>, ctfx::tensor_refs>);
static_assert(std::is_convertible_v<std::span<const ctfx::tensor_ref, 2>, ctfx::tensor_refs>);
static_assert(!std::is_convertible_v<std::vector<float>&, ctfx::tensor_refs>);
static_assert(!std::is_convertible_v<std::vector<ctfx::tensor_desc>&, ctfx::tensor_refs>);

}  // namespace

TEST_CASE("run: braced lists of tensor_ref, for the compiled plan, the run-time plan and the reference") {
  {
    data d;
    auto st = axpy_plan::run({d.xr(), d.br()}, {d.yr()});
    REQUIRE_MESSAGE(st.ok, st.message);
    d.check();
  }
  {
    data d;
    auto st = ctfx::runtime_plan(axpy.get()).run({d.xr(), d.br()}, {d.yr()});
    REQUIRE_MESSAGE(st.ok, st.message);
    d.check();
  }
  {
    data d;
    auto st = ctfx::runtime_plan(axpy.get()).run({d.xr(), d.br()}, {d.yr()}, ctfx::device_ctx{}, {});
    REQUIRE_MESSAGE(st.ok, st.message);
    d.check();
  }
  {
    data d;
    auto st = ctfx::reference_run(axpy.get(), {d.xr(), d.br()}, {d.yr()});
    REQUIRE_MESSAGE(st.ok, st.message);
    d.check();
  }
}

TEST_CASE("run: an empty braced list is no tensors, and a wrong count is a run_status, not a crash") {
  data d;
  auto st = axpy_plan::run({d.xr()}, {});
  CHECK_FALSE(st.ok);
  CHECK(!st.message.empty());
  CHECK(d.x == std::vector<float>{1, 2, 3, 4});  // nothing written
}

TEST_CASE("run: std::vector, std::array, C arrays and spans") {
  {
    data d;
    std::vector<ctfx::tensor_ref> in{d.xr(), d.br()}, out{d.yr()};
    REQUIRE(axpy_plan::run(in, out).ok);
    d.check();
  }
  {
    data d;
    REQUIRE(axpy_plan::run(std::vector<ctfx::tensor_ref>{d.xr(), d.br()}, std::vector<ctfx::tensor_ref>{d.yr()}).ok);
    d.check();
  }
  {
    data d;
    const std::array<ctfx::tensor_ref, 2> in{d.xr(), d.br()};
    std::array<ctfx::tensor_ref, 1> out{d.yr()};
    REQUIRE(ctfx::runtime_plan(axpy.get()).run(in, out).ok);
    d.check();
  }
  {
    data d;
    ctfx::tensor_ref in[2] = {d.xr(), d.br()};
    ctfx::tensor_ref out[1] = {d.yr()};
    REQUIRE(axpy_plan::run(in, out).ok);
    d.check();
  }
  {
    data d;
    std::vector<ctfx::tensor_ref> in{d.xr(), d.br()}, out{d.yr()};
    REQUIRE(axpy_plan::run(std::span<ctfx::tensor_ref>(in), std::span<const ctfx::tensor_ref>(out)).ok);
    d.check();
  }
  {
    data d;  // a mix: a vector in, a braced list out
    std::vector<ctfx::tensor_ref> in{d.xr(), d.br()};
    REQUIRE(ctfx::runtime_plan(axpy.get()).run(in, {d.yr()}).ok);
    d.check();
  }
}

TEST_CASE("bind: a braced list of tensor_desc") {
  auto b = axpy_plan::bind({ctfx::tensor_desc::contiguous(ctfx::f32, {4}), ctfx::tensor_desc::contiguous(ctfx::f32, {4})});
  REQUIRE_MESSAGE(b.status.ok, b.status.message);
  auto r = ctfx::runtime_plan(axpy.get()).bind({ctfx::tensor_desc::contiguous(ctfx::f32, {4}), ctfx::tensor_desc::contiguous(ctfx::f32, {4})});
  REQUIRE_MESSAGE(r.status.ok, r.status.message);
}
