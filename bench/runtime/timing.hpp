// bench/runtime/timing.hpp — how the host benchmarks time a call: the median of repeated runs after
// one warm-up run (page faults, caches).
#pragma once
#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace ctfx_bench {

inline double median_us(int reps, const std::function<void()>& f) {
  using clk = std::chrono::steady_clock;
  std::vector<double> t;
  f();
  for (int r = 0; r < reps; ++r) {
    auto a = clk::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(clk::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace ctfx_bench
