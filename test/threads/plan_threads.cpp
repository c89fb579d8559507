// A plan is immutable: several threads run one plan at once, each with its own buffers and
// workspace, and each gets the reference's results. Built and run under ThreadSanitizer by CTest.
#include <cstdio>
#include <thread>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

int main() {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto cache = b.input("cache", ctfx::f32, {64, 32});
    auto row = b.input("row", ctfx::f32, {2, 32});
    auto pos = b.input("pos", ctfx::i64, {2});
    auto next = ctfx::index_put(cache, {pos}, row * 2.0, true);
    auto grid = ctfx::slice_scatter(next, next.slice(0, 0, 1) + 1.0, 0, 63, 64);
    b.update(cache, grid);
    b.output(grid.sum({1}), ctfx::exp(row));
  });
  const ctfx::runtime_plan plan(g);
  if (!plan.error().ok()) { std::printf("plan error: %s\n", std::string(plan.error().message()).c_str()); return 1; }
  constexpr int threads = 4, rounds = 50;
  struct state {
    std::vector<float> cache = std::vector<float>(64 * 32), row = std::vector<float>(64), o1 = std::vector<float>(64), o2 = std::vector<float>(64);
    std::vector<std::int64_t> pos = {3, 3};
    std::vector<std::byte> ws;
    void init(int t) {
      for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(t)) % 13);
      for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i % 5) * 0.25f;
    }
    std::vector<ctfx::tensor_ref> in() {
      return {ctfx::tensor_ref::contiguous(cache.data(), ctfx::f32, {64, 32}), ctfx::tensor_ref::contiguous(row.data(), ctfx::f32, {2, 32}),
              ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {2})};
    }
    std::vector<ctfx::tensor_ref> out() {
      return {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {64}), ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {2, 32})};
    }
  };
  std::vector<state> ref(threads), got(threads);
  for (int t = 0; t < threads; ++t) {
    ref[static_cast<std::size_t>(t)].init(t);
    for (int r = 0; r < rounds; ++r)
      if (!ctfx::reference_run(g, ref[static_cast<std::size_t>(t)].in(), ref[static_cast<std::size_t>(t)].out()).ok) return 1;
  }
  const auto ws_bytes = plan.bind(std::vector<ctfx::tensor_desc>{ref[0].in()[0], ref[0].in()[1], ref[0].in()[2]}).workspace_bytes;
  std::vector<std::thread> pool;
  std::vector<int> ok(threads, 1);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      state& s = got[static_cast<std::size_t>(t)];
      s.init(t);
      s.ws.resize(ws_bytes);
      for (int r = 0; r < rounds; ++r)
        if (!plan.run(s.in(), s.out(), ctfx::backend::host, s.ws)) ok[static_cast<std::size_t>(t)] = 0;
    });
  for (auto& th : pool) th.join();
  int bad = 0;
  for (int t = 0; t < threads; ++t) {
    const auto& a = ref[static_cast<std::size_t>(t)];
    const auto& b = got[static_cast<std::size_t>(t)];
    if (!ok[static_cast<std::size_t>(t)] || a.cache != b.cache || a.o1 != b.o1 || a.o2 != b.o2) ++bad;
  }
  std::printf("%d threads x %d runs of one plan: %d mismatches\n", threads, rounds, bad);
  return bad == 0 ? 0 : 1;
}
