// fma (prims.fma: a * b + c rounded once) on every executor, and the FX importer's decompositions of
// what torch.optim steps call (add/sub with alpha, addcmul, addcdiv, lerp, _foreach_sub/_div,
// _foreach_mul.Tensor, _foreach_add with alpha, and their in-place forms), checked bit for bit
// against an independent reference on the host: std::fma and PyTorch's formulas written out here
// (the captured programs optim_* check the same against PyTorch eager).
#include <doctest/doctest.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {

constexpr int N = 37;  // not a multiple of any vector width

constexpr auto fmas = ctfx::graph([](ctfx::builder& g) {
  auto a = g.input("a", ctfx::f32, {N});
  auto b = g.input("b", ctfx::f32, {N});
  auto c = g.input("c", ctfx::f32, {N});
  auto d = g.input("d", ctfx::f64, {N});
  auto i = g.input("i", ctfx::i32, {N});
  // alone; with a number; inside a fused chain (fma of an op's result, read by another op); f64; i32
  g.output(ctfx::fma(a, b, c), ctfx::fma(a, 0.1, c), ctfx::fma(a * b, c, a) + 1.0f, ctfx::fma(d, d, d), ctfx::fma(i, i, i),
           ctfx::where(ctfx::lt(a, 0.0), ctfx::fma(b, c, a), -a));
});
using plan = ctfx::compiled<decltype(fmas)>;

// Equal bits (-0.0 differs from +0.0), except that any NaN equals any NaN: which operand's NaN an
// FMA instruction returns (and so its sign) depends on the operand order the compiler picked, in
// PyTorch's kernels as in these.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a[k]) && std::isnan(b[k])) continue;
    }
    if (std::memcmp(&a[k], &b[k], sizeof(T)) != 0) return false;
  }
  return true;
}

// Values where a rounded product differs from the exact one, and the special ones.
template <class T>
std::vector<T> values(int seed) {
  std::vector<T> v(N);
  std::uint64_t s = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(seed + 1);
  for (int k = 0; k < N; ++k) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[static_cast<std::size_t>(k)] = static_cast<T>(static_cast<double>(static_cast<std::int64_t>(s >> 11) - (std::int64_t{1} << 52)) / 0x1p51);
  }
  v[0] = std::numeric_limits<T>::quiet_NaN();
  v[1] = std::numeric_limits<T>::infinity();
  v[2] = -T(0);
  v[3] = T(0);
  v[4] = -std::numeric_limits<T>::infinity();
  v[5] = T(1) + std::numeric_limits<T>::epsilon();
  v[6] = std::numeric_limits<T>::max();
  return v;
}

ctfx::tensor_ref ref(auto& v, ctfx::dtype dt) { return ctfx::tensor_ref(v.data(), ctfx::tensor_desc::contiguous(dt, {N})); }

}  // namespace

TEST_CASE("fma: a * b + c rounded once (std::fma), integers modulo 2^bits, on every executor") {
  const auto A = values<float>(1), B = values<float>(2), C = values<float>(3);
  auto D = values<double>(4);
  std::vector<std::int32_t> I(N);
  for (int k = 0; k < N; ++k) I[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(0x7fffffff - 977 * k * k * k);
  // the reference, on the host
  std::vector<float> r0(N), r1(N), r2(N), r5(N);
  std::vector<double> r3(N);
  std::vector<std::int32_t> r4(N);
  const float tenth = 0.1f;
  for (std::size_t k = 0; k < N; ++k) {
    r0[k] = std::fma(A[k], B[k], C[k]);
    r1[k] = std::fma(A[k], tenth, C[k]);
    volatile float ab = A[k] * B[k];
    r2[k] = std::fma(static_cast<float>(ab), C[k], A[k]) + 1.0f;
    r3[k] = std::fma(D[k], D[k], D[k]);
    r4[k] = static_cast<std::int32_t>(static_cast<std::uint32_t>(I[k]) * static_cast<std::uint32_t>(I[k]) + static_cast<std::uint32_t>(I[k]));
    r5[k] = A[k] < 0.0f ? std::fma(B[k], C[k], A[k]) : -A[k];
  }
  CHECK(!same_bits(r0, [&] {  // the test can fail: two roundings differ somewhere
    std::vector<float> t(N);
    for (std::size_t k = 0; k < N; ++k) { volatile float p = A[k] * B[k]; t[k] = p + C[k]; }
    return t;
  }()));
  auto check = [&](auto&& run) {
    auto a = A, b = B, c = C;
    auto d = D;
    auto i = I;
    std::vector<float> o0(N), o1(N), o2(N), o5(N);
    std::vector<double> o3(N);
    std::vector<std::int32_t> o4(N);
    const std::vector<ctfx::tensor_ref> ins = {ref(a, ctfx::f32), ref(b, ctfx::f32), ref(c, ctfx::f32), ref(d, ctfx::f64), ref(i, ctfx::i32)};
    const std::vector<ctfx::tensor_ref> outs = {ref(o0, ctfx::f32), ref(o1, ctfx::f32), ref(o2, ctfx::f32),
                                                ref(o3, ctfx::f64), ref(o4, ctfx::i32), ref(o5, ctfx::f32)};
    const ctfx::run_status st = run(ins, outs);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(same_bits(o0, r0));
    CHECK(same_bits(o1, r1));
    CHECK(same_bits(o2, r2));
    CHECK(same_bits(o3, r3));
    CHECK(same_bits(o4, r4));
    CHECK(same_bits(o5, r5));
  };
  const ctfx::ir g = decltype(fmas)::get();
  check([&](auto in, auto out) { return plan::run(in, out); });
  check([&](auto in, auto out) { return ctfx::runtime_plan(g).run(in, out); });
  check([&](auto in, auto out) { return ctfx::reference_run(g, in, out); });
}

TEST_CASE("fma prints as prims.fma.default and reads back") {
  const ctfx::ir g = decltype(fmas)::get();
  const std::string text = ctfx::to_fx(g);
  CHECK(text.find("torch.ops.prims.fma.default(a, b, c)") != std::string::npos);
  const auto r = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  int n = 0;
  for (std::int32_t k = 0; k < r.graph.size(); ++k) n += r.graph[k].op == ctfx::op_kind::fma;
  CHECK(n == 6);
}

namespace {

// An optimizer step as PyTorch's post-grad graphs print it (functional forms), and the in-place
// forms a hand-written graph may use.
constexpr std::string_view optim_text = R"(
def forward(self, p: "f32[37][1]cpu", g: "f32[37][1]cpu", m: "f32[37][1]cpu", v: "f32[37][1]cpu", w: "f32[37][1]cpu", s: "f32[][]cpu", q: "f64[37][1]cpu", i: "i64[37][1]cpu"):
    add: "f32[37][1]cpu" = torch.ops.aten.add.Tensor(p, g, alpha = -0.1)
    sub: "f32[37][1]cpu" = torch.ops.aten.sub.Tensor(p, g, alpha = 0.3)
    addcmul: "f32[37][1]cpu" = torch.ops.aten.addcmul.default(v, g, g, value = 0.001)
    addcdiv: "f32[37][1]cpu" = torch.ops.aten.addcdiv.default(p, m, v, value = -0.01)
    lerp: "f32[37][1]cpu" = torch.ops.aten.lerp.Scalar(m, g, 0.1)
    lerp_1: "f32[37][1]cpu" = torch.ops.aten.lerp.Scalar(m, g, 0.7)
    lerp_2: "f32[37][1]cpu" = torch.ops.aten.lerp.Tensor(m, g, w)
    _foreach_sub = torch.ops.aten._foreach_sub.List([p, m], [g, v])
    getitem: "f32[37][1]cpu" = _foreach_sub[0]
    getitem_1: "f32[37][1]cpu" = _foreach_sub[1]
    _foreach_div = torch.ops.aten._foreach_div.Scalar([p, m], 3.0)
    getitem_2: "f32[37][1]cpu" = _foreach_div[1]
    _foreach_mul = torch.ops.aten._foreach_mul.Tensor([p, m], s)
    getitem_3: "f32[37][1]cpu" = _foreach_mul[0]
    _foreach_add = torch.ops.aten._foreach_add.List([p, m], [g, v], alpha = 0.5)
    getitem_4: "f32[37][1]cpu" = _foreach_add[1]
    add_1: "f64[37][1]cpu" = torch.ops.aten.add.Tensor(q, q, alpha = 0.1)
    sub_1: "i64[37][1]cpu" = torch.ops.aten.sub.Tensor(i, i, alpha = 3)
    addcmul_1: "f64[37][1]cpu" = torch.ops.aten.addcmul.default(q, q, q)
    fma: "f32[37][1]cpu" = torch.ops.prims.fma.default(g, 0.001, v)
    _foreach_addcmul = torch.ops.aten._foreach_addcmul.Scalar([v, m], [g, g], [g, p], 0.25)
    getitem_5: "f32[37][1]cpu" = _foreach_addcmul[1]
    _foreach_addcdiv = torch.ops.aten._foreach_addcdiv.Scalar([p], [m], [v], -0.01)
    getitem_6: "f32[37][1]cpu" = _foreach_addcdiv[0]
    _foreach_lerp = torch.ops.aten._foreach_lerp.List([m], [g], [w])
    getitem_7: "f32[37][1]cpu" = _foreach_lerp[0]
    _foreach_sqrt = torch.ops.aten._foreach_sqrt.default([v])
    getitem_8: "f32[37][1]cpu" = _foreach_sqrt[0]
    return (add, sub, addcmul, addcdiv, lerp, lerp_1, lerp_2, getitem, getitem_1, getitem_2, getitem_3, getitem_4, add_1, sub_1, addcmul_1, fma, getitem_5, getitem_6, getitem_7, getitem_8)
)";

float f32(double x) { return static_cast<float>(x); }

}  // namespace

TEST_CASE("FX: alpha, addcmul, addcdiv, lerp, list ops and prims.fma decompose to PyTorch's CPU arithmetic, bit for bit") {
  const auto r = ctfx::parse_fx(optim_text);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  auto P = values<float>(1), G = values<float>(2), M = values<float>(3), V = values<float>(4), W = values<float>(5);
  for (std::size_t k = 7; k < N; ++k) V[k] = std::abs(V[k]) + 0.25f;  // a divisor
  for (std::size_t k = 0; k < N; ++k) W[k] = k % 3 == 0 ? 0.5f : k % 3 == 1 ? W[k] * 0.25f : W[k];  // both branches, and 0.5
  std::vector<float> S = {0.75f};
  auto Q = values<double>(6);
  std::vector<std::int64_t> I(N);
  for (int k = 0; k < N; ++k) I[static_cast<std::size_t>(k)] = INT64_MAX - 12345 * static_cast<std::int64_t>(k) * k;
  std::vector<std::vector<float>> o(13, std::vector<float>(N));
  o[12].clear();
  std::vector<double> oq(N), oq2(N);
  std::vector<std::int64_t> oi(N);
  std::vector<float> ofma(N);
  std::vector<ctfx::tensor_ref> ins = {ref(P, ctfx::f32), ref(G, ctfx::f32), ref(M, ctfx::f32), ref(V, ctfx::f32), ref(W, ctfx::f32),
                                       ctfx::tensor_ref(S.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {})), ref(Q, ctfx::f64),
                                       ref(I, ctfx::i64)};
  std::vector<ctfx::tensor_ref> outs;
  for (int k = 0; k < 12; ++k) outs.push_back(ref(o[static_cast<std::size_t>(k)], ctfx::f32));
  outs.push_back(ref(oq, ctfx::f64));
  outs.push_back(ref(oi, ctfx::i64));
  outs.push_back(ref(oq2, ctfx::f64));
  outs.push_back(ref(ofma, ctfx::f32));
  std::vector<std::vector<float>> o2(4, std::vector<float>(N));
  for (auto& x : o2) outs.push_back(ref(x, ctfx::f32));
  const ctfx::run_status st = ctfx::runtime_plan(r.graph).run(ins, outs);
  REQUIRE_MESSAGE(st.ok, st.message);
  const ctfx::run_status st2 = ctfx::reference_run(r.graph, ins, outs);  // the same values again
  REQUIRE_MESSAGE(st2.ok, st2.message);
  auto lerp = [](float s, float e, float w) {
    const float d = e - s;
    return std::abs(w) < 0.5f ? std::fma(w, d, s) : std::fma(-d, 1.0f - w, e);
  };
  std::vector<std::vector<float>> want(12, std::vector<float>(N));
  for (std::size_t k = 0; k < N; ++k) {
    want[0][k] = std::fma(G[k], f32(-0.1), P[k]);
    want[1][k] = std::fma(G[k], -f32(0.3), P[k]);
    volatile float vg = f32(0.001) * G[k];
    want[2][k] = std::fma(static_cast<float>(vg), G[k], V[k]);
    volatile float vm = f32(-0.01) * M[k];
    volatile float qd = static_cast<float>(vm) / V[k];
    want[3][k] = P[k] + static_cast<float>(qd);
    want[4][k] = lerp(M[k], G[k], f32(0.1));
    want[5][k] = lerp(M[k], G[k], f32(0.7));
    want[6][k] = lerp(M[k], G[k], W[k]);
    want[7][k] = P[k] - G[k];
    want[8][k] = M[k] - V[k];
    want[9][k] = M[k] / 3.0f;
    want[10][k] = P[k] * S[0];
    want[11][k] = std::fma(V[k], 0.5f, M[k]);
  }
  for (std::size_t j = 0; j < 12; ++j) {
    CAPTURE(j);
    CHECK(same_bits(o[j], want[j]));
  }
  std::vector<double> wq(N), wq2(N);
  std::vector<std::int64_t> wi(N);
  std::vector<float> wf(N);
  for (std::size_t k = 0; k < N; ++k) {
    wq[k] = std::fma(Q[k], 0.1, Q[k]);
    wq2[k] = std::fma(Q[k], Q[k], Q[k]);
    wi[k] = static_cast<std::int64_t>(static_cast<std::uint64_t>(I[k]) - 3u * static_cast<std::uint64_t>(I[k]));
    wf[k] = std::fma(G[k], f32(0.001), V[k]);
  }
  CHECK(same_bits(oq, wq));
  CHECK(same_bits(oi, wi));
  CHECK(same_bits(oq2, wq2));
  CHECK(same_bits(ofma, wf));
  std::vector<std::vector<float>> want2(4, std::vector<float>(N));
  for (std::size_t k = 0; k < N; ++k) {
    volatile float qg = 0.25f * G[k];
    want2[0][k] = std::fma(static_cast<float>(qg), P[k], M[k]);
    want2[1][k] = want[3][k];
    want2[2][k] = want[6][k];
    want2[3][k] = std::sqrt(V[k]);
  }
  for (std::size_t j = 0; j < 4; ++j) {
    CAPTURE(j);
    CHECK(same_bits(o2[j], want2[j]));
  }
  // the decompositions differ from the naive roundings somewhere (the test can fail)
  int differ = 0;
  for (std::size_t k = 7; k < N; ++k) {
    volatile float ga = G[k] * f32(-0.1);
    differ += static_cast<float>(ga) + P[k] != want[0][k];
  }
  CHECK(differ > 0);
}

TEST_CASE("FX: in-place forms copy the decomposition into self (a functional graph's epilogue)") {
  constexpr std::string_view text = R"(
def forward(self, p: "f64[5][1]cpu", g: "f64[5][1]cpu", m: "f64[5][1]cpu"):
    addcmul_: "f64[5][1]cpu" = torch.ops.aten.addcmul_.default(m, g, g, value = 0.1)
    return ()
)";
  constexpr std::string_view text2 = R"(
def forward(self, p: "f64[5][1]cpu", g: "f64[5][1]cpu", m: "f64[5][1]cpu"):
    _foreach_sub_ = torch.ops.aten._foreach_sub_.List([p, m], [g, g], alpha = 1.5)
    return ()
)";
  constexpr std::string_view text3 = R"(
def forward(self, p: "f64[5][1]cpu", g: "f64[5][1]cpu", m: "f64[5][1]cpu"):
    lerp_: "f64[5][1]cpu" = torch.ops.aten.lerp_.Scalar(g, m, 0.9)
    return ()
)";
  const std::vector<double> P = {1, 2, -3, 0.1, 7}, G = {0.3, -0.7, 1e-3, 5, -2}, M = {0.5, 0.25, -1, 3, 0.2};
  const auto d5 = ctfx::tensor_desc::contiguous(ctfx::f64, {5});
  auto run = [&](std::string_view t, std::vector<double>& p, std::vector<double>& g, std::vector<double>& m) {
    p = P, g = G, m = M;
    const auto r = ctfx::parse_fx(t);
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    const ctfx::run_status st = ctfx::runtime_plan(r.graph).run(
        std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(p.data(), d5), ctfx::tensor_ref(g.data(), d5), ctfx::tensor_ref(m.data(), d5)}, {});
    REQUIRE_MESSAGE(st.ok, st.message);
  };
  std::vector<double> p, g, m;
  run(text, p, g, m);
  for (std::size_t k = 0; k < 5; ++k) CHECK(m[k] == std::fma(0.1 * G[k], G[k], M[k]));
  run(text2, p, g, m);
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(p[k] == std::fma(G[k], -1.5, P[k]));
    CHECK(m[k] == std::fma(G[k], -1.5, M[k]));
  }
  run(text3, p, g, m);
  for (std::size_t k = 0; k < 5; ++k) CHECK(g[k] == std::fma(-(M[k] - G[k]), 1.0 - 0.9, M[k]));
}

TEST_CASE("FX: f16/bf16 optimizer arithmetic is refused with the node and the reason") {
  constexpr std::string_view text = R"(
def forward(self, m: "f16[40][1]cpu", g: "f16[40][1]cpu"):
    lerp: "f16[40][1]cpu" = torch.ops.aten.lerp.Scalar(m, g, 0.1)
    return (lerp,)
)";
  const auto r = ctfx::parse_fx(text);
  REQUIRE(!r.ok());
  const std::string msg = ctfx::to_string(r.error);
  CHECK(msg.find("node 'lerp'") != std::string::npos);
  CHECK(msg.find("f16") != std::string::npos);
  CHECK(msg.find("position-dependent") != std::string::npos);
  constexpr std::string_view alpha = R"(
def forward(self, x: "bf16[40][1]cpu", y: "bf16[40][1]cpu"):
    add: "bf16[40][1]cpu" = torch.ops.aten.add.Tensor(x, y, alpha = 2)
    return (add,)
)";
  const auto r2 = ctfx::parse_fx(alpha);
  REQUIRE(!r2.ok());
  CHECK(ctfx::to_string(r2.error).find("node 'add'") != std::string::npos);
}

// compile time: the parser is constexpr
static_assert(ctfx::parse_fx(optim_text).error.ok());
