// bench/runtime/inplace_workloads.hpp — the in-place updates of bench/runtime/workloads.hpp
// (bench/RESULTS.md §2: a KV-cache token, a halo exchange, a chain of slice_scatters, a scatter-add,
// a clone) with their sizes in the graph, so that bench/runtime/compute_bench runs them as
// compiled<G> beside runtime_plan, the hand loops and PyTorch (bench/torch/compute.py), as the
// programs that compute (compute_workloads.hpp).
#pragma once
#include <ctfx.hpp>

namespace ctfx_bench::compute {
// (h) An LLM KV-cache update: one f16 token at a run-time position of a [8, 32, KS, 128] cache.
constexpr long KS = 8192;
constexpr auto kv_cache = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f16, {8, 32, KS, 128});
  auto k = b.input("k", ctfx::f16, {8, 32, 1, 128});
  auto pos = b.input("pos", ctfx::i64, {1});
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
});

// (i) A halo exchange: the four edges of a HG x HG f32 grid (rows 0 and HG-1, columns 0 and HG-1,
// without corners), each from its own buffer.
constexpr long HG = 4096;
constexpr auto halo = ctfx::graph([](ctfx::builder& b) {
  auto grid = b.input("grid", ctfx::f32, {HG, HG});
  auto n = b.input("n", ctfx::f32, {HG - 2});
  auto s = b.input("s", ctfx::f32, {HG - 2});
  auto we = b.input("w", ctfx::f32, {HG - 2});
  auto e = b.input("e", ctfx::f32, {HG - 2});
  auto g = ctfx::select_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), n, 0, 1, HG - 1), 0, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(0, HG - 1), s, 0, 1, HG - 1), 0, HG - 1);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, 0), we, 0, 1, HG - 1), 1, 0);
  g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(1, HG - 1), e, 0, 1, HG - 1), 1, HG - 1);
  b.update(grid, g);
});

// (j) A chain of CR slice_scatters into one [CR, CC] f32 buffer: row i takes source row (7 i) mod CR.
constexpr long CR = 64, CC = 16384;
constexpr auto scatter_chain = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CR, CC});
  auto src = b.input("src", ctfx::f32, {CR, CC});
  auto y = x;
  for (long i = 0; i < CR; ++i) y = ctfx::slice_scatter(y, src.slice(0, (i * 7) % CR, (i * 7) % CR + 1), 0, i, i + 1);
  b.update(x, y);
});

// (k) index_put with accumulate: AN f32 values into AB bins (duplicate indices).
constexpr long AN = 1L << 20, AB = 1024;
constexpr auto scatter_add = ctfx::graph([](ctfx::builder& b) {
  auto h = b.input("h", ctfx::f32, {AB});
  auto i = b.input("i", ctfx::i64, {AN});
  auto v = b.input("v", ctfx::f32, {AN});
  b.update(h, ctfx::index_put(h, {i}, v, true));
});

// (l) A clone of CE f32 values (256 MiB) into the caller's output buffer.
constexpr long CE = 64L << 20;
constexpr auto clone_out = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CE});
  b.output(x.clone());
});

}  // namespace ctfx_bench::compute
