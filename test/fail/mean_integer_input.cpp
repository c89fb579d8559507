// expect-error: node .'mean.' \(mean\) at mean_integer_input\.cpp:7: mean of i32\[4, 8\]: mean needs a floating input \(convert it to f32 first\) \[rule dtype-mismatch\]
// mean of an integer tensor (PyTorch refuses it too).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::i32, {4, 8});
  b.output(x.mean({1}));
});
