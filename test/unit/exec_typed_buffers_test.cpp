// A typed pointer gives a tensor_ref its dtype: unlabelled, it is the element type's; labelled, the
// label must agree (test/fail/buffer_label_disagrees.cpp: a float* labelled f16 does not compile);
// untyped memory (void*, bytes) takes any label, known at run time too. ctfx::ref(mdspan) likewise.
#include <doctest/doctest.h>
#include <cstddef>
#include <cstdint>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/mdspan.hpp>

namespace {

static_assert(ctfx::tensor_ref::contiguous(static_cast<float*>(nullptr), {8}).dt == ctfx::f32);
static_assert(ctfx::tensor_ref::contiguous(static_cast<ctfx::half_t*>(nullptr), {2, 4}).dt == ctfx::f16);
static_assert(ctfx::has_dtype<const double> && !ctfx::has_dtype<std::uint16_t> && !ctfx::has_dtype<long long>);
static_assert(ctfx::untyped_storage<std::byte> && ctfx::untyped_storage<std::uint8_t> && !ctfx::untyped_storage<std::int8_t>);

constexpr auto scale = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {2, 4});
  g.output(x * 3.0);
});
using scale_plan = ctfx::compiled<decltype(scale)>;

}  // namespace

TEST_CASE("tensor_ref::contiguous takes the dtype of a typed pointer") {
  std::vector<float> x(8, 1.0f);
  std::vector<double> d(3);
  std::vector<std::int64_t> i(5);
  bool b[4]{};
  std::vector<ctfx::bfloat16_t> h(6);
  const ctfx::tensor_ref rx = ctfx::tensor_ref::contiguous(x.data(), {2, 4});
  CHECK(rx.dt == ctfx::f32);
  CHECK(rx.data == x.data());
  CHECK(rx.rank == 2);
  CHECK(rx.size[0] == 2);
  CHECK(rx.stride[0] == 4);
  CHECK(ctfx::tensor_ref::contiguous(d.data(), {3}).dt == ctfx::f64);
  CHECK(ctfx::tensor_ref::contiguous(i.data(), {5}).dt == ctfx::i64);
  CHECK(ctfx::tensor_ref::contiguous(b, {4}).dt == ctfx::b8);
  CHECK(ctfx::tensor_ref::contiguous(h.data(), {6}).dt == ctfx::bf16);
  // A label that agrees is accepted (checked at compile time).
  CHECK(ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {8}) == ctfx::tensor_desc::contiguous(ctfx::f32, {8}));
  CHECK(ctfx::tensor_ref::contiguous(h.data(), ctfx::bf16, {6}).dt == ctfx::bf16);
}

TEST_CASE("untyped memory takes its dtype label, also one chosen at run time") {
  std::vector<std::uint16_t> bits(4);
  std::vector<std::byte> bytes(16);
  std::vector<std::uint8_t> mask(4);
  for (const ctfx::dtype dt : {ctfx::f16, ctfx::bf16}) {
    const ctfx::tensor_ref r = ctfx::tensor_ref::contiguous(static_cast<void*>(bits.data()), dt, {4});
    CHECK(r.dt == dt);
    CHECK(r.data == bits.data());
  }
  ctfx::dtype dt = ctfx::i32;
  CHECK(ctfx::tensor_ref::contiguous(bytes.data(), dt, {4}).dt == ctfx::i32);
  dt = ctfx::f64;
  CHECK(ctfx::tensor_ref::contiguous(bytes.data(), dt, {2}).span_bytes() == 16);
  CHECK(ctfx::tensor_ref::contiguous(mask.data(), ctfx::b8, {4}).dt == ctfx::b8);
}

TEST_CASE("a plan runs on unlabelled typed buffers") {
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, y(8);
  const auto st = scale_plan::run({ctfx::tensor_ref::contiguous(x.data(), {2, 4})},
                                  {ctfx::tensor_ref::contiguous(y.data(), {2, 4})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(y == std::vector<float>{3, 6, 9, 12, 15, 18, 21, 24});
  // A buffer of another element type is refused at run time by the plan's input check.
  std::vector<double> wrong(8);
  const auto bad = scale_plan::run({ctfx::tensor_ref::contiguous(wrong.data(), {2, 4})},
                                   {ctfx::tensor_ref::contiguous(y.data(), {2, 4})});
  CHECK_FALSE(bad.ok);
  CHECK(bad.message.find("f64") != std::string::npos);
}

TEST_CASE("ctfx::ref(mdspan) takes the dtype of the mdspan's element type") {
  std::vector<std::int32_t> v(6);
  cuda::std::mdspan<std::int32_t, cuda::std::extents<int, 2, 3>> m(v.data());
  const ctfx::tensor_ref r = ctfx::ref(m);
  CHECK(r.dt == ctfx::i32);
  CHECK(r.rank == 2);
  CHECK(r.stride[0] == 3);
  CHECK(r.data == v.data());
  std::vector<ctfx::half_t> hv(4);
  cuda::std::mdspan<const ctfx::half_t, cuda::std::dextents<int, 1>> hm(hv.data(), 4);
  CHECK(ctfx::ref(hm).dt == ctfx::f16);
}
