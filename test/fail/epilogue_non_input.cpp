// expect-error: node .'copy_.' \(copy_\) at epilogue_non_input\.cpp:8: the epilogue writes .'add.', which is not a graph input \[rule epilogue-writes-an-input\]
// The epilogue may only write graph inputs: `add` is an intermediate.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto y = x + 1.0;
  b.update(y, x * 2.0);
  b.output(y);
});
