// expect-error: node .'add.' \(add\): operand shapes f32\[4, 8\] and f32\[3, 8\] do not broadcast \[rule broadcast-shapes\]
// Elementwise operands whose shapes do not broadcast.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {3, 8});
  b.output(x + y);
});
