// bench/runtime/compute_bench — programs that compute, on the host, one thread: each as
// compiled<G> (kernels specialized and fused in the compiler), as runtime_plan (the same graph
// parsed or built at run time: fused, run-time layouts), and as the loop a user would write, all
// compiled with the same flags (-O3) in this one binary, with the copy bound (memcpy of the bytes
// the program must read and write) measured in the same run. Medians of repeated runs.
// PyTorch eager and torch.compile on the same programs: bench/torch/compute.py.
//
//   compute_bench [--reps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

using clk = std::chrono::steady_clock;

double median_us(int reps, const std::function<void()>& f) {
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

// (a) A 5-point stencil on a G x G f32 grid with periodic ghost rows and columns; the interior is
// written back in place (copy_).
constexpr long G = 1026;
constexpr auto stencil = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("grid", ctfx::f32, {G, G});
  auto y = ctfx::slice_scatter(x, x.slice(0, G - 2, G - 1), 0, 0, 1);
  y = ctfx::slice_scatter(y, y.slice(0, 1, 2), 0, G - 1, G);
  y = ctfx::slice_scatter(y, y.slice(1, G - 2, G - 1), 1, 0, 1);
  y = ctfx::slice_scatter(y, y.slice(1, 1, 2), 1, G - 1, G);
  auto c = y.slice(0, 1, G - 1).slice(1, 1, G - 1);
  auto n = y.slice(0, 0, G - 2).slice(1, 1, G - 1), s = y.slice(0, 2, G).slice(1, 1, G - 1);
  auto w = y.slice(0, 1, G - 1).slice(1, 0, G - 2), e = y.slice(0, 1, G - 1).slice(1, 2, G);
  auto nw = c + ((n + s) + (w + e) - c * 4.0f) * 0.2f;
  b.update(x, ctfx::slice_scatter(y, ctfx::slice_scatter(y.slice(0, 1, G - 1), nw, 1, 1, G - 1), 0, 1, G - 1));
});

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

// (e) A chain of 8 elementwise ops over E f32 values into a preallocated output.
constexpr long E = 16L << 20;
constexpr auto chain8 = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {E});
  auto t = x * 1.001f;
  t = t + 0.5f;
  t = t * x;
  t = t - 0.25f;
  t = ctfx::relu(t);
  t = t * 0.75f;
  t = t + x;
  b.output(t / 1.5f);
});

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

template <class Plan>
double time_compiled(int reps, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out) {
  std::vector<ctfx::tensor_desc> d(in.begin(), in.end());
  std::vector<std::byte> ws(Plan::bind(d).workspace_bytes);
  return median_us(reps, [&] {
    if (auto st = Plan::run(in, out, {}, ws); !st) { std::fprintf(stderr, "%s\n", st.message.c_str()); std::exit(1); }
  });
}

double time_runtime(int reps, const ctfx::ir& g, std::vector<ctfx::tensor_ref> in, std::vector<ctfx::tensor_ref> out) {
  ctfx::runtime_plan p(g);
  std::vector<ctfx::tensor_desc> d(in.begin(), in.end());
  std::vector<std::byte> ws(p.bind(d).workspace_bytes);
  return median_us(reps, [&] {
    if (auto st = p.run(in, out, ctfx::backend::host, ws); !st) { std::fprintf(stderr, "%s\n", st.message.c_str()); std::exit(1); }
  });
}

double time_memcpy(int reps, std::size_t bytes) {
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes);
  return median_us(reps, [&] { std::memcpy(b.data(), a.data(), bytes); });
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 21;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
  std::printf("| workload | compiled<G> | runtime_plan | hand loop -O3 | copy bound | compiled / hand | runtime / hand |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|\n");
  auto line = [](const char* name, double c, double r, double h, double bound) {
    std::printf("| %s | %.1f us | %.1f us | %.1f us | %.1f us | %.2fx | %.2fx |\n", name, c, r, h, bound, c / h, r / h);
    std::fflush(stdout);
  };
  {
    std::fprintf(stderr, "[1/2] stencil %ld x %ld f32...\n", G, G);
    std::vector<float> x(G * G), tmp(G * G);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.01f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {G, G})};
    const double c = time_compiled<ctfx::compiled<decltype(stencil)>>(reps, in, {});
    const double r = time_runtime(reps, stencil.get(), in, {});
    const double h = median_us(reps, [&] { stencil_hand(x.data(), tmp.data()); });
    // Bound: read the grid, write the interior to a temporary and back.
    line("(a) 5-point stencil 1026^2 f32, periodic ghosts, copy_ back", c, r, h, time_memcpy(reps, G * G * 4) * 2);
  }
  {
    std::fprintf(stderr, "[2/2] 8-op chain over %ld f32...\n", E);
    std::vector<float> x(E), y(E);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.3f;
    auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {E})};
    auto out = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {E})};
    const double c = time_compiled<ctfx::compiled<decltype(chain8)>>(reps, in, out);
    const double r = time_runtime(reps, chain8.get(), in, out);
    const double h = median_us(reps, [&] { chain8_hand(x.data(), y.data()); });
    line("(e) 8 elementwise ops, 16 M f32 (64 MiB in, 64 MiB out)", c, r, h, time_memcpy(reps, E * 4));
  }
}
