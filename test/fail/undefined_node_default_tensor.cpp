// expect-error: a tensor handle names no node of this graph \(a handle from another graph, or a default-constructed one\) \[rule undefined-node\]
// A default-constructed handle (names no node) used as an operand.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  ctfx::tensor unset;
  auto x = b.input("x", ctfx::f32, {4});
  b.output(x + unset);
});
