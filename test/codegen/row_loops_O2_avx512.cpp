// A user's file compiled at g++ -O2 for a CPU with AVX-512 (no ISA levels: core/isa.hpp runs the
// row loops inline), then disassembled by cmake/check_vectorized.cmake: the row walk of a
// compiled<G> group (static_group::rows, which carries CTFX_VECTORIZE) holds packed fused
// multiply-adds on zmm, the group's exp evaluated inside its loop. At -O2 g++ 12 would leave the
// loop scalar, and its inliner left the exp's node out of line: a call per element.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long R = 64, C = 1000;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {R, C});
  auto y = b.input("y", ctfx::f32, {R, C});
  b.output(ctfx::exp(x * y) * 3.0f);
});

int main() {
  std::vector<float> x(R * C, 0.0f), y(R * C, 2.0f), z(R * C);
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {R, C}),
                                              ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {R, C})},
                                             {ctfx::tensor_ref::contiguous(z.data(), ctfx::f32, {R, C})});
  return st.ok && z[R * C - 1] == 3.0f ? 0 : 1;
}
