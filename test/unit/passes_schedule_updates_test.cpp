// Write-backs scheduled where their value is computed (passes/schedule_updates.hpp) and fusion's
// no-write-between by storage (plan/fusion.hpp): an optimizer step with several updates runs with
// no buffer of a parameter's size, whatever the order of its `update` calls, bit for bit as the
// functional program; each case where the move is illegal keeps the program as it was.
#include <doctest/doctest.h>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

std::vector<float> ramp(std::size_t n, float scale, float shift) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) * scale + shift;
  return v;
}

std::int32_t count_op(const ctfx::ir& g, ctfx::op_kind k) {
  std::int32_t n = 0;
  for (std::int32_t i = 0; i < g.size(); ++i) n += g[i].op == k;
  return n;
}

// Runs the optimized plan and the reference on copies of the same f32 inputs: every input and output
// bit-identical. Returns the plan's buffer bytes (its reuse lines' sizes).
long check_same(const ctfx::ir& g, std::vector<std::vector<float>> ins, const std::vector<ctfx::tensor_desc>& in_desc,
                const std::vector<ctfx::tensor_desc>& out_desc) {
  auto ref_ins = ins;
  std::vector<std::vector<float>> outs, ref_outs;
  for (const auto& d : out_desc) {
    outs.emplace_back(static_cast<std::size_t>(d.numel()), -7.0f);
    ref_outs.emplace_back(static_cast<std::size_t>(d.numel()), -7.0f);
  }
  auto refs = [](std::vector<std::vector<float>>& v, const std::vector<ctfx::tensor_desc>& d) {
    std::vector<ctfx::tensor_ref> r;
    for (std::size_t k = 0; k < v.size(); ++k) r.emplace_back(v[k].data(), d[k]);
    return r;
  };
  ctfx::runtime_plan p(g);
  REQUIRE_MESSAGE(p.error().ok(), p.error().message());
  const auto st = p.run(refs(ins, in_desc), refs(outs, out_desc));
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(g, refs(ref_ins, in_desc), refs(ref_outs, out_desc)).ok);
  for (std::size_t k = 0; k < ins.size(); ++k) CHECK(std::memcmp(ins[k].data(), ref_ins[k].data(), ins[k].size() * 4) == 0);
  for (std::size_t k = 0; k < outs.size(); ++k) CHECK(std::memcmp(outs[k].data(), ref_outs[k].data(), outs[k].size() * 4) == 0);
  long bytes = 0;
  for (const auto& b : p.life().buffers) bytes += static_cast<long>(b.bytes.value());
  return bytes;
}

constexpr long R = 24, C = 40;

// SGD with momentum over three parameters; `order` permutes the six update calls.
ctfx::ir sgd(const int* order) {
  return ctfx::build_checked([order](ctfx::builder& b) {
    ctfx::tensor p[3], g[3], m[3], nm[3], np[3];
    for (int k = 0; k < 3; ++k) {
      p[k] = b.input("p" + std::to_string(k), ctfx::f32, {R, C});
      g[k] = b.input("g" + std::to_string(k), ctfx::f32, {R, C});
      m[k] = b.input("m" + std::to_string(k), ctfx::f32, {R, C});
    }
    for (int k = 0; k < 3; ++k) nm[k] = m[k] * 0.9f + (g[k] + p[k] * 1e-4f);  // momentum with weight decay
    for (int k = 0; k < 3; ++k) np[k] = p[k] - nm[k] * 0.01f;
    for (int s = 0; s < 6; ++s) {
      const int k = order[s] % 3;
      if (order[s] < 3) b.update(m[k], nm[k]);
      else b.update(p[k], np[k]);
    }
  });
}

std::vector<ctfx::tensor_desc> descs(std::size_t n, long r = R, long c = C) {
  return std::vector<ctfx::tensor_desc>(n, ctfx::tensor_desc::contiguous(ctfx::f32, {r, c}));
}

std::vector<std::vector<float>> inputs(std::size_t n, std::size_t numel) {
  std::vector<std::vector<float>> v;
  for (std::size_t k = 0; k < n; ++k) v.push_back(ramp(numel, 0.013f * static_cast<float>(k + 1), -0.4f * static_cast<float>(k)));
  return v;
}

}  // namespace

TEST_CASE("schedule_updates: SGD with momentum on three parameters plans no buffer, in any order of its updates") {
  int order[6] = {0, 1, 2, 3, 4, 5};
  int orders = 0;
  do {
    const ctfx::ir g = sgd(order);
    ctfx::runtime_plan p(g);
    REQUIRE(p.error().ok());
    // Every write-back is computed in its value's kernel: six copy_ roots, nothing else.
    const ctfx::ir& og = p.graph();
    const ctfx::fusion& f = p.fused();
    CHECK(count_op(og, ctfx::op_kind::copy_) == 6);
    for (std::int32_t i = 0; i < og.size(); ++i)
      if (og[i].op == ctfx::op_kind::copy_) CHECK(f.root[static_cast<std::size_t>(og.arg(i, 1))] == i);
    CHECK(check_same(g, inputs(9, R * C), descs(9), {}) == 0);
    ++orders;
  } while (std::next_permutation(order, order + 6) && orders < 720);
  CHECK(orders == 720);
}

// The same program as a compile-time plan: no byte planned, provable in the compiler.
constexpr auto sgd2 = ctfx::graph([](ctfx::builder& b) {
  auto p0 = b.input("p0", ctfx::f32, {64, 64}), g0 = b.input("g0", ctfx::f32, {64, 64}), m0 = b.input("m0", ctfx::f32, {64, 64});
  auto p1 = b.input("p1", ctfx::f32, {64, 64}), g1 = b.input("g1", ctfx::f32, {64, 64}), m1 = b.input("m1", ctfx::f32, {64, 64});
  auto n0 = m0 * 0.9f + g0, n1 = m1 * 0.9f + g1;
  b.update(p1, p1 - n1 * 0.01f);  // the parameters first, the momenta after
  b.update(p0, p0 - n0 * 0.01f);
  b.update(m1, n1);
  b.update(m0, n0);
});
using sgd2_plan = ctfx::compiled<decltype(sgd2)>;
static_assert(sgd2_plan::static_buffer_bytes() == 0);

TEST_CASE("schedule_updates: the compile-time plan of SGD computes each update into its parameter, with the reference's bits") {
  auto in = inputs(6, 64 * 64), ref = in;
  std::vector<ctfx::tensor_ref> r, rr;
  for (std::size_t k = 0; k < 6; ++k) {
    r.push_back(ctfx::tensor_ref::contiguous(in[k].data(), ctfx::f32, {64, 64}));
    rr.push_back(ctfx::tensor_ref::contiguous(ref[k].data(), ctfx::f32, {64, 64}));
  }
  const auto st = sgd2_plan::run(r, {});
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(sgd2.get(), rr, {}).ok);
  for (std::size_t k = 0; k < 6; ++k) CHECK(in[k] == ref[k]);
}

TEST_CASE("schedule_updates: a read of the input's old value after the new one is computed keeps the write-back where it was") {
  const ctfx::ir g = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {R, C}), y = b.input("y", ctfx::f32, {R, C});
    auto v = x * 2.0f + y;
    auto old = x - 1.0f;  // reads x's old value: the write into x cannot come before it
    b.update(x, v);
    b.output({v * 3.0f, old});
  });
  ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  const ctfx::ir& og = p.graph();
  std::int32_t copy = -1, sub = -1;
  for (std::int32_t i = 0; i < og.size(); ++i) {
    if (og[i].op == ctfx::op_kind::copy_) copy = i;
    if (og[i].op == ctfx::op_kind::sub) sub = i;
  }
  REQUIRE(copy >= 0);
  REQUIRE(sub >= 0);
  CHECK(sub < copy);
  CHECK(check_same(g, inputs(2, R * C), descs(2), descs(2)) > 0);
}

TEST_CASE("schedule_updates: a value also returned, or read through a view, keeps its buffer") {
  // Returned: the output would alias the caller's x.
  const ctfx::ir returned = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {C, C});
    auto v = x * 2.0f;
    b.update(x, v);
    b.output({v, v + 1.0f});
  });
  // Read through a view: the view would alias x.
  const ctfx::ir viewed = ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {C, C});
    auto v = x * 2.0f;
    b.update(x, v);
    b.output({v.transpose(0, 1) + 1.0f, v + 2.0f});
  });
  for (const ctfx::ir* g : {&returned, &viewed}) {
    ctfx::runtime_plan p(*g);
    REQUIRE(p.error().ok());
    const ctfx::ir& og = p.graph();
    std::int32_t copy = -1;
    for (std::int32_t i = 0; i < og.size(); ++i)
      if (og[i].op == ctfx::op_kind::copy_) copy = i;
    REQUIRE(copy >= 0);
    CHECK(p.fused().root[static_cast<std::size_t>(og.arg(copy, 1))] != copy);  // v keeps its buffer
    CHECK(check_same(*g, inputs(1, C * C), descs(1, C, C), descs(2, C, C)) > 0);
  }
}

// Random programs of elementwise ops over four inputs, some of them updated with computed values
// that other nodes read (before and after the update's value, through views and as outputs too):
// each plan gives the reference's bits, inputs and outputs.
TEST_CASE("schedule_updates: random update programs equal the functional reference") {
  std::mt19937 rng(20261207);
  int moved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const unsigned seed = rng();
    bool any_move = false;
    int n_out = 0;
    const ctfx::ir g = ctfx::build_checked([seed, &n_out](ctfx::builder& b) {
      std::mt19937 r(seed);
      std::vector<ctfx::tensor> in, vals;
      for (int k = 0; k < 4; ++k) in.push_back(b.input("x" + std::to_string(k), ctfx::f32, {6, 6}));
      vals = in;
      const int n = 3 + static_cast<int>(r() % 10);
      for (int s = 0; s < n; ++s) {
        const ctfx::tensor a = vals[r() % vals.size()], c = vals[r() % vals.size()];
        switch (r() % 6) {
          case 0: vals.push_back(a + c); break;
          case 1: vals.push_back(a * 0.5f - c); break;
          case 2: vals.push_back(ctfx::maximum(a, c) * 1.25f); break;
          case 3: vals.push_back(a.transpose(0, 1) + c); break;  // a read through a view
          case 4: vals.push_back(-a); break;
          default: vals.push_back(a * c + 1.0f); break;
        }
      }
      std::vector<ctfx::tensor> outs;
      for (int k = 0; k < 4; ++k)
        if (r() % 2) b.update(in[static_cast<std::size_t>(k)], vals[4 + r() % (vals.size() - 4)]);
      for (std::size_t k = 4; k < vals.size(); ++k)
        if (r() % 4 == 0) outs.push_back(vals[k]);
      if (outs.empty()) outs.push_back(vals.back() + 0.0f);
      if (outs.size() > 3) outs.resize(3);
      n_out = static_cast<int>(outs.size());
      if (n_out == 1) b.output({outs[0]});
      else if (n_out == 2) b.output({outs[0], outs[1]});
      else b.output({outs[0], outs[1], outs[2]});
    });
    {
      ctfx::runtime_plan p(g);
      REQUIRE(p.error().ok());
      const ctfx::ir& og = p.graph();
      for (std::int32_t i = 0; i < og.size(); ++i)
        if (og[i].op == ctfx::op_kind::copy_ && i + 1 < og.size()) {
          for (std::int32_t k = i + 1; k < og.size(); ++k)
            for (auto a : og.args_of(k)) any_move = any_move || a == i;  // a node reads the written input
        }
    }
    moved += any_move;
    CAPTURE(seed);
    check_same(g, inputs(4, 36), descs(4, 6, 6), descs(static_cast<std::size_t>(n_out), 6, 6));
  }
  CHECK(moved > 20);  // the generator reaches the pass
}

// The report names every write-back: computed into its input, or why not (plan/write_backs.hpp).
static_assert(sgd2_plan::require_no_buffers);
static_assert(sgd2_plan::report.size() == 4);
static_assert(sgd2_plan::report.all_inplace());

constexpr auto shared_value = ctfx::graph([](ctfx::builder& g) {
  auto w = g.input("w", ctfx::f32, {16, 16}), d = g.input("d", ctfx::f32, {16, 16});
  auto next = (w - d * 0.5f).named("next");
  g.update(w, next);
  g.output(next.transpose(0, 1).named("nt") + 1.0f);
});
using shared_plan = ctfx::compiled<decltype(shared_value)>;
static_assert(!shared_plan::report.all_inplace());
static_assert(shared_plan::report.reason("copy_") == ctfx::reinplace_reason::update_shared_value);
static_assert(shared_plan::report.blocker("copy_") == "nt");

constexpr auto reduced = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {16}), y = g.input("y", ctfx::f32, {16, 8});
  g.update(x, y.sum({1}).named("s"));
});
using reduced_plan = ctfx::compiled<decltype(reduced)>;
static_assert(reduced_plan::report.reason("copy_") == ctfx::reinplace_reason::update_not_fusible);
static_assert(reduced_plan::report.blocker("copy_") == "s");

constexpr auto transposed = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {16, 16});
  g.update(x, (x.transpose(0, 1) * 2.0f).named("t2"));  // reads x through another index map
});
using transposed_plan = ctfx::compiled<decltype(transposed)>;
static_assert(transposed_plan::report.reason("copy_") == ctfx::reinplace_reason::update_fusion_rule);

TEST_CASE("write-backs: the compiled report lists each update, computed in place or with its reason and bytes") {
  const std::string t = ctfx::to_text(shared_plan::report);
  CHECK(t.find("0 of 1 candidates reinplaced") != std::string::npos);
  CHECK(t.find("%copy_ (copy_) on %w: not reinplaced, update-shared-value (by %nt), 1024 bytes") != std::string::npos);
  CHECK(ctfx::to_text(sgd2_plan::report).find("4 of 4 candidates reinplaced") != std::string::npos);
  CHECK(shared_plan::static_buffer_bytes() > 0);
  // The values, as the functional program computes them.
  std::vector<float> w = ramp(256, 0.1f, -3.0f), d = ramp(256, 0.07f, 1.0f), o(256), wr = w, orr(256);
  REQUIRE(shared_plan::run({ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {16, 16}), ctfx::tensor_ref::contiguous(d.data(), ctfx::f32, {16, 16})},
                           {ctfx::tensor_ref::contiguous(o.data(), ctfx::f32, {16, 16})}).ok);
  REQUIRE(ctfx::reference_run(shared_value.get(), {ctfx::tensor_ref::contiguous(wr.data(), ctfx::f32, {16, 16}), ctfx::tensor_ref::contiguous(d.data(), ctfx::f32, {16, 16})},
                              {ctfx::tensor_ref::contiguous(orr.data(), ctfx::f32, {16, 16})}).ok);
  CHECK(w == wr);
  CHECK(o == orr);
}

// Mixed precision: an f32 master copy updated from an f16 gradient, and the f16 weights written from
// the new master. The master's new value has two readers; both updates run with no buffer.
constexpr auto mixed = ctfx::graph([](ctfx::builder& b) {
  auto w16 = b.input("w16", ctfx::f16, {32, 48}), g16 = b.input("g16", ctfx::f16, {32, 48});
  auto master = b.input("master", ctfx::f32, {32, 48});
  auto next = master - g16.to(ctfx::f32) * 0.01f;
  b.update(w16, next.to(ctfx::f16));
  b.update(master, next);
});
using mixed_plan = ctfx::compiled<decltype(mixed)>;
static_assert(mixed_plan::require_no_buffers);
static_assert(mixed_plan::report.all_inplace());

TEST_CASE("schedule_updates: mixed precision (f16 gradient, f32 master, f16 weights) in place, with the reference's bits") {
  const std::size_t n = 32 * 48;
  std::vector<ctfx::half_t> w(n), gr(n);
  std::vector<float> m(n);
  for (std::size_t j = 0; j < n; ++j) {
    gr[j] = ctfx::half_t(static_cast<float>(j % 29) * 0.37f - 5.0f);
    m[j] = static_cast<float>(j % 31) * 0.0123f - 0.2f;
    w[j] = ctfx::half_t(m[j]);
  }
  auto wr = w;
  auto mr = m;
  const auto d16 = ctfx::tensor_desc::contiguous(ctfx::f16, {32, 48}), d32 = ctfx::tensor_desc::contiguous(ctfx::f32, {32, 48});
  REQUIRE(mixed_plan::run({ctfx::tensor_ref(w.data(), d16), ctfx::tensor_ref(gr.data(), d16), ctfx::tensor_ref(m.data(), d32)}, {}).ok);
  REQUIRE(ctfx::reference_run(mixed.get(), {ctfx::tensor_ref(wr.data(), d16), ctfx::tensor_ref(gr.data(), d16), ctfx::tensor_ref(mr.data(), d32)}, {}).ok);
  CHECK(std::memcmp(w.data(), wr.data(), n * 2) == 0);
  CHECK(m == mr);
  // And at run time: the same graph, the same plan.
  ctfx::runtime_plan p(mixed.get());
  long bytes = 0;
  for (const auto& b : p.life().buffers) bytes += static_cast<long>(b.bytes.value());
  CHECK(bytes == 0);
}
