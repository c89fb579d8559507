// expect-error: node .'index_put.' \(index_put\) at index_float_dtype\.cpp:9: index 0 \(.'idx.'\) has dtype f32; indices must be i32, i64 or b8 \[rule index-dtype\]
// An index tensor of a floating dtype.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {16, 8});
  auto idx = b.input("idx", ctfx::f32, {3});
  auto v = b.input("v", ctfx::f32, {3, 8});
  b.update(x, ctfx::index_put(x, {idx}, v));
});
