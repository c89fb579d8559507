// What a user reads when shapes with a symbolic extent do not broadcast (test/CMakeLists.txt,
// diag.*): the shape with the symbol is shown as its text, the static one as numbers.
#include <ctfx.hpp>

// The expected texts name line 10: ctfx::maximum's.
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("s0"), 8});
  auto y = b.input("y", ctfx::f32, {3, 7});
  b.output(
      ctfx::maximum(x, y));
});

// What each compiler must print (cmake/check_diagnostic_text.cmake):
// head-lines: 12
// expect-all: rule 'broadcast-shapes' is broken; fix: make the shapes equal, or 1 where they differ
// expect-gxx: node .'maximum.' \(maximum\) at broadcast_symbolic\.cpp:10: operand shapes f32\[s0, 8\] and f32\[3, 7\] do not broadcast
// expect-clang: node_at_line<10, ctfx::detail::shapes<ctfx::detail::symbolic_shape<'f', '3', '2', '\[', 's', '0', ',', ' ', '8', '\]'>, ctfx::detail::shape<ctfx::dtype::f32, 3, 7>>, 'm', 'a', 'x'
// expect-nvcc: node_at_line<10, ctfx::detail::shapes<ctfx::detail::symbolic_shape<'f', '3', '2', '\[', 's', '0', ',', ' ', '8', '\]'>, ctfx::detail::shape<ctfx::dtype::f32, 3L, 7L>>, 'm', 'a', 'x'
// expect-cxx26: error: static assertion failed: ctfx: rule 'broadcast-shapes' is broken: node 'maximum' \(maximum\) at broadcast_symbolic\.cpp:10: operand shapes f32\[s0, 8\] and f32\[3, 7\] do not broadcast; fix: make
// max-bytes-gxx: 2100
// max-bytes-clang: 2400
// max-bytes-nvcc: 3400
// max-bytes-cxx26: 2000
