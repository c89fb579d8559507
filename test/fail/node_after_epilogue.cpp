// expect-error: node .'neg.' \(neg\): follows the copy_ epilogue; only copy_ into inputs, and views, may come after it \[rule functional-except-epilogue\]
// A hand-written copy_ in the middle of the graph: everything after the first copy_ is epilogue.
// (g.update(x, v) places the copy_ at the end by itself.)
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto y = b.input("y", ctfx::f32, {4});
  x.copy_(y);
  b.output(-y);
});
