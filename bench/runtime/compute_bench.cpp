// bench/runtime/compute_bench — programs that compute, on the host, one thread: each as
// compiled<G> (kernels specialized and fused in the compiler), as runtime_plan (the same graph
// parsed or built at run time: fused, run-time layouts), and as the loop a user would write, all
// compiled with the same flags (-O3) in this one binary, with the copy bound (memcpy of the bytes
// the program must read and write) measured in the same run. Medians of repeated runs; every
// buffer 64-byte aligned (buffers.hpp), as torch's are.
// PyTorch eager and torch.compile on the same programs: bench/torch/compute.py.
//
// The in-place updates of bench/RESULTS.md §2 (inplace_workloads.hpp) run here too, as (h)-(l).
//
//   compute_bench [--reps N] [--omp] [--only a|b|...|o]   (--omp: ctfx on the OMP backend, all
//                                       threads; the hand loops stay sequential. --only: one workload)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include "buffers.hpp"
#include "compute_workloads.hpp"
#include "inplace_workloads.hpp"
#include "timing.hpp"

namespace {

using namespace ctfx_bench::compute;
using ctfx_bench::buffer;  // 64-byte aligned, as torch's tensors are
using ctfx_bench::median_us;

// Each program of compute_workloads.hpp as the loop a user would write.
__attribute__((noinline)) void stencil_hand(float* x, float* tmp) {
  for (long j = 0; j < G; ++j) x[j] = x[(G - 2) * G + j];
  for (long j = 0; j < G; ++j) x[(G - 1) * G + j] = x[G + j];
  for (long i = 0; i < G; ++i) { x[i * G] = x[i * G + G - 2]; x[i * G + G - 1] = x[i * G + 1]; }
  for (long i = 1; i < G - 1; ++i)
    for (long j = 1; j < G - 1; ++j) {
      const float c = x[i * G + j];
      tmp[(i - 1) * (G - 2) + j - 1] = c + (((x[(i - 1) * G + j] + x[(i + 1) * G + j]) + (x[i * G + j - 1] + x[i * G + j + 1])) - c * 4.0f) * 0.2f;
    }
  for (long i = 1; i < G - 1; ++i) std::memcpy(x + i * G + 1, tmp + (i - 1) * (G - 2), (G - 2) * 4);
}

__attribute__((noinline)) void chain8_hand(const float* x, float* y) {
  for (long i = 0; i < E; ++i) {
    float t = x[i] * 1.001f;
    t = t + 0.5f;
    t = t * x[i];
    t = t - 0.25f;
    t = t < 0.0f ? 0.0f : t;
    t = t * 0.75f;
    t = t + x[i];
    y[i] = t / 1.5f;
  }
}

__attribute__((noinline)) void ring_hand(float* buf, const float* row, std::int64_t pos, float* out) {
  std::memcpy(buf + pos * W, row, W * 4);
  for (long j = 0; j < W; ++j) out[j] = 0.0f + buf[j];
  for (long r = 1; r < R; ++r)
    for (long j = 0; j < W; ++j) out[j] += buf[r * W + j];
}

__attribute__((noinline)) void rope_hand(float* cache, const float* k, const float* cs, const float* sn, std::int64_t pos) {
  for (long bh = 0; bh < RB * RH; ++bh) {
    const float* kk = k + bh * RD;
    float* o = cache + (bh * RS + pos) * RD;
    for (long j = 0; j < RD / 2; ++j) {
      o[j] = kk[j] * cs[j] - kk[j + RD / 2] * sn[j];
      o[j + RD / 2] = kk[j + RD / 2] * cs[j] + kk[j] * sn[j];
    }
  }
}

__attribute__((noinline)) void softmax_hand(const float* x, float* y) {
  for (long i = 0; i < SN; ++i) {
    const float* r = x + i * SD;
    float* o = y + i * SD;
    float m = r[0];
    for (long j = 1; j < SD; ++j) m = r[j] > m ? r[j] : m;
    float s = 0.0f;
    for (long j = 0; j < SD; ++j) { o[j] = std::exp(r[j] - m); s += o[j]; }
    for (long j = 0; j < SD; ++j) o[j] /= s;
  }
}

__attribute__((noinline)) void rmsnorm_hand(const float* x, const float* w, float* y) {
  for (long i = 0; i < NN; ++i) {
    const float* r = x + i * ND;
    float s = 0.0f;
    for (long j = 0; j < ND; ++j) s += r[j] * r[j];
    const float inv = 1.0f / std::sqrt(s / static_cast<float>(ND) + 1e-6f);
    for (long j = 0; j < ND; ++j) y[i * ND + j] = r[j] * inv * w[j];
  }
}

__attribute__((noinline)) void softmax3_hand(const float* x, float* y) {
  for (long i = 0; i < TB * TS; ++i) {
    const float* r = x + i * TS;
    float* o = y + i * TS;
    float m = r[0];
    for (long j = 1; j < TS; ++j) m = r[j] > m ? r[j] : m;
    float s = 0.0f;
    for (long j = 0; j < TS; ++j) { o[j] = std::exp(r[j] - m); s += o[j]; }
    for (long j = 0; j < TS; ++j) o[j] /= s;
  }
}

__attribute__((noinline)) void rms_residual_hand(float* x, const float* w) {
  for (long i = 0; i < QN; ++i) {
    float* __restrict r = x + i * QD;
    float s = 0.0f;
    for (long j = 0; j < QD; ++j) s += r[j] * r[j];
    const float inv = 1.0f / std::sqrt(s / static_cast<float>(QD) + 1e-6f);
    for (long j = 0; j < QD; ++j) r[j] = r[j] + r[j] * inv * w[j];
  }
}

// A select, not `if (m[i] > 0.5f) x[i] = v;`: the branch on a mask without a pattern costs 6x more
// here (bench/RESULTS.md), and g++ does not turn a conditional store into a select by itself.
__attribute__((noinline)) void masked_hand(float* x, const float* m, float v) {
  for (long i = 0; i < MN * MD; ++i) x[i] = m[i] > 0.5f ? v : x[i];
}

// SGD's step as a user writes it: one loop per parameter, both updates in it.
__attribute__((noinline)) void sgd_hand(float* const* p, const float* const* g, float* const* m) {
  for (int k = 0; k < 3; ++k) {
    float* __restrict pk = p[k];
    const float* __restrict gk = g[k];
    float* __restrict mk = m[k];
    for (long i = 0; i < P * P; ++i) {
      const float nm = mk[i] * 0.9f + (gk[i] + pk[i] * 1e-4f);
      mk[i] = nm;
      pk[i] = pk[i] - nm * 0.01f;
    }
  }
}

// The in-place updates (inplace_workloads.hpp), as bench/runtime/runtime_bench writes them by hand.
__attribute__((noinline)) void kv_hand(std::uint16_t* cache, const std::uint16_t* k, std::int64_t pos) {
  for (long bh = 0; bh < 8 * 32; ++bh) std::memcpy(cache + (bh * KS + pos) * 128, k + bh * 128, 128 * 2);
}

__attribute__((noinline)) void halo_hand(float* grid, const float* n, const float* s, const float* w, const float* e) {
  std::memcpy(grid + 1, n, (HG - 2) * 4);
  std::memcpy(grid + (HG - 1) * HG + 1, s, (HG - 2) * 4);
  for (long i = 1; i < HG - 1; ++i) { grid[i * HG] = w[i - 1]; grid[i * HG + HG - 1] = e[i - 1]; }
}

__attribute__((noinline)) void scatter_chain_hand(float* x, const float* src) {
  for (long i = 0; i < CR; ++i) std::memcpy(x + i * CC, src + ((i * 7) % CR) * CC, CC * 4);
}

__attribute__((noinline)) void scatter_add_hand(float* h, const std::int64_t* idx, const float* v) {
  for (long k = 0; k < AN; ++k) h[idx[k]] += v[k];
}

__attribute__((noinline)) void clone_hand(const float* x, float* y) { std::memcpy(y, x, CE * 4); }

ctfx::backend where = ctfx::backend::host;

template <class Plan>
double time_compiled(int reps, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out) {
  std::vector<ctfx::tensor_desc> d(in.begin(), in.end());
  std::vector<std::byte> ws(Plan::bind(d).workspace_bytes);
  return median_us(reps, [&] {
    if (auto st = Plan::run(in, out, ctfx::device_ctx{where, nullptr}, ws); !st) { std::fprintf(stderr, "%s\n", st.message.c_str()); std::exit(1); }
  });
}

double time_runtime(int reps, const ctfx::ir& g, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out) {
  ctfx::runtime_plan p(g);
  std::vector<ctfx::tensor_desc> d(in.begin(), in.end());
  std::vector<std::byte> ws(p.bind(d).workspace_bytes);
  return median_us(reps, [&] {
    if (auto st = p.run(in, out, where, ws); !st) { std::fprintf(stderr, "%s\n", st.message.c_str()); std::exit(1); }
  });
}

double time_memcpy(int reps, std::size_t bytes) {
  buffer<std::byte> a(bytes, std::byte{1}), b(bytes);
  return median_us(reps, [&] { std::memcpy(b.data(), a.data(), bytes); });
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  std::string_view only;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::string_view(argv[i]) == "--omp") where = ctfx::backend::omp;
    if (std::string_view(argv[i]) == "--only" && i + 1 < argc) only = argv[++i];
  }
  auto run = [&](char w) { return only.empty() || only.find(w) != std::string_view::npos; };
  std::printf("| workload | compiled<G> | runtime_plan | hand loop -O3 | copy bound | compiled / hand | runtime / hand |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  auto line = [](const char* name, double c, double r, double h, double bound) {
    std::printf("| %s | %.1f us | %.1f us | %.1f us | %.1f us | %.2fx | %.2fx |\n", name, c, r, h, bound, c / h, r / h);
    std::fflush(stdout);
  };
  if (run('a')) {
    std::fprintf(stderr, "[1/13] stencil %ld x %ld f32...\n", G, G);
    buffer<float> x(G * G), tmp(G * G);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {G, G})};
    const double c = time_compiled<ctfx::compiled<decltype(stencil)>>(reps, in, {});
    const double r = time_runtime(reps, stencil.get(), in, {});
    const double h = median_us(reps, [&] { stencil_hand(x.data(), tmp.data()); });
    // Bound: read the grid, write the interior to a temporary and back.
    line("(a) 5-point stencil 1026^2 f32, periodic ghosts, copy_ back", c, r, h, time_memcpy(reps, G * G * 4) * 2);
  }
  if (run('b')) {
    std::fprintf(stderr, "[2/13] ring buffer [%ld, %ld] f32...\n", R, W);
    buffer<float> buf(R * W), row(W), out(W);
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    for (std::size_t i = 0; i < row.size(); ++i) row[i] = static_cast<float>(i % 7);
    std::int64_t pos = 17;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {R, W}),
                                            ctfx::tensor_ref::contiguous(row.data(), ctfx::f32, {1, W}),
                                            ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
    auto o = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(out.data(), ctfx::f32, {W})};
    const double c = time_compiled<ctfx::compiled<decltype(ring)>>(reps, in, o);
    const double r = time_runtime(reps, ring.get(), in, o);
    const double h = median_us(reps, [&] { ring_hand(buf.data(), row.data(), pos, out.data()); });
    line("(b) ring buffer [64, 4096] f32: row at a run-time position, window sum", c, r, h, time_memcpy(reps, R * W * 4));
  }
  if (run('c')) {
    std::fprintf(stderr, "[3/13] RoPE into a KV cache...\n");
    buffer<float> cache(RB * RH * RS * RD), k(RB * RH * RD), cs(RD / 2), sn(RD / 2);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    for (long j = 0; j < RD / 2; ++j) { cs[j] = std::cos(0.01f * j); sn[j] = std::sin(0.01f * j); }
    std::int64_t pos = RS / 2;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(cache.data(), ctfx::f32, {RB, RH, RS, RD}),
                                            ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {RB, RH, 1, RD}),
                                            ctfx::tensor_ref::contiguous(cs.data(), ctfx::f32, {RD / 2}),
                                            ctfx::tensor_ref::contiguous(sn.data(), ctfx::f32, {RD / 2}),
                                            ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
    const double c = time_compiled<ctfx::compiled<decltype(rope)>>(reps, in, {});
    const double r = time_runtime(reps, rope.get(), in, {});
    const double h = median_us(reps, [&] { rope_hand(cache.data(), k.data(), cs.data(), sn.data(), pos); });
    line("(c) RoPE of k [8, 32, 1, 128] f32 into a KV cache at a run-time position", c, r, h, time_memcpy(reps, RB * RH * RD * 4));
  }
  if (run('d')) {
    std::fprintf(stderr, "[4/13] softmax [%ld, %ld] f32...\n", SN, SD);
    buffer<float> x(SN * SD), y(SN * SD);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.05f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {SN, SD})};
    auto o = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {SN, SD})};
    const double c = time_compiled<ctfx::compiled<decltype(softmax)>>(reps, in, o);
    const double r = time_runtime(reps, softmax.get(), in, o);
    const double h = median_us(reps, [&] { softmax_hand(x.data(), y.data()); });
    line("(d) softmax over the last dim of [2048, 1024] f32 (amax, sub, exp, sum, div)", c, r, h, time_memcpy(reps, SN * SD * 4));
  }
  if (run('e')) {
    std::fprintf(stderr, "[5/13] 8-op chain over %ld f32...\n", E);
    buffer<float> x(E), y(E);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.3f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {E})};
    auto out = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {E})};
    const double c = time_compiled<ctfx::compiled<decltype(chain8)>>(reps, in, out);
    const double r = time_runtime(reps, chain8.get(), in, out);
    const double h = median_us(reps, [&] { chain8_hand(x.data(), y.data()); });
    line("(e) 8 elementwise ops, 16 M f32 (64 MiB in, 64 MiB out)", c, r, h, time_memcpy(reps, E * 4));
  }
  if (run('f')) {
    std::fprintf(stderr, "[6/13] RMSNorm [%ld, %ld] f32...\n", NN, ND);
    buffer<float> x(NN * ND), w(ND), y(NN * ND);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.02f - 1.0f;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.0f + static_cast<float>(i % 5) * 0.1f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {NN, ND}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {ND})};
    auto o = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {NN, ND})};
    const double c = time_compiled<ctfx::compiled<decltype(rmsnorm)>>(reps, in, o);
    const double r = time_runtime(reps, rmsnorm.get(), in, o);
    const double h = median_us(reps, [&] { rmsnorm_hand(x.data(), w.data(), y.data()); });
    line("(f) RMSNorm over the last dim of [2048, 1024] f32 (mean of squares fused)", c, r, h, time_memcpy(reps, NN * ND * 4));
  }
  if (run('g')) {
    std::fprintf(stderr, "[7/13] masked fill [%ld, %ld] f32...\n", MN, MD);
    buffer<float> x(MN * MD), m(MN * MD), v{-1e4f};
    // A mask without a pattern (about half the positions set), so that no branch predictor learns it.
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < x.size(); ++i) {
      h ^= h << 13; h ^= h >> 7; h ^= h << 17;
      m[i] = static_cast<float>(h >> 40) * 0x1p-24f;
      x[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    }
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {MN, MD}),
                                            ctfx::tensor_ref::contiguous(m.data(), ctfx::f32, {MN, MD}),
                                            ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {1})};
    const double c = time_compiled<ctfx::compiled<decltype(masked)>>(reps, in, {});
    const double r = time_runtime(reps, masked.get(), in, {});
    const double hl = median_us(reps, [&] { masked_hand(x.data(), m.data(), v[0]); });
    // Bound: read the mask and x, write x.
    line("(g) masked fill x[m > 0.5] = v in place, [2048, 1024] f32", c, r, hl, time_memcpy(reps, MN * MD * 4) * 1.5);
  }

  if (run('h')) {
    std::fprintf(stderr, "[8/13] kv-cache update, 1 token into [8, 32, %ld, 128] f16...\n", KS);
    buffer<std::uint16_t> cache(8 * 32 * KS * 128), k(8 * 32 * 128);
    for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<std::uint16_t>(0x3c00 + (i * 37) % 101);
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint16_t>(0x3800 + (i * 13) % 97);
    std::int64_t pos = KS / 2;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(static_cast<void*>(cache.data()), ctfx::f16, {8, 32, KS, 128}),
                                            ctfx::tensor_ref::contiguous(static_cast<void*>(k.data()), ctfx::f16, {8, 32, 1, 128}),
                                            ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
    const double c = time_compiled<ctfx::compiled<decltype(kv_cache)>>(reps, in, {});
    const double r = time_runtime(reps, kv_cache.get(), in, {});
    const double h = median_us(reps, [&] { kv_hand(cache.data(), k.data(), pos); });
    // Bound: read the token, write it into the cache.
    line("(h) kv-cache update, 1 f16 token into [8, 32, 8192, 128] at a run-time position", c, r, h, time_memcpy(reps, 8 * 32 * 128 * 2));
  }
  if (run('i')) {
    std::fprintf(stderr, "[9/13] halo exchange into %ld x %ld f32...\n", HG, HG);
    buffer<float> grid(HG * HG), n(HG - 2), s(HG - 2), w(HG - 2), e(HG - 2);
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    for (std::size_t i = 0; i < n.size(); ++i) n[i] = s[i] = w[i] = e[i] = static_cast<float>(i % 7);
    auto edge = [](buffer<float>& b) { return ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {HG - 2}); };
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(grid.data(), ctfx::f32, {HG, HG}), edge(n), edge(s), edge(w), edge(e)};
    const double c = time_compiled<ctfx::compiled<decltype(halo)>>(reps, in, {});
    const double r = time_runtime(reps, halo.get(), in, {});
    const double h = median_us(reps, [&] { halo_hand(grid.data(), n.data(), s.data(), w.data(), e.data()); });
    // Bound: the four edges read and written (a column's values lie a row apart: far above it).
    line("(i) halo exchange, 4 edges of a 4096^2 f32 grid", c, r, h, time_memcpy(reps, 4 * (HG - 2) * 4));
  }
  if (run('j')) {
    std::fprintf(stderr, "[10/13] %ld slice_scatters into [%ld, %ld] f32...\n", CR, CR, CC);
    buffer<float> x(CR * CC), src(CR * CC);
    for (std::size_t i = 0; i < x.size(); ++i) { x[i] = static_cast<float>(i % 13); src[i] = static_cast<float>((i * 37) % 101) * 0.01f; }
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {CR, CC}),
                                            ctfx::tensor_ref::contiguous(src.data(), ctfx::f32, {CR, CC})};
    const double c = time_compiled<ctfx::compiled<decltype(scatter_chain)>>(reps, in, {});
    const double r = time_runtime(reps, scatter_chain.get(), in, {});
    const double h = median_us(reps, [&] { scatter_chain_hand(x.data(), src.data()); });
    line("(j) 64 slice_scatters of rows into one [64, 16384] f32 buffer (4 MiB)", c, r, h, time_memcpy(reps, CR * CC * 4));
  }
  if (run('k')) {
    std::fprintf(stderr, "[11/13] index_put accumulate, %ld values into %ld bins...\n", AN, AB);
    buffer<float> hist(AB), v(AN);
    buffer<std::int64_t> idx(AN);
    for (long k = 0; k < AN; ++k) { idx[k] = (k * 2654435761L) % AB; v[k] = static_cast<float>(k % 7) * 0.25f; }
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(hist.data(), ctfx::f32, {AB}),
                                            ctfx::tensor_ref::contiguous(idx.data(), ctfx::i64, {AN}),
                                            ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {AN})};
    const double c = time_compiled<ctfx::compiled<decltype(scatter_add)>>(reps, in, {});
    const double r = time_runtime(reps, scatter_add.get(), in, {});
    const double h = median_us(reps, [&] { scatter_add_hand(hist.data(), idx.data(), v.data()); });
    // Bound: read the indices and the values (the bins stay in L1).
    line("(k) index_put accumulate, 1M f32 values into 1024 bins (duplicate indices)", c, r, h, time_memcpy(reps, AN * 12));
  }
  if (run('m')) {
    std::fprintf(stderr, "[13/13] SGD with momentum, 3 x [%ld, %ld] f32...\n", P, P);
    std::vector<buffer<float>> t;
    for (int k = 0; k < 9; ++k) {
      t.emplace_back(P * P);
      for (std::size_t i = 0; i < t.back().size(); ++i) t.back()[i] = static_cast<float>((i * 37 + k) % 101) * 0.001f;
    }
    std::vector<ctfx::tensor_ref> in;
    for (auto& b : t) in.push_back(ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {P, P}));
    const double c = time_compiled<ctfx::compiled<decltype(sgd)>>(reps, in, {});
    const double r = time_runtime(reps, sgd.get(), in, {});
    float* pp[3] = {t[0].data(), t[3].data(), t[6].data()};
    const float* gp[3] = {t[1].data(), t[4].data(), t[7].data()};
    float* mp[3] = {t[2].data(), t[5].data(), t[8].data()};
    const double h = median_us(reps, [&] { sgd_hand(pp, gp, mp); });
    // Bound: read p, g and m, write p and m (5 passes over a parameter's bytes, x3).
    line("(m) SGD with momentum, 3 x [1024, 1024] f32 parameters, 6 updates", c, r, h, time_memcpy(reps, P * P * 4) * 2.5 * 3);
  }
  if (run('n')) {
    std::fprintf(stderr, "[14/15] softmax [%ld, %ld, %ld] f32...\n", TB, TS, TS);
    buffer<float> x(TB * TS * TS), y(TB * TS * TS);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.05f - 2.5f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {TB, TS, TS})};
    auto o = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {TB, TS, TS})};
    const double c = time_compiled<ctfx::compiled<decltype(softmax3)>>(reps, in, o);
    const double r = time_runtime(reps, softmax3.get(), in, o);
    const double h = median_us(reps, [&] { softmax3_hand(x.data(), y.data()); });
    line("(n) softmax over the last dim of [16, 512, 512] f32", c, r, h, time_memcpy(reps, TB * TS * TS * 4));
  }
  if (run('o')) {
    std::fprintf(stderr, "[15/15] RMSNorm + residual in place [%ld, %ld] f32...\n", QN, QD);
    buffer<float> x(QN * QD), w(QD);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.02f - 1.0f;
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1e-3f * static_cast<float>(i % 5);  // (x stays bounded over the repetitions)
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {QN, QD}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {QD})};
    const double c = time_compiled<ctfx::compiled<decltype(rms_residual)>>(reps, in, {});
    const double r = time_runtime(reps, rms_residual.get(), in, {});
    const double h = median_us(reps, [&] { rms_residual_hand(x.data(), w.data()); });
    // Bound: read x and write it back.
    line("(o) RMSNorm of [4096, 1024] f32 + residual, written back in place", c, r, h, time_memcpy(reps, QN * QD * 4));
  }
  if (run('l')) {
    std::fprintf(stderr, "[12/13] clone of %ld MiB...\n", CE * 4 >> 20);
    buffer<float> x(CE), y(CE);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 1021);
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {CE})};
    auto o = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {CE})};
    const double c = time_compiled<ctfx::compiled<decltype(clone_out)>>(reps, in, o);
    const double r = time_runtime(reps, clone_out.get(), in, o);
    const double h = median_us(reps, [&] { clone_hand(x.data(), y.data()); });
    line("(l) clone of 256 MiB f32 into the caller's output", c, r, h, time_memcpy(reps, CE * 4));
  }
}
