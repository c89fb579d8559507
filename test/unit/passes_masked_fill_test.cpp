// masked_puts_as_where (Inductor's index_put_as_masked_fill): which puts become where, which stay,
// on printed graphs; the pipeline's result fused into one in-place kernel with no workspace; and
// the values of both executors against the reference, which runs the put itself.
#include <doctest/doctest.h>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/passes/masked_puts_as_where.hpp>

namespace {

std::string after_pass(const ctfx::ir& g) {
  const ctfx::ir h = ctfx::masked_puts_as_where(g);
  CHECK(ctfx::to_string(ctfx::verify(h)) == "ok");
  return ctfx::to_text(h);
}

constexpr auto fill = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto m = b.input("m", ctfx::f32, {4, 6});
  auto v = b.input("v", ctfx::f32, {1});
  b.update(x, ctfx::index_put(x, {ctfx::gt(m, 0.5)}, v));
});

constexpr auto fill_where = ctfx::graph([](ctfx::builder& b) {  // the same, as a user writes it with where
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto m = b.input("m", ctfx::f32, {4, 6});
  auto v = b.input("v", ctfx::f32, {1});
  b.update(x, ctfx::where(ctfx::gt(m, 0.5), v, x));
});

// Each left as a put, for its own reason.
constexpr auto accumulate = ctfx::graph([](ctfx::builder& b) {  // x + v rounds: not a copy
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto m = b.input("m", ctfx::b8, {4, 6});
  b.output(ctfx::index_put(x, {m}, b.input("v", ctfx::f32, {1}), true));
});
constexpr auto half = ctfx::graph([](ctfx::builder& b) {  // where computes f16 in float: NaN payloads
  auto x = b.input("x", ctfx::f16, {4, 6});
  auto m = b.input("m", ctfx::b8, {4, 6});
  b.output(ctfx::index_put(x, {m}, b.input("v", ctfx::f16, {1})));
});
constexpr auto rows = ctfx::graph([](ctfx::builder& b) {  // a mask over the rows only
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto m = b.input("m", ctfx::b8, {4});
  b.output(ctfx::index_put(x, {m}, b.input("v", ctfx::f32, {1})));
});
constexpr auto per_element = ctfx::graph([](ctfx::builder& b) {  // a value per element of the last dimension
  auto x = b.input("x", ctfx::f32, {4, 6, 3});
  auto m = b.input("m", ctfx::b8, {4, 6});
  b.output(ctfx::index_put(x, {m}, b.input("v", ctfx::f32, {3})));
});
constexpr auto transposed = ctfx::graph([](ctfx::builder& b) {  // where's result would be contiguous
  auto x = b.input("x", ctfx::f32, {6, 4}).transpose(0, 1);
  auto m = b.input("m", ctfx::b8, {4, 6});
  b.output(ctfx::index_put(x, {m}, b.input("v", ctfx::f32, {1})));
});

}  // namespace

TEST_CASE("masked_puts_as_where: a fill by a mask of x's shape with one value becomes where(mask, v, x)") {
  CHECK(after_pass(fill.get()) == R"(graph(%x : f32[4, 6], %m : f32[4, 6], %v : f32[1]):
  %gt : b8[4, 6] = gt(%m, 0.5)
  %where : f32[4, 6] = where(%gt, %v, %x)
  %copy_ : f32[4, 6] = copy_(%x, %where)
  return ()
)");
  for (const ctfx::ir& g : {accumulate.get(), half.get(), rows.get(), per_element.get(), transposed.get()}) {
    const std::string text = after_pass(g);
    CHECK(text.find("index_put(") != std::string::npos);
    CHECK(text.find("where") == std::string::npos);
  }
}

TEST_CASE("masked_puts_as_where: the pipeline fuses the fill with its write-back, in place, no workspace") {
  using plan = ctfx::compiled<decltype(fill)>;
  const std::string text = ctfx::to_text(plan::graph());
  CHECK(text.find("where(") != std::string::npos);
  CHECK(text.find("index_put") == std::string::npos);
  static_assert(plan::run_plan.usable, "a static plan");
  static_assert(plan::static_buffer_bytes() == 0, "no buffer: the mask and the select are computed in the update's loop");
  // runtime_plan: the workspace of the same program written with where (its chunked loops' scratch).
  const std::vector<ctfx::tensor_desc> in{ctfx::tensor_desc::contiguous(ctfx::f32, {4, 6}), ctfx::tensor_desc::contiguous(ctfx::f32, {4, 6}),
                                          ctfx::tensor_desc::contiguous(ctfx::f32, {1})};
  CHECK(ctfx::runtime_plan(fill.get()).bind(in).workspace_bytes == ctfx::runtime_plan(fill_where.get()).bind(in).workspace_bytes);
  CHECK(ctfx::compiled<decltype(fill_where)>::static_buffer_bytes() == 0);
}

TEST_CASE("masked_puts_as_where: both executors leave x with the reference put's bits") {
  std::vector<float> x(24), m(24);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = i % 5 == 0 ? std::bit_cast<float>(0x7fc00000u + static_cast<std::uint32_t>(i)) : (i % 3 == 0 ? -0.0f : static_cast<float>(i) - 7.5f);
    m[i] = i % 7 == 0 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>((i * 37) % 11) * 0.1f;
  }
  float v = std::bit_cast<float>(0xffc00123u);  // a NaN with a payload, copied as it is
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 6});
  const auto dv = ctfx::tensor_desc::contiguous(ctfx::f32, {1});
  std::vector<float> c = x, r = x, want = x;
  REQUIRE(ctfx::compiled<decltype(fill)>::run({ctfx::tensor_ref(c.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(&v, dv)}, {}).ok);
  REQUIRE(ctfx::runtime_plan(fill.get()).run({ctfx::tensor_ref(r.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(&v, dv)}, {}, ctfx::backend::host).ok);
  REQUIRE(ctfx::reference_run(fill.get(), {ctfx::tensor_ref(want.data(), d), ctfx::tensor_ref(m.data(), d), ctfx::tensor_ref(&v, dv)}, {}).ok);
  CHECK(std::memcmp(c.data(), want.data(), 24 * sizeof(float)) == 0);
  CHECK(std::memcmp(r.data(), want.data(), 24 * sizeof(float)) == 0);
  int set = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const std::uint32_t e = std::bit_cast<std::uint32_t>(m[i] > 0.5f ? v : x[i]);
    set += m[i] > 0.5f;
    CHECK(std::bit_cast<std::uint32_t>(want[i]) == e);
  }
  CHECK(set > 4);
  CHECK(set < 20);
}

// The per-pass stages (nvcc's pipeline, and what a user names).
TEST_CASE("masked_puts_as_where: the staged pipeline gives the fused pipeline's graph") {
  CHECK(ctfx::to_text(ctfx::pipeline<decltype(fill)>::masked_fills::get()).find("where(%gt, %v, %x)") != std::string::npos);
  CHECK(ctfx::to_text(ctfx::pipeline<decltype(fill)>::stages::final_stage::get()) == ctfx::to_text(ctfx::pipeline<decltype(fill)>::get()));
}
