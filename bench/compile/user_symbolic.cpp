// What a user's file costs to compile when its graph needs the run-time program: rows of a
// run-time count n (a symbolic extent) scaled by their RMS, y = x * rsqrt(mean(x * x) + eps) * w,
// run by compiled<G>. Layouts and the workspace are bound at run time, so this file compiles the
// program's binding, validation, memory plan and the run-time dispatch of the kernel families
// its graph leaves to it. Timed by bench/compile/user_files.sh.
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
