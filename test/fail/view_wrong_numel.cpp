// expect-error: node .'view.' \(view\) at view_wrong_numel\.cpp:7: a view with 24 elements of f32\[4, 8\] \(32 elements\) \[rule view-shape\]
// A view whose sizes do not multiply to the input's number of elements.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.view({3, 8}).clone());
});
