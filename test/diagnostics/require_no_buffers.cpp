// compiled<G>::require_no_buffers() on a plan that keeps a buffer: the new value of `w` is also read
// transposed, so it cannot be computed straight into `w` and is computed into a buffer, then copied.
// The error names the node that holds the buffer and its bytes.
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr auto step = ctfx::graph([](ctfx::builder& g) {
  auto w = g.input("w", ctfx::f32, {64, 64});
  auto d = g.input("d", ctfx::f32, {64, 64});
  auto next = (w - d * 0.5f).named("next");
  g.update(w, next);
  g.output(next.transpose(0, 1) + 1.0f);
});
using plan = ctfx::compiled<decltype(step)>;
static_assert(plan::require_no_buffers);

// What each compiler must print (cmake/check_diagnostic_text.cmake):
// head-lines: 12
// expect-all: rule 'no-planned-buffers' is broken; fix: print ctfx::listing<plan>\(\) and plan::report
// expect-gxx: node .'next.' \(sub\): holds a planned buffer of 16384 bytes; the plan lays out 32768 bytes in 2 buffers
// expect-clang: node_at_line<0, ctfx::detail::shapes<>, 'n', 'e', 'x', 't'>
// expect-nvcc: node_at_line<0, ctfx::detail::shapes<>, 'n', 'e', 'x', 't'>
// max-bytes-gxx: 2000
// max-bytes-clang: 2200
// max-bytes-nvcc: 10000
// expect-cxx26: error: static assertion failed: ctfx: rule 'no-planned-buffers' is broken: node 'next' \(sub\): holds a planned buffer of 16384 bytes
// max-bytes-cxx26: 2200
