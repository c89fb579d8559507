// The 1,000-node compile-time test graph shared by test/compile/pipeline_1000.cpp and
// test/nvcc_defaults/pipeline_1000_passes.cpp: Rounds rounds of "scale a row, scatter it into the
// one buffer `x`", written back with a copy_ epilogue (the traced form of
// `x[i % 64] = src * (i + 1)` in a loop); 2 inputs + 2 nodes per round + the copy_ + the output.
#pragma once
#include <ctfx.hpp>

namespace ctfx_test {

template <int Rounds>
inline constexpr auto scatter_chain = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {64, 128});
  auto src = g.input("src", ctfx::f32, {1, 128});
  auto y = x;
  for (int i = 0; i < Rounds; ++i) y = ctfx::slice_scatter(y, src * static_cast<double>(i + 1), 0, i % 64, i % 64 + 1);
  g.update(x, y);
});

}  // namespace ctfx_test
