// bench/memory — planned peak memory of example graphs: no reuse, Inductor's reuse lines, the
// executors' pooled arena (the reuse slots packed by plan/arena.hpp), and the lower bound of the schedule (max over time of the live buffer bytes).
// Static sizes only; all numbers are bytes of intermediate and output buffers (inputs are the
// caller's). Deterministic: no timing.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/arena.hpp>

namespace {

// The lower bound of the schedule the executors run: max over time of the live buffer bytes (64 B
// aligned), with each buffer live over its liveness interval — which lets an elementwise result
// start at the half-step its dying same-shape input ends (Inductor's same-offset in-place reuse,
// the rule the executors' reuse slots follow). plan_arena's own bound starts every block at its
// defining step (a packed arena may not shift an overlap), so it is higher on such graphs.
std::int64_t schedule_lower_bound(const ctfx::liveness& L) {
  std::vector<std::pair<std::int64_t, std::int64_t>> ev;  // (half-step, +/- bytes); frees sort first
  for (const auto& b : L.buffers) {
    if (!b.bytes.is_static()) continue;
    const std::int64_t sz = (b.bytes.value() + 63) / 64 * 64;
    ev.push_back({b.begin, sz});
    ev.push_back({b.end, -sz});
  }
  std::sort(ev.begin(), ev.end());
  std::int64_t live = 0, peak = 0;
  for (const auto& [t, d] : ev) peak = std::max(peak, live += d);
  return peak;
}

void report(const char* name, const ctfx::ir& functional) {
  ctfx::runtime_plan p(functional);
  if (!p.error().ok()) { std::printf("| %s | plan error: %s |\n", name, std::string(p.error().message()).c_str()); return; }
  const ctfx::ir& g = p.graph();
  const ctfx::liveness& L = p.life();
  const auto& R = p.memory_plan();
  const auto A = ctfx::plan_arena(g, L);  // buffers: for the no-reuse total
  const std::int64_t bound = schedule_lower_bound(L);
  std::int64_t arena = 0;                 // the executors' arena: the reuse slots, packed
  for (std::int32_t q = 0; q < p.arena().n_pools(); ++q) arena += p.arena().pool_bytes(q);
  std::printf("| %s | %zu | %lld | %lld | %lld | %lld | %.3f |\n", name, L.buffers.size(), static_cast<long long>(A.unplanned_peak),
              static_cast<long long>(R.peak_static_bytes), static_cast<long long>(arena), static_cast<long long>(bound),
              bound ? static_cast<double>(arena) / static_cast<double>(bound) : 1.0);
}

}  // namespace

int main() {
  std::printf("| graph | buffers | no reuse | Inductor reuse peak | ctfx arena | lower bound | arena / bound |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  report("kv-cache update", ctfx::build_checked([](ctfx::builder& b) {
    auto cache = b.input("cache", ctfx::f16, {8, 32, 4096, 128});
    auto k = b.input("k", ctfx::f16, {8, 32, 1, 128});
    auto pos = b.input("pos", ctfx::i64, {1});
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k));
  }));
  report("halo + Jacobi step (258^2)", ctfx::build_checked([](ctfx::builder& b) {
    constexpr long N = 258;
    auto grid = b.input("grid", ctfx::f32, {N, N});
    auto e = b.input("e", ctfx::f32, {N - 2});
    auto g = ctfx::select_scatter(grid, ctfx::slice_scatter(grid.select(0, 0), e, 0, 1, N - 1), 0, 0);
    g = ctfx::select_scatter(g, ctfx::slice_scatter(g.select(0, N - 1), e, 0, 1, N - 1), 0, N - 1);
    b.update(grid, g);
    auto up = g.slice(0, 0, N - 2).slice(1, 1, N - 1), down = g.slice(0, 2, N).slice(1, 1, N - 1);
    auto left = g.slice(0, 1, N - 1).slice(1, 0, N - 2), right = g.slice(0, 1, N - 1).slice(1, 2, N);
    b.output(((up + down) + (left + right)) * 0.25);
  }));
  report("scatter-add histogram", ctfx::build_checked([](ctfx::builder& b) {
    auto counts = b.input("counts", ctfx::f32, {64});
    auto bin = b.input("bin", ctfx::i64, {100000});
    auto w = b.input("w", ctfx::f32, {100000});
    b.update(counts, ctfx::index_put(counts, {bin}, w, true));
    b.output(w.sum({0}));
  }));
  report("MLP-like chain, 16 layers of [256, 1024]", ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {256, 1024});
    auto bias = b.input("bias", ctfx::f32, {1024});
    auto h = x;
    auto skip = x;
    for (int i = 0; i < 16; ++i) {
      h = ctfx::relu(h * 0.5 + bias);
      if (i % 4 == 3) { h = h + skip; skip = h; }
    }
    b.output(h.sum({1}));
  }));
  report("diamond of reductions and cats", ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {128, 512});
    auto a = ctfx::exp(x);
    auto c = ctfx::cat({a, x * 2.0}, 1);
    auto d = c.sum({1}, true);
    auto e = ctfx::sin(c) + d;
    auto f = e.amax({0});
    b.output(f, a.sum({0}));
  }));
  return 0;
}
