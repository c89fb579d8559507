// expect-error: a tensor handle names no node of this graph \(a handle from another graph, or a default-constructed one\) \[rule undefined-node\]
// A handle from another builder used in this graph.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  ctfx::builder other;
  auto stray = other.input("stray", ctfx::f32, {4});
  auto x = b.input("x", ctfx::f32, {4});
  b.output(x * stray);
});
