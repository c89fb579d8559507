// expect-error: node .'index_put.' \(index_put\) at index_put_values_shape\.cpp:10: values f32\[5, 3\] do not broadcast to the indexed shape f32\[3, 5\] \[rule broadcast-shapes\]
// Non-adjacent advanced indices put the broadcast index shape first: x[i, :, j] has shape [3, 5].
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 5, 6});
  auto i = b.input("i", ctfx::i64, {3});
  auto j = b.input("j", ctfx::i64, {3});
  auto v = b.input("v", ctfx::f32, {5, 3});
  b.update(x, ctfx::index_put(x, {i, ctfx::none, j}, v));
});
