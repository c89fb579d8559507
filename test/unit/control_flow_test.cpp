// Control flow (ops/control.hpp): cond and while_loop nodes built with the builder, their signature
// rule, the printer, the passes inside subgraphs, and runs of runtime_plan on the host against
// hand-written references (both branches, zero trips, nested).
#include <doctest/doctest.h>
#include <cmath>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

// Comparisons (the builder spells them as nodes): x OP v for a float or integer scalar v, a OP b.
ctfx::tensor cmp(ctfx::op_kind k, ctfx::tensor x, double v) { return {x.b, x.b->add(k, {x.id}, {}, 1, ctfx::scalar_value(v))}; }
ctfx::tensor cmp(ctfx::op_kind k, ctfx::tensor x, std::int64_t v) { return {x.b, x.b->add(k, {x.id}, {}, 2, ctfx::scalar_value(v))}; }
ctfx::tensor cmp(ctfx::op_kind k, ctfx::tensor a, ctfx::tensor b) { return {a.b, a.b->add(k, {a.id, b.id})}; }
constexpr auto LT = ctfx::op_kind::lt;
constexpr auto GT = ctfx::op_kind::gt;

// p - 0.01 * g when every g is finite (here: when g.sum() < 100), else p unchanged.
ctfx::ir sgd_skip() {
  return ctfx::build_checked([](ctfx::builder& g) {
    auto p = g.input("p", ctfx::f32, {4});
    auto gr = g.input("gr", ctfx::f32, {4});
    auto ok = cmp(LT, gr.sum({0}), 100.0);
    auto r = g.cond(
        ok,
        [](ctfx::builder& b) {
          auto x = b.input("x", ctfx::f32, {4});
          auto y = b.input("y", ctfx::f32, {4});
          b.output(x - y * 0.01);
        },
        [](ctfx::builder& b) {
          auto x = b.input("x", ctfx::f32, {4});
          (void)b.input("y", ctfx::f32, {4});
          b.output(x.clone());
        },
        {p, gr});
    g.output(r[0]);
  });
}

// x doubled while i < n (i counts from 0): n trips.
ctfx::ir doubling() {
  return ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {3});
    auto n = g.input("n", ctfx::i64, {});
    auto i0 = g.zeros({}, ctfx::i64);
    auto r = g.while_loop(
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          (void)b.input("x", ctfx::f32, {3});
          auto m = b.input("m", ctfx::i64, {});
          b.output(cmp(LT, i, m));
        },
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          auto v = b.input("x", ctfx::f32, {3});
          (void)b.input("m", ctfx::i64, {});
          b.output(i + 1, v * 2.0);
        },
        {i0, x}, {n});
    g.output(r[1], r[0]);
  });
}

ctfx::tensor_ref f32v(std::vector<float>& v) { return ctfx::tensor_ref::contiguous(v.data(), {static_cast<ctfx::index_t>(v.size())}); }

}  // namespace

TEST_CASE("control flow: cond takes the branch its predicate names") {
  const ctfx::ir g = sgd_skip();
  REQUIRE(ctfx::verify(g).ok());
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  std::vector<float> p{1, 2, 3, 4}, gr{10, 20, 30, 10}, out(4);
  REQUIRE(plan.run({f32v(p), f32v(gr)}, {f32v(out)}));
  CHECK(out == std::vector<float>{1 - 10 * 0.01f, 2 - 20 * 0.01f, 3 - 30 * 0.01f, 4 - 10 * 0.01f});
  gr = {100, 20, 30, 10};  // sum 160: the else-branch
  REQUIRE(plan.run({f32v(p), f32v(gr)}, {f32v(out)}));
  CHECK(out == p);
  // The reference run (no passes, no reuse) agrees.
  std::vector<float> ref(4);
  REQUIRE(ctfx::reference_run(g, {f32v(p), f32v(gr)}, {f32v(ref)}));
  CHECK(ref == out);
}

TEST_CASE("control flow: while_loop runs zero, one and several trips") {
  const ctfx::ir g = doubling();
  REQUIRE(ctfx::verify(g).ok());
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  for (std::int64_t n : {0, 1, 2, 5}) {
    std::vector<float> x{1, -2, 0.5f}, out(3);
    std::int64_t nn = n, trips = -1;
    REQUIRE(plan.run({f32v(x), ctfx::tensor_ref::contiguous(&nn, {})}, {f32v(out), ctfx::tensor_ref::contiguous(&trips, {})}));
    const float f = static_cast<float>(1 << n);
    CHECK(out == std::vector<float>{f, -2 * f, 0.5f * f});
    CHECK(trips == n);
    CHECK(x == std::vector<float>{1, -2, 0.5f});  // the initial carried value is read, never written
  }
}

TEST_CASE("control flow: nested cond inside a while_loop body") {
  // x: while i < 4: x = (x.sum() > 0) ? x - 1 : x + 2
  const ctfx::ir loop = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {2});
    auto r = g.while_loop(
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          (void)b.input("x", ctfx::f32, {2});
          b.output(cmp(LT, i, std::int64_t{4}));
        },
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          auto v = b.input("x", ctfx::f32, {2});
          auto c = b.cond(
              cmp(GT, v.sum({0}), 0.0),
              [](ctfx::builder& t) { t.output(t.input("x", ctfx::f32, {2}) - 1.0); },
              [](ctfx::builder& e) { e.output(e.input("x", ctfx::f32, {2}) + 2.0); }, {v});
          b.output(i + 1, c[0]);
        },
        {g.zeros({}, ctfx::i64), x});
    g.output(r[1]);
  });
  REQUIRE(ctfx::verify(loop).ok());
  ctfx::runtime_plan plan(loop);
  REQUIRE(plan.error().ok());
  std::vector<float> x{-3, 0}, out(2);
  REQUIRE(plan.run({f32v(x)}, {f32v(out)}));
  // (-3, 0) -> (-1, 2) [sum -3] -> (-2, 1) [sum 1] -> (0, 3) [sum -1] -> (-1, 2) [sum 3]
  CHECK(out == std::vector<float>{-1, 2});
}

TEST_CASE("control flow: the signature rule names the node and the mismatch") {
  ctfx::diagnostic d;
  (void)ctfx::build_checked(
      [](ctfx::builder& g) {
        auto x = g.input("x", ctfx::f32, {4});
        auto r = g.cond(
            cmp(GT, x.sum({0}), 0.0), [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {4}) * 2.0); },
            [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {4}).sum({0})); }, {x});
        g.output(r[0]);
      },
      &d);
  REQUIRE(!d.ok());
  CHECK(std::string(d.message()).find("output 0 of its else-graph is f32[]") != std::string::npos);
  CHECK(std::string(d.message()).find("node 'cond'") != std::string::npos);
  ctfx::diagnostic e;
  (void)ctfx::build_checked(
      [](ctfx::builder& g) {
        auto x = g.input("x", ctfx::f32, {4});
        auto r = g.cond(
            cmp(GT, x.sum({0}), 0.0), [](ctfx::builder& b) { b.output(b.input("a", ctfx::f64, {4})); },
            [](ctfx::builder& b) { b.output(b.input("a", ctfx::f64, {4})); }, {x});
        g.output(r[0]);
      },
      &e);
  REQUIRE(!e.ok());
  CHECK(std::string(e.message()).find("operand 0 'x' is f32[4], input 'a' of its then-graph is f64[4]") != std::string::npos);
  ctfx::diagnostic w;
  (void)ctfx::build_checked(
      [](ctfx::builder& g) {
        auto x = g.input("x", ctfx::f32, {4});
        auto r = g.while_loop([](ctfx::builder& b) { b.output(cmp(GT, b.input("a", ctfx::f32, {4}).sum({0}), 0.0)); },
                              [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {4}).sum({0})); }, {x});
        g.output(r[0]);
      },
      &w);
  REQUIRE(!w.ok());
  CHECK(std::string(w.message()).find("output 0 of its body graph is f32[], the carried value is f32[4]") != std::string::npos);
}

TEST_CASE("control flow: printer and passes inside subgraphs") {
  const std::string t = ctfx::to_text(sgd_skip());
  CHECK(t.find("%cond = cond(%lt, subgraph_0, subgraph_1, (%p, %gr))") != std::string::npos);
  CHECK(t.find("subgraph_1 = graph(%x : f32[4], %y : f32[4]):") != std::string::npos);
  // The pipeline runs on each subgraph: no-op removal (x * 1.0) and dce (a dead sum) in a branch.
  const ctfx::ir h = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto r = g.cond(
        cmp(GT, x.sum({0}), 0.0),
        [](ctfx::builder& b) {
          auto a = b.input("a", ctfx::f32, {4});
          (void)a.amax({0});
          b.output(ctfx::exp(a * 1.0));
        },
        [](ctfx::builder& b) { b.output(ctfx::neg(b.input("a", ctfx::f32, {4}))); }, {x});
    g.output(r[0]);
  });
  REQUIRE(ctfx::to_text(h.subgraphs[0]).find("amax") != std::string::npos);
  const ctfx::ir o = ctfx::run_pipeline<ctfx::executor_inplace_table>(h);
  REQUIRE(o.error.ok());
  REQUIRE(o.subgraphs.size() == 2);
  CHECK(o.subgraphs[0].phase == ctfx::graph_phase::reinplaced);
  const std::string then_text = ctfx::to_text(o.subgraphs[0]);
  CHECK(then_text.find("amax") == std::string::npos);
  CHECK(then_text.find("mul") == std::string::npos);
  CHECK(then_text.find("exp(%a)") != std::string::npos);
  ctfx::runtime_plan plan(h);
  REQUIRE(plan.error().ok());
  std::vector<float> x{0, 1, -1, 2}, out(4);
  REQUIRE(plan.run({f32v(x)}, {f32v(out)}));
  for (int k = 0; k < 4; ++k) CHECK(out[static_cast<std::size_t>(k)] == std::exp(x[static_cast<std::size_t>(k)]));
}
