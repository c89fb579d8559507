// Row chains (plan/row_chain.hpp, kernels/row_chain.hpp): which consecutive steps compiled<G> runs
// row by row, the run-time check that every overlap is row-local, and results bit-identical to the
// reference run on the host and OMP backends, including a chain whose layouts are not row-local
// (it must run step by step) and softmax over special values.
#include <doctest/doctest.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/row_chain.hpp>
#include <ctfx/plan/listing.hpp>

namespace {

constexpr long CR = 37, CN = 1000;
constexpr auto softmax = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CR, CN});
  auto e = ctfx::exp(x - x.amax({1}, true));
  b.output(e / e.sum({1}, true));
});
using softmax_plan = ctfx::compiled<decltype(softmax)>;

// Row r of the result reads column r of e: a chain by its steps and extents, but not row-local.
constexpr long TN = 64;
constexpr auto transposed = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {TN, TN});
  auto e = ctfx::exp(x - x.amax({1}, true));
  b.output(e.transpose(0, 1) / e.sum({1}, true));
});
using transposed_plan = ctfx::compiled<decltype(transposed)>;

// A mean and what reads it, then a sum of squares fused into its reduction (not a chain step).
constexpr auto centered = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f64, {9, 130});
  auto c = x - x.mean({1}, true);
  b.output(c * 2.0, (c * c).sum({1}));
});
using centered_plan = ctfx::compiled<decltype(centered)>;

// RMSNorm: the mean of squares folds its fused values; rsqrt(mean + eps), a value per row; the
// scaling reads it per row. And a row's absolute maximum (fused) dividing it.
constexpr auto rmsnorm = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CR, CN});
  auto w = b.input("w", ctfx::f32, {CN});
  b.output(x * ctfx::rsqrt((x * x).mean({1}, true) + 1e-6f) * w, x / ctfx::abs(x).amax({1}, true));
});
using rmsnorm_plan = ctfx::compiled<decltype(rmsnorm)>;

template <class Plan>
int chain_links() {
  int n = 0;
  for (std::size_t i = 0; i < Plan::node_count; ++i) n += Plan::chains.next[i] >= 0;
  return n;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

std::vector<float> inputs(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.21f - 9.0f;
  return x;
}

}  // namespace

TEST_CASE("row chain: softmax's four steps run row by row, with the reference's bits") {
  CHECK(chain_links<softmax_plan>() == 3);  // amax -> exp(x - max) -> sum -> div
  std::vector<float> x = inputs(CR * CN);
  const float inf = std::numeric_limits<float>::infinity();
  x[5] = std::numeric_limits<float>::quiet_NaN();  // row 0: all NaN
  x[CN + 3] = inf;                                 // row 1: its maximum inf, inf - inf NaN
  x[2 * CN + 7] = -inf;
  x[3 * CN + 1] = -0.0f;
  for (long j = 0; j < CN; ++j) x[static_cast<std::size_t>(4 * CN + j)] = -0.0f;  // row 4: all -0
  for (long j = 0; j < CN; ++j) x[static_cast<std::size_t>(5 * CN + j)] = 88.0f + static_cast<float>(j % 3);
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {CR, CN})};
  std::vector<float> want(CR * CN);
  REQUIRE(ctfx::reference_run(softmax.get(), in, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {CR, CN})}).ok);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> got(want.size(), 7.0f);
    REQUIRE(softmax_plan::run(in, {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {CR, CN})}, ctfx::device_ctx{where}).ok);
    CHECK(same_bits(got, want));
  }
  CHECK(std::isnan(want[0]));
  CHECK(want[6 * CN] > 0.0f);
}

TEST_CASE("row chain: the listing shows the chain's first step and the steps it computes") {
  const std::string s = ctfx::listing<softmax_plan>();
  INFO(s);
  const auto head = s.find("    # row chain: steps 0-3 run row by row");
  REQUIRE(head != std::string::npos);
  CHECK(s.find("amax", head) < s.find("# step 0\n", head));  // the head line right before the amax's step
  for (const char* follower : {"# step 1, fused, in the row chain of step 0\n", "# step 2, in the row chain of step 0\n",
                               "# step 3, in the row chain of step 0\n"})
    CHECK(s.find(follower) != std::string::npos);
  CHECK(s.find("row chain", s.find('\n', s.find("# step 3"))) == std::string::npos);  // nothing after the chain
  // Without the chains (the unchained plan of the run-time program): no such line.
  const std::string plain = ctfx::listing(softmax_plan::graph(), softmax_plan::life(), ctfx::plan_reuse(softmax_plan::life()));
  CHECK(plain.find("row chain") == std::string::npos);
}

TEST_CASE("row chain: a step that reads another row of what the chain writes runs step by step") {
  CHECK(chain_links<transposed_plan>() == 3);  // formed in the compiler; refused by the run's check
  std::vector<float> x = inputs(TN * TN);
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {TN, TN})};
  std::vector<float> want(TN * TN), got(TN * TN);
  REQUIRE(ctfx::reference_run(transposed.get(), in, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {TN, TN})}).ok);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    REQUIRE(transposed_plan::run(in, {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {TN, TN})}, ctfx::device_ctx{where}).ok);
    CHECK(same_bits(got, want));
  }
}

TEST_CASE("row chain: a mean, its readers, and a sum of values fused into it chain") {
  // mean -> x - mean -> c * 2 -> the sum with c * c fused into it (computed per row, never stored)
  CHECK(chain_links<centered_plan>() == 3);
  const ctfx::ir g = centered_plan::graph();
  std::int32_t mean = -1, sub = -1, sum = -1;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    if (g[i].op == ctfx::op_kind::mean) mean = i;
    if (g[i].op == ctfx::op_kind::sub) sub = i;
    if (g[i].op == ctfx::op_kind::sum) sum = i;
  }
  REQUIRE((mean >= 0 && sub >= 0 && sum >= 0));
  CHECK(centered_plan::chains.next[static_cast<std::size_t>(mean)] == sub);
  const std::int32_t after = centered_plan::chains.next[static_cast<std::size_t>(sub)];
  REQUIRE(after >= 0);
  CHECK(g[after].op == ctfx::op_kind::mul);
  CHECK(centered_plan::fused_members[static_cast<std::size_t>(sum)] == 1);
  CHECK(centered_plan::chains.next[static_cast<std::size_t>(after)] == sum);
  CHECK(centered_plan::chains.next[static_cast<std::size_t>(sum)] == -1);
  std::vector<double> x(9 * 130);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 53) % 97) * 0.37 - 11.0;
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f64, {9, 130})};
  std::vector<double> want_c(9 * 130), want_s(9), got_c(9 * 130), got_s(9);
  REQUIRE(ctfx::reference_run(centered.get(), in,
                              {ctfx::tensor_ref::contiguous(want_c.data(), ctfx::f64, {9, 130}),
                               ctfx::tensor_ref::contiguous(want_s.data(), ctfx::f64, {9})}).ok);
  REQUIRE(centered_plan::run(in, {ctfx::tensor_ref::contiguous(got_c.data(), ctfx::f64, {9, 130}),
                                  ctfx::tensor_ref::contiguous(got_s.data(), ctfx::f64, {9})}).ok);
  CHECK(same_bits(got_c, want_c));
  CHECK(same_bits(got_s, want_s));
}

TEST_CASE("row chain: an overlap is row-local only with the same base and row step, each row within it") {
  alignas(16) static float buf[4 * 8 + 8];
  auto view = [](float* p, ctfx::index_t rows, ctfx::index_t cols, ctfx::index_t s0, ctfx::index_t s1) {
    ctfx::strided v;
    v.p = reinterpret_cast<std::byte*>(p);
    v.dt = ctfx::dtype::f32;
    v.rank = 2;
    v.size[0] = rows, v.size[1] = cols;
    v.stride[0] = s0, v.stride[1] = s1;
    return v;
  };
  auto local = [](std::initializer_list<std::pair<ctfx::strided, bool>> vs) {
    ctfx::kernels::row_spans s;
    for (const auto& [v, w] : vs) s.add(v, w);
    return s.row_local();
  };
  CHECK(local({{view(buf, 4, 8, 8, 1), true}, {view(buf, 4, 8, 8, 1), false}}));         // the same rows
  CHECK(local({{view(buf, 4, 1, 8, 1), true}, {view(buf, 4, 8, 8, 0), false}}));         // a row value, broadcast
  CHECK(!local({{view(buf, 4, 8, 8, 1), true}, {view(buf, 4, 4, 1, 8), false}}));        // transposed
  CHECK(!local({{view(buf, 4, 8, 8, 1), true}, {view(buf + 1, 4, 8, 8, 1), false}}));    // shifted by one
  CHECK(!local({{view(buf, 4, 8, 8, 1), true}, {view(buf, 1, 8, 0, 1), false}}));        // one row read by all
  CHECK(local({{view(buf, 4, 8, 8, 1), false}, {view(buf + 1, 4, 8, 8, 1), false}}));    // reads only
  CHECK(local({{view(buf, 2, 8, 8, 1), true}, {view(buf + 16, 2, 8, 8, 1), false}}));    // disjoint
}

TEST_CASE("row chain: RMSNorm's fused mean of squares, its value per row and its scaling run row by row") {
  CHECK(chain_links<rmsnorm_plan>() == 4);  // mean(x * x) -> rsqrt(. + eps) -> x * . * w -> amax(|x|) -> x / .
  const ctfx::ir g = rmsnorm_plan::graph();
  int fused_folds = 0;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (ctfx::is_reduction(g[i].op) && rmsnorm_plan::fused_members[static_cast<std::size_t>(i)] > 0)
      fused_folds += rmsnorm_plan::chains.next[static_cast<std::size_t>(i)] >= 0 || rmsnorm_plan::chains.follows[static_cast<std::size_t>(i)];
  CHECK(fused_folds == 2);
  std::vector<float> x = inputs(CR * CN), w = inputs(CN);
  x[7] = std::numeric_limits<float>::quiet_NaN();     // row 0: NaN
  x[CN + 9] = -std::numeric_limits<float>::infinity();  // row 1: -inf
  for (long j = 0; j < CN; ++j) x[static_cast<std::size_t>(2 * CN + j)] = 0.0f;  // row 2: zeros (0 / 0)
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {CR, CN}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {CN})};
  std::vector<float> want(CR * CN), want_m(CR * CN);
  REQUIRE(ctfx::reference_run(rmsnorm.get(), in, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {CR, CN}),
                                                  ctfx::tensor_ref::contiguous(want_m.data(), ctfx::f32, {CR, CN})}).ok);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> got(want.size(), 7.0f), got_m(want.size(), 7.0f);
    REQUIRE(rmsnorm_plan::run(in, {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {CR, CN}),
                                   ctfx::tensor_ref::contiguous(got_m.data(), ctfx::f32, {CR, CN})},
                              ctfx::device_ctx{where}).ok);
    CHECK(same_bits(got, want));
    CHECK(same_bits(got_m, want_m));
  }
  CHECK(std::isnan(want[0]));
}
