// expect-error: node .'slice_scatter.' \(slice_scatter\) at scatter_source_dtype\.cpp:8: source dtype f16 differs from the input.'s f32 \[rule dtype-mismatch\]
// A scatter source whose dtype is not the buffer's: PyTorch's slice_scatter does not convert.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto src = b.input("src", ctfx::f16, {1, 8});
  b.update(x, ctfx::slice_scatter(x, src, 0, 2, 3));
});
