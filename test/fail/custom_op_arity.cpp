// expect-error: node .'auto_functionalized.' \(auto_functionalized\): .'scale_into.' takes 2 tensor arguments, got 1 \[rule custom-op-schema\]
// A user op called with fewer tensors than its schema declares.
#include <ctfx.hpp>

struct scale_into : ctfx::custom_op<"scale_into", "scale_into(Tensor x, Tensor(a!) out) -> ()"> {};

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4});
  auto r = b.call<scale_into>(x);
  b.output(r[0]);
});
