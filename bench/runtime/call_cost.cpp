// bench/runtime/call_cost — what a call costs beyond its arithmetic: RoPE (compute_workloads.hpp's
// (c)) on one (batch, head) row, 128 floats, where the hand loop takes nanoseconds and the rest of
// a ctfx call is its setup: the checks of every input before the first write (shapes, strides,
// the position's range, aliasing), binding the plan's layouts, and each kernel's operands. Beside
// it the full [8, 32] RoPE, to show what part of that workload the setup is. Medians of 51
// batches of back-to-back calls, ns per call, one thread.
//
//   call_cost
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include "buffers.hpp"
#include "compute_workloads.hpp"

namespace {

using namespace ctfx_bench::compute;  // rope_of, RS, RD
constexpr long S = RS, D = RD;

// Median over 51 batches of `inner` back-to-back calls, in ns per call.
template <class F>
double ns_per_call(int inner, F&& f) {
  std::vector<double> t;
  f();
  for (int r = 0; r < 51; ++r) {
    const auto a = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) f();
    t.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - a).count() / inner);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <long B, long H>
void row(const char* what) {
  using plan = ctfx::compiled<decltype(rope_of<B, H>)>;
  ctfx_bench::buffer<float> cache(B * H * S * D, 1.0f), k(B * H * D, 0.5f), cs(D / 2, 0.25f), sn(D / 2, 0.75f);
  std::int64_t pos = 17;
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(cache.data(), ctfx::f32, {B, H, S, D}),
                                         ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {B, H, 1, D}),
                                         ctfx::tensor_ref::contiguous(cs.data(), ctfx::f32, {D / 2}),
                                         ctfx::tensor_ref::contiguous(sn.data(), ctfx::f32, {D / 2}),
                                         ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
  const std::vector<ctfx::tensor_desc> desc(in.begin(), in.end());
  std::vector<std::byte> ws(plan::bind(desc).workspace_bytes);
  ctfx::runtime_plan rp(rope_of<B, H>.get());
  std::vector<std::byte> rws(rp.bind(desc).workspace_bytes);
  auto hand = [&] {
    for (long bh = 0; bh < B * H; ++bh) {
      const float* kk = k.data() + bh * D;
      float* o = cache.data() + (bh * S + pos) * D;
      for (long j = 0; j < D / 2; ++j) {
        o[j] = kk[j] * cs[j] - kk[j + D / 2] * sn[j];
        o[j + D / 2] = kk[j + D / 2] * cs[j] + kk[j] * sn[j];
      }
    }
    asm volatile("" ::: "memory");
  };
  auto compiled = [&] {
    if (auto st = plan::run(in, {}, ctfx::device_ctx{ctfx::backend::host, nullptr}, ws); !st) {
      std::fprintf(stderr, "%s\n", st.message.c_str());
      std::exit(1);
    }
  };
  auto runtime = [&] {
    if (auto st = rp.run(in, {}, ctfx::backend::host, rws); !st) {
      std::fprintf(stderr, "%s\n", st.message.c_str());
      std::exit(1);
    }
  };
  const int inner = B * H > 1 ? 20 : 2000;
  const double h = ns_per_call(inner, hand), c = ns_per_call(inner, compiled), r = ns_per_call(inner, runtime);
  std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |\n", what, h, c, r, c - h, r - h);
}

}  // namespace

int main() {
  std::printf("| RoPE into a KV cache | hand loop (ns) | compiled<G> (ns) | runtime_plan (ns) | compiled<G> - hand | runtime_plan - hand |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  row<1, 1>("one (batch, head) row, 128 f32");
  row<8, 32>("[8, 32] rows (workload (c))");
}
