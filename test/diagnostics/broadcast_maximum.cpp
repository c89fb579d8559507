// What a user reads when a graph breaks a rule (test/CMakeLists.txt, diag.*): each compiler's
// first lines must show what its `expect-<compiler>` lines say, and its whole output must stay
// under its `max-bytes-<compiler>` (measured, plus a margin).
// head-lines: 12
// expect-all: rule 'broadcast-shapes' is broken; fix: make the shapes equal, or 1 where they differ
// expect-gxx: node .'maximum.' \(maximum\) at broadcast_maximum\.cpp:21: operand shapes f32\[4, 8\] and f32\[3, 8\] do not broadcast
// expect-clang: node_at_line<21, 'm', 'a', 'x', 'i', 'm', 'u', 'm'>
// expect-nvcc: node_at_line<21, 'm', 'a', 'x', 'i', 'm', 'u', 'm'>
// expect-cxx26: error: static assertion failed due to requirement 'diag.ok\(\)': ctfx: rule 'broadcast-shapes' is broken: node 'maximum' \(maximum\) at broadcast_maximum\.cpp:21: operand shapes f32\[4, 8\] and f32\[3, 8\] do not broadcast; fix: make
// max-bytes-gxx: 2000
// max-bytes-clang: 2200
// max-bytes-nvcc: 3600
// max-bytes-cxx26: 1800
#include <ctfx.hpp>

// The line numbers above name the line of ctfx::maximum below.
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto y = b.input("y", ctfx::f32, {3, 8});
  b.output(
      ctfx::maximum(x, y));
});
