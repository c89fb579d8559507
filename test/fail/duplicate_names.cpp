// expect-error: node .'x.' \(placeholder\): has the same name as node 0 \[rule unique-names\]
// Two inputs with one name.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto a = b.input("x", ctfx::f32, {4});
  auto c = b.input("x", ctfx::f32, {4});
  b.output(a + c);
});
