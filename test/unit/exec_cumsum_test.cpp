// cumsum: each prefix along a dimension summed sequentially in PyTorch's accumulation type (double
// for f32 and f64, f32 for f16), rounded once; integers and bools converted to int64 first (and
// to the dtype= asked), on the run-time and compile-time plans and the host and OMP backends,
// against a loop written here. (The captured program cumulative_sums checks eager's bits.)
// iota (arange), which the front ends build from a full and its cumsum, against start + i * step;
// constant_pad (F.pad: slices, fulls and cats) against out[i][j] = x[i - top][j - left] or the value;
// flip (an index per dim by a reversed iota) against the mirrored positions.
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr long R = 3, N = 500;

constexpr auto scan_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {R, N});
  auto k = b.input("k", ctfx::i32, {R, N});
  auto m = b.input("m", ctfx::b8, {R, N});
  b.output(x.cumsum(1), x.cumsum(0), k.cumsum(-1), m.cumsum(1), k.cumsum(1, ctfx::f32), x.transpose(0, 1).cumsum(1), (x * 2.0).cumsum(1));
});
using scan_plan = ctfx::compiled<decltype(scan_graph)>;

struct scan_data {
  std::vector<float> x = std::vector<float>(R * N);
  std::vector<std::int32_t> k = std::vector<std::int32_t>(R * N);
  std::vector<std::uint8_t> m = std::vector<std::uint8_t>(R * N);
  std::vector<float> o0 = std::vector<float>(R * N), o1 = std::vector<float>(R * N), o4 = std::vector<float>(R * N), o5 = std::vector<float>(N * R),
                     o6 = std::vector<float>(R * N);
  std::vector<std::int64_t> o2 = std::vector<std::int64_t>(R * N), o3 = std::vector<std::int64_t>(R * N);
  scan_data() {
    std::uint32_t s = 3;
    for (long i = 0; i < R * N; ++i) {
      s = s * 1664525u + 1013904223u;
      x[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(s % 20001) - 10000) * 0.0137f;
      k[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(s ^ (s << 7));
      m[static_cast<std::size_t>(i)] = (s >> 9) & 1;
    }
    x[0] = 1e8f;  // row 0: 1e8 then small values: a float accumulator would lose them, a double keeps them
    for (long j = 1; j < 8; ++j) x[static_cast<std::size_t>(j)] = 1.0f;
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {R, N}),
            ctfx::tensor_ref::contiguous(m.data(), ctfx::b8, {R, N})};
  }
  std::vector<ctfx::tensor_ref> outs() {
    return {ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {R, N}),
            ctfx::tensor_ref::contiguous(o2.data(), ctfx::i64, {R, N}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::i64, {R, N}),
            ctfx::tensor_ref::contiguous(o4.data(), ctfx::f32, {R, N}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::f32, {N, R}),
            ctfx::tensor_ref::contiguous(o6.data(), ctfx::f32, {R, N})};
  }
  void check() const {
    for (long r = 0; r < R; ++r) {
      double a = 0, a6 = 0, a4 = 0;
      std::int64_t ai = 0, am = 0;
      for (long j = 0; j < N; ++j) {
        const auto i = static_cast<std::size_t>(r * N + j);
        a += static_cast<double>(x[i]);
        a6 += static_cast<double>(x[i] * 2.0f);
        a4 += static_cast<double>(static_cast<float>(k[i]));
        ai = static_cast<std::int64_t>(static_cast<std::uint64_t>(ai) + static_cast<std::uint64_t>(static_cast<std::int64_t>(k[i])));
        am += m[i];
        CHECK(o0[i] == static_cast<float>(a));
        CHECK(o6[i] == static_cast<float>(a6));
        CHECK(o4[i] == static_cast<float>(a4));
        CHECK(o2[i] == ai);
        CHECK(o3[i] == am);
      }
    }
    for (long j = 0; j < N; ++j) {
      double a = 0;
      for (long r = 0; r < R; ++r) {
        a += static_cast<double>(x[static_cast<std::size_t>(r * N + j)]);
        CHECK(o1[static_cast<std::size_t>(r * N + j)] == static_cast<float>(a));
      }
      double t = 0;  // the transposed input's row j: x[0, j], x[1, j], ...
      for (long r = 0; r < R; ++r) {
        t += static_cast<double>(x[static_cast<std::size_t>(r * N + j)]);
        CHECK(o5[static_cast<std::size_t>(j * R + r)] == static_cast<float>(t));
      }
    }
    CHECK(o0[7] == 100000008.0f);  // 1e8 + 7 in double, rounded once (a float sum would stay 1e8)
  }
};
}  // namespace

TEST_CASE("cumsum: every plan and backend sums each prefix in double for f32, int64 for integers and bools") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    scan_data r, c;
    const auto st = ctfx::runtime_plan(scan_graph.get()).run(r.in(), r.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    r.check();
    const auto sc = scan_plan::run(c.in(), c.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(sc.ok, sc.message);
    c.check();
  }
}

TEST_CASE("cumsum: f16 accumulates in f32, a 0-d input is itself, an i32 cumsum node is refused") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto h = b.input("h", ctfx::f16, {1, 300});
    auto s = b.input("s", ctfx::f64, {});
    b.output(h.cumsum(1), s.cumsum(0));
  });
  REQUIRE(g.error.ok());
  std::vector<ctfx::half_t> h(300), oh(300);
  for (int j = 0; j < 300; ++j) h[static_cast<std::size_t>(j)] = ctfx::half_t(j == 0 ? 2048.0f : 1.0f);  // f16 alone would stay at 2048
  double s = -2.5, os = 0;
  const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {1, 300}), ctfx::tensor_ref::contiguous(&s, ctfx::f64, {})},
                                            {ctfx::tensor_ref::contiguous(oh.data(), ctfx::f16, {1, 300}), ctfx::tensor_ref::contiguous(&os, ctfx::f64, {})});
  REQUIRE_MESSAGE(st.ok, st.message);
  float a = 0;
  for (int j = 0; j < 300; ++j) {
    a += static_cast<float>(h[static_cast<std::size_t>(j)]);
    CHECK(static_cast<float>(oh[static_cast<std::size_t>(j)]) == static_cast<float>(ctfx::half_t(a)));
  }
  CHECK(static_cast<float>(oh[299]) == 2348.0f);  // 2347 in f32, rounded once to f16's even neighbour
  CHECK(os == -2.5);
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto k = b.input("k", ctfx::i32, {4});
    b.output(b.make(ctfx::op_kind::cumsum, {k}, {ctfx::sym_expr(0)}));
  }, &d);
  REQUIRE_FALSE(d.ok());
  CHECK(ctfx::to_string(d).find("int64") != std::string::npos);
}

TEST_CASE("cumsum from FX text: the dtype= conversion is a node of its own, printed back as PyTorch writes it") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "i32[2, 3][3, 1]cpu"):
    cumsum: "i64[2, 3][3, 1]cpu" = torch.ops.aten.cumsum.default(arg0_1, 1)
    cumsum_1: "f32[2, 3][3, 1]cpu" = torch.ops.aten.cumsum.default(arg0_1, 0, dtype = torch.float32)
    return (cumsum, cumsum_1)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<std::int32_t> k = {1, -2, 3, 2147483647, 1, 1};
  std::vector<std::int64_t> a(6);
  std::vector<float> b(6);
  const auto st = ctfx::runtime_plan(r.graph).run({ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {2, 3})},
                                                  {ctfx::tensor_ref::contiguous(a.data(), ctfx::i64, {2, 3}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 3})});
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(a == std::vector<std::int64_t>{1, -1, 2, 2147483647, 2147483648LL, 2147483649LL});  // in int64: no wrap at 2^31
  CHECK(b == std::vector<float>{1.0f, -2.0f, 3.0f, 2147483648.0f, -1.0f, 4.0f});
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.cumsum.default(cumsum_convert, 1)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  CHECK_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
}

namespace {
// start + i * step, wrapped in int64 and then to T (PyTorch's iota kernel computes in its dtype,
// which wraps the same way).
template <class T>
std::vector<T> iota_ref(long n, std::int64_t start, std::int64_t step) {
  std::vector<T> r;
  for (long i = 0; i < n; ++i)
    r.push_back(static_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                                           static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(step))));
  return r;
}
constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max() - 2;
constexpr auto iota_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {7});
  b.output(b.iota(7), b.iota(5, 10, -3), b.iota(0), b.iota(6, big, 1), b.iota(9, 2147483640, 3, ctfx::i32), x + b.iota(7, -3, 2));
});
using iota_plan = ctfx::compiled<decltype(iota_graph)>;
}  // namespace

TEST_CASE("iota: start + i * step in int64 (wrapping as PyTorch's kernel), n = 0, a negative step, i32, on every plan and backend") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (int compiled = 0; compiled < 2; ++compiled) {
      CAPTURE(ctfx::name_of(where));
      CAPTURE(compiled);
      std::vector<float> x = {0.5f, -1.0f, 2.0f, 0.0f, 3.25f, -0.0f, 1.0f}, o5(7);
      std::vector<std::int64_t> o0(7, -9), o1(5, -9), o3(6, -9);
      std::vector<std::int32_t> o4(9, -9);
      std::int64_t none = -9;
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {7})};
      const std::vector<ctfx::tensor_ref> out = {
          ctfx::tensor_ref::contiguous(o0.data(), ctfx::i64, {7}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::i64, {5}),
          ctfx::tensor_ref::contiguous(&none, ctfx::i64, {0}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::i64, {6}),
          ctfx::tensor_ref::contiguous(o4.data(), ctfx::i32, {9}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::f32, {7})};
      const auto st = compiled ? iota_plan::run(in, out, ctfx::device_ctx{where}) : ctfx::runtime_plan(iota_graph.get()).run(in, out, ctfx::device_ctx{where});
      REQUIRE_MESSAGE(st.ok, st.message);
      CHECK(o0 == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
      CHECK(o1 == std::vector<std::int64_t>{10, 7, 4, 1, -2});
      CHECK(o1 == iota_ref<std::int64_t>(5, 10, -3));
      CHECK(none == -9);
      CHECK(o3 == iota_ref<std::int64_t>(6, big, 1));
      CHECK(o3[3] == std::numeric_limits<std::int64_t>::min());
      CHECK(o4 == iota_ref<std::int32_t>(9, 2147483640, 3));
      CHECK(o4[3] == -2147483647);  // 2147483649 wrapped to int32
      for (std::size_t i = 0; i < 7; ++i) CHECK(o5[i] == x[i] + static_cast<float>(-3 + 2 * static_cast<int>(i)));
    }
  }
}

TEST_CASE("iota from FX text: tril as Inductor prints it, start, step and dtype, printed back and parsed again") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "f32[5, 5][5, 1]cpu"):
    iota: "i64[5][1]cpu" = torch.ops.prims.iota.default(5, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)
    unsqueeze: "i64[1, 5][5, 1]cpu" = torch.ops.aten.unsqueeze.default(iota, -2);  iota = None
    iota_1: "i64[5][1]cpu" = torch.ops.prims.iota.default(5, start = 0, step = 1, dtype = torch.int64, device = device(type='cpu'), requires_grad = False)
    unsqueeze_1: "i64[5, 1][1, 1]cpu" = torch.ops.aten.unsqueeze.default(iota_1, -1);  iota_1 = None
    sub: "i64[5, 5][5, 1]cpu" = torch.ops.aten.sub.Tensor(unsqueeze, unsqueeze_1);  unsqueeze = unsqueeze_1 = None
    le: "b8[5, 5][5, 1]cpu" = torch.ops.aten.le.Scalar(sub, 0);  sub = None
    full_default: "f32[][]cpu" = torch.ops.aten.full.default([], 0.0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    where: "f32[5, 5][5, 1]cpu" = torch.ops.aten.where.self(le, arg0_1, full_default);  le = arg0_1 = full_default = None
    iota_2: "i32[4][1]cpu" = torch.ops.prims.iota.default(4, start = -7, step = -5, dtype = torch.int32, device = device(type='cpu'), requires_grad = False)
    return (where, iota_2)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<float> x(25), w(25);
  for (std::size_t i = 0; i < 25; ++i) x[i] = static_cast<float>(i) + 0.5f;
  std::vector<std::int32_t> k(4);
  const auto run = [&](const ctfx::ir& g) {
    const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {5, 5})},
                                              {ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {5, 5}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {4})});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t j = 0; j < 5; ++j) CHECK(w[i * 5 + j] == (j <= i ? x[i * 5 + j] : 0.0f));
    CHECK(k == std::vector<std::int32_t>{-7, -12, -17, -22});
  };
  run(r.graph);
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.cumsum.default(iota_steps, 0)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  std::fill(w.begin(), w.end(), -1.0f);
  run(again.graph);
  const auto bad = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "f32[5][1]cpu"):
    iota: "f32[5][1]cpu" = torch.ops.prims.iota.default(5, start = 0, step = 1, dtype = torch.float32, device = device(type='cpu'), requires_grad = False)
    return (iota,)
)fx");
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("integers only") != std::string::npos);
}

namespace {
// F.pad of a 2-d x by (left, right, top, bottom) with v, as PyTorch defines it: out[i][j] is
// x[i - top][j - left] where that lies inside x, else v (a negative pad crops).
template <class T>
std::vector<T> pad_ref(const std::vector<T>& x, long rows, long cols, long left, long right, long top, long bottom, T v) {
  std::vector<T> r;
  for (long i = 0; i < rows + top + bottom; ++i)
    for (long j = 0; j < cols + left + right; ++j) {
      const long si = i - top, sj = j - left;
      r.push_back(si >= 0 && si < rows && sj >= 0 && sj < cols ? x[static_cast<std::size_t>(si * cols + sj)] : v);
    }
  return r;
}
constexpr ctfx::index_t pad_a[] = {1, 2, 0, 3}, pad_b[] = {-1, 2, 1, -2}, pad_c[] = {0, 0, 2, 0}, pad_d[] = {0, 0}, pad_e[] = {3, -4};
constexpr auto pad_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4});
  auto k = b.input("k", ctfx::i64, {3, 4});
  b.output(x.constant_pad(pad_a, 0.5), x.constant_pad(pad_b), x.constant_pad(pad_c) * 2.0f, x.constant_pad(pad_d),
           k.constant_pad(pad_a, -7.0), k.constant_pad(pad_e, 9));
});
using pad_plan = ctfx::compiled<decltype(pad_graph)>;
}  // namespace

TEST_CASE("constant_pad: pads, crops, zero pads and an integer value on every plan and backend, a new tensor") {
  std::vector<float> x(12);
  std::vector<std::int64_t> k(12);
  for (std::size_t i = 0; i < 12; ++i) { x[i] = static_cast<float>(i) * 1.25f - 3.0f; k[i] = static_cast<std::int64_t>(i) * 1000000007LL; }
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (int compiled = 0; compiled < 2; ++compiled) {
      CAPTURE(ctfx::name_of(where));
      CAPTURE(compiled);
      std::vector<float> o0(6 * 7, -1), o1(2 * 5, -1), o2(5 * 4, -1), o3(12, -1);
      std::vector<std::int64_t> o4(6 * 7, -1), o5(3 * 3, -1);
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i64, {3, 4})};
      const std::vector<ctfx::tensor_ref> out = {
          ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {6, 7}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {2, 5}),
          ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {5, 4}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {3, 4}),
          ctfx::tensor_ref::contiguous(o4.data(), ctfx::i64, {6, 7}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::i64, {3, 3})};
      const auto st = compiled ? pad_plan::run(in, out, ctfx::device_ctx{where}) : ctfx::runtime_plan(pad_graph.get()).run(in, out, ctfx::device_ctx{where});
      REQUIRE_MESSAGE(st.ok, st.message);
      CHECK(o0 == pad_ref(x, 3, 4, 1, 2, 0, 3, 0.5f));
      CHECK(o1 == pad_ref(x, 3, 4, -1, 2, 1, -2, 0.0f));
      std::vector<float> twice = pad_ref(x, 3, 4, 0, 0, 2, 0, 0.0f);
      for (float& e : twice) e *= 2.0f;
      CHECK(o2 == twice);
      CHECK(o3 == x);
      CHECK(o4 == pad_ref<std::int64_t>(k, 3, 4, 1, 2, 0, 3, -7));
      CHECK(o5 == pad_ref<std::int64_t>(k, 3, 4, 3, -4, 0, 0, 9));  // the whole row cropped, then padded
    }
  }
  // A pad of nothing is still a new tensor: a clone, not x itself.
  const ctfx::ir& g = pad_graph.get();
  int clones = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) clones += g[i].op == ctfx::op_kind::clone ? 1 : 0;
  CHECK(clones == 1);
}

TEST_CASE("constant_pad_nd from FX text: F.pad as PyTorch prints it, negative pads, printed back and parsed again") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "f32[2, 3, 4][12, 4, 1]cpu"):
    constant_pad_nd: "f32[2, 6, 7][42, 7, 1]cpu" = torch.ops.aten.constant_pad_nd.default(arg0_1, [1, 2, 0, 3], 0.5)
    constant_pad_nd_1: "f32[2, 2, 5][10, 5, 1]cpu" = torch.ops.aten.constant_pad_nd.default(arg0_1, [-1, 2, 1, -2], 0.0);  arg0_1 = None
    return (constant_pad_nd, constant_pad_nd_1)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<float> x(24);
  for (std::size_t i = 0; i < 24; ++i) x[i] = static_cast<float>(i) - 7.5f;
  const auto run = [&](const ctfx::ir& g) {
    std::vector<float> a(2 * 42, -1), b(2 * 10, -1);
    const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3, 4})},
                                              {ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {2, 6, 7}), ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {2, 2, 5})});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (long m = 0; m < 2; ++m) {
      const std::vector<float> xm(x.begin() + m * 12, x.begin() + m * 12 + 12);
      CHECK(std::vector<float>(a.begin() + m * 42, a.begin() + m * 42 + 42) == pad_ref(xm, 3, 4, 1, 2, 0, 3, 0.5f));
      CHECK(std::vector<float>(b.begin() + m * 10, b.begin() + m * 10 + 10) == pad_ref(xm, 3, 4, -1, 2, 1, -2, 0.0f));
    }
  };
  run(r.graph);
  const std::string text = ctfx::to_fx(r.graph);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  run(again.graph);
}

namespace {
constexpr ctfx::index_t flip_last[] = {-1}, flip_01[] = {0, 1}, flip_none[] = {0};
constexpr auto flip_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {2, 3, 4});
  auto e = b.input("e", ctfx::i64, {0, 3});
  b.output(x.flip(flip_last), x.flip(flip_01) + 1.0f, x.flip(flip_last).cumsum(-1).flip(flip_last), e.flip(flip_none));
});
using flip_plan = ctfx::compiled<decltype(flip_graph)>;
}  // namespace

TEST_CASE("flip: one dim, two dims, a reversed cumsum and an empty input on every plan and backend") {
  std::vector<float> x(24);
  for (std::size_t i = 0; i < 24; ++i) x[i] = static_cast<float>(i * i % 17) * 0.37f - 2.0f;
  const auto at = [&](long a, long b, long c) { return x[static_cast<std::size_t>(a * 12 + b * 4 + c)]; };
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (int compiled = 0; compiled < 2; ++compiled) {
      CAPTURE(ctfx::name_of(where));
      CAPTURE(compiled);
      std::vector<float> o0(24, -1), o1(24, -1), o2(24, -1);
      std::int64_t e = 0, o3 = 0;
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 3, 4}), ctfx::tensor_ref::contiguous(&e, ctfx::i64, {0, 3})};
      const std::vector<ctfx::tensor_ref> out = {
          ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {2, 3, 4}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {2, 3, 4}),
          ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {2, 3, 4}), ctfx::tensor_ref::contiguous(&o3, ctfx::i64, {0, 3})};
      const auto st = compiled ? flip_plan::run(in, out, ctfx::device_ctx{where}) : ctfx::runtime_plan(flip_graph.get()).run(in, out, ctfx::device_ctx{where});
      REQUIRE_MESSAGE(st.ok, st.message);
      for (long a = 0; a < 2; ++a)
        for (long b = 0; b < 3; ++b) {
          double s = 0;  // the suffix sum from the row's end, in double as cumsum accumulates f32
          for (long c = 3; c >= 0; --c) {
            const auto i = static_cast<std::size_t>(a * 12 + b * 4 + c);
            s += static_cast<double>(at(a, b, c));
            CHECK(o0[i] == at(a, b, 3 - c));
            CHECK(o1[i] == at(1 - a, 2 - b, c) + 1.0f);
            CHECK(o2[i] == static_cast<float>(s));
          }
        }
    }
  }
}

TEST_CASE("flip from FX text: prims.rev and aten.flip, printed back and parsed again, repeated dims refused") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "i64[3, 5][5, 1]cpu"):
    rev: "i64[3, 5][5, 1]cpu" = torch.ops.prims.rev.default(arg0_1, [1])
    flip: "i64[3, 5][5, 1]cpu" = torch.ops.aten.flip.default(arg0_1, [0, -1]);  arg0_1 = None
    return (rev, flip)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<std::int64_t> x(15);
  for (std::size_t i = 0; i < 15; ++i) x[i] = static_cast<std::int64_t>(i) * 3 - 20;
  const auto run = [&](const ctfx::ir& g) {
    std::vector<std::int64_t> a(15, -1), b(15, -1);
    const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::i64, {3, 5})},
                                              {ctfx::tensor_ref::contiguous(a.data(), ctfx::i64, {3, 5}), ctfx::tensor_ref::contiguous(b.data(), ctfx::i64, {3, 5})});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 5; ++j) {
        CHECK(a[i * 5 + j] == x[i * 5 + 4 - j]);
        CHECK(b[i * 5 + j] == x[(2 - i) * 5 + 4 - j]);
      }
  };
  run(r.graph);
  const std::string text = ctfx::to_fx(r.graph);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  run(again.graph);
  const auto bad = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "i64[3, 5][5, 1]cpu"):
    flip: "i64[3, 5][5, 1]cpu" = torch.ops.aten.flip.default(arg0_1, [1, -1]);  arg0_1 = None
    return (flip,)
)fx");
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("distinct") != std::string::npos);
}

namespace {
constexpr auto prod_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 40});
  auto k = b.input("k", ctfx::i32, {3, 40});
  auto h = b.input("h", ctfx::f16, {1, 12});
  b.output(x.cumprod(1), x.cumprod(0), k.cumprod(-1), h.cumprod(1), k.cumprod(1, ctfx::f64));
});
using prod_plan = ctfx::compiled<decltype(prod_graph)>;
}  // namespace

TEST_CASE("cumprod: each prefix multiplied in double for f32, f32 for f16, wrapping int64 for integers, on every plan and backend") {
  std::vector<float> x(120);
  std::vector<std::int32_t> k(120);
  std::vector<ctfx::half_t> h(12);
  std::uint32_t s = 11;
  for (std::size_t i = 0; i < 120; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int>(s % 2001) - 1000) * 0.0021f;  // products spanning many magnitudes, signs, a few zeros
    k[i] = static_cast<std::int32_t>(s % 19) - 9;
  }
  x[5] = std::numeric_limits<float>::infinity();
  for (std::size_t j = 0; j < 12; ++j) h[j] = ctfx::half_t(1.0f + 0.125f * static_cast<float>(j));
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (int compiled = 0; compiled < 2; ++compiled) {
      CAPTURE(ctfx::name_of(where));
      CAPTURE(compiled);
      std::vector<float> o0(120), o1(120);
      std::vector<std::int64_t> o2(120);
      std::vector<ctfx::half_t> o3(12);
      std::vector<double> o4(120);
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 40}), ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {3, 40}),
                                                ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {1, 12})};
      const std::vector<ctfx::tensor_ref> out = {
          ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {3, 40}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {3, 40}),
          ctfx::tensor_ref::contiguous(o2.data(), ctfx::i64, {3, 40}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::f16, {1, 12}),
          ctfx::tensor_ref::contiguous(o4.data(), ctfx::f64, {3, 40})};
      const auto st = compiled ? prod_plan::run(in, out, ctfx::device_ctx{where}) : ctfx::runtime_plan(prod_graph.get()).run(in, out, ctfx::device_ctx{where});
      REQUIRE_MESSAGE(st.ok, st.message);
      for (std::size_t r = 0; r < 3; ++r) {
        double a = 1, a4 = 1;
        std::uint64_t ai = 1;
        for (std::size_t j = 0; j < 40; ++j) {
          const std::size_t i = r * 40 + j;
          a *= static_cast<double>(x[i]);
          a4 *= static_cast<double>(k[i]);
          ai *= static_cast<std::uint64_t>(static_cast<std::int64_t>(k[i]));
          CHECK(((o0[i] == static_cast<float>(a)) || (o0[i] != o0[i] && a != a)));
          CHECK(o2[i] == static_cast<std::int64_t>(ai));
          CHECK(o4[i] == a4);
        }
      }
      for (std::size_t j = 0; j < 40; ++j) {
        double a = 1;
        for (std::size_t r = 0; r < 3; ++r) {
          a *= static_cast<double>(x[r * 40 + j]);
          CHECK(((o1[r * 40 + j] == static_cast<float>(a)) || (o1[r * 40 + j] != o1[r * 40 + j] && a != a)));
        }
      }
      float p = 1;
      for (std::size_t j = 0; j < 12; ++j) {
        p *= static_cast<float>(h[j]);
        CHECK(static_cast<float>(o3[j]) == static_cast<float>(ctfx::half_t(p)));
      }
    }
  }
}

TEST_CASE("cumprod from FX text: an int32 input multiplied in int64, printed back as PyTorch writes it") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "i32[2, 3][3, 1]cpu"):
    cumprod: "i64[2, 3][3, 1]cpu" = torch.ops.aten.cumprod.default(arg0_1, 1);  arg0_1 = None
    return (cumprod,)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<std::int32_t> k = {-3, 5, 7, 2147483647, 2147483647, 4};
  const auto run = [&](const ctfx::ir& g) {
    std::vector<std::int64_t> a(6);
    const auto st = ctfx::runtime_plan(g).run({ctfx::tensor_ref::contiguous(k.data(), ctfx::i32, {2, 3})}, {ctfx::tensor_ref::contiguous(a.data(), ctfx::i64, {2, 3})});
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(a == std::vector<std::int64_t>{-3, -15, -105, 2147483647, 4611686014132420609LL, -17179869180LL});  // (2^31 - 1)^2 * 4 wraps in int64
  };
  run(r.graph);
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.cumprod.default(cumprod_convert, 1)") != std::string::npos);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  run(again.graph);
}

namespace {
constexpr auto lse_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 30});
  auto d = b.input("d", ctfx::f64, {4, 30});
  b.output(x.logcumsumexp(1), x.logcumsumexp(0), d.logcumsumexp(-1));
});
using lse_plan = ctfx::compiled<decltype(lse_graph)>;

// PyTorch's CPU fold (_log_add_exp_helper), written here in double: x the element, y the running value.
double log_add_exp_ref(double x, double y) {
  const double lo = std::isnan(y) ? y : std::min(x, y), hi = std::isnan(y) ? y : std::max(x, y);
  return (lo != hi || std::isfinite(lo)) ? std::log1p(std::exp(lo - hi)) + hi : x;
}
}  // namespace

TEST_CASE("logcumsumexp: PyTorch's fold in double for f32 and f64, special values, on every plan and backend, integers refused") {
  std::vector<float> x(120);
  std::vector<double> d(120);
  std::uint32_t s = 5;
  for (std::size_t i = 0; i < 120; ++i) {
    s = s * 1664525u + 1013904223u;
    x[i] = static_cast<float>(static_cast<int>(s % 20001) - 10000) * 0.01f;
    d[i] = static_cast<double>(static_cast<int>(s % 30001) - 15000) * 0.037;
  }
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {inf, 1.0f, -inf, std::nanf(""), -inf, inf, 2.0f, -inf, -inf, 3.0f};
  for (std::size_t j = 0; j < 10; ++j) x[j] = specials[j];  // row 0 (and column j's first element)
  for (std::size_t j = 30; j < 34; ++j) x[j] = -inf;         // row 1 starts with -inf four times
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    for (int compiled = 0; compiled < 2; ++compiled) {
      CAPTURE(ctfx::name_of(where));
      CAPTURE(compiled);
      std::vector<float> o0(120), o1(120);
      std::vector<double> o2(120);
      const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 30}), ctfx::tensor_ref::contiguous(d.data(), ctfx::f64, {4, 30})};
      const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {4, 30}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {4, 30}),
                                                 ctfx::tensor_ref::contiguous(o2.data(), ctfx::f64, {4, 30})};
      const auto st = compiled ? lse_plan::run(in, out, ctfx::device_ctx{where}) : ctfx::runtime_plan(lse_graph.get()).run(in, out, ctfx::device_ctx{where});
      REQUIRE_MESSAGE(st.ok, st.message);
      auto same = [](double got, double want) { return got == want || (std::isnan(got) && std::isnan(want)); };
      int wrong = 0;
      for (std::size_t r = 0; r < 4; ++r) {
        double a = -std::numeric_limits<double>::infinity(), a2 = a;
        for (std::size_t j = 0; j < 30; ++j) {
          a = log_add_exp_ref(static_cast<double>(x[r * 30 + j]), a);
          a2 = log_add_exp_ref(d[r * 30 + j], a2);
          wrong += !same(static_cast<double>(o0[r * 30 + j]), static_cast<double>(static_cast<float>(a)));
          wrong += !same(o2[r * 30 + j], a2);
        }
      }
      for (std::size_t j = 0; j < 30; ++j) {
        double a = -std::numeric_limits<double>::infinity();
        for (std::size_t r = 0; r < 4; ++r) {
          a = log_add_exp_ref(static_cast<double>(x[r * 30 + j]), a);
          wrong += !same(static_cast<double>(o1[r * 30 + j]), static_cast<double>(static_cast<float>(a)));
        }
      }
      CHECK(wrong == 0);
      CHECK(o0[0] == inf);                    // inf, then anything finite or -inf: inf
      CHECK(std::isnan(o0[3]));               // NaN propagates
      CHECK(o0[30] == -inf);                  // -inf, -inf: the same infinity twice stays
      CHECK(o0[34] == static_cast<float>(static_cast<double>(x[34])));  // -inf four times, then x: x
    }
  }
  const ctfx::ir bad = ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("k", ctfx::i64, {3}).logcumsumexp(0)); });
  REQUIRE_FALSE(bad.error.ok());
  CHECK(ctfx::to_string(bad.error).find("PyTorch takes floats only") != std::string::npos);
}
