// expect-error: node .'view.' \(view\) at view_non_contiguous\.cpp:7: view of a non-contiguous tensor f32\[8, 4\] across dimensions its strides do not merge; use reshape, which copies \[rule view-shape\]
// view() of a transposed tensor: its elements are not in row-major order (reshape would copy).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.transpose(0, 1).view({32}).clone());
});
