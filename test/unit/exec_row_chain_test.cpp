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

// A rank-2 f32 view [rows, cols] of p with strides (s0, s1), in elements: what row_spans takes.
static ctfx::strided f32_rows_view(float* p, ctfx::index_t rows, ctfx::index_t cols, ctfx::index_t s0, ctfx::index_t s1) {
  ctfx::strided v;
  v.p = reinterpret_cast<std::byte*>(p);
  v.dt = ctfx::dtype::f32;
  v.rank = 2;
  v.size[0] = rows, v.size[1] = cols;
  v.stride[0] = s0, v.stride[1] = s1;
  return v;
}

TEST_CASE("row chain: an overlap is row-local only with the same base and row step, each row within it") {
  alignas(16) static float buf[4 * 8 + 8];
  const auto view = f32_rows_view;
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

namespace {

// SGD with momentum and weight decay over three parameters: each parameter's new momentum stored
// into its buffer, then the parameter from it, every kernel of one shape in one pass (a chain of
// elementwise kernels, block by block). The plan runs the momenta's kernels first, then the
// parameters' (in the order of their updates): order 0, every parameter [37, 1000], each one's
// updates together, the momentum's first; 1: the parameter's first; 2: shapes [37, 1000], [5000]
// and [3, 7, 129], the momenta's updates first, then the parameters' in reverse order (only the last
// momentum and the parameter after it have one shape); 3: every parameter [5000]; 4: [3, 7, 129].
constexpr int sgd_shape(int order, int k) { return order <= 1 ? 0 : order == 2 ? k : order - 2; }
template <int Order>
constexpr auto sgd = ctfx::graph([](ctfx::builder& b) {
  const char* names[3][3] = {{"p0", "g0", "m0"}, {"p1", "g1", "m1"}, {"p2", "g2", "m2"}};
  ctfx::tensor p[3], m[3], n[3];
  for (int k = 0; k < 3; ++k) {
    auto in = [&](const char* name) {
      const int s = sgd_shape(Order, k);
      return s == 0 ? b.input(name, ctfx::f32, {CR, CN}) : s == 1 ? b.input(name, ctfx::f32, {5000}) : b.input(name, ctfx::f32, {3, 7, 129});
    };
    p[k] = in(names[k][0]);
    auto g = in(names[k][1]);
    m[k] = in(names[k][2]);
    n[k] = m[k] * 0.9f + (g + p[k] * 1e-4f);
    if (Order != 1 && Order != 2) b.update(m[k], n[k]);
    if (Order != 2) b.update(p[k], p[k] - n[k] * 0.01f);
    if (Order == 1) b.update(m[k], n[k]);
  }
  if (Order == 2) {
    for (int k = 0; k < 3; ++k) b.update(m[k], n[k]);
    for (int k = 2; k >= 0; --k) b.update(p[k], p[k] - n[k] * 0.01f);
  }
});

std::vector<std::vector<float>> sgd_tensors(int order) {
  std::vector<std::vector<float>> t;
  const std::size_t sizes[3] = {CR * CN, 5000, 3 * 7 * 129};
  for (int k = 0; k < 9; ++k) {
    std::vector<float> v = inputs(sizes[sgd_shape(order, k / 3)] + static_cast<std::size_t>(k));
    v.erase(v.begin(), v.begin() + k);
    t.push_back(v);
  }
  t[1][3] = std::numeric_limits<float>::quiet_NaN();
  t[5][7] = -std::numeric_limits<float>::infinity();
  return t;
}

std::vector<ctfx::tensor_ref> sgd_refs(int order, std::vector<std::vector<float>>& t) {
  std::vector<ctfx::tensor_ref> r;
  for (int k = 0; k < 9; ++k) {
    float* v = t[static_cast<std::size_t>(k)].data();
    const int s = sgd_shape(order, k / 3);
    r.push_back(s == 0   ? ctfx::tensor_ref::contiguous(v, ctfx::f32, {CR, CN})
                : s == 1 ? ctfx::tensor_ref::contiguous(v, ctfx::f32, {5000})
                         : ctfx::tensor_ref::contiguous(v, ctfx::f32, {3, 7, 129}));
  }
  return r;
}

template <int Order>
void check_sgd(int want_links) {
  using plan = ctfx::compiled<decltype(sgd<Order>)>;
  INFO("order " << Order << "\n" << ctfx::listing<plan>());
  CHECK(plan::static_buffer_bytes() == 0);
  // Kernels of one shape, consecutive, chained: each a group stored into a caller's tensor.
  const ctfx::ir g = plan::graph();
  int links = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    const std::int32_t nx = plan::chains.next[static_cast<std::size_t>(i)];
    if (nx < 0) continue;
    ++links;
    CHECK(g[i].op == ctfx::op_kind::copy_);
    CHECK(g[nx].op == ctfx::op_kind::copy_);
    CHECK(g[i].meta.rank == g[nx].meta.rank);
  }
  CHECK(links == want_links);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<std::vector<float>> want = sgd_tensors(Order), got = want;
    REQUIRE(ctfx::reference_run(sgd<Order>.get(), sgd_refs(Order, want), {}).ok);
    const auto st = plan::run(sgd_refs(Order, got), {}, ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    for (std::size_t k = 0; k < 9; ++k) CHECK(same_bits(got[k], want[k]));
  }
}

// The same updates, then a step over the same rows that reads the new parameter transposed: the
// chain's run check must split it off (its rows are the parameter's columns), and one that reads
// the old parameter transposed (the planner orders it, or copies).
constexpr long SN = 96;
template <bool Old>
constexpr auto sgd_then_transposed = ctfx::graph([](ctfx::builder& b) {
  auto p = b.input("p", ctfx::f32, {SN, SN}), g = b.input("g", ctfx::f32, {SN, SN}), m = b.input("m", ctfx::f32, {SN, SN});
  auto n = m * 0.9f + g;
  auto q = p - n * 0.01f;
  b.update(m, n);
  b.update(p, q);
  b.output((Old ? p : q).transpose(0, 1) * 2.0f + n);
});

template <bool Old>
void check_transposed() {
  using plan = ctfx::compiled<decltype(sgd_then_transposed<Old>)>;
  INFO("old " << Old << "\n" << ctfx::listing<plan>());
  if (!Old) CHECK(chain_links<plan>() == 2);  // formed in the compiler, split by the run's check
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> p = inputs(SN * SN), g = inputs(SN * SN + 5), m = inputs(SN * SN + 9);
    g.erase(g.begin(), g.begin() + 5);
    m.erase(m.begin(), m.begin() + 9);
    std::vector<float> p2 = p, g2 = g, m2 = m, want(SN * SN), got(SN * SN, 7.0f);
    auto refs = [](std::vector<float>& a, std::vector<float>& b2, std::vector<float>& c) {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(a.data(), ctfx::f32, {SN, SN}),
                                           ctfx::tensor_ref::contiguous(b2.data(), ctfx::f32, {SN, SN}),
                                           ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {SN, SN})};
    };
    REQUIRE(ctfx::reference_run(sgd_then_transposed<Old>.get(), refs(p, g, m), {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {SN, SN})}).ok);
    const auto st = plan::run(refs(p2, g2, m2), {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {SN, SN})}, ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(same_bits(got, want));
    CHECK(same_bits(p2, p));
    CHECK(same_bits(m2, m));
  }
}

// Softmax over the last dimension of a rank-3 tensor; RMSNorm of a rank-3 tensor with its residual
// written back in place (the final in-place kernel in the chain).
constexpr auto softmax3 = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 6, 300});
  auto e = ctfx::exp(x - x.amax({2}, true));
  b.output(e / e.sum({2}, true));
});
using softmax3_plan = ctfx::compiled<decltype(softmax3)>;
constexpr auto rms_residual = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 5, 256});
  auto w = b.input("w", ctfx::f32, {256});
  b.update(x, x + x * ctfx::rsqrt((x * x).mean({2}, true) + 1e-6f) * w);
});
using rms_residual_plan = ctfx::compiled<decltype(rms_residual)>;

}  // namespace

TEST_CASE("row chain: SGD's updates of each parameter run in one pass, any rank and any order of updates, with the reference's bits") {
  check_sgd<0>(5);  // one chain of six kernels
  check_sgd<1>(5);
  check_sgd<2>(1);  // the last momentum and its parameter, [3, 7, 129]
  check_sgd<3>(5);  // rank 1
  check_sgd<4>(5);  // rank 3
}

TEST_CASE("row chain: a step that reads an updated parameter transposed is split off the chain") {
  check_transposed<false>();
  check_transposed<true>();
}

TEST_CASE("row chain: a block-by-block chain needs the same element step where a write overlaps") {
  alignas(16) static float buf[8 * 8];
  const auto view = f32_rows_view;
  auto local = [](std::initializer_list<std::pair<ctfx::strided, bool>> vs, bool elementwise) {
    ctfx::kernels::row_spans s;
    for (const auto& [v, w] : vs) s.add(v, w);
    return s.row_local(elementwise);
  };
  CHECK(local({{view(buf, 1, 64, 0, 1), true}, {view(buf, 1, 64, 0, 1), false}}, true));     // the same elements
  CHECK(!local({{view(buf, 1, 64, 0, 1), true}, {view(buf + 1, 1, 63, 0, 1), false}}, true));  // shifted by one
  CHECK(!local({{view(buf, 4, 8, 16, 1), true}, {view(buf, 4, 8, 16, 2), false}}, true));   // every other element of the row
  CHECK(local({{view(buf, 4, 8, 16, 1), true}, {view(buf, 4, 8, 16, 2), false}}, false));   // (whole rows: row-local)
  CHECK(!local({{view(buf, 1, 64, 0, 1), true}, {view(buf, 1, 64, 0, 0), false}}, true));    // one element read by all
  // A step whose spans fit the steps before it: the chain's run splits where they do not.
  ctfx::kernels::row_spans s;
  s.add(view(buf, 1, 32, 0, 1), false);
  s.add(view(buf + 32, 1, 32, 0, 1), true);  // step 0 writes the second half
  s.add(view(buf + 32, 1, 32, 0, 1), false);
  s.add(view(buf, 1, 32, 0, 1), true);  // step 1 reads it where written, writes the first half
  CHECK(s.fits(0, 2, 4, true));
  s.add(view(buf + 33, 1, 31, 0, 1), false);  // step 2 reads the second half shifted by one
  CHECK(!s.fits(0, 4, 5, true));
  CHECK(s.fits(4, 4, 5, true));  // alone
}

TEST_CASE("row chain: rank-3 softmax and RMSNorm with its residual written back in place run row by row") {
  CHECK(chain_links<softmax3_plan>() == 3);
  CHECK(chain_links<rms_residual_plan>() == 2);  // mean(x * x) -> rsqrt(. + eps) -> x + x * . * w into x
  std::vector<float> x = inputs(4 * 6 * 300);
  x[301] = std::numeric_limits<float>::infinity();
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6, 300})};
  std::vector<float> want(x.size());
  REQUIRE(ctfx::reference_run(softmax3.get(), in, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {4, 6, 300})}).ok);
  std::vector<float> y = inputs(3 * 5 * 256), w = inputs(256 + 3);
  w.erase(w.begin(), w.begin() + 3);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> got(want.size(), 7.0f);
    REQUIRE(softmax3_plan::run(in, {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {4, 6, 300})}, ctfx::device_ctx{where}).ok);
    CHECK(same_bits(got, want));
    std::vector<float> ref = y, mine = y, w2 = w;
    REQUIRE(ctfx::reference_run(rms_residual.get(), {ctfx::tensor_ref::contiguous(ref.data(), ctfx::f32, {3, 5, 256}),
                                                     ctfx::tensor_ref::contiguous(w2.data(), ctfx::f32, {256})}, {}).ok);
    const auto st = rms_residual_plan::run({ctfx::tensor_ref::contiguous(mine.data(), ctfx::f32, {3, 5, 256}),
                                            ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {256})}, {}, ctfx::device_ctx{where});
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(same_bits(mine, ref));
  }
}
