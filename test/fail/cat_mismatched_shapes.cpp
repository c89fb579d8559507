// expect-error: node .'cat.' \(cat\) at cat_mismatched_shapes\.cpp:8: tensor 1 f32\[4, 7\] does not match f32\[4, 8\] outside dimension 0 \[rule broadcast-shapes\]
// cat of tensors that differ outside the concatenated dimension.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {4, 7});
  b.output(ctfx::cat({x, y}, 0));
});
