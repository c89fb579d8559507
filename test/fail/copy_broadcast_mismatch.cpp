// expect-error: node .'copy_.' \(copy_\): cannot copy f32\[4, 2\] into f32\[4, 8\] \[rule broadcast-shapes\]
// The epilogue value must broadcast to the input it is written into.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.update(x, x.slice(1, 0, 2) * 2.0);
});
