// bench/runtime/timing.hpp — how the host benchmarks time a call: the median of repeated runs after
// a warm-up of 5 ms (page faults, caches, the VM's slow first milliseconds).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace ctfx_bench {

inline double median_us(int reps, const std::function<void()>& f) {
  using clk = std::chrono::steady_clock;
  std::vector<double> t;
  // Warm up for 5 ms (at least one call): on the VM the first milliseconds after a large buffer
  // is written ran the halo's column walk at twice its time, whichever column was timed first.
  for (auto until = clk::now() + std::chrono::milliseconds(5); clk::now() < until;) f();
  for (int r = 0; r < reps; ++r) {
    auto a = clk::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(clk::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ctfx_bench
