// What a user reads when a graph breaks a rule (test/CMakeLists.txt, diag.*): each compiler's
// first lines must show what its `expect-<compiler>` lines (at the end) say, and its whole output
// must stay under its `max-bytes-<compiler>` (measured, plus a margin).
#include <ctfx.hpp>

// The expected texts name line 11: ctfx::maximum's.
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {3, 8});
  b.output(
      ctfx::maximum(x, y));
});

// What each compiler must print (cmake/check_diagnostic_text.cmake):
// head-lines: 12
// expect-all: rule 'broadcast-shapes' is broken; fix: make the shapes equal, or 1 where they differ
// expect-gxx: node .'maximum.' \(maximum\) at broadcast_maximum\.cpp:11: operand shapes f32\[4, 8\] and f32\[3, 8\] do not broadcast
// expect-clang: node_at_line<11, ctfx::detail::shapes<ctfx::detail::shape<ctfx::dtype::f32, 4, 8>, ctfx::detail::shape<ctfx::dtype::f32, 3, 8>>, 'm', 'a', 'x', 'i', 'm', 'u', 'm'>
// expect-nvcc: node_at_line<11, ctfx::detail::shapes<ctfx::detail::shape<ctfx::dtype::f32, 4L, 8L>, ctfx::detail::shape<ctfx::dtype::f32, 3L, 8L>>, 'm', 'a', 'x', 'i', 'm', 'u', 'm'>
// expect-cxx26: error: static assertion failed: ctfx: rule 'broadcast-shapes' is broken: node 'maximum' \(maximum\) at broadcast_maximum\.cpp:11: operand shapes f32\[4, 8\] and f32\[3, 8\] do not broadcast; fix: make
// max-bytes-gxx: 2000
// max-bytes-clang: 2400
// max-bytes-nvcc: 3600
// max-bytes-cxx26: 1800
