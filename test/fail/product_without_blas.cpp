// expect-error: rule blas-available: this graph multiplies f32/f64 matrices .* link ctfx::blas
// An f32 matrix product in a build without a BLAS (no ctfx::blas: CTFX_HAVE_CBLAS undefined).
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 8});
  auto w = b.input("w", ctfx::f32, {8, 3});
  b.output(ctfx::mm(x, w));
});
using plan = ctfx::compiled<decltype(g)>;
static_assert(plan::node_count > 0);
