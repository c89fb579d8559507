// A user's file compiled the way CMake's RelWithDebInfo compiles it (g++ -O2), then disassembled by
// cmake/check_vectorized.cmake: the row loop of a compiled<G> group holds packed arithmetic in the
// build level's copy and in the AVX-512 one (core/isa.hpp, CTFX_VECTORIZE). g++ 12's -O2 cost
// model would leave both scalar: the loop's length is a run-time value and its operands pointers.
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long R = 64, C = 1000;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {R, C});
  auto y = b.input("y", ctfx::f32, {R, C});
  b.output(x * y * 3.0f);
});

int main() {
  std::vector<float> x(R * C, 1.0f), y(R * C, 2.0f), z(R * C);
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {R, C}),
                                              ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {R, C})},
                                             {ctfx::tensor_ref::contiguous(z.data(), ctfx::f32, {R, C})});
  return st.ok && z[R * C - 1] == 6.0f ? 0 : 1;
}
