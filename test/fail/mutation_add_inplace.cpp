// expect-error: node .'add_.' \(add_\): mutates .'x.' in a functional graph; .*\[rule functional-except-epilogue\]
// An in-place op in a user graph: only reinplacing may introduce mutation (write x + y and
// g.update(x, ...) instead).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {4, 8});
  b.output(x.add_(y));
});
