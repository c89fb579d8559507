// Kernel fusion (plan/fusion.hpp) and the fused kernels (kernels/fused.hpp, kernels/fused_static.hpp):
// which nodes are grouped, the legality rules (writer-index-map, no-write-between), the buffers a
// fused plan no longer needs (and the results computed straight into a cat's slice), and results
// bit-identical to the reference on both executors.
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <tuple>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/plan/listing.hpp>
#include "../common/stencil.hpp"

namespace {

std::int32_t find(const ctfx::ir& g, ctfx::op_kind k, int nth = 0) {
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == k && nth-- == 0) return i;
  return -1;
}

std::vector<float> ramp(std::size_t n, float scale = 0.37f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) * scale - 9.0f;
  return v;
}

// Runs the optimized plan and the reference on copies of the same inputs; every input and output
// must come out bit-identical.
template <class T>
void check_same(const ctfx::ir& g, std::vector<std::vector<T>> ins, const std::vector<ctfx::tensor_desc>& in_desc,
                const std::vector<ctfx::tensor_desc>& out_desc, ctfx::plan_options o = {}) {
  auto ref_ins = ins;
  std::vector<std::vector<T>> outs, ref_outs;
  for (const auto& d : out_desc) {
    outs.emplace_back(static_cast<std::size_t>(d.numel()));
    ref_outs.emplace_back(static_cast<std::size_t>(d.numel()));
  }
  auto refs = [&](std::vector<std::vector<T>>& v, const std::vector<ctfx::tensor_desc>& d) {
    std::vector<ctfx::tensor_ref> r;
    for (std::size_t k = 0; k < v.size(); ++k) r.emplace_back(v[k].data(), d[k]);
    return r;
  };
  ctfx::runtime_plan p(g, o);
  REQUIRE(p.error().ok());
  auto st = p.run(refs(ins, in_desc), refs(outs, out_desc));
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(g, refs(ref_ins, in_desc), refs(ref_outs, out_desc)).ok);
  for (std::size_t k = 0; k < ins.size(); ++k) CHECK(std::memcmp(ins[k].data(), ref_ins[k].data(), ins[k].size() * sizeof(T)) == 0);
  for (std::size_t k = 0; k < outs.size(); ++k) CHECK(std::memcmp(outs[k].data(), ref_outs[k].data(), outs[k].size() * sizeof(T)) == 0);
}

// A hand-built f32 group over two [R, C] leaves x and y, its first three ops given, resolved and
// paired (pair_ops); its destination is set by same_as_elementwise.
ctfx::kernels::fused_kernel two_leaf_group(std::vector<float>& x, std::vector<float>& y, long R, long C,
                                           std::initializer_list<ctfx::kernels::fused_op> ops) {
  ctfx::kernels::fused_kernel k;
  k.n_leaves = 2;
  k.leaf_dt[0] = k.leaf_dt[1] = ctfx::dtype::f32;
  k.leaf[0] = ctfx::strided{reinterpret_cast<std::byte*>(x.data()), ctfx::dtype::f32, 2, {R, C}, {C, 1}};
  k.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(y.data()), ctfx::dtype::f32, 2, {R, C}, {C, 1}};
  for (const auto& o : ops) k.ops[k.n_ops++] = o;
  for (int j = 0; j < k.n_ops; ++j) ctfx::kernels::resolve(k.ops[j], ctfx::dtype::f32, ctfx::dtype::f32);
  ctfx::kernels::pair_ops(k);
  return k;
}

// Runs the group on the host (chunk loops, pairs, direct rows) and element by element
// (fused_elem_fn, CUDA's evaluation) into a dense [R, C] destination: the same bits?
bool same_as_elementwise(ctfx::kernels::fused_kernel k, long R, long C) {
  std::vector<float> o1(static_cast<std::size_t>(R * C)), o2(o1.size());
  k.out = ctfx::strided{reinterpret_cast<std::byte*>(o1.data()), ctfx::dtype::f32, 2, {R, C}, {C, 1}};
  ctfx::kernels::run_fused(ctfx::device_ctx{}, k);
  k.out.p = reinterpret_cast<std::byte*>(o2.data());
  ctfx::parallel_for(ctfx::device_ctx{}, R * C, ctfx::kernels::fused_elem_fn{k});
  return std::memcmp(o1.data(), o2.data(), o1.size() * 4) == 0;
}

// A 5-point stencil on the interior of a grid with periodic ghost cells, written back in place.
ctfx::ir stencil(long G) {
  return ctfx::build_checked([G](ctfx::builder& b) { ctfx_test::periodic_stencil(b, b.input("grid", ctfx::f32, {G, G}), G); });
}

}  // namespace

TEST_CASE("fusion: a stencil's arithmetic is one kernel, its copy-back reads neighbours, so it is split") {
  const ctfx::ir g = ctfx::runtime_plan(stencil(34)).graph();
  const ctfx::fusion f = ctfx::plan_fusion(g);
  CHECK(f.groups_with_members() == 1);
  const std::int32_t back = find(g, ctfx::op_kind::copy_, 4);  // the interior written back
  REQUIRE(back >= 0);
  CHECK(f.root[static_cast<std::size_t>(back)] == back);  // writer-index-map: not fused
  const std::int32_t value = g.arg(back, 1);
  CHECK(f.root[static_cast<std::size_t>(value)] == value);  // the group's root, materialized
  int members = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) members += f.root[static_cast<std::size_t>(i)] == value && i != value;
  CHECK(members == 6);  // mul, add, add, add, sub, mul fused into the last add
  // Only the root gets a buffer: one [32, 32] f32 temporary, exactly the one the copy-back needs.
  const ctfx::liveness L = ctfx::compute_liveness(g, f.root.data());
  REQUIRE(L.buffers.size() == 1);
  CHECK(L.buffers[0].bytes.value() == 32 * 32 * 4);
  CHECK(ctfx::compute_liveness(g).buffers.size() == 7);
  // The listing shows the fused kernel with the nodes it came from.
  ctfx::listing_options lo;
  lo.fused = &f;
  const std::string text = ctfx::listing(g, L, ctfx::plan_reuse(L), lo);
  CHECK(text.find("# fused kernel: 7 nodes") != std::string::npos);
  CHECK(text.find("fused\n") != std::string::npos);
  check_same<float>(stencil(34), {ramp(34 * 34)}, {ctfx::tensor_desc::contiguous(ctfx::f32, {34, 34})}, {});
}

TEST_CASE("fusion: a copy_ that reads its destination at another index is split (pytorch#198270 shape: x.copy_(x.t() * 2))") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {16, 16});
    b.update(x, x.transpose(0, 1) * 2.0 + 1.0);
  });
  ctfx::runtime_plan p(g);
  const ctfx::fusion f = ctfx::plan_fusion(p.graph());
  const std::int32_t cp = find(p.graph(), ctfx::op_kind::copy_);
  REQUIRE(cp >= 0);
  CHECK(f.root[static_cast<std::size_t>(cp)] == cp);
  CHECK(p.life().buffers.size() == 1);  // the value, computed before any element of x is written
  check_same<float>(g, {ramp(256)}, {ctfx::tensor_desc::contiguous(ctfx::f32, {16, 16})}, {});
}

TEST_CASE("fusion: an in-place update that reads its own output shifted is split (openxla#49176 shape: x[1:9] = x[0:8] + 1)") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {9, 5});
    b.update(x, ctfx::slice_scatter(x, x.slice(0, 0, 8) * 3.0 + 1.0, 0, 1, 9));
  });
  ctfx::runtime_plan p(g);
  const std::int32_t cp = find(p.graph(), ctfx::op_kind::copy_);
  REQUIRE(cp >= 0);
  CHECK(ctfx::plan_fusion(p.graph()).root[static_cast<std::size_t>(cp)] == cp);
  check_same<float>(g, {ramp(45)}, {ctfx::tensor_desc::contiguous(ctfx::f32, {9, 5})}, {});
}

TEST_CASE("fusion: a copy_ that reads its destination at the writer's own index fuses, no buffer is left") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {8, 33});
    auto y = b.input("y", ctfx::f32, {33});
    b.update(x, ctfx::relu(x * 2.0 - y) + x);
  });
  ctfx::runtime_plan p(g);
  const ctfx::fusion f = ctfx::plan_fusion(p.graph());
  const std::int32_t cp = find(p.graph(), ctfx::op_kind::copy_);
  CHECK(f.groups_with_members() == 1);
  CHECK((cp < 0 || f.is_member(cp) || f.root[static_cast<std::size_t>(cp)] == cp));
  CHECK(p.life().buffers.empty());
  std::vector<float> x = ramp(8 * 33), y = ramp(33, 0.11f);
  check_same<float>(g, {x, y}, {ctfx::tensor_desc::contiguous(ctfx::f32, {8, 33}), ctfx::tensor_desc::contiguous(ctfx::f32, {33})}, {});
}

TEST_CASE("fusion: no-write-between — a value read before an in-place write is not moved after it") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {6, 4});
    auto i = b.input("i", ctfx::i64, {2});
    auto v = b.input("v", ctfx::f32, {2, 4});
    auto t = x * 2.0;                     // reads x before the update
    auto x2 = ctfx::index_put(x, {i}, v);  // reinplaced: x is written here
    b.update(x, x2);
    b.output((t + 1.0) * 3.0);
  });
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  const ctfx::ir& og = p.graph();
  const ctfx::fusion f = ctfx::plan_fusion(og);
  const std::int32_t put = find(og, ctfx::op_kind::index_put_);
  REQUIRE(put >= 0);  // the update runs in place
  const std::int32_t t = find(og, ctfx::op_kind::mul);
  REQUIRE(t >= 0);
  CHECK(t < put);
  CHECK(f.root[static_cast<std::size_t>(t)] < put);  // t's kernel runs before the write
  std::vector<float> x = ramp(24), v = {100, 101, 102, 103, 104, 105, 106, 107};
  std::vector<std::int64_t> idx = {4, 1};
  auto xr = x;
  std::vector<float> out(24), ref_out(24);
  const std::vector<ctfx::tensor_desc> d = {ctfx::tensor_desc::contiguous(ctfx::f32, {6, 4}), ctfx::tensor_desc::contiguous(ctfx::i64, {2}),
                                            ctfx::tensor_desc::contiguous(ctfx::f32, {2, 4})};
  const auto od = ctfx::tensor_desc::contiguous(ctfx::f32, {6, 4});
  REQUIRE(p.run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), d[0]), ctfx::tensor_ref(idx.data(), d[1]), ctfx::tensor_ref(v.data(), d[2])},
                std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(out.data(), od)}).ok);
  REQUIRE(ctfx::reference_run(g, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(xr.data(), d[0]), ctfx::tensor_ref(idx.data(), d[1]), ctfx::tensor_ref(v.data(), d[2])},
                              std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(ref_out.data(), od)}).ok);
  CHECK(x == xr);
  CHECK(out == ref_out);
}

TEST_CASE("fusion: f16, bf16 and i32 intermediates are rounded as the unfused graph stores them") {
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto a = b.input("a", ctfx::f16, {3, 37});
    auto c = b.input("c", ctfx::f16, {37});
    auto k = b.input("k", ctfx::i32, {3, 37});
    auto h = (a * c + a) * 1.001;                       // f16 intermediates
    auto bf = (h.to(ctfx::bf16) * 3.3).to(ctfx::f32);    // bf16 ones, converted
    auto i = (k * 65599 + 7) * 40503;                   // i32 wrap-around
    b.output(bf + i.to(ctfx::f32), (h - 0.5).to(ctfx::f16));
  });
  std::vector<ctfx::half_t> a(111), c(37);
  std::vector<std::int32_t> k(111);
  for (std::size_t j = 0; j < a.size(); ++j) a[j] = ctfx::half_t(static_cast<float>(j % 23) * 0.173f - 2.0f);
  for (std::size_t j = 0; j < c.size(); ++j) c[j] = ctfx::half_t(1.0f + static_cast<float>(j) * 0.031f);
  for (std::size_t j = 0; j < k.size(); ++j) k[j] = static_cast<std::int32_t>(j * 104729u);
  const std::vector<ctfx::tensor_desc> d = {ctfx::tensor_desc::contiguous(ctfx::f16, {3, 37}), ctfx::tensor_desc::contiguous(ctfx::f16, {37}),
                                            ctfx::tensor_desc::contiguous(ctfx::i32, {3, 37})};
  std::vector<float> o1(111), r1(111);
  std::vector<ctfx::half_t> o2(111), r2(111);
  auto in = std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(a.data(), d[0]), ctfx::tensor_ref(c.data(), d[1]), ctfx::tensor_ref(k.data(), d[2])};
  ctfx::runtime_plan p(g);
  CHECK(ctfx::plan_fusion(p.graph()).groups_with_members() >= 2);
  REQUIRE(p.run(in, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {3, 37}),
                                                 ctfx::tensor_ref::contiguous(o2.data(), ctfx::f16, {3, 37})}).ok);
  REQUIRE(ctfx::reference_run(g, in, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(r1.data(), ctfx::f32, {3, 37}),
                                                                   ctfx::tensor_ref::contiguous(r2.data(), ctfx::f16, {3, 37})}).ok);
  CHECK(std::memcmp(o1.data(), r1.data(), o1.size() * 4) == 0);
  CHECK(std::memcmp(o2.data(), r2.data(), o2.size() * 2) == 0);
}

TEST_CASE("fused kernels: the per-element kernel (CUDA's) equals the host's chunked loop on strided, broadcast operands") {
  // out[5, 300] = ((a * b^T-view) + 2) with a broadcast row and an f16 result.
  std::vector<float> a(300), bt(300 * 5);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.01f - 1.0f;
  for (std::size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<float>(i % 17) * 0.3f;
  std::vector<ctfx::half_t> o1(1500), o2(1500);
  ctfx::kernels::fused_kernel k;
  k.n_leaves = 2;
  k.leaf_dt[0] = k.leaf_dt[1] = ctfx::dtype::f32;
  k.leaf[0] = ctfx::strided{reinterpret_cast<std::byte*>(a.data()), ctfx::dtype::f32, 2, {5, 300}, {0, 1}};
  k.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(bt.data()), ctfx::dtype::f32, 2, {5, 300}, {1, 5}};
  k.ops[0] = {ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), ctfx::kernels::leaf_ref(1)};
  k.ops[1] = {ctfx::op_kind::add, ctfx::dtype::f16, 0, -1, true, 2.0};
  k.n_ops = 2;
  ctfx::kernels::resolve(k.ops[0], ctfx::dtype::f32, ctfx::dtype::f32);
  ctfx::kernels::resolve(k.ops[1], ctfx::dtype::f32, ctfx::dtype::f16);
  k.out = ctfx::strided{reinterpret_cast<std::byte*>(o1.data()), ctfx::dtype::f16, 2, {5, 300}, {300, 1}};
  ctfx::kernels::run_fused(ctfx::device_ctx{}, k);
  k.out.p = reinterpret_cast<std::byte*>(o2.data());
  ctfx::parallel_for(ctfx::device_ctx{}, 1500, ctfx::kernels::fused_elem_fn{k});
  CHECK(std::memcmp(o1.data(), o2.data(), o1.size() * 2) == 0);
  const float want = static_cast<float>(ctfx::half_t(a[7] * bt[7 * 5 + 3] + 2.0f));
  CHECK(static_cast<float>(o1[3 * 300 + 7]) == want);
}

TEST_CASE("fused kernels: pairs of f32 arithmetic run as one loop (pair_ops), bit-identical to op by op") {
  // Every pair shape: inner with an operand or a scalar, outer with an operand or a scalar, the
  // inner result on the outer's left or right; sub and div, whose operand order shows.
  const long R = 3, C = 301;  // rows longer than a chunk, not a multiple of the vector width
  ctfx::ir g = ctfx::build_checked([&](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {R, C});
    auto y = b.input("y", ctfx::f32, {R, C});
    auto z = b.input("z", ctfx::f32, {C});
    b.output((x - y) / z,           // inner operand, outer operand, left
             z / (x * 3.0f),        // inner scalar, right
             (y + 0.5f) * 1.5f,     // both scalars
             x - (y / z) + 2.0f,    // right, then an outer with a scalar reading a pair
             (x * y) - (z / x));    // a tree: both operands single-use ops
  });
  std::vector<float> x = ramp(static_cast<std::size_t>(R * C)), y = ramp(static_cast<std::size_t>(R * C), 0.11f), z = ramp(static_cast<std::size_t>(C), 0.05f);
  x[5] = std::numeric_limits<float>::quiet_NaN();
  y[6] = -std::numeric_limits<float>::quiet_NaN();  // (not where x has one: which NaN an add or mul of two
                                                    // keeps is the compiler's choice, in either path)
  y[7] = std::numeric_limits<float>::infinity();
  z[9] = 0.0f;
  z[10] = -0.0f;
  x[11] = 1e-39f;  // subnormal
  const auto dx = ctfx::tensor_desc::contiguous(ctfx::f32, {R, C}), dz = ctfx::tensor_desc::contiguous(ctfx::f32, {C});
  z.resize(static_cast<std::size_t>(R * C));  // check_same takes one element type; only C are read
  check_same<float>(g, {x, y, z}, {dx, dx, dz}, {dx, dx, dx, dx, dx});

  // The pairing itself, on a hand-built group: a = x*2; b = a - y; c = y / b (b on the right).
  auto k = two_leaf_group(x, y, R, C,
                          {{ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), -1, true, 2.0},
                           {ctfx::op_kind::sub, ctfx::dtype::f32, 0, ctfx::kernels::leaf_ref(1)},
                           {ctfx::op_kind::div, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), 1}});
  CHECK(k.ops[0].absorbed);
  CHECK(k.ops[1].inner == 0);
  CHECK(!k.ops[1].absorbed);  // it absorbed one: not absorbed itself
  CHECK(!k.ops[2].fn2);
  CHECK(same_as_elementwise(k, R, C));

  // A tree: d = (x + y) / (y - x), the second inner op first in program order.
  k = two_leaf_group(x, y, R, C,
                     {{ctfx::op_kind::sub, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), ctfx::kernels::leaf_ref(0)},
                      {ctfx::op_kind::add, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), ctfx::kernels::leaf_ref(1)},
                      {ctfx::op_kind::div, ctfx::dtype::f32, 1, 0}});
  CHECK((k.ops[0].absorbed && k.ops[1].absorbed && k.ops[2].fn3));
  CHECK(same_as_elementwise(k, R, C));
}

TEST_CASE("fused kernels: relu, neg and abs read by one f32 add/sub/mul/div run in its loop, bit-identical") {
  const long R = 3, C = 301;
  ctfx::ir g = ctfx::build_checked([&](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {R, C});
    auto y = b.input("y", ctfx::f32, {R, C});
    b.output(ctfx::relu(x) * 0.75f,     // inner unary, outer scalar
             y - (-x),                  // inner on the right
             ctfx::abs(x - y) / y,      // an absorbed pair's result is not absorbed again
             (ctfx::relu(x * 1.001f + 0.5f) * 0.75f + x) / 1.5f);  // the 8-op chain's tail
  });
  std::vector<float> x = ramp(static_cast<std::size_t>(R * C)), y = ramp(static_cast<std::size_t>(R * C), 0.11f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float specials[] = {nan, -nan, inf, -inf, 0.0f, -0.0f, 1e-45f, -1e-45f, -1e-39f, -3e38f};
  for (std::size_t s = 0; s < std::size(specials); ++s) x[3 + 5 * s] = specials[s];
  std::uint32_t neg_nan_bits = 0xff800001u;  // the NaN just past -inf's bits
  std::memcpy(&x[60], &neg_nan_bits, 4);
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {R, C});
  check_same<float>(g, {x, y}, {d, d}, {d, d, d, d});

  // The pairing on a hand-built group: a = relu(x); b = a * y; c = y - b.
  auto k = two_leaf_group(x, y, R, C,
                          {{ctfx::op_kind::relu, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0)},
                           {ctfx::op_kind::mul, ctfx::dtype::f32, 0, ctfx::kernels::leaf_ref(1)},
                           {ctfx::op_kind::sub, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), 1}});
  CHECK(k.ops[0].absorbed);
  CHECK(k.ops[1].inner == 0);
  CHECK(!k.ops[2].fn2);  // its operand absorbed one: it runs on its own
  CHECK(same_as_elementwise(k, R, C));

  // sqrt is not cheap enough to pair: it keeps its own loop.
  k = two_leaf_group(x, y, R, C,
                     {{ctfx::op_kind::sqrt, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0)},
                      {ctfx::op_kind::mul, ctfx::dtype::f32, 0, ctfx::kernels::leaf_ref(1)},
                      {ctfx::op_kind::sub, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), 1}});
  CHECK(!k.ops[0].absorbed);
  CHECK(k.ops[2].inner == 1);  // then the mul is absorbed into the sub instead
  CHECK(same_as_elementwise(k, R, C));
}

#if !defined(__clang__)  // LLVM treats the sign of an arithmetic NaN as unspecified and folds y - (-x) into y + x
namespace {
constexpr auto neg_feeds = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {40});
  auto y = b.input("y", ctfx::f32, {40});
  b.output(y - (-x), -x + y);
});
}  // namespace

TEST_CASE("fused kernels: a neg feeding a sub or an add keeps the sign of the NaN the unfused graph gives") {
  // -x is computed as its sign bit flipped: as a float negation, g++ rewrites y - (-x) in one
  // expression as y + x, whose NaN is x's (nan) where the unfused graph's is -x's (-nan).
  std::vector<float> x(40, 1.5f), y(40, 2.0f);
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = -std::numeric_limits<float>::quiet_NaN();
  for (int how = 0; how < 2; ++how) {
    std::vector<float> o1(40), o2(40), r1(40), r2(40);
    std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {40}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {40})};
    std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {40}), ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {40})};
    std::vector<ctfx::tensor_ref> ref{ctfx::tensor_ref::contiguous(r1.data(), ctfx::f32, {40}), ctfx::tensor_ref::contiguous(r2.data(), ctfx::f32, {40})};
    auto st = how == 0 ? ctfx::compiled<decltype(neg_feeds)>::run(in, out) : ctfx::runtime_plan(neg_feeds.get()).run(in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    REQUIRE(ctfx::reference_run(neg_feeds.get(), in, ref).ok);
    CHECK(std::signbit(r1[3]));
    CHECK(!std::signbit(r1[4]));
    CHECK(std::memcmp(o1.data(), r1.data(), 160) == 0);
    CHECK(std::memcmp(o2.data(), r2.data(), 160) == 0);
  }
}
#endif

TEST_CASE("fused kernels: a group of one loop over unit-stride leaves runs row by row, straight into rows far apart") {
  // RoPE's shape: rows of 64 values, each written at a run-time position of a cache whose rows lie
  // 16 KiB apart; the halves are each one tree (k1 * cos - k2 * sin) over leaves read in place.
  const long B = 4, H = 6, S = 32, D = 128;
  ctfx::ir g = ctfx::build_checked([&](ctfx::builder& b) {
    auto cache = b.input("cache", ctfx::f32, {B, H, S, D});
    auto k = b.input("k", ctfx::f32, {B, H, 1, D});
    auto cs = b.input("cos", ctfx::f32, {D / 2});
    auto sn = b.input("sin", ctfx::f32, {D / 2});
    auto pos = b.input("pos", ctfx::i64, {1});
    auto k1 = k.slice(3, 0, D / 2), k2 = k.slice(3, D / 2, D);
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, ctfx::cat({k1 * cs - k2 * sn, ctfx::relu(k2) * 0.5f}, 3)));
  });
  std::vector<float> cache = ramp(static_cast<std::size_t>(B * H * S * D), 0.01f), k = ramp(static_cast<std::size_t>(B * H * D));
  std::vector<float> cs = ramp(D / 2, 0.02f), sn = ramp(D / 2, 0.03f);
  std::int64_t pos = 17;
  auto run = [&](std::vector<float>& c, auto&& how) {
    std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {B, H, S, D}),
                                     ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {B, H, 1, D}),
                                     ctfx::tensor_ref::contiguous(cs.data(), ctfx::f32, {D / 2}),
                                     ctfx::tensor_ref::contiguous(sn.data(), ctfx::f32, {D / 2}),
                                     ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
    auto st = how(in);
    REQUIRE_MESSAGE(st.ok, st.message);
  };
  auto c1 = cache, c2 = cache;
  run(c1, [&](const std::vector<ctfx::tensor_ref>& in) { return ctfx::runtime_plan(g).run(in, {}); });
  run(c2, [&](const std::vector<ctfx::tensor_ref>& in) { return ctfx::reference_run(g, in, {}); });
  CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * 4) == 0);
  CHECK(c1[static_cast<std::size_t>(((1 * H + 2) * S + pos) * D + 3)] == k[(1 * H + 2) * D + 3] * cs[3] - k[(1 * H + 2) * D + 67] * sn[3]);

  // Which groups get the direct loop: a tree, a pair, one op over unit-stride leaves; not a leaf
  // read with a stride or broadcast along the row, and not a destination that is not dense.
  // rows_apart: the destination's rows of one b lie apart from the last b's by less than H rows, so
  // that the outer dimensions do not merge (a nest of two, walked by its odometer).
  auto group = [&](ctfx::op_kind outer, bool scalar, long leaf_stride, long out_stride, bool rows_apart = false) {
    ctfx::kernels::fused_kernel kk;
    kk.n_leaves = 2;
    kk.leaf_dt[0] = kk.leaf_dt[1] = ctfx::dtype::f32;
    kk.leaf[0] = ctfx::strided{reinterpret_cast<std::byte*>(k.data()), ctfx::dtype::f32, 3, {B, H, 64}, {H * D, D, leaf_stride}};
    kk.leaf[1] = ctfx::strided{reinterpret_cast<std::byte*>(cs.data()), ctfx::dtype::f32, 3, {B, H, 64}, {0, 0, 1}};
    kk.ops[0] = {ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(0), ctfx::kernels::leaf_ref(1)};
    kk.ops[1] = {ctfx::op_kind::mul, ctfx::dtype::f32, ctfx::kernels::leaf_ref(1), ctfx::kernels::leaf_ref(0)};
    kk.ops[2] = {outer, ctfx::dtype::f32, 0, 1};
    kk.n_ops = 3;
    if (scalar) {  // a, then a op s: a pair
      kk.ops[1] = {outer, ctfx::dtype::f32, 0, -1, true, 0.5};
      kk.n_ops = 2;
    }
    for (int j = 0; j < kk.n_ops; ++j) ctfx::kernels::resolve(kk.ops[j], ctfx::dtype::f32, ctfx::dtype::f32);
    ctfx::kernels::pair_ops(kk);
    const long b_stride = rows_apart ? H * S * D - D : H * S * D;
    kk.out = ctfx::strided{reinterpret_cast<std::byte*>(c1.data()), ctfx::dtype::f32, 3, {B, H, 64}, {b_stride, S * D, out_stride}};
    return kk;
  };
  auto arity = [](const ctfx::kernels::fused_kernel& kk) { return ctfx::kernels::direct_loop::of(kk, ctfx::kernels::make_nest(kk)).arity; };
  CHECK(arity(group(ctfx::op_kind::sub, false, 1, 1)) == 3);
  CHECK(arity(group(ctfx::op_kind::sub, true, 1, 1)) == 2);
  CHECK(arity(group(ctfx::op_kind::sub, false, 2, 1)) == 0);  // a leaf read with stride 2: gathered
  CHECK(arity(group(ctfx::op_kind::sub, false, 1, 2)) == 0);  // a destination with stride 2: scattered
  CHECK(arity(group(ctfx::op_kind::maximum, false, 1, 1)) == 0);  // three loops
  CHECK(ctfx::kernels::make_nest(group(ctfx::op_kind::sub, false, 1, 1)).rank == 1);
  CHECK(ctfx::kernels::make_nest(group(ctfx::op_kind::sub, false, 1, 1, true)).rank == 2);
  CHECK(arity(group(ctfx::op_kind::sub, false, 1, 1, true)) == 3);
  for (auto [outer, scalar, ls, os, apart] :
       {std::tuple{ctfx::op_kind::sub, false, 1L, 1L, false}, {ctfx::op_kind::div, true, 1L, 1L, false},
        {ctfx::op_kind::sub, false, 1L, 1L, true}, {ctfx::op_kind::add, true, 1L, 1L, true},
        {ctfx::op_kind::sub, false, 2L, 2L, false}, {ctfx::op_kind::maximum, false, 1L, 1L, true}}) {
    auto kk = group(outer, scalar, ls, os, apart);
    std::vector<float> want = c1;
    ctfx::kernels::run_fused(ctfx::device_ctx{}, kk);
    std::vector<float> got = c1;
    c1 = want;
    ctfx::parallel_for(ctfx::device_ctx{}, kk.out.numel(), ctfx::kernels::fused_elem_fn{kk});
    CHECK(std::memcmp(got.data(), c1.data(), c1.size() * 4) == 0);
    CHECK(std::memcmp(got.data(), want.data(), c1.size() * 4) != 0);  // it wrote something
  }
}

namespace {
constexpr long CG = 18;
constexpr auto cstencil = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("grid", ctfx::f32, {CG, CG});
  auto c = x.slice(0, 1, CG - 1).slice(1, 1, CG - 1);
  auto n = x.slice(0, 0, CG - 2).slice(1, 1, CG - 1), s = x.slice(0, 2, CG).slice(1, 1, CG - 1);
  auto w = x.slice(0, 1, CG - 1).slice(1, 0, CG - 2), e = x.slice(0, 1, CG - 1).slice(1, 2, CG);
  b.update(x, ctfx::slice_scatter(x, ctfx::slice_scatter(x.slice(0, 1, CG - 1), c + ((n + s) + (w + e) - c * 4.0f) * 0.2f, 1, 1, CG - 1), 0, 1, CG - 1));
});
using cstencil_plan = ctfx::compiled<decltype(cstencil)>;
// Grouped in the compiler: one temporary (the split copy-back's), the six fused values none.
static_assert(cstencil_plan::static_buffer_bytes() == 16 * 16 * 4);

constexpr auto axpy = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 100});
  auto y = b.input("y", ctfx::f32, {100});
  b.update(x, ctfx::relu((x * 0.5 + y) * (x - 1.0)));
});
using axpy_plan = ctfx::compiled<decltype(axpy)>;
// Nothing but inputs, outputs and in-place updates: no buffer at all.
static_assert(axpy_plan::static_buffer_bytes() == 0);
}  // namespace

TEST_CASE("compiled: fused groups run as specialized kernels, bit-identical to the reference") {
  std::vector<float> g1 = ramp(CG * CG), g2 = g1;
  const auto d = ctfx::tensor_desc::contiguous(ctfx::f32, {CG, CG});
  REQUIRE(cstencil_plan::run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(g1.data(), d)}, {}).ok);
  REQUIRE(ctfx::reference_run(cstencil.get(), std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(g2.data(), d)}, {}).ok);
  CHECK(g1 == g2);

  std::vector<float> x1 = ramp(400), x2 = x1, y = ramp(100, 0.7f);
  const auto dx = ctfx::tensor_desc::contiguous(ctfx::f32, {4, 100}), dy = ctfx::tensor_desc::contiguous(ctfx::f32, {100});
  REQUIRE(axpy_plan::run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x1.data(), dx), ctfx::tensor_ref(y.data(), dy)}, {}).ok);
  REQUIRE(ctfx::reference_run(axpy.get(), std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x2.data(), dx), ctfx::tensor_ref(y.data(), dy)}, {}).ok);
  CHECK(x1 == x2);
}

namespace {
// A ring buffer: a row written at a run-time position, the window's sum returned. Its only values
// are its inputs, its output and the in-place update.
constexpr auto ring = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {8, 40});
  auto row = b.input("row", ctfx::f32, {1, 40});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(buf, {pos}, row);
  b.update(buf, nb);
  b.output(nb.sum({0}), nb.amax({1}));
});
using ring_plan = ctfx::compiled<decltype(ring)>;
static_assert(ring_plan::report.all_inplace());
static_assert(ring_plan::static_buffer_bytes() == 0);  // both outputs computed in the caller's buffers
}  // namespace

TEST_CASE("outputs in place: computed straight into the caller's buffers, a strided buffer still gets the values") {
  std::vector<float> b1 = ramp(320), b2 = b1, row = ramp(40, 0.5f), s1(40), s2(40);
  std::vector<float> m1(8), m2(8);
  std::int64_t pos = 5;
  auto in = [&](std::vector<float>& b) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(b.data(), ctfx::f32, {8, 40}),
                                         ctfx::tensor_ref::contiguous(row.data(), ctfx::f32, {1, 40}),
                                         ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
  };
  auto d = ring_plan::bind(std::vector<ctfx::tensor_desc>{ctfx::tensor_desc::contiguous(ctfx::f32, {8, 40}),
                                                         ctfx::tensor_desc::contiguous(ctfx::f32, {1, 40}),
                                                         ctfx::tensor_desc::contiguous(ctfx::i64, {1})});
  REQUIRE(d.status.ok);
  CHECK(d.workspace_bytes <= 256);  // the run's small scratch only: no buffer for either output
  {
    const ctfx::fusion f = ring_plan::fused();
    const ctfx::liveness L = ring_plan::life();
    ctfx::listing_options lo;
    lo.fused = &f;
    const std::string text = ctfx::listing(ring_plan::graph(), L, ctfx::plan_reuse(L), lo);
    CHECK(text.find("= output0  # %sum, computed in the caller's buffer") != std::string::npos);
    CHECK(text.find("= output1  # %amax, computed in the caller's buffer") != std::string::npos);
  }
  REQUIRE(ring_plan::run(in(b1), std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(s1.data(), ctfx::f32, {40}),
                                                              ctfx::tensor_ref::contiguous(m1.data(), ctfx::f32, {8})}).ok);
  REQUIRE(ctfx::reference_run(ring.get(), in(b2), std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(s2.data(), ctfx::f32, {40}),
                                                                               ctfx::tensor_ref::contiguous(m2.data(), ctfx::f32, {8})}).ok);
  CHECK(b1 == b2);
  CHECK(s1 == s2);
  CHECK(m1 == m2);
  // A strided caller buffer (every other element of a larger one): the values land where it says.
  std::vector<float> b3 = ramp(320), wide(80, -1.0f);
  ctfx::tensor_desc sd = ctfx::tensor_desc::contiguous(ctfx::f32, {40});
  sd.stride[0] = 2;
  std::vector<float> m3(8);
  auto st = ctfx::runtime_plan(ring.get()).run(in(b3), std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(wide.data(), sd),
                                                                                     ctfx::tensor_ref::contiguous(m3.data(), ctfx::f32, {8})});
  REQUIRE_MESSAGE(st.ok, st.message);
  for (std::size_t j = 0; j < 40; ++j) {
    CHECK(wide[2 * j] == s2[j]);
    CHECK(wide[2 * j + 1] == -1.0f);
  }
  CHECK(m3 == m2);
}

TEST_CASE("fusion: a CUDA thread's element offsets in a collapsed nest equal each operand's own strided offsets") {
  // Operands over the domain [3, 4, 5, 6]: dense (the dimensions collapse into one), transposed,
  // broadcast along two dimensions, a slice of a larger buffer, and a destination with a gap.
  ctfx::kernels::fused_kernel k;
  auto layout = [](std::initializer_list<ctfx::index_t> st) {
    ctfx::strided s;
    s.rank = 4;
    const ctfx::index_t sizes[4] = {3, 4, 5, 6};
    int d = 0;
    for (auto v : st) {
      s.size[d] = sizes[d];
      s.stride[d++] = v;
    }
    return s;
  };
  k.out = layout({160, 40, 8, 1});       // rows of 6 in rows of 8
  k.n_leaves = 4;
  k.leaf[0] = layout({120, 30, 6, 1});   // dense
  k.leaf[1] = layout({1, 3, 12, 60});    // transposed (column-major)
  k.leaf[2] = layout({0, 6, 0, 1});      // broadcast over dims 0 and 2
  k.leaf[3] = layout({240, 60, 12, 2});  // every other element of a larger buffer
  for (const bool dense_only : {true, false}) {
    ctfx::kernels::fused_kernel kk = k;
    if (dense_only) {
      kk.out = k.leaf[0];
      kk.n_leaves = 1;
    }
    const ctfx::kernels::fused_nest nest = ctfx::kernels::make_nest(kk);
    if (dense_only) CHECK(nest.rank == 0);  // one run of 360
    const int ops = kk.n_leaves + 1;
    for (ctfx::index_t i = 0; i < kk.out.numel(); ++i) {
      ctfx::index_t off[ctfx::max_fused_leaves + 1];
      ctfx::kernels::element_offsets(nest, ops, i, off);
      CHECK(off[0] == kk.out.offset_of(i));
      for (int l = 0; l < kk.n_leaves; ++l) CHECK(off[l + 1] == kk.leaf[l].offset_of(i));
    }
  }
}

namespace {
// RoPE into a KV cache: the two rotated halves are each a fused group whose only reader is cat, so
// each group writes its half of cat's buffer and cat copies nothing; cat's only reader is the
// in-place put of one row at a run-time position, so cat's buffer is that row of the cache.
constexpr long KB = 2, KH = 4, KS = 6, KD = 32;
constexpr auto rope = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {KB, KH, KS, KD});
  auto k = b.input("k", ctfx::f32, {KB, KH, 1, KD});
  auto cs = b.input("cos", ctfx::f32, {KD / 2});
  auto sn = b.input("sin", ctfx::f32, {KD / 2});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto k1 = k.slice(3, 0, KD / 2), k2 = k.slice(3, KD / 2, KD);
  auto rot = ctfx::cat({k1 * cs - k2 * sn, k2 * cs + k1 * sn}, 3);
  b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, rot));
});
using rope_plan = ctfx::compiled<decltype(rope)>;
constexpr std::size_t rope_half_bytes = KB * KH * (KD / 2) * 4, rope_cat_bytes = 2 * rope_half_bytes;  // 512 B, 1024 B
// Planned in the compiler: no buffer (cat's result lives in the cache's row; the halves' were
// 2 x 512 B more, cat's 1024 B).
static_assert(rope_plan::static_buffer_bytes() == 0);

// Operands that must still be copied: `a` has a second reader (the group computing the second
// operand reads it: were `a` in its slice, that group would read cat's buffer), `h` is converted
// by cat (f16 into f32). The second operand is placed.
constexpr auto catmix = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 8});
  auto y = b.input("y", ctfx::f32, {3, 8});
  auto h = b.input("h", ctfx::f16, {3, 4});
  auto a = x * 2.0f;
  b.output(ctfx::cat({a, (a + y) * 0.5f, h + 1.0f}, 1) * 3.0f);
});
using catmix_plan = ctfx::compiled<decltype(catmix)>;

bool same(const ctfx::detail::cvec<std::int32_t>& a, const ctfx::detail::cvec<std::int32_t>& b) {
  return std::vector<std::int32_t>(a.begin(), a.end()) == std::vector<std::int32_t>(b.begin(), b.end());
}

std::int32_t count_into(const ctfx::fusion& f, std::int32_t n) {
  std::int32_t k = 0;
  for (std::int32_t i = 0; i < n; ++i) k += f.into_of(i) >= 0;
  return k;
}

std::string plan_listing(const ctfx::ir& g, const ctfx::fusion& f, const ctfx::liveness& L) {
  ctfx::listing_options lo;
  lo.fused = &f;
  return ctfx::listing(g, L, ctfx::plan_reuse(L), lo);
}
}  // namespace

TEST_CASE("cat: fused groups write straight into their slices of cat's buffer, cat copies nothing") {
  const ctfx::ir g = rope_plan::graph();
  const std::int32_t cat = find(g, ctfx::op_kind::cat), put = find(g, ctfx::op_kind::index_put_);
  REQUIRE(cat >= 0);
  REQUIRE(put >= 0);
  // The same decision in the compiler and at run time.
  const ctfx::fusion f = rope_plan::fused();
  ctfx::runtime_plan p(rope.get());
  REQUIRE(p.error().ok());
  CHECK(same(f.root, p.fused().root));
  CHECK(same(f.into, p.fused().into));
  CHECK(f.into_of(g.arg(cat, 0)) == cat);
  CHECK(f.into_of(g.arg(cat, 1)) == cat);
  CHECK(f.into_of(cat) == put);  // cat's result: the cache's row
  CHECK(count_into(f, g.size()) == 3);
  // No buffer: the halves are computed in cat's slices, cat's result is the cache's row.
  const ctfx::liveness L = rope_plan::life();
  CHECK(L.buffers.empty());
  // Without the row: one buffer, cat's, allocated before the first group writes into it.
  ctfx::fusion fc = f;
  fc.into[static_cast<std::size_t>(cat)] = -1;
  const ctfx::liveness L1 = ctfx::compute_liveness(g, fc.root.data(), fc.into.data());
  REQUIRE(L1.buffers.size() == 1);
  CHECK(L1.buffers[0].node == cat);
  CHECK(L1.buffers[0].bytes.value() == static_cast<ctfx::index_t>(rope_cat_bytes));
  CHECK(L1.buffers[0].def_step == L1.step_of[static_cast<std::size_t>(g.arg(cat, 0))]);
  CHECK(L1.buffers[0].last_step == L1.step_of[static_cast<std::size_t>(put)]);
  // Without the slices: three buffers, the halves' bytes more.
  const ctfx::liveness L0 = ctfx::compute_liveness(g, f.root.data());
  REQUIRE(L0.buffers.size() == 3);
  CHECK(L0.buffers[0].bytes.value() + L0.buffers[1].bytes.value() == static_cast<ctfx::index_t>(rope_cat_bytes));
  const std::vector<ctfx::tensor_desc> d = {
      ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, KS, KD}), ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, 1, KD}),
      ctfx::tensor_desc::contiguous(ctfx::f32, {KD / 2}), ctfx::tensor_desc::contiguous(ctfx::f32, {KD / 2}),
      ctfx::tensor_desc::contiguous(ctfx::i64, {1})};
  const std::size_t ws = p.bind(d).workspace_bytes;
  CHECK(ws < rope_half_bytes);  // the run's small scratch only (it was cat's 1024 B and more)
  CHECK(rope_plan::bind(d).workspace_bytes == ws);
  // The listing says so.
  const std::string text = plan_listing(g, f, L);
  CHECK(text.find("empty_strided") == std::string::npos);  // no allocation
  CHECK(text.find("fused, into %cat slice\n") != std::string::npos);
  CHECK(text.find("fused, into %cat slice\n", text.find("fused, into %cat slice\n") + 1) != std::string::npos);
  CHECK(text.find("into %cache row, no copy: every operand computed in its slice") != std::string::npos);
  CHECK(text.find("copies nothing: %cat computed in the row") != std::string::npos);
  CHECK(plan_listing(p.graph(), p.fused(), p.life()) == text);
  // Values: both executors bit-identical to the reference, for positions at both ends.
  std::vector<float> k = ramp(KB * KH * KD), cs(KD / 2), sn(KD / 2);
  for (long j = 0; j < KD / 2; ++j) { cs[static_cast<std::size_t>(j)] = std::cos(0.1f * static_cast<float>(j)); sn[static_cast<std::size_t>(j)] = std::sin(0.1f * static_cast<float>(j)); }
  for (std::int64_t pos : {std::int64_t{0}, std::int64_t{KS - 1}, std::int64_t{2}, std::int64_t{-2}, std::int64_t{-KS}}) {
    std::vector<float> c1 = ramp(KB * KH * KS * KD, 0.01f), c2 = c1, c3 = c1;
    auto in = [&](std::vector<float>& c) {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(c.data(), d[0]), ctfx::tensor_ref(k.data(), d[1]), ctfx::tensor_ref(cs.data(), d[2]),
                                           ctfx::tensor_ref(sn.data(), d[3]), ctfx::tensor_ref(&pos, d[4])};
    };
    REQUIRE(rope_plan::run(in(c1), {}).ok);
    REQUIRE(p.run(in(c2), {}).ok);
    REQUIRE(ctfx::reference_run(rope.get(), in(c3), {}).ok);
    CHECK(std::memcmp(c1.data(), c3.data(), c1.size() * 4) == 0);
    CHECK(std::memcmp(c2.data(), c3.data(), c2.size() * 4) == 0);
  }
  // With every access checked against the planned lifetimes.
  ctfx::plan_options lo;
  lo.check_lifetimes = true;
  std::vector<float> c1 = ramp(KB * KH * KS * KD, 0.01f), c2 = c1;
  std::int64_t pos = 3;
  auto in = [&](std::vector<float>& c) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(c.data(), d[0]), ctfx::tensor_ref(k.data(), d[1]), ctfx::tensor_ref(cs.data(), d[2]),
                                         ctfx::tensor_ref(sn.data(), d[3]), ctfx::tensor_ref(&pos, d[4])};
  };
  auto st = ctfx::runtime_plan(rope.get(), lo).run(in(c1), {});
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(rope.get(), in(c2), {}).ok);
  CHECK(c1 == c2);
}

TEST_CASE("cat: an operand read elsewhere, or converted by cat, is still copied, the others go into their slices") {
  const ctfx::ir g = catmix_plan::graph();
  const std::int32_t cat = find(g, ctfx::op_kind::cat);
  REQUIRE(cat >= 0);
  const ctfx::fusion f = catmix_plan::fused();
  ctfx::runtime_plan p(catmix.get());
  CHECK(same(f.into, p.fused().into));
  CHECK(f.into_of(g.arg(cat, 0)) == -1);   // a: read by the second operand's group as well
  CHECK(f.into_of(g.arg(cat, 1)) == cat);  // (a + y) * 0.5: cat is its only reader
  CHECK(f.into_of(g.arg(cat, 2)) == -1);   // h + 1 is f16, cat's buffer f32
  CHECK(count_into(f, g.size()) == 1);
  const std::string text = plan_listing(g, f, catmix_plan::life());
  CHECK(text.find("fused, into %cat slice\n") != std::string::npos);
  CHECK(text.find("copies 2 of 3 operands") != std::string::npos);
  // a and h + 1 keep their buffers; (a + y) * 0.5 has none.
  const ctfx::liveness L = catmix_plan::life();
  for (const auto& b : L.buffers) CHECK(b.node != g.arg(cat, 1));
  CHECK(L.buffers.size() == ctfx::compute_liveness(g, f.root.data()).buffers.size() - 1);

  std::vector<float> x = ramp(24), y = ramp(24, 0.3f), o1(3 * 20), o2(o1.size()), o3(o1.size());
  std::vector<ctfx::half_t> h(12);
  for (std::size_t j = 0; j < h.size(); ++j) h[j] = ctfx::half_t(static_cast<float>(j) * 0.37f - 2.0f);
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 8}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {3, 8}),
                                            ctfx::tensor_ref::contiguous(h.data(), ctfx::f16, {3, 4})};
  REQUIRE(catmix_plan::run(in, {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {3, 20})}).ok);
  REQUIRE(p.run(in, {ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {3, 20})}).ok);
  REQUIRE(ctfx::reference_run(catmix.get(), in, {ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {3, 20})}).ok);
  CHECK(std::memcmp(o1.data(), o3.data(), o1.size() * 4) == 0);
  CHECK(std::memcmp(o2.data(), o3.data(), o2.size() * 4) == 0);
}

TEST_CASE("cat: a returned cat gets its operands computed in the caller's buffer, symbolic offsets") {
  // Returned: the caller's output buffer is cat's, so the operands' kernels write straight into it.
  auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {b.sym("s0"), 5});
    auto y = b.input("y", ctfx::f32, {b.sym("s1"), 5});
    b.output(ctfx::cat({ctfx::relu(x * 2.0f - 1.0f), y + 0.5f, -x}, 0));
  });
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  const std::int32_t cat = find(p.graph(), ctfx::op_kind::cat);
  CHECK(count_into(p.fused(), p.graph().size()) == 3);
  CHECK(p.life().buffers.size() == 1);
  const std::string text = plan_listing(p.graph(), p.fused(), p.life());
  CHECK(text.find("= output0  # %cat, computed in the caller's buffer") != std::string::npos);
  CHECK(text.find("no copy: every operand computed in its slice") != std::string::npos);
  (void)cat;
  for (long s0 : {1L, 4L, 0L})
    for (long s1 : {3L, 0L}) {
      const auto dx = ctfx::tensor_desc::contiguous(ctfx::f32, {s0, 5}), dy = ctfx::tensor_desc::contiguous(ctfx::f32, {s1, 5});
      const auto dout = ctfx::tensor_desc::contiguous(ctfx::f32, {2 * s0 + s1, 5});
      std::vector<float> x = ramp(static_cast<std::size_t>(s0 * 5)), y = ramp(static_cast<std::size_t>(s1 * 5), 0.2f);
      y.resize(x.size() > y.size() ? x.size() : y.size());
      x.resize(y.size());
      check_same<float>(g, {x, y}, {dx, dy}, {dout});
    }
  // A strided caller buffer: computed in a temporary, then copied.
  std::vector<float> x = ramp(10), y = ramp(15, 0.2f), wide(2 * 7 * 5, -1.0f), ref(7 * 5);
  ctfx::tensor_desc sd = ctfx::tensor_desc::contiguous(ctfx::f32, {7, 5});
  sd.stride[0] = 10;
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {2, 5}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {3, 5})};
  auto st = p.run(in, {ctfx::tensor_ref(wide.data(), sd)});
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(g, in, {ctfx::tensor_ref::contiguous(ref.data(), ctfx::f32, {7, 5})}).ok);
  for (std::size_t r = 0; r < 7; ++r)
    for (std::size_t j = 0; j < 5; ++j) {
      CHECK(wide[r * 10 + j] == ref[r * 5 + j]);
      CHECK(wide[r * 10 + 5 + j] == -1.0f);
    }
}

namespace {
// Two groups computed into the halves of a cat along its last dimension (RoPE's shape, here into
// a fresh buffer), and the same along dimension 0 (each operand whole rows: not run together).
constexpr auto halves = ctfx::graph([](ctfx::builder& b) {
  auto k = b.input("k", ctfx::f32, {6, 5, 40});
  auto c = b.input("c", ctfx::f32, {20});
  auto s = b.input("s", ctfx::f32, {20});
  auto k1 = k.slice(2, 0, 20), k2 = k.slice(2, 20, 40);
  auto lo = k1 * c - k2 * s;
  auto hi = k2 * c + k1 * s;
  auto rows = ctfx::cat({k1 * 2.0f, k2 + 1.0f}, 0);
  b.output(ctfx::cat({lo, hi}, 2), rows);
});
using halves_plan = ctfx::compiled<decltype(halves)>;
}  // namespace

TEST_CASE("cat: groups computed into the slices of a cat along its last dimension run row by row together") {
  const ctfx::ir g = halves_plan::graph();
  const std::int32_t along_last = find(g, ctfx::op_kind::cat, 0) , along_rows = find(g, ctfx::op_kind::cat, 1);
  REQUIRE(along_last >= 0);
  REQUIRE(along_rows >= 0);
  const std::int32_t last = g[along_last].meta.rank == 3 && g[along_last].meta.size[2] == ctfx::sym_expr(40) ? along_last : along_rows;
  int pairs = 0, pairs_into_last = 0;
  for (std::size_t i = 0; i < halves_plan::node_count; ++i) {
    const std::int32_t next = halves_plan::row_sibling[i];
    if (next < 0) continue;
    ++pairs;
    pairs_into_last += halves_plan::fused_into[i] == last && halves_plan::fused_into[static_cast<std::size_t>(next)] == last;
  }
  CHECK(pairs == 1);
  CHECK(pairs_into_last == 1);
  {  // each half's loop nest, made in the compiler: [6, 5, 20] of a [6, 5, 40] cat collapse to 30
     // rows of 20, the rows 40 apart in the result and in k, the angles' 20 read again in every row
    constexpr std::int32_t first = [] {
      for (std::size_t i = 0; i < halves_plan::node_count; ++i)
        if (halves_plan::row_sibling[i] >= 0) return static_cast<std::int32_t>(i);
      return std::int32_t{-1};
    }();
    static_assert(first >= 0);
    constexpr ctfx::kernels::fused_nest nest = halves_plan::loop_nest<first>();
    CHECK(nest.rank == 1);
    CHECK(nest.rows == 30);
    CHECK(nest.size[0] == 30);
    CHECK(nest.inner == 20);
    CHECK(nest.istride[0] == 1);
    CHECK(nest.stride[0][0] == 40);
    for (int l = 1; l <= 4; ++l) {
      INFO("operand " << l);
      CHECK(nest.istride[l] == 1);
      CHECK((nest.stride[l][0] == 40 || nest.stride[l][0] == 0));
    }
  }
  {  // the listing names the pair: a head line before the first, the second pointing at it
    const std::string s = ctfx::listing<halves_plan>();
    INFO(s);
    const auto head = s.find("    # row siblings: steps ");
    REQUIRE(head != std::string::npos);
    const std::string first = s.substr(head + 26, s.find('-', head) - head - 26);
    CHECK(s.find("'s rows\n", head) != std::string::npos);
    CHECK(s.find(", with step " + first + "'s rows\n", head) != std::string::npos);
    CHECK(s.find("row chain") == std::string::npos);
  }
  std::vector<float> k = ramp(6 * 5 * 40), c = ramp(20, 0.1f), s = ramp(20, 0.05f);
  const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {6, 5, 40}),
                                            ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {20}),
                                            ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {20})};
  std::vector<float> want(6 * 5 * 40), want_rows(12 * 5 * 20);
  REQUIRE(ctfx::reference_run(halves.get(), in, {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {6, 5, 40}),
                                                 ctfx::tensor_ref::contiguous(want_rows.data(), ctfx::f32, {12, 5, 20})}).ok);
  for (ctfx::backend where : {ctfx::backend::host, ctfx::backend::omp}) {
    std::vector<float> got(want.size()), got_rows(want_rows.size());
    REQUIRE(halves_plan::run(in, {ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {6, 5, 40}),
                                  ctfx::tensor_ref::contiguous(got_rows.data(), ctfx::f32, {12, 5, 20})},
                             ctfx::device_ctx{where}).ok);
    CHECK(got == want);
    CHECK(got_rows == want_rows);
  }
}

TEST_CASE("fusion: a value broadcast along rows longer than a chunk (softmax's row maximum) is read right in every chunk") {
  // Rows of 2,500 elements: three chunks of the run-time fused loop (1,024 values each), the last
  // one partial, and ten chunks of a reduction's fold (256); the row maximum and sum are broadcast
  // along each row, the column vector `w` is not.
  const auto g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {5, 2500});
    auto w = b.input("w", ctfx::f32, {2500});
    auto e = ctfx::exp(x - x.amax({1}, true)) * w;
    b.output(e / e.sum({1}, true));
  });
  check_same<float>(g, {ramp(12500, 0.11f), ramp(2500, 0.01f)},
                    {ctfx::tensor_desc::contiguous(ctfx::f32, {5, 2500}), ctfx::tensor_desc::contiguous(ctfx::f32, {2500})},
                    {ctfx::tensor_desc::contiguous(ctfx::f32, {5, 2500})});
}

namespace {
// Variants of the row put: values an elementwise group (no cat), an i32 position; an index the
// graph computes; a reader of the cache between the first write into the row and the put (kept
// copies), one before it (placed); an accumulating put (kept); a later put with a computed index (kept).
template <int Variant>
constexpr auto row_graph = ctfx::graph([](ctfx::builder& b) {
  auto cache = b.input("cache", ctfx::f32, {KB, KH, KS, KD});
  auto k = b.input("k", ctfx::f32, {KB, KH, 1, KD});
  auto pos = b.input("pos", Variant == 0 ? ctfx::i32 : ctfx::i64, {1});
  if constexpr (Variant == 0) {
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k * 2.0f + 1.0f));
  } else if constexpr (Variant == 1) {
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos + 1}, ctfx::cat({k.slice(3, 0, 8) * 2.0f, k.slice(3, 8, KD) - 1.0f}, 3)));
  } else if constexpr (Variant == 2) {
    auto rot = ctfx::cat({k.slice(3, 0, 8) * 2.0f, k.slice(3, 8, KD) - 1.0f}, 3);
    auto peek = cache.slice(2, 0, 2) + 0.5f;  // reads the cache after cat's operands are computed
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, rot));
    b.output(peek);
  } else if constexpr (Variant == 3) {
    auto peek = cache.slice(2, 0, 2) + 0.5f;  // reads the cache before anything writes the row
    auto rot = ctfx::cat({k.slice(3, 0, 8) * 2.0f, k.slice(3, 8, KD) - 1.0f}, 3);
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, rot));
    b.output(peek);
  } else if constexpr (Variant == 4) {
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k * 2.0f + 1.0f, true));
  } else {
    // A later put whose index the graph computes: it is checked before the first write into a
    // caller buffer, and the pipeline computes it before the row put, not before the row's kernel.
    b.update(cache, ctfx::index_put(cache, {ctfx::none, ctfx::none, pos}, k * 2.0f + 1.0f));
    b.output(ctfx::index_put(ctfx::cat({k, k}, 2) * 0.5f, {ctfx::none, ctfx::none, pos - pos}, k + 3.0f));
  }
});

// Runs compiled<G>, runtime_plan and the reference at `pos`; returns the placed node count.
template <int Variant, class Pos>
std::int32_t check_row_variant(Pos pos, std::size_t n_out) {
  using P = ctfx::compiled<decltype(row_graph<Variant>)>;
  const ctfx::ir g = P::graph();
  ctfx::runtime_plan rp(row_graph<Variant>.get());
  REQUIRE(rp.error().ok());
  CHECK(same(P::fused().into, rp.fused().into));
  const auto pd = ctfx::tensor_desc::contiguous(sizeof(Pos) == 4 ? ctfx::i32 : ctfx::i64, {1});
  std::vector<float> k = ramp(KB * KH * KD), c1 = ramp(KB * KH * KS * KD, 0.01f), c2 = c1, c3 = c1;
  std::vector<float> o1(n_out), o2(n_out), o3(n_out);
  auto in = [&](std::vector<float>& c) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {KB, KH, KS, KD}),
                                         ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {KB, KH, 1, KD}), ctfx::tensor_ref(&pos, pd)};
  };
  auto out = [&](std::vector<float>& o) {
    std::vector<ctfx::tensor_ref> r;
    if (n_out) r.push_back(ctfx::tensor_ref::contiguous(o.data(), ctfx::f32, {KB, KH, 2, KD}));
    return r;
  };
  auto st = P::run(in(c1), out(o1));
  REQUIRE_MESSAGE(st.ok, st.message);
  st = rp.run(in(c2), out(o2));
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(row_graph<Variant>.get(), in(c3), out(o3)).ok);
  CHECK(std::memcmp(c1.data(), c3.data(), c1.size() * 4) == 0);
  CHECK(std::memcmp(c2.data(), c3.data(), c2.size() * 4) == 0);
  CHECK(o1 == o3);
  CHECK(o2 == o3);
  return count_into(P::fused(), g.size());
}
}  // namespace

TEST_CASE("put's row: an elementwise group computed in the row, an i32 position, values at several positions") {
  using P = ctfx::compiled<decltype(row_graph<0>)>;
  static_assert(P::static_buffer_bytes() == 0);
  const ctfx::ir g = P::graph();
  const std::int32_t put = find(g, ctfx::op_kind::index_put_);
  REQUIRE(put >= 0);
  CHECK(P::fused().into_of(g.arg(put, 1)) == put);
  const std::string text = plan_listing(g, P::fused(), P::life());
  CHECK(text.find("fused, into %cache row\n") != std::string::npos);
  CHECK(text.find("copies nothing: %add computed in the row") != std::string::npos);
  for (std::int32_t pos : {0, 1, int{KS} - 1, -1, -int{KS}}) CHECK(check_row_variant<0>(pos, 0) == 1);
}

TEST_CASE("put's row: kept where it is not safe (an index computed in the graph, a reader of the cache in between, accumulate)") {
  // pos + 1 is computed in the graph: checked only at the put's step, so nothing may write the
  // cache before it.
  CHECK(ctfx::compiled<decltype(row_graph<1>)>::fused().into_of(find(ctfx::compiled<decltype(row_graph<1>)>::graph(), ctfx::op_kind::cat)) == -1);
  for (std::int64_t pos : {std::int64_t{0}, std::int64_t{KS - 2}, std::int64_t{-3}}) CHECK(check_row_variant<1>(pos, 0) == 2);
  // peek reads rows 0 and 1 after the first kernel that would write the row: the row stays cat's buffer.
  {
    using P = ctfx::compiled<decltype(row_graph<2>)>;
    CHECK(P::fused().into_of(find(P::graph(), ctfx::op_kind::cat)) == -1);
    CHECK(P::static_buffer_bytes() > 0);
    for (std::int64_t pos : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4}}) CHECK(check_row_variant<2>(pos, KB * KH * 2 * KD) == 2);
  }
  // peek reads them before: the row is placed, and peek still sees the old rows.
  {
    using P = ctfx::compiled<decltype(row_graph<3>)>;
    const std::int32_t put = find(P::graph(), ctfx::op_kind::index_put_);
    CHECK(P::fused().into_of(find(P::graph(), ctfx::op_kind::cat)) == put);
    for (std::int64_t pos : {std::int64_t{0}, std::int64_t{1}, std::int64_t{4}}) CHECK(check_row_variant<3>(pos, KB * KH * 2 * KD) == 3);
  }
  // accumulate adds into the row: the values need their own buffer.
  for (std::int64_t pos : {std::int64_t{0}, std::int64_t{3}}) CHECK(check_row_variant<4>(pos, 0) == 0);
  // a later put checks an index the graph computes (found by the fuzzer: the plan was refused).
  for (std::int64_t pos : {std::int64_t{0}, std::int64_t{5}}) CHECK(check_row_variant<5>(pos, KB * KH * 2 * KD) == 0);
}

TEST_CASE("put's row: a position out of range fails before any write, the cache is untouched") {
  const std::vector<ctfx::tensor_desc> d = {
      ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, KS, KD}), ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, 1, KD}),
      ctfx::tensor_desc::contiguous(ctfx::f32, {KD / 2}), ctfx::tensor_desc::contiguous(ctfx::f32, {KD / 2}),
      ctfx::tensor_desc::contiguous(ctfx::i64, {1})};
  std::vector<float> k = ramp(KB * KH * KD), cs = ramp(KD / 2, 0.01f), sn = ramp(KD / 2, 0.02f);
  ctfx::runtime_plan p(rope.get());
  for (std::int64_t pos : {std::int64_t{KS}, std::int64_t{-KS - 1}, std::int64_t{1} << 40}) {
    const std::vector<float> c0 = ramp(KB * KH * KS * KD, 0.01f);
    std::vector<float> c1 = c0, c2 = c0;
    auto in = [&](std::vector<float>& c) {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(c.data(), d[0]), ctfx::tensor_ref(k.data(), d[1]), ctfx::tensor_ref(cs.data(), d[2]),
                                           ctfx::tensor_ref(sn.data(), d[3]), ctfx::tensor_ref(&pos, d[4])};
    };
    const auto s1 = rope_plan::run(in(c1), {});
    const auto s2 = p.run(in(c2), {});
    CHECK_FALSE(s1.ok);
    CHECK_FALSE(s2.ok);
    CHECK(s1.message.find("rule index-in-range") != std::string::npos);
    CHECK(s2.message == s1.message);
    CHECK(c1 == c0);
    CHECK(c2 == c0);
  }
}

TEST_CASE("runtime_plan without symbols: groups bound once, runs with new buffers and positions compute the reference's values") {
  // A plan without symbols binds its groups' operands and loop nests when it is made; each run sets
  // only addresses (its buffers', and the put's row at the checked position).
  ctfx::runtime_plan p(rope.get());
  REQUIRE(p.error().ok());
  const std::vector<float> cs = ramp(KD / 2, 0.01f), sn = ramp(KD / 2, 0.02f);
  int run = 0;
  for (std::int64_t pos : {std::int64_t{3}, std::int64_t{0}, std::int64_t{KS - 1}, std::int64_t{-2}}) {
    ++run;
    // Fresh buffers on every run, k with a stride of its own on its extent-1 dimension.
    std::vector<float> kbuf(KB * KH * KD * 2, 0.0f), c1 = ramp(KB * KH * KS * KD, 0.01f * static_cast<float>(run)), c2 = c1;
    for (std::size_t j = 0; j < kbuf.size(); ++j) kbuf[j] = 0.25f * static_cast<float>(j % 17) - static_cast<float>(run);
    ctfx::tensor_desc kd = ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, 1, KD});
    kd.stride[2] = 5 * KD;
    auto in = [&](std::vector<float>& c) {
      return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {KB, KH, KS, KD}), ctfx::tensor_ref(kbuf.data(), kd),
                                           ctfx::tensor_ref::contiguous(const_cast<float*>(cs.data()), ctfx::f32, {KD / 2}),
                                           ctfx::tensor_ref::contiguous(const_cast<float*>(sn.data()), ctfx::f32, {KD / 2}),
                                           ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
    };
    const auto st = p.run(in(c1), {});
    REQUIRE_MESSAGE(st.ok, st.message);
    REQUIRE(ctfx::reference_run(rope.get(), in(c2), {}).ok);
    CHECK(std::memcmp(c1.data(), c2.data(), c1.size() * 4) == 0);
  }
}

TEST_CASE("runtime_plan without symbols: an output in a dense, then a strided, caller buffer across runs of one plan") {
  ctfx::runtime_plan p(row_graph<2>.get());
  REQUIRE(p.error().ok());
  std::vector<float> k = ramp(KB * KH * KD);
  for (int layout = 0; layout < 2; ++layout)
    for (std::int64_t pos : {std::int64_t{1}, std::int64_t{KS - 2}}) {
      std::vector<float> c1 = ramp(KB * KH * KS * KD, 0.01f), c2 = c1;
      // Dense, or every (b, h) block of [2, KD] twice as far apart as dense.
      ctfx::tensor_desc od = ctfx::tensor_desc::contiguous(ctfx::f32, {KB, KH, 2, KD});
      if (layout) { od.stride[1] *= 2; od.stride[0] *= 2; }
      std::vector<float> o1(static_cast<std::size_t>(KB * KH * 2 * KD * 2), -7.0f), o2 = o1;
      auto in = [&](std::vector<float>& c) {
        return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {KB, KH, KS, KD}),
                                             ctfx::tensor_ref::contiguous(k.data(), ctfx::f32, {KB, KH, 1, KD}),
                                             ctfx::tensor_ref::contiguous(&pos, ctfx::i64, {1})};
      };
      const std::vector<ctfx::tensor_ref> out1{ctfx::tensor_ref(o1.data(), od)}, out2{ctfx::tensor_ref(o2.data(), od)};
      const auto st = p.run(in(c1), out1);
      REQUIRE_MESSAGE(st.ok, st.message);
      REQUIRE(ctfx::reference_run(row_graph<2>.get(), in(c2), out2).ok);
      CHECK(c1 == c2);
      CHECK(o1 == o2);  // the gaps of the strided buffer untouched (-7) in both
      CHECK(std::count(o1.begin(), o1.end(), -7.0f) == KB * KH * 2 * KD);  // half the buffer holds the output
    }
}
