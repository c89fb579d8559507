// expect-error: node .'where.' \(where\) at where_condition_dtype\.cpp:8: the condition is f32\[4\], where needs a bool \(b8\) condition: compare it \(x != 0\) or convert it \[rule dtype-mismatch\]
// where with a float condition.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto c = b.input("c", ctfx::f32, {4});
  b.output(ctfx::where(c, x, x));
});
