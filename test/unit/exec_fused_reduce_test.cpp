// Reductions fused with the elementwise group that computes their input (plan/fusion.hpp's
// is_fusible_reduction, kernels/fused_reduce.hpp): which reductions fold their input as it is
// computed, the buffer the input no longer gets, and results bit-identical to the reference on
// compiled<G>, runtime_plan, the OMP backend and the per-output kernel CUDA runs.
#include <doctest/doctest.h>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/kernels/fused_reduce.hpp>
#include <ctfx/plan/listing.hpp>

namespace {

std::int32_t find(const ctfx::ir& g, ctfx::op_kind k, int nth = 0) {
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == k && nth-- == 0) return i;
  return -1;
}

// Members fused into node r.
int members_of(const ctfx::fusion& f, std::int32_t r) {
  int m = 0;
  for (std::size_t i = 0; i < f.root.size(); ++i) m += f.root[i] == r && static_cast<std::int32_t>(i) != r;
  return m;
}

template <class T>
std::vector<T> values(std::size_t n, double scale, double shift) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>((i * 37) % 101) * scale - shift;
    if constexpr (std::is_same_v<T, ctfx::half_t>) v[i] = ctfx::half_t(static_cast<float>(x));
    else v[i] = static_cast<T>(x);
  }
  return v;
}

// A buffer of raw bytes for a tensor of any dtype.
struct buffer {
  ctfx::tensor_desc d;
  std::vector<std::byte> bytes;
  explicit buffer(ctfx::tensor_desc desc) : d(desc), bytes(static_cast<std::size_t>(desc.numel() * ctfx::size_of(desc.dt)) + 1) {}
  ctfx::tensor_ref ref() { return ctfx::tensor_ref(bytes.data(), d); }
};

// Runs `run` and the reference on copies of the inputs; outputs and inputs must be the same bytes.
template <class Run>
void check_against_reference(const ctfx::ir& g, const std::vector<buffer>& ins, const std::vector<ctfx::tensor_desc>& outs, Run&& run,
                             const char* what) {
  std::vector<buffer> a = ins, b = ins, oa, ob;
  for (const auto& d : outs) {
    oa.emplace_back(d);
    ob.emplace_back(d);
  }
  auto refs = [](std::vector<buffer>& v) {
    std::vector<ctfx::tensor_ref> r;
    for (auto& x : v) r.push_back(x.ref());
    return r;
  };
  auto st = run(refs(a), refs(oa));
  REQUIRE_MESSAGE(st.ok, what << ": " << st.message);
  REQUIRE(ctfx::reference_run(g, refs(b), refs(ob)).ok);
  for (std::size_t k = 0; k < oa.size(); ++k) CHECK_MESSAGE(oa[k].bytes == ob[k].bytes, what << ": output " << k);
  for (std::size_t k = 0; k < a.size(); ++k) CHECK_MESSAGE(a[k].bytes == b[k].bytes, what << ": input " << k);
}

// compiled<G> and runtime_plan, on the host and on the OMP backend, against the reference.
template <class Plan, class G>
void check_all(const G& graph, const std::vector<buffer>& ins, const std::vector<ctfx::tensor_desc>& outs) {
  const ctfx::ir g = graph.get();
  ctfx::runtime_plan rp(g);
  REQUIRE(rp.error().ok());
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    const ctfx::device_ctx ctx{where};
    check_against_reference(g, ins, outs, [&](auto in, auto out) { return Plan::run(in, out, ctx); }, "compiled<G>");
    check_against_reference(g, ins, outs, [&](auto in, auto out) { return rp.run(in, out, ctx); }, "runtime_plan");
  }
}

ctfx::tensor_desc dense(ctfx::dtype dt, std::initializer_list<ctfx::index_t> sizes) { return ctfx::tensor_desc::contiguous(dt, sizes); }

template <class T>
buffer filled(ctfx::tensor_desc d, const std::vector<T>& v) {
  buffer b(d);
  std::memcpy(b.bytes.data(), v.data(), v.size() * sizeof(T));
  return b;
}

// Row sums of squares minus a broadcast row, a row maximum kept as [R, 1], a mean of everything
// (38,400 values: longer than the fold's tile), and a sum over dimension 0 (not the last: unfused).
constexpr long RR = 128, RC = 300;  // 38,400 values: enough for the OMP backend to split the rows
constexpr auto rows_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {RR, RC});
  auto y = b.input("y", ctfx::f32, {RC});
  auto row_sum = (x * x - y).sum({1});
  auto row_max = ctfx::exp(x * 0.25 + 1.0).amax({1}, true);
  auto mean = (x * y).mean({0, 1});
  auto col_sum = (x + 1.0).sum({0});
  b.output(row_sum, row_max, mean, col_sum);
});
using rows_plan = ctfx::compiled<decltype(rows_graph)>;
// Every output computed in the caller's buffer, and the fused values get no buffer; the unfused
// column sum keeps one [RR, RC] f32 buffer for x + 1.
static_assert(rows_plan::static_buffer_bytes() == RR * RC * 4);

// Strided and broadcast operands: a transposed input, a column vector, rank 3 reduced over its
// last two dimensions (rows of the loop shorter than an output's values), f16 and integer sums.
constexpr auto mixed_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {40, 24});
  auto c = b.input("c", ctfx::f32, {24, 1});
  auto z = b.input("z", ctfx::f32, {6, 5, 7});
  auto w = b.input("w", ctfx::f32, {5, 1});
  auto h = b.input("h", ctfx::f16, {9, 33});
  auto k = b.input("k", ctfx::i32, {9, 33});
  auto s0 = (x.transpose(0, 1) * 2.0 - c).sum({1});
  auto s1 = (z * w).sum({1, 2}, true);
  auto m = (z - w).amax({-1, -2});
  auto s2 = (h * h).sum({1});
  auto s3 = ctfx::gt(x, 0.5).sum({1});
  auto s4 = (k * 3 + 1).sum({1});
  b.output(s0, s1, m, s2, s3, s4);
});
using mixed_plan = ctfx::compiled<decltype(mixed_graph)>;

}  // namespace

TEST_CASE("fused reductions: a sum, amax or mean over the last dimensions takes its input's group, the input gets no buffer") {
  const ctfx::ir g = rows_plan::graph();
  const ctfx::fusion f = ctfx::plan_fusion(g);
  const std::int32_t row_sum = find(g, ctfx::op_kind::sum, 0), row_max = find(g, ctfx::op_kind::amax);
  const std::int32_t mean = find(g, ctfx::op_kind::mean), col_sum = find(g, ctfx::op_kind::sum, 1);
  REQUIRE(row_sum >= 0);
  REQUIRE(col_sum >= 0);
  CHECK(members_of(f, row_sum) == 2);  // mul, sub
  CHECK(members_of(f, row_max) == 3);  // mul, add, exp
  CHECK(members_of(f, mean) == 1);     // mul
  CHECK(members_of(f, col_sum) == 0);  // over dimension 0: x + 1 is materialized
  CHECK(f.root[static_cast<std::size_t>(g.arg(col_sum, 0))] == g.arg(col_sum, 0));
  // The compiler's grouping is the run-time one.
  const ctfx::fusion rf = ctfx::runtime_plan(rows_graph.get()).fused();
  const ctfx::fusion cf = rows_plan::fused();
  CHECK(std::vector<std::int32_t>(cf.root.begin(), cf.root.end()) == std::vector<std::int32_t>(rf.root.begin(), rf.root.end()));
  // The four outputs' buffers and one more, the column sum's input: no [RR, RC] value of the
  // fused groups gets a buffer (unfused, seven do).
  const ctfx::liveness L = ctfx::compute_liveness(g, f.root.data());
  auto full_size = [](const ctfx::liveness& l) {
    int n = 0;
    for (const auto& b : l.buffers) n += b.bytes.value() == RR * RC * 4;
    return n;
  };
  CHECK(L.buffers.size() == 5);
  CHECK(full_size(L) == 1);
  CHECK(full_size(ctfx::compute_liveness(g)) == 7);
  ctfx::listing_options lo;
  lo.fused = &f;
  const std::string text = ctfx::listing(g, L, ctfx::plan_reuse(L), lo);
  CHECK(text.find("# fused kernel: 3 nodes") != std::string::npos);
  CHECK(text.find("# fused kernel: 4 nodes") != std::string::npos);
}

TEST_CASE("fused reductions: not fused where the values are read twice, or the reduced dimensions are not the last") {
  const auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {4, 6, 8});
    auto e = ctfx::exp(x);
    auto s0 = e.sum({2});                 // e is an output too
    auto s1 = (x * 2.0).sum({0, 2});      // dims 0 and 2: not a trailing run
    auto m = (x * 3.0).amax({1});         // the middle dimension
    auto s2 = (x - 1.0).sum({1, 2}, true);  // trailing: fused
    auto s3 = (x * x).sum({});            // every dimension: fused
    b.output(s0, e, s1, m, s2, s3);
  });
  ctfx::runtime_plan p(g);
  const ctfx::ir& o = p.graph();
  const ctfx::fusion& f = p.fused();
  CHECK(members_of(f, find(o, ctfx::op_kind::sum, 0)) == 0);
  CHECK(members_of(f, find(o, ctfx::op_kind::sum, 1)) == 0);
  CHECK(members_of(f, find(o, ctfx::op_kind::amax)) == 0);
  CHECK(members_of(f, find(o, ctfx::op_kind::sum, 2)) == 1);
  CHECK(members_of(f, find(o, ctfx::op_kind::sum, 3)) == 1);
  std::vector<buffer> in{filled(dense(ctfx::f32, {4, 6, 8}), values<float>(192, 0.03, 1.2))};
  check_against_reference(g, in,
                          {dense(ctfx::f32, {4, 6}), dense(ctfx::f32, {4, 6, 8}), dense(ctfx::f32, {6}), dense(ctfx::f32, {4, 8}),
                           dense(ctfx::f32, {4, 1, 1}), dense(ctfx::f32, {})},
                          [&](auto in_, auto out) { return p.run(in_, out); }, "runtime_plan");
}

TEST_CASE("fused reductions: bit-identical to the reference, compiled<G> and runtime_plan, host and OMP") {
  std::vector<buffer> in{filled(dense(ctfx::f32, {RR, RC}), values<float>(RR * RC, 0.037, 1.5)),
                         filled(dense(ctfx::f32, {RC}), values<float>(RC, 0.1, 0.0))};
  check_all<rows_plan>(rows_graph, in,
                       {dense(ctfx::f32, {RR}), dense(ctfx::f32, {RR, 1}), dense(ctfx::f32, {}), dense(ctfx::f32, {RC})});
  // Strided, broadcast, rank 3, f16, bool and i32 sums into int64.
  std::vector<buffer> m{filled(dense(ctfx::f32, {40, 24}), values<float>(960, 0.011, 0.2)),
                        filled(dense(ctfx::f32, {24, 1}), values<float>(24, 0.5, 3.0)),
                        filled(dense(ctfx::f32, {6, 5, 7}), values<float>(210, 0.07, 2.0)),
                        filled(dense(ctfx::f32, {5, 1}), values<float>(5, 1.5, 0.5)),
                        filled(dense(ctfx::f16, {9, 33}), values<ctfx::half_t>(297, 0.013, 0.6)),
                        filled(dense(ctfx::i32, {9, 33}), values<std::int32_t>(297, 1000003.0, 50000000.0))};
  check_all<mixed_plan>(mixed_graph, m,
                        {dense(ctfx::f32, {24}), dense(ctfx::f32, {6, 1, 1}), dense(ctfx::f32, {6}), dense(ctfx::f16, {9}),
                         dense(ctfx::i64, {40}), dense(ctfx::i64, {9})});
  const ctfx::fusion f = mixed_plan::fused();
  const ctfx::ir g = mixed_plan::graph();
  for (int s = 0; s < 5; ++s) CHECK(members_of(f, find(g, ctfx::op_kind::sum, s)) >= 1);
  CHECK(members_of(f, find(g, ctfx::op_kind::amax)) == 1);
}

TEST_CASE("fused reductions: amax keeps the fold's NaN and signed-zero answers, empty reductions") {
  // Rows: a NaN in the middle, all -0 and +0 mixed, all negative, longer than a chunk.
  std::vector<float> x(4 * 700, -3.0f);
  x[120] = std::numeric_limits<float>::quiet_NaN();
  for (int j = 0; j < 700; ++j) x[700 + j] = j % 3 == 0 ? -0.0f : 0.0f;
  for (int j = 0; j < 700; ++j) x[1400 + j] = -1.0f - static_cast<float>(j % 11);
  for (int j = 0; j < 700; ++j) x[2100 + j] = static_cast<float>((j * 13) % 97);
  const auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto v = b.input("x", ctfx::f32, {4, 700});
    auto m0 = (v * 2.0).amax({1});
    auto m1 = (v * 0.5).amax({1}, true);
    auto s = (v * -1.0).sum({1});
    b.output(m0, m1, s);
  });
  ctfx::runtime_plan p(g);
  CHECK(p.fused().groups_with_members() == 3);  // one member each: one op and its reduction
  CHECK(members_of(p.fused(), find(p.graph(), ctfx::op_kind::amax, 1)) == 1);
  std::vector<buffer> in{filled(dense(ctfx::f32, {4, 700}), x)};
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp})
    check_against_reference(g, in, {dense(ctfx::f32, {4}), dense(ctfx::f32, {4, 1}), dense(ctfx::f32, {4})},
                            [&](auto in_, auto out) { return p.run(in_, out, ctfx::device_ctx{where}); }, "runtime_plan");
  // Reduced extent 0: sums are 0 and means NaN, as unfused.
  const auto e = ctfx::build_checked([](ctfx::builder& b) {
    auto v = b.input("x", ctfx::f32, {3, 0});
    auto s = (v * 2.0).sum({1});
    auto m = (v * 2.0).mean({1});
    b.output(s, m);
  });
  ctfx::runtime_plan pe(e);
  std::vector<float> s(3, 7.0f), mn(3, 7.0f);
  float dummy = 0;
  REQUIRE(pe.run({ctfx::tensor_ref::contiguous(&dummy, ctfx::f32, {3, 0})},
                 {ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {3}), ctfx::tensor_ref::contiguous(mn.data(), ctfx::f32, {3})})
              .ok);
  CHECK(s == std::vector<float>(3, 0.0f));
  for (float v : mn) CHECK(std::isnan(v));
}

TEST_CASE("fused reductions: the per-output and per-warp kernels (CUDA's) fold the same bits as the host's tile") {
  // out[6] = sum over the last 250 values of x * b (b broadcast along rows, x transposed), f32.
  std::vector<float> xt(250 * 6), bv(250);
  for (std::size_t i = 0; i < xt.size(); ++i) xt[i] = static_cast<float>((i * 29) % 83) * 0.021f - 0.7f;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 13) * 0.17f;
  ctfx::kernels::fused_kernel k;
  k.n_leaves = 2;
  k.leaf_dt[0] = k.leaf_dt[1] = ctfx::dtype::f32;
  k.leaf[0] = ctfx::strided{reinterpret_cast<std::byte*>(xt.data()), ctfx::dtype::f32, 2, {6, 250}, {1, 6}};
  k.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(bv.data()), ctfx::dtype::f32, 2, {6, 250}, {0, 1}};
  k.ops[0] = {ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), ctfx::kernels::leaf_ref(1)};
  k.n_ops = 1;
  ctfx::kernels::resolve(k.ops[0], ctfx::dtype::f32, ctfx::dtype::f32);
  k.out = ctfx::strided{nullptr, ctfx::dtype::f32, 2, {6, 250}, {250, 1}};
  for (bool is_max : {false, true}) {
    std::vector<float> host(6), per_output(6), want(6);
    const ctfx::strided out{reinterpret_cast<std::byte*>(host.data()), ctfx::dtype::f32, 1, {6}, {1}};
    ctfx::kernels::run_fused_reduce(ctfx::device_ctx{}, k, out, {is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum, 0.0});
    ctfx::strided out2 = out;
    out2.p = reinterpret_cast<std::byte*>(per_output.data());
    const ctfx::kernels::fused_fold_fn<ctfx::dtype::f32, ctfx::dtype::f32> fn{ctfx::kernels::fused_elem_fn{k}, out2, {is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum, 0.0}, 250};
    for (ctfx::index_t o = 0; o < 6; ++o) fn(o);
    std::vector<float> by_warps(6);  // a warp per output (250 values each), its lanes one after another
    ctfx::strided out3 = out;
    out3.p = reinterpret_cast<std::byte*>(by_warps.data());
    ctfx::kernels::fold_by_warps<float>(ctfx::device_ctx{}, ctfx::kernels::fused_fold_fn<ctfx::dtype::f32, ctfx::dtype::f32>{fn.group, out3, fn.spec, 250},
                                        6, 250, is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum);
    for (int o = 0; o < 6; ++o) {  // amax in row-major order; a sum in 32 lanes, then the lanes in order
      float a = xt[static_cast<std::size_t>(o)] * bv[0], lane[32] = {};
      for (int r = 0; r < 250; ++r) {
        const float v = xt[static_cast<std::size_t>(r * 6 + o)] * bv[static_cast<std::size_t>(r)];
        a = v > a ? v : a;
        lane[r % 32] += v;
      }
      if (!is_max) {
        a = 0.0f;
        for (float l : lane) a += l;
      }
      want[static_cast<std::size_t>(o)] = a;
    }
    CHECK(host == want);
    CHECK(per_output == want);
    CHECK(by_warps == want);
  }
}

TEST_CASE("fused reductions: CUDA's folds find each output's values from where it starts (several outputs in a row, an output over several rows)") {
  // x * y over dense [6, 250] (one collapsed row of 1,500 values), folded into 6 outputs (each a
  // run inside that row) and into 1 (all of it); and x read transposed (rows of 250) folded into 1.
  std::vector<float> x(1500), y(1500), xt(1500);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>((i * 29) % 83) * 0.021f - 0.7f;
    y[i] = static_cast<float>(i % 13) * 0.17f;
    xt[i] = static_cast<float>((i * 31) % 71) * 0.03f - 1.0f;
  }
  for (const bool transposed : {false, true}) {
    ctfx::kernels::fused_kernel k;
    k.n_leaves = 2;
    k.leaf_dt[0] = k.leaf_dt[1] = ctfx::dtype::f32;
    k.leaf[0] = transposed ? ctfx::strided{reinterpret_cast<std::byte*>(xt.data()), ctfx::dtype::f32, 2, {6, 250}, {1, 6}}
                           : ctfx::strided{reinterpret_cast<std::byte*>(x.data()), ctfx::dtype::f32, 2, {6, 250}, {250, 1}};
    k.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(y.data()), ctfx::dtype::f32, 2, {6, 250}, {250, 1}};
    k.ops[0] = {ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), ctfx::kernels::leaf_ref(1)};
    k.n_ops = 1;
    ctfx::kernels::resolve(k.ops[0], ctfx::dtype::f32, ctfx::dtype::f32);
    k.out = ctfx::strided{nullptr, ctfx::dtype::f32, 2, {6, 250}, {250, 1}};
    const ctfx::kernels::fused_nest nest = ctfx::kernels::make_nest(k);
    CHECK(nest.inner == (transposed ? 250 : 1500));
    for (const ctfx::index_t outputs : {ctfx::index_t{6}, ctfx::index_t{1}}) {
      const ctfx::index_t n = 1500 / outputs;
      CAPTURE(transposed);
      CAPTURE(outputs);
      const ctfx::kernels::fused_elem_fn group{k};
      CHECK(ctfx::kernels::fold_start_of(group.nest, 3, 0, n).in_row == (n <= nest.inner));
      for (bool is_max : {false, true}) {
        std::vector<float> host(static_cast<std::size_t>(outputs)), warps(host.size(), -1.0f), threads(host.size(), -1.0f);
        const ctfx::strided out{reinterpret_cast<std::byte*>(host.data()), ctfx::dtype::f32, 1, {outputs}, {1}};
        ctfx::kernels::run_fused_reduce(ctfx::device_ctx{}, k, out, {is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum, 0.0});
        ctfx::strided out_w = out, out_t = out;
        out_w.p = reinterpret_cast<std::byte*>(warps.data());
        out_t.p = reinterpret_cast<std::byte*>(threads.data());
        ctfx::kernels::fold_by_warps<float>(ctfx::device_ctx{}, ctfx::kernels::fused_fold_fn<ctfx::dtype::f32, ctfx::dtype::f32>{group, out_w, {is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum, 0.0}, n},
                                            outputs, n, is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum);
        const ctfx::kernels::fused_fold_fn<ctfx::dtype::f32, ctfx::dtype::f32> per_output{group, out_t, {is_max ? ctfx::kernels::fold_op::max : ctfx::kernels::fold_op::sum, 0.0}, n};
        for (ctfx::index_t o = 0; o < outputs; ++o) per_output(o);
        CHECK(std::memcmp(warps.data(), host.data(), host.size() * 4) == 0);
        CHECK(std::memcmp(threads.data(), host.data(), host.size() * 4) == 0);
      }
    }
  }
}
