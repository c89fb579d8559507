// What a user's file costs to compile for a bool-mask put, x[x > limit] = limit, in place into the
// caller's x [4096, 64] f32, run by compiled<G>: a static plan (the put elementwise over x, typed
// on f32), so the file compiles no executor. Timed by bench/compile/user_files.sh.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long N = 4096, D = 64;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {N, D});
  auto limit = b.input("limit", ctfx::f32, {1});
  b.update(x, ctfx::index_put(x, {ctfx::gt(x, limit)}, limit));
});
static_assert(ctfx::compiled<decltype(g)>::run_plan.usable, "a static plan");

int main() {
  std::vector<float> x(N * D), limit{0.5f};
  for (long i = 0; i < N * D; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i % 7) * 0.25f;
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {N, D}),
                                              ctfx::tensor_ref::contiguous(limit.data(), ctfx::f32, {1})},
                                             {});
  return st.ok && x[3] == 0.5f ? 0 : 1;
}
