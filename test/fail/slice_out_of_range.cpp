// expect-error: node .'slice.' \(slice\): slice \[2:10\] is out of range for dimension 1 of size 8 \[rule static-index-in-range\]
// A static slice past the end of its dimension.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.slice(1, 2, 10).clone());
});
