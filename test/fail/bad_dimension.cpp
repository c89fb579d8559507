// expect-error: node .'transpose.' \(transpose\) at bad_dimension\.cpp:7: dimension 2 is out of range for a tensor of rank 2 \[rule dimension-in-range\]
// A dimension argument outside [-rank, rank).
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  b.output(x.transpose(0, 2).clone());
});
