// bench/cuda — run time on the CUDA backend, for a machine with an NVIDIA GPU:
//  1. the host benchmark's workloads (bench/runtime/workloads.hpp) on the device: ctfx with
//     reinplacing, ctfx functional (reinplacing off), a hand-written baseline (cudaMemcpy*Async or
//     one atomicAdd kernel), and the copy bound (bytes the update must write / device-to-device
//     cudaMemcpyAsync bandwidth measured in this run);
//  2. CUDA-graph replay of a static plan (the run captured once with stream capture) against the
//     plan's per-op launches, on a 50-op elementwise graph of small tensors (goal: >= 2x);
//  3. the programs that compute (bench/runtime/compute_workloads.hpp: stencil, ring buffer, RoPE,
//     softmax, an 8-op chain, RMSNorm) as compiled<G> and as runtime_plan, against the copy bound
//     of the bytes they must move, each result checked against compiled<G> on the host, bit for
//     bit. PyTorch eager and torch.compile on the GPU: bench/torch/compute.py --device cuda.
// Medians of repeated runs timed with CUDA events; the ratios are taken within one run. Exit code
// 77 when no GPU is visible (CI builds this with nvcc and never runs it).
//
//   ctfx_cuda_bench [--reps N] [--quick]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <memory>
#include <cuda_runtime.h>
#include <ctfx/exec/compiled.hpp>
#include "../runtime/compute_workloads.hpp"
#include "../runtime/workloads.hpp"

namespace {

#define CTFX_BENCH_CUDA(call)                                                                          \
  do {                                                                                                 \
    cudaError_t e_ = (call);                                                                           \
    if (e_ != cudaSuccess) {                                                                           \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                                    \
    }                                                                                                  \
  } while (0)

cudaStream_t stream;

// Median microseconds of f() enqueued on `stream`, timed by events around each call.
double median_us(int reps, const std::function<void()>& f) {
  cudaEvent_t a, b;
  CTFX_BENCH_CUDA(cudaEventCreate(&a));
  CTFX_BENCH_CUDA(cudaEventCreate(&b));
  f();  // warm up
  CTFX_BENCH_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    CTFX_BENCH_CUDA(cudaEventRecord(a, stream));
    f();
    CTFX_BENCH_CUDA(cudaEventRecord(b, stream));
    CTFX_BENCH_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CTFX_BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
    t.push_back(1e3 * ms);
  }
  CTFX_BENCH_CUDA(cudaEventDestroy(a));
  CTFX_BENCH_CUDA(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct dev_bytes {
  std::byte* p = nullptr;
  std::size_t n = 0;
  explicit dev_bytes(std::size_t bytes) : n(bytes) { CTFX_BENCH_CUDA(cudaMalloc(&p, std::max<std::size_t>(bytes, 1))); }
  dev_bytes(const dev_bytes&) = delete;
  dev_bytes& operator=(const dev_bytes&) = delete;
  ~dev_bytes() { cudaFree(p); }
};

// A workload's buffers on the device (inputs copied from the host contents).
struct device_workload {
  std::vector<dev_bytes*> in, out;
  std::vector<ctfx::tensor_ref> in_ref, out_ref;
  explicit device_workload(const ctfx_bench::workload& w) {
    for (std::size_t k = 0; k < w.in_desc.size(); ++k) {
      in.push_back(new dev_bytes(w.inputs[k].size()));
      CTFX_BENCH_CUDA(cudaMemcpy(in.back()->p, w.inputs[k].data(), w.inputs[k].size(), cudaMemcpyHostToDevice));
      in_ref.emplace_back(in.back()->p, w.in_desc[k]);
    }
    for (const auto& d : w.out_desc) {
      out.push_back(new dev_bytes(d.span_bytes()));
      out_ref.emplace_back(out.back()->p, d);
    }
  }
  device_workload(const device_workload&) = delete;
  device_workload& operator=(const device_workload&) = delete;
  ~device_workload() {
    for (auto* b : in) delete b;
    for (auto* b : out) delete b;
  }
};

// A plan of the workload's graph (reinplaced or functional) with its device workspace, run on `stream`.
struct device_plan {
  ctfx::runtime_plan plan;
  dev_bytes ws;
  device_plan(const ctfx::ir& g, const std::vector<ctfx::tensor_desc>& in_desc, ctfx::plan_options o)
      : plan(g, o), ws(plan.bind(in_desc).workspace_bytes) {
    if (!plan.error().ok()) {
      std::fprintf(stderr, "plan error: %s\n", std::string(plan.error().message()).c_str());
      std::exit(1);
    }
  }
  void run(const device_workload& d) const {
    auto st = plan.run(d.in_ref, d.out_ref, ctfx::device_ctx{ctfx::backend::cuda, stream}, {ws.p, ws.n});
    if (!st) {
      std::fprintf(stderr, "run failed: %s\n", st.message.c_str());
      std::exit(1);
    }
  }
};

double time_plan(const ctfx_bench::workload& w, bool reinplace, int reps, bool atomics = false) {
  ctfx::plan_options o;
  o.reinplace = reinplace;
  o.atomic_index_put = atomics;
  device_workload d(w);
  device_plan p(w.graph, w.in_desc, o);
  return median_us(reps, [&] { p.run(d); });
}

__global__ void add_at(float* h, const std::int64_t* idx, const float* v, long n) {
  const long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (k < n) atomicAdd(h + idx[k], v[k]);
}

struct row {
  std::string name;
  double ctfx_us, functional_us, hand_us, bound_us;
  std::size_t written;
};

// 50 elementwise ops on a [n] f32 tensor, alternating y * 1.0001 and y + 0.5.
ctfx::ir small_chain(long n) {
  return ctfx::build_checked([n](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {n});
    auto y = x;
    for (int i = 0; i < 50; ++i) y = (i % 2) ? y * 1.0001 : y + 0.5;
    b.output(y);
  });
}

void graph_replay(int reps) {
  constexpr long n = 1024;
  constexpr int iters = 200;
  ctfx_bench::workload w;
  w.graph = small_chain(n);
  w.in_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {n})};
  w.out_desc = {ctfx::tensor_desc::contiguous(ctfx::f32, {n})};
  w.inputs = {ctfx_bench::filled(n * 4)};
  device_workload d(w);
  device_plan p(w.graph, w.in_desc, {});
  // Per-op launches: the plan's run (host-side checks, then one launch per op) per iteration.
  const double per_op = median_us(std::max(5, reps / 3), [&] {
    for (int k = 0; k < iters; ++k) p.run(d);
  }) / iters;
  std::vector<std::byte> a(n * 4), b(n * 4);
  CTFX_BENCH_CUDA(cudaStreamSynchronize(stream));
  CTFX_BENCH_CUDA(cudaMemcpy(a.data(), d.out[0]->p, n * 4, cudaMemcpyDeviceToHost));
  // The same run captured once into a CUDA graph, then replayed.
  CTFX_BENCH_CUDA(cudaMemset(d.out[0]->p, 0, n * 4));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CTFX_BENCH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  auto st = p.plan.run(d.in_ref, d.out_ref, ctfx::device_ctx{ctfx::backend::cuda, stream}, {p.ws.p, p.ws.n});
  CTFX_BENCH_CUDA(cudaStreamEndCapture(stream, &graph));
  if (!st) {
    std::printf("CUDA-graph capture of the 50-op plan failed: %s\n", st.message.c_str());
    return;
  }
  CTFX_BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const double replay = median_us(std::max(5, reps / 3), [&] {
    for (int k = 0; k < iters; ++k) CTFX_BENCH_CUDA(cudaGraphLaunch(exec, stream));
  }) / iters;
  CTFX_BENCH_CUDA(cudaStreamSynchronize(stream));
  CTFX_BENCH_CUDA(cudaMemcpy(b.data(), d.out[0]->p, n * 4, cudaMemcpyDeviceToHost));
  std::printf("\n| 50-op elementwise graph, [%ld] f32 | per-op launches (us/run) | CUDA-graph replay (us/run) | speedup | same output |\n", n);
  std::printf("|---|---:|---:|---:|---|\n");
  std::printf("| %d runs, median of %d | %.2f | %.2f | %.2f | %s |\n", iters, std::max(5, reps / 3), per_op, replay, per_op / replay,
              std::memcmp(a.data(), b.data(), a.size()) == 0 ? "yes" : "NO");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

// A program's tensors, on the host (the caller's values) and copied to the device.
struct device_tensors {
  std::vector<ctfx::tensor_ref> host, dev;
  std::vector<std::unique_ptr<dev_bytes>> keep;
  static std::size_t bytes_of(const ctfx::tensor_ref& t) {
    return static_cast<std::size_t>(t.numel()) * static_cast<std::size_t>(ctfx::size_of(t.dt));
  }
  explicit device_tensors(std::vector<ctfx::tensor_ref> h) : host(std::move(h)) {
    for (const auto& t : host) {
      keep.push_back(std::make_unique<dev_bytes>(bytes_of(t)));
      dev.push_back(ctfx::tensor_ref(keep.back()->p, t));
    }
    upload();
  }
  void upload() const {
    for (std::size_t k = 0; k < host.size(); ++k)
      CTFX_BENCH_CUDA(cudaMemcpy(dev[k].data, host[k].data, bytes_of(host[k]), cudaMemcpyHostToDevice));
  }
  // Whether the device's tensors hold the bytes of `want` (host tensors of the same shapes).
  bool same_as(const std::vector<ctfx::tensor_ref>& want) const {
    for (std::size_t k = 0; k < dev.size(); ++k) {
      std::vector<std::byte> got(bytes_of(dev[k]));
      CTFX_BENCH_CUDA(cudaMemcpy(got.data(), dev[k].data, got.size(), cudaMemcpyDeviceToHost));
      if (std::memcmp(got.data(), want[k].data, got.size()) != 0) return false;
    }
    return true;
  }
};

struct compute_row {
  const char* name;
  double compiled_us, runtime_us, bound_us;
  bool same;
};

// Program P (a compiled<G>) with inputs `in` and outputs `out` (host tensors holding the initial
// values): one run on the host gives the expected bytes; one run of each executor on the device,
// from the same initial values, must give them; then each is timed. `bound_bytes`: the bytes the
// program must move, read and written (the copy bound: their device-to-device copy's time).
template <class P>
compute_row run_compute(const char* name, const ctfx::ir& g, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out,
                        std::size_t bound_bytes, int reps) {
  device_tensors din(in), dout(out);
  std::vector<std::vector<std::byte>> host_in, host_out;  // the expected bytes after one run
  auto snapshot = [](const std::vector<ctfx::tensor_ref>& t, std::vector<std::vector<std::byte>>& to) {
    to.clear();
    for (const auto& x : t) {
      const auto* p = static_cast<const std::byte*>(x.data);
      to.emplace_back(p, p + device_tensors::bytes_of(x));
    }
  };
  std::vector<std::vector<std::byte>> initial_in;
  snapshot(in, initial_in);
  if (auto st = P::run(in, out); !st) {
    std::fprintf(stderr, "%s: host run failed: %s\n", name, st.message.c_str());
    std::exit(1);
  }
  snapshot(in, host_in);
  snapshot(out, host_out);
  auto refs = [](std::vector<std::vector<std::byte>>& bytes, const std::vector<ctfx::tensor_ref>& like) {
    std::vector<ctfx::tensor_ref> r;
    for (std::size_t k = 0; k < like.size(); ++k) r.push_back(ctfx::tensor_ref(bytes[k].data(), like[k]));
    return r;
  };
  const std::vector<ctfx::tensor_ref> want_in = refs(host_in, in), want_out = refs(host_out, out);
  const ctfx::device_ctx dev{ctfx::backend::cuda, stream};
  const std::vector<ctfx::tensor_desc> desc(din.dev.begin(), din.dev.end());
  dev_bytes cws(P::bind(desc).workspace_bytes);
  ctfx::runtime_plan rp(g);
  dev_bytes rws(rp.bind(desc).workspace_bytes);
  auto run_compiled = [&] {
    if (auto st = P::run(din.dev, dout.dev, dev, {cws.p, cws.n}); !st) {
      std::fprintf(stderr, "%s: compiled<G> on the device failed: %s\n", name, st.message.c_str());
      std::exit(1);
    }
  };
  auto run_runtime = [&] {
    if (auto st = rp.run(din.dev, dout.dev, dev, {rws.p, rws.n}); !st) {
      std::fprintf(stderr, "%s: runtime_plan on the device failed: %s\n", name, st.message.c_str());
      std::exit(1);
    }
  };
  bool same = true;
  for (int which = 0; which < 2; ++which) {  // compiled<G>, then runtime_plan, each from the initial values
    for (std::size_t k = 0; k < in.size(); ++k) std::memcpy(in[k].data, initial_in[k].data(), initial_in[k].size());
    din.upload();
    if (which == 0) run_compiled();
    else run_runtime();
    CTFX_BENCH_CUDA(cudaStreamSynchronize(stream));
    same = same && din.same_as(want_in) && dout.same_as(want_out);
  }
  compute_row r{name, median_us(reps, run_compiled), median_us(reps, run_runtime), 0, same};
  dev_bytes a(bound_bytes / 2 + 1), b(bound_bytes / 2 + 1);
  r.bound_us = median_us(reps, [&] { CTFX_BENCH_CUDA(cudaMemcpyAsync(b.p, a.p, bound_bytes / 2, cudaMemcpyDeviceToDevice, stream)); });
  return r;
}

template <class T>
std::vector<T> values(std::size_t n, float scale, float shift) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<float>((i * 37) % 101) * scale - shift);
  return v;
}

// The compute workloads' plans, at namespace scope: nvcc's host code must see a graph's closure
// type complete where its plan is instantiated (an alias inside a function is not enough).
using stencil_plan = ctfx::compiled<decltype(ctfx_bench::compute::stencil)>;
using ring_plan = ctfx::compiled<decltype(ctfx_bench::compute::ring)>;
using rope_plan = ctfx::compiled<decltype(ctfx_bench::compute::rope)>;
using softmax_plan = ctfx::compiled<decltype(ctfx_bench::compute::softmax)>;
using chain8_plan = ctfx::compiled<decltype(ctfx_bench::compute::chain8)>;
using rmsnorm_plan = ctfx::compiled<decltype(ctfx_bench::compute::rmsnorm)>;

// The compute workloads, with the host benchmark's sizes and values (bench/runtime/compute_bench).
void compute_workloads(int reps) {
  namespace w = ctfx_bench::compute;
  using ctfx::tensor_ref;
  std::vector<compute_row> rows;
  {
    std::fprintf(stderr, "[compute 1/6] stencil...\n");
    auto x = values<float>(w::G * w::G, 0.01f, 0.0f);
    rows.push_back(run_compute<stencil_plan>("(a) 5-point stencil 1026^2 f32, periodic ghosts, copy_ back", w::stencil.get(),
                                                                     {tensor_ref::contiguous(x.data(), ctfx::f32, {w::G, w::G})}, {},
                                                                     2 * 2 * w::G * w::G * 4, reps));
  }
  {
    std::fprintf(stderr, "[compute 2/6] ring buffer...\n");
    auto buf = values<float>(w::R * w::W, 0.01f, 0.0f), row = values<float>(w::W, 0.1f, 0.0f), out = std::vector<float>(w::W);
    std::int64_t pos = 17;
    rows.push_back(run_compute<ring_plan>(
        "(b) ring buffer [64, 4096] f32: row at a run-time position, window sum", w::ring.get(),
        {tensor_ref::contiguous(buf.data(), ctfx::f32, {w::R, w::W}), tensor_ref::contiguous(row.data(), ctfx::f32, {1, w::W}),
         tensor_ref::contiguous(&pos, ctfx::i64, {1})},
        {tensor_ref::contiguous(out.data(), ctfx::f32, {w::W})}, 2 * w::R * w::W * 4, reps));
  }
  {
    std::fprintf(stderr, "[compute 3/6] RoPE into a KV cache...\n");
    std::vector<float> cache(w::RB * w::RH * w::RS * w::RD);
    auto k = values<float>(w::RB * w::RH * w::RD, 0.01f, 0.0f), cs = values<float>(w::RD / 2, 0.01f, 0.0f), sn = values<float>(w::RD / 2, 0.02f, 0.5f);
    std::int64_t pos = w::RS / 2;
    rows.push_back(run_compute<rope_plan>(
        "(c) RoPE of k [8, 32, 1, 128] f32 into a KV cache at a run-time position", w::rope.get(),
        {tensor_ref::contiguous(cache.data(), ctfx::f32, {w::RB, w::RH, w::RS, w::RD}), tensor_ref::contiguous(k.data(), ctfx::f32, {w::RB, w::RH, 1, w::RD}),
         tensor_ref::contiguous(cs.data(), ctfx::f32, {w::RD / 2}), tensor_ref::contiguous(sn.data(), ctfx::f32, {w::RD / 2}),
         tensor_ref::contiguous(&pos, ctfx::i64, {1})},
        {}, 2 * w::RB * w::RH * w::RD * 4, reps));
  }
  {
    std::fprintf(stderr, "[compute 4/6] softmax...\n");
    auto x = values<float>(w::SN * w::SD, 0.05f, 0.0f), y = std::vector<float>(w::SN * w::SD);
    rows.push_back(run_compute<softmax_plan>(
        "(d) softmax over the last dim of [2048, 1024] f32 (amax, sub, exp, sum, div)", w::softmax.get(),
        {tensor_ref::contiguous(x.data(), ctfx::f32, {w::SN, w::SD})}, {tensor_ref::contiguous(y.data(), ctfx::f32, {w::SN, w::SD})},
        2 * w::SN * w::SD * 4, reps));
  }
  {
    std::fprintf(stderr, "[compute 5/6] 8-op chain...\n");
    auto x = values<float>(w::E, 0.01f, 0.3f), y = std::vector<float>(w::E);
    rows.push_back(run_compute<chain8_plan>("(e) 8 elementwise ops, 16 M f32 (64 MiB in, 64 MiB out)", w::chain8.get(),
                                                                    {tensor_ref::contiguous(x.data(), ctfx::f32, {w::E})},
                                                                    {tensor_ref::contiguous(y.data(), ctfx::f32, {w::E})}, 2 * w::E * 4, reps));
  }
  {
    std::fprintf(stderr, "[compute 6/6] RMSNorm...\n");
    auto x = values<float>(w::NN * w::ND, 0.02f, 1.0f), wt = values<float>(w::ND, 0.1f, -1.0f), y = std::vector<float>(w::NN * w::ND);
    rows.push_back(run_compute<rmsnorm_plan>(
        "(f) RMSNorm over the last dim of [2048, 1024] f32 (mean of squares fused)", w::rmsnorm.get(),
        {tensor_ref::contiguous(x.data(), ctfx::f32, {w::NN, w::ND}), tensor_ref::contiguous(wt.data(), ctfx::f32, {w::ND})},
        {tensor_ref::contiguous(y.data(), ctfx::f32, {w::NN, w::ND})}, 2 * w::NN * w::ND * 4, reps));
  }
  std::printf("\n| workload | compiled<G> (us) | runtime_plan (us) | copy bound (us) | compiled / bound | runtime / bound | same bits as the host |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %.1f | %.1f | %.1f | %.2f | %.2f | %s |\n", r.name, r.compiled_us, r.runtime_us, r.bound_us, r.compiled_us / r.bound_us,
                r.runtime_us / r.bound_us, r.same ? "yes" : "NO");
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
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no GPU visible: skipped\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CTFX_BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  CTFX_BENCH_CUDA(cudaStreamCreate(&stream));
  const long S = quick ? 1024 : 8192, G = quick ? 1024 : 4096;
  const std::size_t bw_bytes = quick ? (64u << 20) : (256u << 20);
  std::fprintf(stderr, "[1/7] device-to-device copy bandwidth...\n");
  double bw = 0;  // bytes per microsecond
  {
    dev_bytes a(bw_bytes), b(bw_bytes);
    CTFX_BENCH_CUDA(cudaMemset(a.p, 1, bw_bytes));
    bw = static_cast<double>(bw_bytes) /
         median_us(reps, [&] { CTFX_BENCH_CUDA(cudaMemcpyAsync(b.p, a.p, bw_bytes, cudaMemcpyDeviceToDevice, stream)); });
  }
  const int slow = std::max(3, reps / 4);  // the functional forms copy whole buffers
  std::vector<row> rows;
  {
    std::fprintf(stderr, "[2/7] kv-cache update...\n");
    auto w = ctfx_bench::kv_cache(S);
    row r{w.name, time_plan(w, true, reps), time_plan(w, false, slow), 0, w.written / bw, w.written};
    device_workload d(w);
    // 256 rows of 256 bytes at pitch S * 256 bytes, starting at position S / 2.
    r.hand_us = median_us(reps, [&] {
      CTFX_BENCH_CUDA(cudaMemcpy2DAsync(d.in[0]->p + (S / 2) * 256, S * 256, d.in[1]->p, 256, 256, 8 * 32, cudaMemcpyDeviceToDevice, stream));
    });
    rows.push_back(r);
  }
  {
    std::fprintf(stderr, "[3/7] halo exchange...\n");
    auto w = ctfx_bench::halo(G);
    row r{w.name, time_plan(w, true, reps), time_plan(w, false, slow), 0, w.written / bw, w.written};
    device_workload d(w);
    auto* grid = d.in[0]->p;
    const std::size_t row_bytes = static_cast<std::size_t>(G) * 4, edge = static_cast<std::size_t>(G - 2) * 4;
    r.hand_us = median_us(reps, [&] {
      CTFX_BENCH_CUDA(cudaMemcpyAsync(grid + 4, d.in[1]->p, edge, cudaMemcpyDeviceToDevice, stream));
      CTFX_BENCH_CUDA(cudaMemcpyAsync(grid + (G - 1) * row_bytes + 4, d.in[2]->p, edge, cudaMemcpyDeviceToDevice, stream));
      CTFX_BENCH_CUDA(cudaMemcpy2DAsync(grid + row_bytes, row_bytes, d.in[3]->p, 4, 4, G - 2, cudaMemcpyDeviceToDevice, stream));
      CTFX_BENCH_CUDA(cudaMemcpy2DAsync(grid + row_bytes + row_bytes - 4, row_bytes, d.in[4]->p, 4, 4, G - 2, cudaMemcpyDeviceToDevice, stream));
    });
    rows.push_back(r);
  }
  {
    std::fprintf(stderr, "[4/7] 64 slice_scatters into one buffer...\n");
    constexpr long R = 64, C = 16384;
    auto w = ctfx_bench::scatter_chain(R, C);
    row r{w.name, time_plan(w, true, reps), time_plan(w, false, slow), 0, w.written / bw, w.written};
    device_workload d(w);
    r.hand_us = median_us(reps, [&] {
      for (long i = 0; i < R; ++i)
        CTFX_BENCH_CUDA(cudaMemcpyAsync(d.in[0]->p + i * C * 4, d.in[1]->p + ((i * 7) % R) * C * 4, C * 4, cudaMemcpyDeviceToDevice, stream));
    });
    rows.push_back(r);
  }
  {
    std::fprintf(stderr, "[5/7] index_put accumulate (deterministic and atomics)...\n");
    constexpr long N = 1 << 20, B = 1024;
    auto w = ctfx_bench::scatter_add(N, B);
    device_workload d(w);
    const double hand = median_us(reps, [&] {
      add_at<<<static_cast<unsigned>((N + 255) / 256), 256, 0, stream>>>(reinterpret_cast<float*>(d.in[0]->p),
                                                                      reinterpret_cast<const std::int64_t*>(d.in[1]->p),
                                                                      reinterpret_cast<const float*>(d.in[2]->p), N);
    });
    rows.push_back({w.name + " (deterministic)", time_plan(w, true, reps), time_plan(w, false, reps), hand, w.written / bw, w.written});
    rows.push_back({w.name + " (atomics)", time_plan(w, true, reps, true), time_plan(w, false, reps, true), hand, w.written / bw, w.written});
  }
  {
    const long E = static_cast<long>(bw_bytes / 4);
    std::fprintf(stderr, "[6/7] clone...\n");
    auto w = ctfx_bench::clone(E);
    row r{w.name, time_plan(w, true, reps), time_plan(w, false, reps), 0, w.written / bw, w.written};
    device_workload d(w);
    r.hand_us = median_us(reps, [&] {
      CTFX_BENCH_CUDA(cudaMemcpyAsync(d.out[0]->p, d.in[0]->p, w.written, cudaMemcpyDeviceToDevice, stream));
    });
    rows.push_back(r);
  }
  std::printf("%s; device-to-device copy bandwidth: %.1f GB/s (%zu MiB buffers)\n\n", prop.name, bw / 1e3, bw_bytes >> 20);
  std::printf("| workload | bytes written | ctfx (us) | ctfx functional (us) | hand-written (us) | copy bound (us) | ctfx / bound | functional / ctfx | ctfx / hand |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& r : rows)
    std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %.2f |\n", r.name.c_str(), r.written, r.ctfx_us, r.functional_us,
                r.hand_us, r.bound_us, r.ctfx_us / r.bound_us, r.functional_us / r.ctfx_us, r.ctfx_us / r.hand_us);
  std::fprintf(stderr, "[7/7] CUDA-graph replay against per-op launches...\n");
  graph_replay(reps);
  compute_workloads(reps);
  cudaStreamDestroy(stream);
  return 0;
}
