// var and var_mean as PyTorch's CPU kernel computes them (one Welford pass in double over each
// result's elements in row-major order, rounded once), on the run-time and compile-time plans and
// the host and OMP backends, against a Welford loop written here; what PyTorch computes another way
// (f16, 32,768 elements or more per result, a var over every dimension) or cannot (an empty
// extent) is refused. (The captured layer_norm_f32, layer_norm_f64 and var_std check eager's bits.)
#include <doctest/doctest.h>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {
constexpr long A = 5, B = 300;

// A layer norm's statistics and a column variance, f32 and f64.
constexpr auto var_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {A, B});
  auto d = b.input("d", ctfx::f64, {A, B});
  b.output(x.var({1}, 0, true), x.var_mean_mean({1}, 0, true), x.var({0}), d.var({-1}, 1), d.var_mean_mean({0, 1}, 0), x.transpose(0, 1).var({0}, 0.5),
           d.var_mean_var({0, 1}, 0));
});
using var_plan = ctfx::compiled<decltype(var_graph)>;

struct stats {
  double mean = 0, m2 = 0;
  long n = 0;
  void add(double x) {
    ++n;
    const double delta = x - mean;
    mean = mean + delta / static_cast<double>(n);
    m2 = m2 + delta * (x - mean);
  }
  double var(double c) const { return m2 / (static_cast<double>(n) > c ? static_cast<double>(n) - c : 0.0); }
};

template <class T>
bool same(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

struct var_data {
  std::vector<float> x = std::vector<float>(A * B);
  std::vector<double> d = std::vector<double>(A * B);
  std::vector<float> o0 = std::vector<float>(A), o1 = std::vector<float>(A), o2 = std::vector<float>(B), o5 = std::vector<float>(A);
  std::vector<double> o3 = std::vector<double>(A), o4 = std::vector<double>(1), o6 = std::vector<double>(1);
  var_data() {
    std::uint32_t s = 5;
    for (long i = 0; i < A * B; ++i) {
      s = s * 1664525u + 1013904223u;
      x[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<int>(s % 40001) - 20000) * 1.3e-3f + 7.0f;
      d[static_cast<std::size_t>(i)] = static_cast<double>(static_cast<int>((s >> 3) % 100003) - 50000) * 3.1e-4 + 100.0;
    }
  }
  std::vector<ctfx::tensor_ref> in() { return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {A, B}), ctfx::tensor_ref::contiguous(d.data(), ctfx::f64, {A, B})}; }
  std::vector<ctfx::tensor_ref> outs() {
    return {ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {A, 1}), ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {A, 1}),
            ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {B}), ctfx::tensor_ref::contiguous(o3.data(), ctfx::f64, {A}),
            ctfx::tensor_ref::contiguous(o4.data(), ctfx::f64, {}), ctfx::tensor_ref::contiguous(o5.data(), ctfx::f32, {A}),
            ctfx::tensor_ref::contiguous(o6.data(), ctfx::f64, {})};
  }
  void check() const {
    stats all;
    for (long r = 0; r < A; ++r) {
      stats s, t;
      for (long j = 0; j < B; ++j) {
        s.add(static_cast<double>(x[static_cast<std::size_t>(r * B + j)]));
        t.add(d[static_cast<std::size_t>(r * B + j)]);
        all.add(d[static_cast<std::size_t>(r * B + j)]);
      }
      CHECK(same(o0[static_cast<std::size_t>(r)], static_cast<float>(s.var(0))));
      CHECK(same(o1[static_cast<std::size_t>(r)], static_cast<float>(s.mean)));
      CHECK(same(o3[static_cast<std::size_t>(r)], t.var(1)));
      CHECK(same(o5[static_cast<std::size_t>(r)], static_cast<float>(s.var(0.5))));
    }
    CHECK(same(o4[0], all.mean));
    CHECK(same(o6[0], all.var(0)));  // var_mean's var over every dimension: Welford's too
    for (long j = 0; j < B; ++j) {
      stats c;
      for (long r = 0; r < A; ++r) c.add(static_cast<double>(x[static_cast<std::size_t>(r * B + j)]));
      CHECK(same(o2[static_cast<std::size_t>(j)], static_cast<float>(c.var(1))));
    }
  }
};

template <class F>
std::string refusal(F f) {
  ctfx::diagnostic d{};
  (void)ctfx::build_checked(f, &d);
  return d.ok() ? std::string() : ctfx::to_string(d);
}
}  // namespace

TEST_CASE("var and var_mean: every plan and backend folds Welford's pass in double, rounded once") {
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    CAPTURE(ctfx::name_of(where));
    var_data r, c;
    const auto st = ctfx::runtime_plan(var_graph.get()).run(r.in(), r.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    r.check();
    const auto sc = var_plan::run(c.in(), c.outs(), ctfx::device_ctx{where});
    REQUIRE_MESSAGE(sc.ok, sc.message);
    c.check();
  }
}

TEST_CASE("var and var_mean: what PyTorch computes another way is refused, naming why") {
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("h", ctfx::f16, {4, 8}).var({1})); }).find("f32 and f64 only") != std::string::npos);
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {4, 0}).var({1})); }).find("extent 0") != std::string::npos);
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {2, 40000}).var_mean_mean({1})); }).find("32,768") != std::string::npos);
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::f64, {3, 4}).var()); }).find("two passes") != std::string::npos);
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::f64, {3, 4}).var_mean_mean()); }).empty());
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::f64, {3, 4}).var_mean_var()); }).empty());
  CHECK(refusal([](ctfx::builder& b) { b.output(b.input("x", ctfx::i32, {3, 4}).var({1})); }).find("f32 and f64 only") != std::string::npos);
}

TEST_CASE("var_mean from FX text: the tuple as a var and a mean node, printed back as one var_mean call read with [0] and [1]") {
  const auto r = ctfx::parse_fx(R"fx(def forward(self, arg0_1: "f32[2, 6][6, 1]cpu"):
    var_mean = torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 0, keepdim = True)
    getitem: "f32[2, 1][1, 1]cpu" = var_mean[0]
    getitem_1: "f32[2, 1][1, 1]cpu" = var_mean[1];  var_mean = None
    var: "f32[6][1]cpu" = torch.ops.aten.var.correction(arg0_1, [0], correction = 1.0)
    return (getitem, getitem_1, var)
)fx");
  REQUIRE_MESSAGE(r.error.ok(), ctfx::to_string(r.error));
  std::vector<float> x = {1, 2, 3, 4, 5, 6.5f, -1, 0, 1, 0, -1, 0.25f}, v(2), m(2), c(6);
  const auto st = ctfx::runtime_plan(r.graph).run({ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 6})},
                                                  {ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {2, 1}), ctfx::tensor_ref::contiguous(m.data(), ctfx::f32, {2, 1}),
                                                   ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {6})});
  REQUIRE_MESSAGE(st.ok, st.message);
  stats s;
  for (int j = 0; j < 6; ++j) s.add(x[static_cast<std::size_t>(j)]);
  CHECK(same(v[0], static_cast<float>(s.var(0))));
  CHECK(same(m[0], static_cast<float>(s.mean)));
  CHECK(c[0] == 2.0f);  // var of 1 and -1 with correction 1
  const std::string text = ctfx::to_fx(r.graph);
  CHECK(text.find("torch.ops.aten.var_mean.correction(arg0_1, [1], correction = 0.0, keepdim = True)") != std::string::npos);
  CHECK(text.find("torch.ops.aten.var.correction(arg0_1, [0], correction = 1.0)") != std::string::npos);
  // one call, read with [0] and [1] into the two nodes' own names
  CHECK_MESSAGE(text.find("        var_mean = torch.ops.aten.var_mean.correction(") != std::string::npos, text);
  CHECK_MESSAGE(text.find("var_mean_var: \"f32[2, 1][1, 1]cpu\" = var_mean[0]") != std::string::npos, text);
  CHECK_MESSAGE(text.find("var_mean_mean: \"f32[2, 1][1, 1]cpu\" = var_mean[1]") != std::string::npos, text);
  CHECK(text.find("_pair") == std::string::npos);
  const auto again = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(again.error.ok(), ctfx::to_string(again.error) << "\n" << text);
  // the same graph: as many nodes, the same listing, and the same text printed again
  CHECK(again.graph.size() == r.graph.size());
  CHECK(ctfx::to_text(again.graph) == ctfx::to_text(r.graph));
  CHECK(ctfx::to_fx(again.graph) == text);
}
