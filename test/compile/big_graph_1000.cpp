// A 1,000-node graph defined with the DSL, built and verified at compile time: 332 rounds of
// "scale a row, scatter it into the one buffer `x`, add it into an elementwise chain". CI compiles
// this file with g++, clang++-14 and nvcc; each compiler must build it, verify it (the structural
// check of ctfx::graph and the full metadata re-derivation of verify()) and agree on its shape.
#include <ctfx.hpp>

namespace {

constexpr int rounds = 332;  // 2 inputs + 3 nodes per round + the copy_ epilogue + the output = 1,000

constexpr auto big = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {64, 128});
  auto src = g.input("src", ctfx::f32, {1, 128});
  auto y = x;
  auto z = src;
  for (int i = 0; i < rounds; ++i) {
    auto row = src * static_cast<double>(i + 1);
    y = ctfx::slice_scatter(y, row, 0, i % 64, i % 64 + 1);
    z = z + row;
  }
  g.update(x, y);
  g.output(z);
});

constexpr int count(ctfx::op_kind k) {
  ctfx::ir g = big.get();
  int n = 0;
  for (const auto& nd : g.nodes) n += nd.op == k;
  return n;
}

// Built with the expected size and no error recorded by the builder or the structural verifier.
static_assert(decltype(big)::sizes.nodes == 1000);
static_assert(decltype(big)::diag.ok());
// The full verifier (every node's metadata re-derived by its op's rule) agrees.
static_assert(ctfx::verify(big.get()).ok());
static_assert(count(ctfx::op_kind::slice_scatter) == rounds);
static_assert(count(ctfx::op_kind::add) == rounds);
static_assert(count(ctfx::op_kind::copy_) == 1);

// The last scatter is written back into `x`, and the chain's result has the row's layout.
constexpr bool ends_right() {
  ctfx::ir g = big.get();
  const std::int32_t out = g.output_node();
  const std::int32_t copy = out - 1;
  const std::int32_t z = g.arg(out, 0);
  const auto& m = g.meta(z);
  return out == 999 && g[copy].op == ctfx::op_kind::copy_ && g.arg(copy, 0) == 0 &&
         g[g.arg(copy, 1)].op == ctfx::op_kind::slice_scatter && g.meta(copy).storage == g.meta(0).storage &&
         m.rank == 2 && m.size[0] == 1 && m.size[1] == 128 && m.dt == ctfx::f32;
}
static_assert(ends_right());

}  // namespace

int main() { return 0; }
