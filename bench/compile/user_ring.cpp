// What a user's file costs to compile when its graph has an index op: a ring buffer [64, 4096] f32
// with a row written at a run-time position and the window's sum returned, run by compiled<G>. The
// position is the caller's input, so the run is a static plan (its value checked before the first
// step, the put a typed kernel): the file does not compile the run-time program.
// Timed by bench/compile/user_files.sh.
#include <cstdint>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>

constexpr long R = 64, W = 4096;
constexpr auto g = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {R, W});
  auto row = b.input("row", ctfx::f32, {1, W});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(buf, {pos}, row);
  b.update(buf, nb);
  b.output(nb.sum({0}));
});

int main() {
  std::vector<float> buf(R * W), row(W), sum(W);
  std::vector<std::int64_t> pos{3};
  auto st = ctfx::compiled<decltype(g)>::run({ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {R, W}),
                                              ctfx::tensor_ref::contiguous(row.data(), ctfx::f32, {1, W}),
                                              ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1})},
                                             {ctfx::tensor_ref::contiguous(sum.data(), ctfx::f32, {W})});
  return st.ok ? 0 : 1;
}
