// expect-error: node .'as_strided.' \(as_strided\) at as_strided_out_of_range\.cpp:7: as_strided reaches element 35 of a base whose last element is 31 \[rule static-index-in-range\]
// An as_strided view that reaches past the last element of its (static) base.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.as_strided({4, 4}, {8, 1}, 8).clone());
});
