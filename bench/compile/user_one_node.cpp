// What a user's file costs to compile, smallest case: a one-node graph (x + 1) run by compiled<G>.
// Timed by bench/compile/user_files.sh.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {1024});
  b.output(x + 1.0f);
});

int main() {
  std::vector<float> x(1024), y(1024);
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {1024})},
                                             {ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {1024})});
  return st.ok ? 0 : 1;
}
