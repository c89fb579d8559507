// DSL edge cases: reshape of a permuted tensor, and default-constructed handles.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

TEST_CASE("ir dsl: reshape of a transposed tensor copies it contiguously, as PyTorch") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {2, 3});
    b.output(x.transpose(0, 1).reshape({6}));
  });
  REQUIRE(g.error.ok());
  CHECK(ctfx::to_text(g) == R"(graph(%x : f32[2, 3]):
  %transpose : f32[3, 2] = transpose(%x, dim0=0, dim1=1)
  %clone : f32[3, 2] = clone(%transpose, memory_format=contiguous_format)
  %view : f32[6] = view(%clone, size=[6])
  return (%view,)
)");
  std::vector<float> x = {0, 1, 2, 3, 4, 5}, o(6);
  std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3})};
  std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(o.data(), ctfx::f32, {6})};
  REQUIRE(ctfx::runtime_plan(g).run(in, out).ok);
  CHECK(o == std::vector<float>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("ir dsl: a default-constructed handle is an undefined-node error, in any operand position") {
  auto first = ctfx::build_checked([](ctfx::builder& b) {
    ctfx::tensor t;
    auto x = b.input("x", ctfx::f32, {2, 3});
    b.output(t + x);
  });
  CHECK(first.error.r == ctfx::rule::undefined_node);
  auto alone = ctfx::build_checked([](ctfx::builder& b) {
    ctfx::tensor t;
    b.input("x", ctfx::f32, {2, 3});
    b.output(ctfx::exp(t.clone()).sum({0}));
  });
  CHECK(alone.error.r == ctfx::rule::undefined_node);
}
