// expect-error: node .'mul.' \(mul\): its result.*s stride order depends on sizes the graph leaves open; make them static or the operands contiguous\(\) \[rule result-stride-order\]
// x[:, ::3].t() * 2 with x of [s0, s1]: the strides 3 and s1 order the result's dimensions one way
// or the other depending on s1, which nothing in the graph fixes.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto s1 = b.sym("s1");
  auto x = b.input("x", ctfx::f32, {b.sym("s0"), s1});
  b.output(x.slice(1, 0, s1, 3).transpose(0, 1) * 2.0f);
});
