// expect-error: node .'expand.' \(expand\) at expand_incompatible\.cpp:7: cannot expand f32\[4, 2\] to size 3 in dimension 2 \[rule view-shape\]
// expand may only grow dimensions of size 1 (or add leading ones).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 2});
  b.output(x.expand({5, 4, 3}).clone());
});
