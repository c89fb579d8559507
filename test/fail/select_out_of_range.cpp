// expect-error: node .'select.' \(select\) at select_out_of_range\.cpp:7: index -5 is out of range for dimension 0 of size 4 \[rule static-index-in-range\]
// A static select outside [-size, size).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.select(0, -5) + 1.0);
});
