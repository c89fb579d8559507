// expect-error: node .'diagonal_scatter.' \(diagonal_scatter\) at diagonal_same_dims\.cpp:8: diagonal dimensions must differ, both are 1 \[rule dimension-in-range\]
// diagonal (here through its scatter) of one dimension with itself; -1 and 1 both name dimension 1.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 4});
  auto d = b.input("d", ctfx::f32, {4});
  b.update(x, ctfx::diagonal_scatter(x, d, 0, -1, 1));
});
