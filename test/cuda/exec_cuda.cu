// The CUDA backend against the host: a KV-cache update (index_put in place), gather and scatter_add, a halo exchange
// (slice_scatter into a padded grid), index_put with accumulate and duplicates and a reduction, as
// runtime_plan; a stencil with periodic ghosts and an f16/f32 chain with broadcasts and a transposed
// operand, as compiled<G>; groups whose rows take each path of the row kernels (kernels/rows.hpp:
// vectors, rows off their alignment, strided and broadcast operands), both executors; reductions fused with their input's group (both executors) and of
// inputs, folded a warp per output. Exit code 77 (skipped) when no GPU is present.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/graph/data_dependent.hpp>
// Every kernel and executor header, compiled by nvcc here (test/CMakeLists.txt: headers.nvcc)
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/inplace_table.hpp>
#include <ctfx/exec/kernel_table.hpp>
#include <ctfx/exec/layouts.hpp>
#include <ctfx/exec/mdspan.hpp>
#include <ctfx/exec/program.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/exec/instantiate.hpp>  // the whole executor, as ctfx::runtime compiles it, under nvcc
#include <ctfx/exec/tensor.hpp>
#include <ctfx/kernels/element.hpp>
#include <ctfx/kernels/fused.hpp>
#include <ctfx/kernels/fused_static.hpp>
#include <ctfx/kernels/index_put.hpp>
#include <ctfx/kernels/launch.hpp>
#include <ctfx/kernels/pointwise.hpp>
#include <ctfx/kernels/reduce.hpp>
#include <ctfx/kernels/rows.hpp>
#include <ctfx/kernels/strided.hpp>
#include <ctfx/kernels/warp_fold.hpp>
#include "../common/cuda_context.hpp"
#include "../common/stencil.hpp"

// A stencil with periodic ghost rows and columns, written back in place (copy_), and an
// elementwise chain over f32 and f16 with broadcasts and a transposed operand.
constexpr long SG = 34;
constexpr auto stencil_chain = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("grid", ctfx::f32, {SG, SG});
  auto h = b.input("h", ctfx::f16, {SG});
  ctfx_test::periodic_stencil(b, x, SG);
  auto t = ctfx::relu(x.transpose(0, 1) * 0.5f - h.to(ctfx::f32)) + x;
  b.output((t * h.unsqueeze(1).to(ctfx::f32)).to(ctfx::f16));
});
// At namespace scope: nvcc's host code must see the graph's closure type complete where the plan
// is instantiated (an alias inside a function is not enough).
using stencil_plan = ctfx::compiled<decltype(stencil_chain)>;

// Groups over rows of 130 floats, so that every other row starts off a 16-byte boundary: one with
// a column broadcast along the rows and an f16 row broadcast down them (vectors on aligned rows),
// one reading x transposed (element by element), and one over all of x (a single row of vectors).
constexpr long VR = 37, VC = 130;
constexpr auto row_paths = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {VR, VC});
  auto c = b.input("c", ctfx::f32, {VR, 1});
  auto h = b.input("h", ctfx::f16, {VC});
  auto xt = b.input("xt", ctfx::f32, {VC, VR});
  b.output(ctfx::exp(x * 0.25f - c) + h.to(ctfx::f32), xt.transpose(0, 1) * x, ctfx::relu(x) * 3.0f);
});
using row_paths_plan = ctfx::compiled<decltype(row_paths)>;

// Reductions that fold a fused group's values (kernels/fused_reduce.hpp): a row sum of squares
// minus a broadcast row, a row maximum of a transposed operand, a mean of everything.
constexpr long RN = 48, RD = 200;
constexpr auto row_folds = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {RN, RD});
  auto y = b.input("y", ctfx::f32, {RD});
  auto t = b.input("t", ctfx::f32, {RD, RN});
  auto s = (x * x - y).sum({1});
  auto m = ctfx::exp(t.transpose(0, 1) * 0.5f).amax({1}, true);
  auto a = (x * y).mean({0, 1});
  b.output(s, m, a);
});
using folds_plan = ctfx::compiled<decltype(row_folds)>;

namespace {

int failures = 0;

template <class T>
struct dev_buf {
  T* p = nullptr;
  std::size_t n = 0;
  explicit dev_buf(const std::vector<T>& h) : n(h.size()) {
    cudaMalloc(&p, n * sizeof(T) + 1);
    cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  std::vector<T> get() const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
  ~dev_buf() { cudaFree(p); }
};

// A check's outcome, then any CUDA error its kernels raised, by name. A kernel fault (a trap, an
// illegal address) leaves the context unusable and every later call fails with it, so the test
// stops there rather than report each later check as failed.
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  failures += !ok;
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return;
  std::printf("FAIL: CUDA error by '%s': %s: %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
  ++failures;
  if (!ctfx_test::cuda_context_lost()) return;
  std::printf("the CUDA context is lost: the checks after '%s' cannot run\n%d failures\n", what, failures);
  std::exit(1);
}

void kv_and_halo() {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto cache = b.input("cache", ctfx::f32, {4, 64, 16});
    auto k = b.input("k", ctfx::f32, {4, 1, 16});
    auto pos = b.input("pos", ctfx::i64, {1});
    auto grid = b.input("grid", ctfx::f32, {34, 34});
    auto halo = b.input("halo", ctfx::f32, {1, 32});
    b.update(cache, ctfx::index_put(cache, {ctfx::none, pos}, k));
    auto g1 = ctfx::slice_scatter(grid, ctfx::slice_scatter(grid.slice(0, 0, 1), halo, 1, 1, 33), 0, 0, 1);
    b.update(grid, g1);
    b.output(ctfx::index_put(grid.select(0, 5), {pos}, halo.select(0, 0).slice(0, 0, 1), true).sum({0}));
  });
  std::vector<float> cache(4 * 64 * 16), k(4 * 16), grid(34 * 34), halo(32), out(1, 0.0f);
  for (std::size_t i = 0; i < cache.size(); ++i) cache[i] = static_cast<float>(i % 17);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = 100.0f + static_cast<float>(i);
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>(i % 11) * 0.5f;
  for (std::size_t i = 0; i < halo.size(); ++i) halo[i] = -static_cast<float>(i);
  std::vector<std::int64_t> pos = {7};
  // host reference
  auto hc = cache, hg = grid;
  std::vector<float> hout(1);
  std::vector<ctfx::tensor_ref> hin = {
      ctfx::tensor_ref::contiguous(hc.data(), ctfx::f32, {4, 64, 16}), ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {4, 1, 16}),
      ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1}), ctfx::tensor_ref::contiguous(hg.data(), ctfx::f32, {34, 34}),
      ctfx::tensor_ref::contiguous(halo.data(), ctfx::f32, {1, 32})};
  std::vector<ctfx::tensor_ref> hout_r = {ctfx::tensor_ref::contiguous(hout.data(), ctfx::f32, {})};
  check(ctfx::reference_run(g, hin, hout_r).ok, "host reference runs");
  // device
  ctfx::runtime_plan plan(g);
  dev_buf<float> dc(cache), dk(k), dg(grid), dh(halo), dout(out);
  dev_buf<std::int64_t> dp(pos);
  std::vector<ctfx::tensor_ref> din = {
      ctfx::tensor_ref::contiguous(dc.p, ctfx::f32, {4, 64, 16}), ctfx::tensor_ref::contiguous(dk.p, ctfx::f32, {4, 1, 16}),
      ctfx::tensor_ref::contiguous(dp.p, ctfx::i64, {1}), ctfx::tensor_ref::contiguous(dg.p, ctfx::f32, {34, 34}),
      ctfx::tensor_ref::contiguous(dh.p, ctfx::f32, {1, 32})};
  std::vector<ctfx::tensor_ref> dout_r = {ctfx::tensor_ref::contiguous(dout.p, ctfx::f32, {})};
  const auto b = plan.bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  auto st = plan.run(din, dout_r, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "cuda plan runs" : st.message.c_str());
  check(dc.get() == hc, "cache updated in place, equal to the host");
  check(dg.get() == hg, "grid halo equal to the host");
  check(dout.get() == hout, "index_put accumulate + sum equal to the host");
  // An out-of-range index is refused on the device before any write.
  std::vector<std::int64_t> bad = {64};
  cudaMemcpy(dp.p, bad.data(), 8, cudaMemcpyHostToDevice);
  const auto before = dc.get();
  st = plan.run(din, dout_r, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
  check(!st.ok && st.message.find("index-in-range") != std::string::npos, "out-of-range index refused on the device");
  check(dc.get() == before, "the cache is untouched after the refusal");
  cudaFree(ws);
}

// gather and scatter_add (duplicates: the deterministic sort keeps the index's order, so float
// sums equal the host's bit for bit) and an index out of range refused on the device.
void gather_scatter() {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6, 40});
    auto i = b.input("i", ctfx::i64, {9, 40});
    auto s = b.input("s", ctfx::f32, {9, 40});
    b.update(x, ctfx::scatter_add(x, 0, i, s));
    b.output(ctfx::gather(x.transpose(0, 1), 1, i.transpose(0, 1)) * 2.0f);
  });
  std::vector<float> x(240), s(360), out(360);
  std::vector<std::int64_t> i(360);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(k % 7) - 3.0f;
  for (std::size_t k = 0; k < s.size(); ++k) s[k] = (k % 3 == 0 ? 1e7f : 0.3f) * static_cast<float>(static_cast<int>(k % 5) - 2);
  for (std::size_t k = 0; k < i.size(); ++k) i[k] = static_cast<std::int64_t>((k * 7 + k / 40) % 6);
  auto hx = x;
  std::vector<float> hout(360);
  auto refs = [](float* px, std::int64_t* pi, float* ps) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(px, ctfx::f32, {6, 40}), ctfx::tensor_ref::contiguous(pi, ctfx::i64, {9, 40}),
                                         ctfx::tensor_ref::contiguous(ps, ctfx::f32, {9, 40})};
  };
  check(ctfx::reference_run(g, refs(hx.data(), i.data(), s.data()), {ctfx::tensor_ref::contiguous(hout.data(), ctfx::f32, {40, 9})}).ok,
        "gather/scatter: host reference runs");
  ctfx::runtime_plan plan(g);
  dev_buf<float> dx(x), ds(s), dout(out);
  dev_buf<std::int64_t> di(i);
  const auto din = refs(dx.p, di.p, ds.p);
  const std::vector<ctfx::tensor_ref> dout_r = {ctfx::tensor_ref::contiguous(dout.p, ctfx::f32, {40, 9})};
  const auto b = plan.bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  auto st = plan.run(din, dout_r, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "gather/scatter: cuda plan runs" : st.message.c_str());
  check(dx.get() == hx, "scatter_add in place equal to the host's, bit for bit");
  check(dout.get() == hout, "gather of a transposed input equal to the host's");
  std::vector<std::int64_t> bad = {-1};
  cudaMemcpy(di.p + 17, bad.data(), 8, cudaMemcpyHostToDevice);
  const auto before = dx.get();
  st = plan.run(din, dout_r, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
  check(!st.ok && st.message.find("index-in-range") != std::string::npos, "gather/scatter: a negative index refused on the device");
  check(dx.get() == before, "gather/scatter: x untouched after the refusal");
  cudaFree(ws);
}

void compiled_groups() {
  using plan = stencil_plan;
  std::vector<float> grid(SG * SG);
  std::vector<ctfx::half_t> h(SG), out(SG * SG), hout(SG * SG);
  for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.3f;
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = ctfx::half_t(static_cast<float>(i) * 0.125f - 1.0f);
  auto hg = grid;
  std::vector<ctfx::tensor_ref> hin = {ctfx::tensor_ref::contiguous(hg.data(), ctfx::f32, {SG, SG}),
                                       ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {SG})};
  check(plan::run(hin, {ctfx::tensor_ref::contiguous(hout.data(), ctfx::f16, {SG, SG})}).ok, "compiled<G> runs on the host");
  dev_buf<float> dg(grid);
  dev_buf<ctfx::half_t> dh(h), dout(out);
  std::vector<ctfx::tensor_ref> din = {ctfx::tensor_ref::contiguous(dg.p, ctfx::f32, {SG, SG}),
                                       ctfx::tensor_ref::contiguous(dh.p, ctfx::f16, {SG})};
  const auto b = plan::bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  auto st = plan::run(din, {ctfx::tensor_ref::contiguous(dout.p, ctfx::f16, {SG, SG})},
                      ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "compiled<G> runs on the device" : st.message.c_str());
  check(dg.get() == hg, "compiled<G>: the stencil's grid equal to the host's");
  const auto d = dout.get();
  bool same = true;
  for (std::size_t i = 0; i < d.size(); ++i) same = same && d[i].bits == hout[i].bits;
  check(same, "compiled<G>: the f16 chain equal to the host's, bit for bit");
  cudaFree(ws);
}

// compiled<G> and runtime_plan on the device against compiled<G> on the host, bit for bit, on
// rows that take each path of the row kernels.
void row_kernel_paths() {
  std::vector<float> x(VR * VC), c(VR), xt(VC * VR);
  std::vector<ctfx::half_t> h(VC);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.02f - 1.0f;
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<float>(i % 7) * 0.3f;
  for (std::size_t i = 0; i < xt.size(); ++i) xt[i] = static_cast<float>((i * 13) % 59) * 0.05f;
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = ctfx::half_t(static_cast<float>(i % 11) * 0.25f);
  const std::size_t n = x.size();
  std::vector<float> h1(n), h2(n), h3(n);
  auto ins = [&](float* px, float* pc, ctfx::half_t* ph, float* pxt) {
    return std::vector<ctfx::tensor_ref>{
        ctfx::tensor_ref::contiguous(px, ctfx::f32, {VR, VC}), ctfx::tensor_ref::contiguous(pc, ctfx::f32, {VR, 1}),
        ctfx::tensor_ref::contiguous(ph, ctfx::f16, {VC}), ctfx::tensor_ref::contiguous(pxt, ctfx::f32, {VC, VR})};
  };
  auto outs = [&](float* a, float* b, float* d) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(a, ctfx::f32, {VR, VC}), ctfx::tensor_ref::contiguous(b, ctfx::f32, {VR, VC}),
                                         ctfx::tensor_ref::contiguous(d, ctfx::f32, {VR, VC})};
  };
  check(row_paths_plan::run(ins(x.data(), c.data(), h.data(), xt.data()), outs(h1.data(), h2.data(), h3.data())).ok,
        "row paths: compiled<G> runs on the host");
  dev_buf<float> dx(x), dc(c), dxt(xt), d1(h1), d2(h2), d3(h3), r1(h1), r2(h2), r3(h3);
  dev_buf<ctfx::half_t> dh(h);
  for (float* p : {d1.p, d2.p, d3.p, r1.p, r2.p, r3.p}) cudaMemset(p, 0, n * 4);  // not the answer already
  const std::vector<ctfx::tensor_ref> din = ins(dx.p, dc.p, dh.p, dxt.p);
  const ctfx::device_ctx dev{ctfx::backend::cuda, nullptr};
  auto same = [&](const dev_buf<float>& a, const std::vector<float>& want) {
    const auto got = a.get();
    return std::memcmp(got.data(), want.data(), want.size() * 4) == 0;
  };
  const auto b = row_paths_plan::bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  auto st = row_paths_plan::run(din, outs(d1.p, d2.p, d3.p), dev, std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "row paths: compiled<G> runs on the device" : st.message.c_str());
  check(same(d1, h1) && same(d2, h2) && same(d3, h3), "row paths: compiled<G> equal to the host's, bit for bit");
  ctfx::runtime_plan rp(row_paths.get());
  const auto rb = rp.bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* rws = nullptr;
  cudaMalloc(&rws, rb.workspace_bytes + 1);
  st = rp.run(din, outs(r1.p, r2.p, r3.p), dev, std::span<std::byte>(rws, rb.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "row paths: runtime_plan runs on the device" : st.message.c_str());
  check(same(r1, h1) && same(r2, h2) && same(r3, h3), "row paths: runtime_plan equal to the host's, bit for bit");
  cudaFree(ws);
  cudaFree(rws);
}

// compiled<G> and runtime_plan on the device against compiled<G> on the host, bit for bit.
void fused_reductions() {
  std::vector<float> x(RN * RD), y(RD), t(RD * RN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.013f - 0.6f;
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 9) * 0.1f;
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>((i * 11) % 89) * 0.02f - 0.9f;
  std::vector<float> hs(RN), hm(RN), ha(1);
  auto refs = [&](float* px, float* py, float* pt) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(px, ctfx::f32, {RN, RD}), ctfx::tensor_ref::contiguous(py, ctfx::f32, {RD}),
                                         ctfx::tensor_ref::contiguous(pt, ctfx::f32, {RD, RN})};
  };
  auto outs = [&](float* ps, float* pm, float* pa) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(ps, ctfx::f32, {RN}), ctfx::tensor_ref::contiguous(pm, ctfx::f32, {RN, 1}),
                                         ctfx::tensor_ref::contiguous(pa, ctfx::f32, {})};
  };
  check(folds_plan::run(refs(x.data(), y.data(), t.data()), outs(hs.data(), hm.data(), ha.data())).ok, "fused reductions run on the host");
  dev_buf<float> dx(x), dy(y), dt(t), ds(hs), dm(hm), da(ha);
  const std::vector<ctfx::tensor_ref> din = refs(dx.p, dy.p, dt.p);
  const auto b = folds_plan::bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  const ctfx::device_ctx dev{ctfx::backend::cuda, nullptr};
  auto st = folds_plan::run(din, outs(ds.p, dm.p, da.p), dev, std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "compiled<G>: fused reductions run on the device" : st.message.c_str());
  check(ds.get() == hs && dm.get() == hm && da.get() == ha, "compiled<G>: fused reductions equal to the host's, bit for bit");
  ctfx::runtime_plan rp(row_folds.get());
  dev_buf<float> rs(hs), rm(hm), ra(ha);
  const auto rb = rp.bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* rws = nullptr;
  cudaMalloc(&rws, rb.workspace_bytes + 1);
  st = rp.run(din, outs(rs.p, rm.p, ra.p), dev, std::span<std::byte>(rws, rb.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "runtime_plan: fused reductions run on the device" : st.message.c_str());
  check(rs.get() == hs && rm.get() == hm && ra.get() == ha, "runtime_plan: fused reductions equal to the host's, bit for bit");
  cudaFree(ws);
  cudaFree(rws);
}

// Reductions of inputs (kernels/reduce.hpp), rows long enough for a warp per output, with NaNs
// and signed zeros where the answer depends on the fold's order: runtime_plan on the device
// against the host, bit for bit (NaN payloads and the sign of zero included).
void plain_reductions() {
  constexpr long PN = 40, PD = 300;
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {PN, PD});
    auto k = b.input("k", ctfx::i32, {PN, PD});
    b.output(x.sum({1}), x.amax({1}), x.mean({1}), k.sum({1}), x.sum({0}));
  });
  std::vector<float> x(PN * PD);
  std::vector<std::int32_t> k(PN * PD);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((i * 7919) % 1013) * ((i % 3) ? 1e-3f : 1e5f) * ((i % 5) ? 1.0f : -1.0f);
    k[i] = static_cast<std::int32_t>((i * 40503u) % 65536u) - 32768;
  }
  auto nan_with = [](std::uint32_t payload) { float f; const std::uint32_t u = 0x7fc00000u | payload; std::memcpy(&f, &u, 4); return f; };
  x[3 * PD + 70] = nan_with(9);  // the first NaN by position, in a later lane than the next one
  x[3 * PD + 200] = nan_with(2);
  for (long j = 0; j < PD; ++j) x[static_cast<std::size_t>(4 * PD + j)] = (j % 2) ? 0.0f : -0.0f;
  for (long j = 0; j < PD; ++j) x[static_cast<std::size_t>(5 * PD + j)] = (j % 37 == 3) ? ((j % 2) ? 0.0f : -0.0f) : -1.0f;
  std::vector<float> hs(PN), hm(PN), ha(PN), hc(PD);
  std::vector<std::int64_t> hk(PN);
  auto outs = [&](float* s, float* m, float* a, std::int64_t* ks, float* c) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(s, ctfx::f32, {PN}), ctfx::tensor_ref::contiguous(m, ctfx::f32, {PN}),
                                         ctfx::tensor_ref::contiguous(a, ctfx::f32, {PN}), ctfx::tensor_ref::contiguous(ks, ctfx::i64, {PN}),
                                         ctfx::tensor_ref::contiguous(c, ctfx::f32, {PD})};
  };
  ctfx::runtime_plan rp(g);
  check(rp.run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {PN, PD}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {PN, PD})},
               outs(hs.data(), hm.data(), ha.data(), hk.data(), hc.data()))
            .ok,
        "reductions run on the host");
  dev_buf<float> dx(x), ds(hs), dm(hm), da(ha), dc(hc);
  dev_buf<std::int32_t> dk(k);
  dev_buf<std::int64_t> dks(hk);
  const std::vector<ctfx::tensor_ref> din = {ctfx::tensor_ref::contiguous(dx.p, ctfx::f32, {PN, PD}),
                                             ctfx::tensor_ref::contiguous(dk.p, ctfx::i32, {PN, PD})};
  const auto b = rp.bind(std::vector<ctfx::tensor_desc>(din.begin(), din.end()));
  std::byte* ws = nullptr;
  cudaMalloc(&ws, b.workspace_bytes + 1);
  auto st = rp.run(din, outs(ds.p, dm.p, da.p, dks.p, dc.p), ctfx::device_ctx{ctfx::backend::cuda, nullptr},
                   std::span<std::byte>(ws, b.workspace_bytes));
  cudaDeviceSynchronize();
  check(st.ok, st.ok ? "reductions run on the device" : st.message.c_str());
  auto same = [](const auto& a, const auto& h) { return a.size() == h.size() && std::memcmp(a.data(), h.data(), h.size() * sizeof(h[0])) == 0; };
  // Arithmetic on a NaN gives CUDA's canonical NaN, the host's the operand's: a sum that is NaN
  // on both is the same value. (A maximum selects, so its NaN keeps its payload everywhere.)
  auto same_or_nans = [](const std::vector<float>& a, const std::vector<float>& h) {
    if (a.size() != h.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (std::memcmp(&a[i], &h[i], 4) != 0 && !(std::isnan(a[i]) && std::isnan(h[i]))) return false;
    return true;
  };
  check(same_or_nans(ds.get(), hs) && same_or_nans(da.get(), ha) && same_or_nans(dc.get(), hc), "sums and means equal to the host's, bit for bit (NaN as NaN)");
  check(same(dm.get(), hm), "amax equal to the host's, NaN payloads and zero signs included");
  check(same(dks.get(), hk), "an i32 sum into i64 equal to the host's");
  std::uint32_t row3;
  std::memcpy(&row3, &hm[3], 4);
  check(row3 == 0x7fc00009u && std::signbit(hm[4]) && std::signbit(hm[5]), "the host's amax answers are the fold's");
  cudaFree(ws);
}

// cond, while_loop and a value read with item() on the device (runtime_plan): the predicate and the
// loop's flag copied to the host after the kernels that compute them, a transposed operand copied
// into its branch's layout in device memory, the loop's body in place, the count read from host
// copies of the inputs before the first kernel; each against the host plan, bit for bit.
void control_flow() {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 6});
    auto n = b.input("n", ctfx::i64, {});
    auto c = b.cond(
        ctfx::gt(x.sum(), 0.0), [](ctfx::builder& s) { s.output(s.input("a", ctfx::f32, {6, 4}) * 2.0); },
        [](ctfx::builder& s) { s.output(s.input("a", ctfx::f32, {6, 4}) + 1.0); }, {x.transpose(0, 1)});
    auto l = b.while_loop(
        [](ctfx::builder& s) {
          auto i = s.input("i", ctfx::i64, {});
          (void)s.input("v", ctfx::f32, {4, 6});
          s.output(ctfx::lt(i, s.input("m", ctfx::i64, {})));
        },
        [](ctfx::builder& s) {
          auto i = s.input("i", ctfx::i64, {});
          auto v = s.input("v", ctfx::f32, {4, 6});
          (void)s.input("m", ctfx::i64, {});
          s.output(i + 1, v * 0.5 + 1.0);
        },
        {b.zeros({}, ctfx::i64), x}, {n});
    const ctfx::sym_expr u = ctfx::item(b, ctfx::gt(x, 0.0).sum(), "u0");
    b.output(c[0], l[1], x.view({24}).slice(0, 0, u) * 3.0);
  });
  ctfx::runtime_plan plan(g);
  check(plan.error().ok(), "control-flow plan made");
  for (int sign : {1, -1}) {
    std::vector<float> x(24);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(sign) * (static_cast<float>(i % 5) - 1.0f);
    std::vector<std::int64_t> n = {sign > 0 ? 3 : 0};
    std::vector<ctfx::tensor_ref> hin = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6}),
                                         ctfx::tensor_ref::contiguous(n.data(), ctfx::i64, {})};
    const auto hb = plan.bind_values(hin);
    check(hb.status.ok, hb.status.ok ? "bound with the inputs' values" : hb.status.message.c_str());
    const ctfx::index_t len = hb.outputs[2].size[0];
    std::vector<float> hc(24), hl(24), hs(static_cast<std::size_t>(len));
    std::vector<ctfx::tensor_ref> hout = {ctfx::tensor_ref::contiguous(hc.data(), ctfx::f32, {6, 4}),
                                          ctfx::tensor_ref::contiguous(hl.data(), ctfx::f32, {4, 6}),
                                          ctfx::tensor_ref::contiguous(hs.data(), ctfx::f32, {len})};
    check(plan.run(hin, hout).ok, "control flow runs on the host");
    std::vector<float> zc(24, 0.0f), zl(24, 0.0f), zs(static_cast<std::size_t>(len), 0.0f);
    dev_buf<float> dx(x), dc(zc), dl(zl), ds(zs);
    dev_buf<std::int64_t> dn(n);
    std::vector<ctfx::tensor_ref> din = {ctfx::tensor_ref::contiguous(dx.p, ctfx::f32, {4, 6}),
                                         ctfx::tensor_ref::contiguous(dn.p, ctfx::i64, {})};
    std::vector<ctfx::tensor_ref> dout = {ctfx::tensor_ref::contiguous(dc.p, ctfx::f32, {6, 4}),
                                          ctfx::tensor_ref::contiguous(dl.p, ctfx::f32, {4, 6}),
                                          ctfx::tensor_ref::contiguous(ds.p, ctfx::f32, {len})};
    std::byte* ws = nullptr;
    cudaMalloc(&ws, hb.workspace_bytes + 1);
    const auto st = plan.run(din, dout, ctfx::device_ctx{ctfx::backend::cuda, nullptr}, std::span<std::byte>(ws, hb.workspace_bytes));
    cudaDeviceSynchronize();
    check(st.ok, st.ok ? "control flow runs on the device" : st.message.c_str());
    check(dc.get() == hc, sign > 0 ? "cond: the then-branch, equal to the host" : "cond: the else-branch, equal to the host");
    check(dl.get() == hl, sign > 0 ? "while_loop: three trips, equal to the host" : "while_loop: zero trips, equal to the host");
    check(ds.get() == hs, "a slice sized by item(), equal to the host");
    cudaFree(ws);
  }
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::puts("no CUDA device: skipped");
    return 77;
  }
  kv_and_halo();
  gather_scatter();
  compiled_groups();
  row_kernel_paths();
  fused_reductions();
  plain_reductions();
  control_flow();
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
