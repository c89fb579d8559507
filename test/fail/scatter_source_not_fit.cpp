// expect-error: node .'slice_scatter.' \(slice_scatter\) at scatter_source_not_fit\.cpp:8: source f32\[3, 8\] does not fit the view f32\[2, 8\] of .'x.' \[rule scatter-source-fits-view\]
// A scatter source whose shape is not the shape of the view it is written into.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto src = b.input("src", ctfx::f32, {3, 8});
  b.update(x, ctfx::slice_scatter(x, src, 0, 0, 2));
});
