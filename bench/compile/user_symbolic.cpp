// What a user's file costs to compile when its graph has a symbolic extent: rows of a run-time
// count n, scaled by their RMS, y = x * rsqrt(mean(x * x) + eps) * w, run by compiled<G>. The plan
// is the compiler's (a static plan whose layouts, buffer sizes and workspace offsets a call
// evaluates from the inputs' shapes), so this file compiles the graph's typed kernels, the
// binding of n and the checks of a call, not the run-time program. Timed by
// bench/compile/user_files.sh.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long D = 1024;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n"), D});
  auto w = b.input("w", ctfx::f32, {D});
  b.output(x * ctfx::rsqrt((x * x).mean({1}, true) + 1e-6f) * w);
});
static_assert(ctfx::compiled<decltype(g)>::run_plan.usable && ctfx::compiled<decltype(g)>::run_plan.n_symbols == 1);

int main() {
  const long n = 37;
  std::vector<float> x(static_cast<std::size_t>(n * D), 0.5f), w(D, 2.0f), y(static_cast<std::size_t>(n * D));
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n, D}),
                                              ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {D})},
                                             {ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {n, D})});
  return st.ok ? 0 : 1;
}
