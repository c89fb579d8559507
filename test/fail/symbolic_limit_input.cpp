// expect-error: node .'x.' \(placeholder\) at symbolic_limit_input\.cpp:7: its contiguous strides or the storage they span need more than 4 terms of 4 symbols \[rule symbolic-expression-limit\]
// Six symbolic extents: the first stride s1*s2*s3*s4*s5 is a product of five symbols, more than a
// sym_expr holds. It is reported, never truncated.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("s0"), b.sym("s1"), b.sym("s2"), b.sym("s3"), b.sym("s4"), b.sym("s5")});
  b.output(x);
});
