// bench/runtime — run time on the host: each workload as ctfx with reinplacing, ctfx with
// reinplacing off (the functional form), a hand-written baseline, and the copy bound (the bytes the
// update must write / the memcpy bandwidth measured in this run). Medians of repeated runs; the
// ratios are taken within one run.
//
//   runtime_bench [--reps N] [--quick] [--markdown]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include "timing.hpp"
#include "workloads.hpp"

namespace {


using ctfx_bench::median_us;

// Bytes per microsecond of memcpy between two buffers of `bytes`.
double memcpy_bw(std::size_t bytes, int reps) {
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes);
  const double us = median_us(reps, [&] { std::memcpy(b.data(), a.data(), bytes); });
  return static_cast<double>(bytes) / us;
}

struct row {
  std::string name;
  double ctfx_us, functional_us, hand_us, bound_us;
  std::size_t written;
};

struct workload {
  ctfx::ir graph;
  std::vector<std::vector<std::byte>> inputs;
  std::vector<ctfx::tensor_desc> in_desc;
  std::vector<ctfx::tensor_desc> out_desc;
  std::vector<std::vector<std::byte>> outputs;
};

std::vector<ctfx::tensor_ref> refs(std::vector<std::vector<std::byte>>& bufs, const std::vector<ctfx::tensor_desc>& d) {
  std::vector<ctfx::tensor_ref> r;
  for (std::size_t k = 0; k < d.size(); ++k) r.emplace_back(bufs[k].data(), d[k]);
  return r;
}

// Runs a workload's plan (reinplaced or functional) with a preallocated workspace.
double time_plan(workload& w, bool reinplace, int reps) {
  ctfx::plan_options o;
  o.reinplace = reinplace;
  ctfx::runtime_plan p(w.graph, o);
  if (!p.error().ok()) { std::fprintf(stderr, "plan error: %s\n", std::string(p.error().message()).c_str()); std::exit(1); }
  auto b = p.bind(w.in_desc);
  std::vector<std::byte> ws(b.workspace_bytes);
  auto in = refs(w.inputs, w.in_desc);
  auto out = refs(w.outputs, w.out_desc);
  return median_us(reps, [&] {
    auto st = p.run(in, out, ctfx::backend::host, ws);
    if (!st) { std::fprintf(stderr, "run failed: %s\n", st.message.c_str()); std::exit(1); }
  });
}

std::vector<std::byte> filled(std::size_t bytes) {
  std::vector<std::byte> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::byte>((i * 131) & 0x3f);  // small finite floats
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
  }
  const long S = quick ? 1024 : 8192;  // KV cache [8, 32, S, 128] f16: 512 MiB at S = 8192
  const long G = quick ? 1024 : 4096;  // halo grid G x G f32: 64 MiB at 4096
  std::vector<row> rows;
  std::fprintf(stderr, "[1/6] memcpy bandwidth...\n");
  const std::size_t bw_bytes = quick ? (64u << 20) : (256u << 20);
  const double bw = memcpy_bw(bw_bytes, std::max(5, reps / 3));

  {  // 1. LLM KV-cache update: one token into [8, 32, S, 128] f16
    std::fprintf(stderr, "[2/6] kv-cache update (%ld MiB cache)...\n", 8L * 32 * S * 128 * 2 >> 20);
    workload w;
    w.graph = ctfx::build_checked([S](ctfx::builder& b) { ctfx_bench::kv_cache_update(b, S); });
    w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f16, {8, 32, S, 128}), ctfx::tensor_desc::contiguous(ctfx::f16, {8, 32, 1, 128}),
                 ctfx::tensor_desc::contiguous(ctfx::i64, {1})};
    w.inputs = {filled(w.in_desc[0].span_bytes()), filled(w.in_desc[1].span_bytes()), std::vector<std::byte>(8)};
    const std::int64_t pos = S / 2;
    std::memcpy(w.inputs[2].data(), &pos, 8);
    const std::size_t written = 8 * 32 * 128 * 2;
    row r{"kv-cache update, 1 token", time_plan(w, true, reps), time_plan(w, false, std::max(3, reps / 4)), 0, written / bw, written};
    auto* cache = reinterpret_cast<std::uint16_t*>(w.inputs[0].data());
    const auto* k = reinterpret_cast<const std::uint16_t*>(w.inputs[1].data());
    r.hand_us = median_us(reps, [&] {
      for (long bh = 0; bh < 8 * 32; ++bh) std::memcpy(cache + (bh * S + pos) * 128, k + bh * 128, 128 * 2);
    });
    rows.push_back(r);
  }
  {  // 2. halo exchange into a G x G grid: four edges
    std::fprintf(stderr, "[3/6] halo exchange (%ld x %ld f32)...\n", G, G);
    workload w;
    w.graph = ctfx::build_checked([G](ctfx::builder& b) { ctfx_test::halo_edges(b, G); });
    w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {G, G})};
    for (int k = 0; k < 4; ++k) w.in_desc.push_back(ctfx::tensor_desc::contiguous(ctfx::f32, {G - 2}));
    for (const auto& d : w.in_desc) w.inputs.push_back(filled(d.span_bytes()));
    const std::size_t written = 4 * static_cast<std::size_t>(G - 2) * 4;
    row r{"halo exchange, 4 edges", time_plan(w, true, reps), time_plan(w, false, std::max(3, reps / 4)), 0, written / bw, written};
    auto* grid = reinterpret_cast<float*>(w.inputs[0].data());
    const float* e[4];
    for (int k = 0; k < 4; ++k) e[k] = reinterpret_cast<const float*>(w.inputs[static_cast<std::size_t>(k) + 1].data());
    r.hand_us = median_us(reps, [&] {
      std::memcpy(grid + 1, e[0], (G - 2) * 4);
      std::memcpy(grid + (G - 1) * G + 1, e[1], (G - 2) * 4);
      for (long i = 1; i < G - 1; ++i) { grid[i * G] = e[2][i - 1]; grid[i * G + G - 1] = e[3][i - 1]; }
    });
    rows.push_back(r);
  }
  {  // 3. a chain of 64 slice_scatters into one [64, 16384] f32 buffer (4 MiB)
    std::fprintf(stderr, "[4/6] 64 slice_scatters into one buffer...\n");
    constexpr long R = 64, C = 16384;
    workload w;
    w.graph = ctfx::build_checked([](ctfx::builder& b) { ctfx_bench::row_scatters(b, R, C); });
    w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {R, C}), ctfx::tensor_desc::contiguous(ctfx::f32, {R, C})};
    for (const auto& d : w.in_desc) w.inputs.push_back(filled(d.span_bytes()));
    const std::size_t written = R * C * 4;
    row r{"64 slice_scatters, 4 MiB", time_plan(w, true, reps), time_plan(w, false, std::max(3, reps / 4)), 0, written / bw, written};
    auto* x = reinterpret_cast<float*>(w.inputs[0].data());
    const auto* src = reinterpret_cast<const float*>(w.inputs[1].data());
    r.hand_us = median_us(reps, [&] {
      for (long i = 0; i < R; ++i) std::memcpy(x + i * C, src + ((i * 7) % R) * C, C * 4);
    });
    rows.push_back(r);
  }
  {  // 4. index_put with accumulate: 1M values into 1024 bins (many duplicates)
    std::fprintf(stderr, "[5/6] index_put accumulate, 1M values into 1024 bins...\n");
    constexpr long N = 1 << 20, B = 1024;
    workload w;
    w.graph = ctfx::build_checked([](ctfx::builder& b) { ctfx_bench::scatter_add_into(b, N, B); });
    w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {B}), ctfx::tensor_desc::contiguous(ctfx::i64, {N}),
                 ctfx::tensor_desc::contiguous(ctfx::f32, {N})};
    w.inputs = {std::vector<std::byte>(B * 4), std::vector<std::byte>(N * 8), filled(N * 4)};
    auto* idx = reinterpret_cast<std::int64_t*>(w.inputs[1].data());
    for (long k = 0; k < N; ++k) idx[k] = (k * 2654435761L) % B;
    const std::size_t written = N * 4;  // every value is added once (read-modify-write of a bin)
    row r{"index_put accumulate, 1M -> 1024", time_plan(w, true, reps), time_plan(w, false, reps), 0, written / bw, written};
    auto* h = reinterpret_cast<float*>(w.inputs[0].data());
    const auto* v = reinterpret_cast<const float*>(w.inputs[2].data());
    r.hand_us = median_us(reps, [&] {
      for (long k = 0; k < N; ++k) h[idx[k]] += v[k];
    });
    rows.push_back(r);
  }
  {  // 5. a plain clone of 256 MiB (64 MiB with --quick)
    const long E = static_cast<long>(bw_bytes / 4);
    std::fprintf(stderr, "[6/6] clone of %ld MiB...\n", E * 4 >> 20);
    workload w;
    w.graph = ctfx::build_checked([E](ctfx::builder& b) { ctfx_bench::clone_of(b, E); });
    w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {E})};
    w.out_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {E})};
    w.inputs = {filled(static_cast<std::size_t>(E) * 4)};
    w.outputs = {std::vector<std::byte>(static_cast<std::size_t>(E) * 4)};
    const std::size_t written = static_cast<std::size_t>(E) * 4;
    row r{"clone, " + std::to_string(E * 4 >> 20) + " MiB", time_plan(w, true, reps), time_plan(w, false, reps), 0, written / bw, written};
    r.hand_us = median_us(reps, [&] { std::memcpy(w.outputs[0].data(), w.inputs[0].data(), written); });
    rows.push_back(r);
  }
  std::printf("memcpy bandwidth: %.2f GB/s (%zu MiB buffers)\n\n", bw / 1e3, bw_bytes >> 20);
  std::printf("| workload | bytes written | ctfx (us) | ctfx functional (us) | hand-written (us) | copy bound (us) | ctfx / bound | functional / ctfx | ctfx / hand |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows)
    std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %.2f |\n", r.name.c_str(), r.written, r.ctfx_us, r.functional_us,
                r.hand_us, r.bound_us, r.ctfx_us / r.bound_us, r.functional_us / r.ctfx_us, r.ctfx_us / r.hand_us);
  return 0;
}
