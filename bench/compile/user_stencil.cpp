// What a user's file costs to compile: a 10-node graph (a 5-point Laplacian of a ghosted grid: five
// slices and five arithmetic ops) run by compiled<G>. Timed by bench/compile/user_files.sh.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long N = 256;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {N + 2, N + 2});
  auto c = u.slice(0, 1, N + 1).slice(1, 1, N + 1);
  auto n = u.slice(0, 0, N).slice(1, 1, N + 1);
  auto s = u.slice(0, 2, N + 2).slice(1, 1, N + 1);
  auto w = u.slice(0, 1, N + 1).slice(1, 0, N);
  auto e = u.slice(0, 1, N + 1).slice(1, 2, N + 2);
  b.output((n + s + w + e - c * 4.0f) * 0.25f);
});

int main() {
  std::vector<float> u((N + 2) * (N + 2)), y(N * N);
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {N + 2, N + 2})},
                                             {ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {N, N})});
  return st.ok ? 0 : 1;
}
