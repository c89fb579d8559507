// expect-error: node .'unsqueeze.' \(unsqueeze\) at rank_limit_unsqueeze\.cpp:7: a result of rank 7 exceeds ctfx::max_rank = 6 \[rule rank-limit\]
// A view that would make a tensor of rank 7 out of one of rank 6.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {2, 2, 2, 2, 2, 2});
  b.output(x.unsqueeze(0).clone());
});
