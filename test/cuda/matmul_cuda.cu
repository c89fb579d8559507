// Matrix products on the CUDA backend (cuBLAS, kernels/matmul.hpp) against the host's (a CBLAS):
// a linear layer with a transposed weight and a bias, relu, a scaled addmm, attention scores with
// a transposed operand (bmm), baddbmm with a broadcast c, and an operand BLAS cannot read (every
// other column: packed first). Operands are multiples of 1/4 small enough that every product and
// sum is exact, so cuBLAS and the host's BLAS give the same bits whatever order they add in.
// runtime_plan and compiled<G>. Exit code 77 (skipped) when no GPU is present.
#include <cstdio>
#include <cstring>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/matmul.hpp>
#include <ctfx/exec/product_step.hpp>
#include "../common/cuda_context.hpp"

namespace {

constexpr long M = 24, K = 40, N = 16, B = 3, S = 12, D = 8;
constexpr auto products = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {M, 2 * K});
  auto w = b.input("w", ctfx::f32, {N, K});
  auto bias = b.input("bias", ctfx::f32, {N});
  auto q = b.input("q", ctfx::f64, {B, S, D});
  auto k = b.input("k", ctfx::f64, {B, S, D});
  auto c = b.input("c", ctfx::f64, {S, S});
  auto xs = x.slice(1, 0, 2 * K, 2);  // every other column: packed for BLAS
  auto h = ctfx::relu(ctfx::addmm(bias, xs, w.transpose(0, 1)));
  auto y = ctfx::addmm(h, h, ctfx::relu(w.slice(1, 0, N, 1)).transpose(0, 1), 0.5, 2.0);
  auto scores = ctfx::bmm(q, k.transpose(1, 2));
  b.output(y, scores, ctfx::baddbmm(c, q, k.transpose(1, 2), -1.0, 0.25));
});
using products_plan = ctfx::compiled<decltype(products)>;

int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += !ok;
}

template <class T>
std::vector<T> exact_values(std::size_t n, int salt) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>((i * 37 + static_cast<std::size_t>(salt) * 11) % 13) - 6) * T(0.25);
  return v;
}

struct dev {
  void* p = nullptr;
  std::size_t bytes = 0;
  template <class T>
  explicit dev(const std::vector<T>& h) : bytes(h.size() * sizeof(T)) {
    cudaMalloc(&p, bytes + 1);
    cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice);
  }
  std::vector<std::byte> get() const {
    std::vector<std::byte> h(bytes);
    cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost);
    return h;
  }
  ~dev() { cudaFree(p); }
};

void run_products() {
  const auto x = exact_values<float>(M * 2 * K, 1), w = exact_values<float>(N * K, 2), bias = exact_values<float>(N, 3);
  const auto q = exact_values<double>(B * S * D, 4), k = exact_values<double>(B * S * D, 5), c = exact_values<double>(S * S, 6);
  const std::vector<ctfx::tensor_desc> in_d = {ctfx::tensor_desc::contiguous(ctfx::f32, {M, 2 * K}), ctfx::tensor_desc::contiguous(ctfx::f32, {N, K}),
                                               ctfx::tensor_desc::contiguous(ctfx::f32, {N}), ctfx::tensor_desc::contiguous(ctfx::f64, {B, S, D}),
                                               ctfx::tensor_desc::contiguous(ctfx::f64, {B, S, D}), ctfx::tensor_desc::contiguous(ctfx::f64, {S, S})};
  const std::vector<ctfx::tensor_desc> out_d = {ctfx::tensor_desc::contiguous(ctfx::f32, {M, N}), ctfx::tensor_desc::contiguous(ctfx::f64, {B, S, S}),
                                                ctfx::tensor_desc::contiguous(ctfx::f64, {B, S, S})};
  // host reference
  std::vector<std::vector<std::byte>> hout;
  for (const auto& d : out_d) hout.emplace_back(static_cast<std::size_t>(d.numel() * ctfx::size_of(d.dt)));
  std::vector<const void*> hin = {x.data(), w.data(), bias.data(), q.data(), k.data(), c.data()};
  std::vector<ctfx::tensor_ref> hi, ho;
  for (std::size_t i = 0; i < hin.size(); ++i) hi.emplace_back(const_cast<void*>(hin[i]), in_d[i]);
  for (std::size_t j = 0; j < hout.size(); ++j) ho.emplace_back(hout[j].data(), out_d[j]);
  const ctfx::run_status hr = ctfx::reference_run(products.get(), hi, ho);
  check(hr.ok, hr.ok ? "host reference runs" : hr.message.c_str());
  // device, both executors
  ctfx::runtime_plan rp(products.get());
  for (int which = 0; which < 2; ++which) {
    dev dx(x), dw(w), db(bias), dq(q), dk(k), dc(c);
    dev o0(std::vector<float>(M * N)), o1(std::vector<double>(B * S * S)), o2(std::vector<double>(B * S * S));
    const std::vector<ctfx::tensor_ref> di = {{dx.p, in_d[0]}, {dw.p, in_d[1]}, {db.p, in_d[2]}, {dq.p, in_d[3]}, {dk.p, in_d[4]}, {dc.p, in_d[5]}};
    const std::vector<ctfx::tensor_ref> dout = {{o0.p, out_d[0]}, {o1.p, out_d[1]}, {o2.p, out_d[2]}};
    const ctfx::binding bd = which ? rp.bind(in_d) : products_plan::bind(in_d);
    void* ws = nullptr;
    cudaMalloc(&ws, bd.workspace_bytes + 1);
    const ctfx::device_ctx ctx{ctfx::backend::cuda, nullptr};
    const std::span<std::byte> wspan(static_cast<std::byte*>(ws), bd.workspace_bytes);
    const ctfx::run_status st = which ? rp.run(di, dout, ctx, wspan) : products_plan::run(di, dout, ctx, wspan);
    cudaDeviceSynchronize();
    check(st.ok, st.ok ? (which ? "runtime_plan runs on cuda" : "compiled<G> runs on cuda") : st.message.c_str());
    check(o0.get() == hout[0], "addmm, relu, scaled addmm: equal to the host's bits");
    check(o1.get() == hout[1], "bmm with a transposed operand: equal to the host's bits");
    check(o2.get() == hout[2], "baddbmm with a broadcast c: equal to the host's bits");
    cudaFree(ws);
    if (ctfx_test::cuda_context_lost()) return;
  }
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  run_products();
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
