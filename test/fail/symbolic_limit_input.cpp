// expect-error: node .'x.' \(placeholder\) at symbolic_limit_input\.cpp:7: its contiguous strides need more than 2 terms of 2 symbols \[rule symbolic-expression-limit\]
// Four symbolic extents: the first stride s1*s2*s3 is a product of three symbols, more than a
// sym_expr holds. It is reported, never truncated.
#include <ctfx.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("s0"), b.sym("s1"), b.sym("s2"), b.sym("s3")});
  b.output(x);
});
