// bench/runtime/compute_workloads.hpp — the programs that compute, as graphs (their sizes, their
// ops): bench/runtime/compute_bench runs them on the host against hand-written loops,
// bench/cuda/compute_cuda on the device against its copy bandwidth; bench/torch/compute.py writes
// the same programs in PyTorch.
#pragma once
#include <ctfx.hpp>
#include "../../test/common/stencil.hpp"

namespace ctfx_bench::compute {

// (a) A 5-point stencil on a G x G f32 grid with periodic ghost rows and columns; the interior is
// written back in place (copy_).
constexpr long G = 1026;
constexpr auto stencil = ctfx::graph([](ctfx::builder& b) {
  ctfx_test::periodic_stencil(b, b.input("grid", ctfx::f32, {G, G}), G);
});

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

// (m) SGD with momentum and weight decay on three [P, P] f32 parameters (torch.optim.SGD's step:
// m = 0.9 m + (g + 1e-4 p); p = p - 0.01 m), both written back: six updates, the momentum read by
// the parameter's step.
constexpr long P = 1024;
constexpr auto sgd = ctfx::graph([](ctfx::builder& b) {
  const char* names[3][3] = {{"p0", "g0", "m0"}, {"p1", "g1", "m1"}, {"p2", "g2", "m2"}};
  for (int k = 0; k < 3; ++k) {
    auto p = b.input(names[k][0], ctfx::f32, {P, P});
    auto g = b.input(names[k][1], ctfx::f32, {P, P});
    auto m = b.input(names[k][2], ctfx::f32, {P, P});
    auto next_m = m * 0.9f + (g + p * 1e-4f);
    b.update(m, next_m);
    b.update(p, p - next_m * 0.01f);
  }
});

// (b) A ring buffer [R, W] f32: a row written at a run-time position, the window's sum returned.
constexpr long R = 64, W = 4096;
constexpr auto ring = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {R, W});
  auto row = b.input("row", ctfx::f32, {1, W});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(buf, {pos}, row);
  b.update(buf, nb);
  b.output(nb.sum({0}));
});

// (c) RoPE: k [B, H, 1, D] rotated on its two halves, written into a KV cache [B, H, S, D] at a
// run-time position.
// rope_of<B, H>: the same on B batches of H heads (bench/runtime/call_cost.cpp runs one row).
constexpr long RB = 8, RH = 32, RS = 1024, RD = 128;
template <long B, long H>
constexpr auto rope_of = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {B, H, RS, RD});
  auto k = b.input("k", ctfx::f32, {B, H, 1, RD});
  auto cs = b.input("cos", ctfx::f32, {RD / 2});
  auto sn = b.input("sin", ctfx::f32, {RD / 2});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto k1 = k.slice(3, 0, RD / 2), k2 = k.slice(3, RD / 2, RD);
  auto rot = ctfx::cat({k1 * cs - k2 * sn, k2 * cs + k1 * sn}, 3);
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, rot));
});
constexpr auto rope = rope_of<RB, RH>;

// (d) Softmax over the last dimension of [N, D] f32 into a preallocated output.
constexpr long SN = 2048, SD = 1024;
constexpr auto softmax = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {SN, SD});
  auto e = ctfx::exp(x - x.amax({1}, true));
  b.output(e / e.sum({1}, true));
});

// (f) RMSNorm over the last dimension of [N, D] f32 (an LLM layer's normalization): the mean of
// squares is a reduction of an elementwise value, fused: x is read twice, y written once.
constexpr long NN = 2048, ND = 1024;
constexpr auto rmsnorm = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {NN, ND});
  auto w = b.input("w", ctfx::f32, {ND});
  auto inv = ctfx::rsqrt((x * x).mean({1}, true) + 1e-6f);
  b.output(x * inv * w);
});

// (n) Softmax over the last dimension of a rank-3 [B, S, S] f32 (attention scores), into a
// preallocated output: the rows are the two leading dimensions.
constexpr long TB = 16, TS = 512;
constexpr auto softmax3 = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {TB, TS, TS});
  auto e = ctfx::exp(x - x.amax({2}, true));
  b.output(e / e.sum({2}, true));
});

// (o) RMSNorm of [N, D] f32 and the residual added, written back in place: x = x + rmsnorm(x) * w.
constexpr long QN = 4096, QD = 1024;
constexpr auto rms_residual = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {QN, QD});
  auto w = b.input("w", ctfx::f32, {QD});
  b.update(x, x + x * ctfx::rsqrt((x * x).mean({1}, true) + 1e-6f) * w);
});

// (g) A masked fill in place: the scores x [N, D] f32 set to v where the mask input m exceeds 0.5
// (`x[m > 0.5] = v`: an index_put with a bool mask, as an attention mask is applied to scores).
constexpr long MN = 2048, MD = 1024;
constexpr auto masked = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {MN, MD});
  auto m = b.input("m", ctfx::f32, {MN, MD});
  auto v = b.input("v", ctfx::f32, {1});
  b.update(x, ctfx::index_put(x, {ctfx::gt(m, 0.5)}, v));
});

}  // namespace ctfx_bench::compute
