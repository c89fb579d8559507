// expect-error: node .'x.' \(placeholder\) at rank_limit_input\.cpp:6: an input of rank 7 exceeds ctfx::max_rank \[rule rank-limit\]
// Tensors have at most ctfx::max_rank = 6 dimensions.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {2, 2, 2, 2, 2, 2, 2});
  b.output(x);
});
