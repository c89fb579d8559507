// Control flow (ops/control.hpp): cond and while_loop nodes built with the builder, their signature
// rule, the printer, the passes inside subgraphs, and runs of runtime_plan on the host against
// hand-written references (both branches, zero trips, nested).
#include <doctest/doctest.h>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/data_dependent.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>
#include <ctfx/plan/listing.hpp>

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

// ----- the FX importer: nested graph modules, cond and while_loop as torch 2.15 prints them -----

namespace {
// torch.cond(flag > 0, write, nowrite, (cache, k)): a KV-cache write in one branch (captured).
constexpr std::string_view kv_text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[][]cpu", arg1_1: "f32[2, 8, 4][32, 4, 1]cpu", arg2_1: "f32[2, 1, 4][4, 4, 1]cpu"):
        true_graph_0 = self.true_graph_0
        false_graph_0 = self.false_graph_0
        gt: "b8[][]cpu" = torch.ops.aten.gt.Scalar(arg0_1, 0);  arg0_1 = None
        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (arg1_1, arg2_1));  gt = true_graph_0 = false_graph_0 = arg1_1 = arg2_1 = None
        getitem: "f32[2, 8, 4][32, 4, 1]cpu" = cond[0];  cond = None
        return (getitem,)

    class true_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[2, 8, 4][32, 4, 1]cpu", arg1_1: "f32[2, 1, 4][4, 4, 1]cpu"):
            slice_1: "f32[2, 1, 4][32, 4, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 1, 3, 4)
            copy: "f32[2, 1, 4][32, 4, 1]cpu" = torch.ops.aten.copy.default(slice_1, arg1_1);  slice_1 = arg1_1 = None
            slice_scatter_default: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.slice_scatter.default(arg0_1, copy, 1, 3, 4);  arg0_1 = copy = None
            return (slice_scatter_default,)

    class false_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[2, 8, 4][32, 4, 1]cpu", arg1_1: "f32[2, 1, 4][4, 4, 1]cpu"):
            clone: "f32[2, 8, 4][32, 4, 1]cpu" = torch.ops.aten.clone.default(arg0_1);  arg0_1 = None
            return (clone,)
)";

// while_loop(cf, bf, (zeros, x), (n,)): x doubled n times (captured; the condition returns `lt` bare).
constexpr std::string_view loop_text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[5][1]cpu", arg1_1: "i64[][]cpu"):
        while_loop_cond_graph_0 = self.while_loop_cond_graph_0
        while_loop_body_graph_0 = self.while_loop_body_graph_0
        full_default: "i64[][]cpu" = torch.ops.aten.full.default([], 0, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (full_default, arg0_1), (arg1_1,));  while_loop_cond_graph_0 = while_loop_body_graph_0 = full_default = arg0_1 = arg1_1 = None
        getitem: "i64[][]cpu" = while_loop[0]
        getitem_1: "f32[5][1]cpu" = while_loop[1];  while_loop = None
        return (getitem_1, getitem)

    class while_loop_cond_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[5][1]cpu", arg2_1: "i64[][]cpu"):
            lt: "b8[][]cpu" = torch.ops.aten.lt.Tensor(arg0_1, arg2_1);  arg0_1 = arg2_1 = None
            return lt

    class while_loop_body_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[5][1]cpu", arg2_1: "i64[][]cpu"):
            add: "i64[][]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None
            mul: "f32[5][1]cpu" = torch.ops.aten.mul.Tensor(arg1_1, 2);  arg1_1 = None
            return (add, mul)
)";

// Nested conds: the inner modules have the outer ones' names, one level deeper.
constexpr std::string_view nested_text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3][1]cpu"):
        true_graph_0 = self.true_graph_0
        false_graph_0 = self.false_graph_0
        sum_1: "f32[][]cpu" = torch.ops.aten.sum.dim_IntList(arg0_1, None)
        gt: "b8[][]cpu" = torch.ops.aten.gt.Scalar(sum_1, 10.0)
        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (arg0_1, sum_1));  gt = true_graph_0 = false_graph_0 = arg0_1 = sum_1 = None
        getitem: "f32[3][1]cpu" = cond[0];  cond = None
        return (getitem,)

    class true_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[3][1]cpu", arg1_1: "f32[][]cpu"):
            true_graph_0 = self.true_graph_0
            false_graph_0 = self.false_graph_0
            gt: "b8[][]cpu" = torch.ops.aten.gt.Scalar(arg1_1, 100.0)
            cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (arg0_1, arg1_1));  gt = true_graph_0 = false_graph_0 = arg0_1 = arg1_1 = None
            getitem: "f32[3][1]cpu" = cond[0];  cond = None
            return (getitem,)

        class true_graph_0(torch.nn.Module):
            def forward(self, arg0_1: "f32[3][1]cpu", arg1_1: "f32[][]cpu"):
                div: "f32[3][1]cpu" = torch.ops.aten.div.Tensor(arg0_1, arg1_1);  arg0_1 = arg1_1 = None
                return (div,)

        class false_graph_0(torch.nn.Module):
            def forward(self, arg0_1: "f32[3][1]cpu", arg1_1: "f32[][]cpu"):
                mul: "f32[3][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 0.5);  arg0_1 = None
                return (mul,)

    class false_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[3][1]cpu", arg1_1: "f32[][]cpu"):
            clone: "f32[3][1]cpu" = torch.ops.aten.clone.default(arg0_1);  arg0_1 = None
            return (clone,)
)";

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  std::string s(text);
  s.replace(s.find(from), from.size(), to);
  return s;
}
}  // namespace

TEST_CASE("control flow FX: a captured cond with a KV-cache write in one branch") {
  ctfx::fx_parse_result r = ctfx::parse_fx(kv_text);
  REQUIRE(r.ok());
  const ctfx::ir& g = r.graph;
  REQUIRE(g.subgraphs.size() == 2);
  CHECK(ctfx::to_text(g).find("%cond = cond(%gt, subgraph_0, subgraph_1, (%arg1_1, %arg2_1))") != std::string::npos);
  CHECK(ctfx::to_text(g.subgraphs[0]).find("slice_scatter") != std::string::npos);
  CHECK(ctfx::verify(g).ok());
  ctfx::runtime_plan plan(g);
  REQUIRE(plan.error().ok());
  for (float flag : {1.0f, 0.0f}) {
    std::vector<float> cache(64), k(8), out(64);
    for (std::size_t j = 0; j < 64; ++j) cache[j] = static_cast<float>(j);
    for (std::size_t j = 0; j < 8; ++j) k[j] = -1.0f - static_cast<float>(j);
    float f = flag;
    REQUIRE(plan.run({ctfx::tensor_ref::contiguous(&f, {}), ctfx::tensor_ref::contiguous(cache.data(), {2, 8, 4}),
                      ctfx::tensor_ref::contiguous(k.data(), {2, 1, 4})},
                     {ctfx::tensor_ref::contiguous(out.data(), {2, 8, 4})}));
    std::vector<float> want = cache;
    if (flag > 0)
      for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t d = 0; d < 4; ++d) want[b * 32 + 3 * 4 + d] = k[b * 4 + d];
    CHECK(out == want);
  }
}

TEST_CASE("control flow FX: a captured while_loop with a literal-free carried counter, zero and three trips") {
  ctfx::fx_parse_result r = ctfx::parse_fx(loop_text);
  REQUIRE(r.ok());
  CHECK(ctfx::to_text(r.graph).find("while_loop(subgraph_0, subgraph_1, (%full_default, %arg0_1), (%arg1_1,))") != std::string::npos);
  ctfx::runtime_plan plan(r.graph);
  REQUIRE(plan.error().ok());
  for (std::int64_t n : {0, 3}) {
    std::vector<float> x{1, 2, 3, 4, 5}, out(5);
    std::int64_t nn = n, i = -1;
    REQUIRE(plan.run({ctfx::tensor_ref::contiguous(x.data(), {5}), ctfx::tensor_ref::contiguous(&nn, {})},
                     {ctfx::tensor_ref::contiguous(out.data(), {5}), ctfx::tensor_ref::contiguous(&i, {})}));
    CHECK(i == n);
    for (std::size_t j = 0; j < 5; ++j) CHECK(out[j] == x[j] * static_cast<float>(1 << n));
  }
}

TEST_CASE("control flow FX: nested conds read their own nested modules") {
  ctfx::fx_parse_result r = ctfx::parse_fx(nested_text);
  REQUIRE(r.ok());
  REQUIRE(r.graph.subgraphs.size() == 2);
  REQUIRE(r.graph.subgraphs[0].subgraphs.size() == 2);
  CHECK(ctfx::to_text(r.graph.subgraphs[0].subgraphs[0]).find("div(") != std::string::npos);
  ctfx::runtime_plan plan(r.graph);
  REQUIRE(plan.error().ok());
  auto run = [&](std::vector<float> x) {
    std::vector<float> out(3);
    REQUIRE(plan.run({ctfx::tensor_ref::contiguous(x.data(), {3})}, {ctfx::tensor_ref::contiguous(out.data(), {3})}));
    return out;
  };
  CHECK(run({1, 2, 3}) == std::vector<float>{1, 2, 3});                    // sum 6: the outer else
  CHECK(run({10, 2, 3}) == std::vector<float>{5, 1, 1.5f});                // sum 15: inner else (x * 0.5)
  CHECK(run({100, 50, 50}) == std::vector<float>{100 / 200.0f, 50 / 200.0f, 50 / 200.0f});  // sum 200: inner then
}

TEST_CASE("control flow FX: errors name the line of the whole text") {
  // A bad op inside a nested module: its line in the whole text, and the module's name.
  ctfx::fx_parse_result bad_op = ctfx::parse_fx(replaced(nested_text, "aten.mul.Tensor(arg0_1, 0.5)", "aten.nope.Tensor(arg0_1, 0.5)"));
  REQUIRE(!bad_op.ok());
  CHECK(bad_op.line == 27);  // two levels down: the inner module placed in the outer, the outer in the text
  CHECK(std::string(bad_op.error.message()).find("in graph module 'false_graph_0'") != std::string::npos);
  CHECK(std::string(bad_op.error.message()).find("unsupported op") != std::string::npos);
  // A branch whose output differs from the other's: the signature rule, on the cond's line.
  ctfx::fx_parse_result mismatch = ctfx::parse_fx(replaced(kv_text, "return (clone,)", "return (arg1_1,)"));
  REQUIRE(!mismatch.ok());
  CHECK(std::string(mismatch.error.message()).find("output 0 of its else-graph is f32[2, 1, 4]") != std::string::npos);
  CHECK(mismatch.line == 6);
  // A literal operand (a Python int carried through a loop) is refused by name.
  ctfx::fx_parse_result literal = ctfx::parse_fx(replaced(loop_text, "(full_default, arg0_1), (arg1_1,))", "(0, arg0_1), (arg1_1,))"));
  REQUIRE(!literal.ok());
  CHECK(std::string(literal.error.message()).find("an operand that is not a tensor") != std::string::npos);
  // A module attribute that names no nested class stays what it was: a tensor without annotation.
  ctfx::fx_parse_result missing = ctfx::parse_fx(replaced(kv_text, "false_graph_0 = self.false_graph_0", "false_graph_0 = self.other_graph"));
  REQUIRE(!missing.ok());
  CHECK(std::string(missing.error.message()).find("'self.other_graph' is a module attribute") != std::string::npos);
}

namespace {
// A Jacobi sweep with a fixed trip count (captured): the body writes the interior of the carried grid.
constexpr std::string_view jacobi_text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[16][1]cpu", arg1_1: "f32[16][1]cpu"):
        while_loop_cond_graph_0 = self.while_loop_cond_graph_0
        while_loop_body_graph_0 = self.while_loop_body_graph_0
        full_default: "i64[][]cpu" = torch.ops.aten.full.default([], 0, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (full_default, arg0_1), (arg1_1,));  while_loop_cond_graph_0 = while_loop_body_graph_0 = full_default = arg0_1 = arg1_1 = None
        getitem_1: "f32[16][1]cpu" = while_loop[1];  while_loop = None
        return (getitem_1,)

    class while_loop_cond_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[16][1]cpu", arg2_1: "f32[16][1]cpu"):
            lt: "b8[][]cpu" = torch.ops.aten.lt.Scalar(arg0_1, 10);  arg0_1 = None
            return lt

    class while_loop_body_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[16][1]cpu", arg2_1: "f32[16][1]cpu"):
            slice_4: "f32[14][1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 1, -1);  slice_4 = None
            add_1: "i64[][]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None
            slice_1: "f32[14][1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, -2)
            slice_2: "f32[14][1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 2, 9223372036854775807)
            add: "f32[14][1]cpu" = torch.ops.aten.add.Tensor(slice_1, slice_2);  slice_1 = slice_2 = None
            mul: "f32[14][1]cpu" = torch.ops.aten.mul.Tensor(add, 0.5);  add = None
            slice_3: "f32[14][1]cpu" = torch.ops.aten.slice.Tensor(arg2_1, 0, 1, -1);  arg2_1 = None
            sub: "f32[14][1]cpu" = torch.ops.aten.sub.Tensor(mul, slice_3);  mul = slice_3 = None
            slice_scatter_default: "f32[16][1]cpu" = torch.ops.aten.slice_scatter.default(arg1_1, sub, 0, 1, -1);  arg1_1 = sub = None
            return (add_1, slice_scatter_default)
)";

std::vector<float> jacobi_reference(std::vector<float> u, const std::vector<float>& f, int trips) {
  for (int t = 0; t < trips; ++t) {
    std::vector<float> v = u;
    for (std::size_t j = 1; j + 1 < u.size(); ++j) v[j] = (u[j - 1] + u[j + 1]) * 0.5f - f[j];
    u = v;
  }
  return u;
}
}  // namespace

TEST_CASE("control flow: a loop body updates its carried grid in place where nothing reads the old value") {
  ctfx::fx_parse_result r = ctfx::parse_fx(jacobi_text);
  REQUIRE(r.ok());
  const ctfx::ir o = ctfx::run_pipeline<ctfx::executor_inplace_table>(r.graph);
  REQUIRE(o.error.ok());
  // The in-place body: the interior written into the carried grid's slice, no grid-size value.
  REQUIRE(o.subgraphs.size() == 3);
  const std::string body = ctfx::to_text(o.subgraphs[2]);
  CHECK(ctfx::to_text(o).find("in_place_body=subgraph_2") != std::string::npos);
  CHECK(body.find("slice_scatter") == std::string::npos);
  CHECK(body.find("copy_(%slice, %sub)") != std::string::npos);
  CHECK(body.find("f32[16] =") == std::string::npos);
  ctfx::runtime_plan plan(r.graph);
  REQUIRE(plan.error().ok());
  std::vector<float> u(16), f(16), out(16);
  for (std::size_t j = 0; j < 16; ++j) {
    u[j] = static_cast<float>(j % 5) - 1.5f;
    f[j] = 0.01f * static_cast<float>(j);
  }
  const std::vector<float> u0 = u;
  REQUIRE(plan.run({f32v(u), f32v(f)}, {f32v(out)}));
  CHECK(out == jacobi_reference(u0, f, 10));
  CHECK(u == u0);  // the initial grid is the caller's: copied once, never written
  // A body that reads the old value after writing the new one (a convergence test on v - u) keeps
  // a second buffer: its in-place form copies the new grid in after the test reads the old one.
  ctfx::ir conv = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto e = g.full({}, 1.0, ctfx::f32);
    auto res = g.while_loop(
        [](ctfx::builder& b) {
          (void)b.input("v", ctfx::f32, {4});
          b.output(cmp(GT, b.input("err", ctfx::f32, {}), 0.01));
        },
        [](ctfx::builder& b) {
          auto v = b.input("v", ctfx::f32, {4});
          (void)b.input("err", ctfx::f32, {});
          auto w = v * 0.5;
          b.output(w, (w - v).amax({0}) * -1.0);
        },
        {x, e});
    g.output(res[0]);
  });
  ctfx::runtime_plan cp(conv);
  REQUIRE(cp.error().ok());
  std::vector<float> x{1, 2, 3, 4}, y(4);
  REQUIRE(cp.run({f32v(x)}, {f32v(y)}));
  // err = -max(v / 2 - v) = min(v / 2): the values halve until their minimum is at most 0.01
  std::vector<float> want = x;
  for (float err = 1; err > 0.01f;) {
    for (auto& w : want) w *= 0.5f;
    err = std::min(std::min(want[0], want[1]), std::min(want[2], want[3]));
  }
  CHECK(y == want);
}

TEST_CASE("control flow: the parent does not overwrite a buffer a branch reads before the cond runs") {
  // x is updated in the epilogue (x += 1) and read by both branches: the branches must see the old x.
  ctfx::ir prog = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {3});
    auto y = x + 1.0;
    auto r = g.cond(
        cmp(GT, x.sum({0}), 0.0), [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {3}) * 2.0); },
        [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {3}) * -2.0); }, {x});
    g.output(r[0]);
    g.update(x, y);
  });
  REQUIRE(ctfx::verify(prog).ok());
  ctfx::runtime_plan plan(prog);
  REQUIRE(plan.error().ok());
  // The cond reads x after x + 1 is computed: the add is not written into x (the epilogue copies
  // it in at the end), as Inductor decides for a later reader.
  const std::string planned = ctfx::to_text(plan.graph());
  CHECK(planned.find("add_(") == std::string::npos);
  CHECK(planned.find("copy_(%x, %add)") != std::string::npos);
  std::vector<float> x{1, 2, -0.5f}, out(3);
  REQUIRE(plan.run({f32v(x)}, {f32v(out)}));
  CHECK(out == std::vector<float>{2, 4, -1});
  CHECK(x == std::vector<float>{2, 3, 0.5f});
  x = {-1, -2, 0.5f};
  REQUIRE(plan.run({f32v(x)}, {f32v(out)}));
  CHECK(out == std::vector<float>{2, 4, -1});
  CHECK(x == std::vector<float>{0, -1, 1.5f});
}

TEST_CASE("control flow: a graph made at compile time refuses subgraphs, naming the node") {
  const ctfx::ir g = sgd_skip();
  const ctfx::diagnostic d = ctfx::refuse_subgraphs(g, ctfx::verify(g));
  REQUIRE(!d.ok());
  const std::string m(d.message());
  CHECK(m.find("node 'cond' (cond): holds subgraphs") != std::string::npos);
  CHECK(m.find("ctfx::runtime_plan") != std::string::npos);
  // (a graph without control flow passes through)
  const ctfx::ir plain = ctfx::build_checked([](ctfx::builder& b) { b.output(b.input("x", ctfx::f32, {2}) * 2.0); });
  CHECK(ctfx::refuse_subgraphs(plain, ctfx::verify(plain)).ok());
}

TEST_CASE("control flow: a body that swaps its carried values keeps two buffer sets") {
  // (i, a, b) -> (i + 1, b, a): an output that is another carried input has no in-place form.
  const ctfx::ir prog = ctfx::build_checked([](ctfx::builder& g) {
    auto a = g.input("a", ctfx::f32, {2});
    auto b = g.input("b", ctfx::f32, {2});
    auto r = g.while_loop(
        [](ctfx::builder& s) {
          auto i = s.input("i", ctfx::i64, {});
          (void)s.input("a", ctfx::f32, {2});
          (void)s.input("b", ctfx::f32, {2});
          s.output(cmp(LT, i, std::int64_t{3}));
        },
        [](ctfx::builder& s) {
          auto i = s.input("i", ctfx::i64, {});
          auto x = s.input("a", ctfx::f32, {2});
          auto y = s.input("b", ctfx::f32, {2});
          s.output(i + 1, y, x);
        },
        {g.zeros({}, ctfx::i64), a, b});
    g.output(r[1], r[2]);
  });
  const ctfx::ir o = ctfx::run_pipeline<ctfx::executor_inplace_table>(prog);
  REQUIRE(o.error.ok());
  CHECK(o.subgraphs.size() == 2);  // no in-place body
  ctfx::runtime_plan plan(prog);
  REQUIRE(plan.error().ok());
  std::vector<float> a{1, 2}, b{3, 4}, ra(2), rb(2);
  REQUIRE(plan.run({f32v(a), f32v(b)}, {f32v(ra), f32v(rb)}));
  CHECK(ra == b);  // three swaps
  CHECK(rb == a);
}

TEST_CASE("control flow: an operand laid out otherwise than its placeholder reaches the subgraph in the placeholder's layout") {
  // A transposed operand (strides [1, 3]) into branches declared row-major, and a transposed
  // carried value into a loop whose row-major results feed the next trip.
  const ctfx::ir prog = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {2, 3});
    auto xt = x.transpose(0, 1);  // [3, 2], strides [1, 3]
    auto c = g.cond(
        cmp(GT, x.sum(), 0.0),
        [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {3, 2}) * 2.0); },
        [](ctfx::builder& b) { b.output(b.input("a", ctfx::f32, {3, 2}) + 1.0); }, {xt});
    auto l = g.while_loop(
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          (void)b.input("v", ctfx::f32, {3, 2});
          b.output(cmp(LT, i, std::int64_t{2}));
        },
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          auto v = b.input("v", ctfx::f32, {3, 2});
          b.output(i + 1, v.select(1, 0).unsqueeze(1).expand({3, 2}) + v);
        },
        {g.zeros({}, ctfx::i64), xt});
    g.output(c[0], l[1]);
  });
  REQUIRE(ctfx::verify(prog).ok());
  ctfx::runtime_plan plan(prog);
  REQUIRE(plan.error().ok());
  for (float sign : {1.0f, -1.0f}) {
    std::vector<float> x{1, 2, 3, 4, 5, 6}, c(6), l(6), rc(6), rl(6);
    for (auto& v : x) v *= sign;
    REQUIRE(plan.run({ctfx::tensor_ref::contiguous(x.data(), {2, 3})},
                     {ctfx::tensor_ref::contiguous(c.data(), {3, 2}), ctfx::tensor_ref::contiguous(l.data(), {3, 2})}));
    REQUIRE(ctfx::reference_run(prog, {ctfx::tensor_ref::contiguous(x.data(), {2, 3})},
                                {ctfx::tensor_ref::contiguous(rc.data(), {3, 2}), ctfx::tensor_ref::contiguous(rl.data(), {3, 2})}));
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t k = 0; k < 2; ++k) {
        const float v = x[k * 3 + r];  // xt[r][k]
        CHECK(c[r * 2 + k] == (sign > 0 ? v * 2.0f : v + 1.0f));
        // two trips of v[r][k] += v[r][0]: v + v0 then (v + v0) + 2 v0
        const float v0 = x[r];
        CHECK(l[r * 2 + k] == (k == 0 ? v0 * 4.0f : (v + v0) + 2.0f * v0));
      }
    CHECK(c == rc);
    CHECK(l == rl);
  }
}

TEST_CASE("control flow: a value read with item() from a cond's result is computed ahead, branch and all") {
  // n = (x > 0).sum() if x.sum() > 0 else (x < 0).sum(); x[:n] * 2
  const ctfx::ir prog = ctfx::build_checked([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto c = g.cond(
        cmp(GT, x.sum(), 0.0), [](ctfx::builder& b) { b.output(cmp(GT, b.input("a", ctfx::f32, {4}), 0.0).sum()); },
        [](ctfx::builder& b) { b.output(cmp(LT, b.input("a", ctfx::f32, {4}), 0.0).sum()); }, {x});
    const ctfx::sym_expr n = ctfx::item(g, c[0], "u0");
    g.output(x.slice(0, 0, n) * 2.0);
  });
  REQUIRE(ctfx::verify(prog).ok());
  ctfx::runtime_plan plan(prog);
  REQUIRE(plan.error().ok());
  for (const std::vector<float>& x0 : {std::vector<float>{3, -1, 2, 0}, std::vector<float>{-3, -1, 2, -5}}) {
    std::vector<float> x = x0;
    const auto b = plan.bind_values({f32v(x)});
    REQUIRE_MESSAGE(b.status, b.status.message);
    REQUIRE(b.outputs.size() == 1);
    const ctfx::index_t n = b.outputs[0].size[0];
    CHECK(n == (x0[0] > 0 ? 2 : 3));  // two positive values, or three negative ones
    std::vector<float> out(static_cast<std::size_t>(n)), ref(static_cast<std::size_t>(n));
    REQUIRE(plan.run({f32v(x)}, {f32v(out)}));
    REQUIRE(ctfx::reference_run(prog, {f32v(x)}, {f32v(ref)}));
    for (std::size_t k = 0; k < out.size(); ++k) CHECK(out[k] == x0[k] * 2.0f);
    CHECK(out == ref);
  }
}

namespace {
// Printing g as FX text and parsing that gives g again (the same nodes, names, subgraphs).
std::string round_trip_failure(const ctfx::ir& g) {
  const std::string fx = ctfx::to_fx(g);
  const ctfx::fx_parse_result again = ctfx::parse_fx(fx);
  if (!again.ok()) return "the printed text does not parse: " + std::string(again.error.message()) + "\n" + fx;
  if (ctfx::to_text(again.graph) != ctfx::to_text(g)) return "parsed back, another graph:\n" + fx + "\n" + ctfx::to_text(again.graph);
  return {};
}
}  // namespace

TEST_CASE("control flow FX: cond and while_loop programs print as nested graph modules and parse back the same") {
  // The captured texts (a KV-cache write, a loop with a carried counter, nested conds, a Jacobi loop)
  for (std::string_view text : {kv_text, loop_text, nested_text, jacobi_text}) {
    const ctfx::fx_parse_result r = ctfx::parse_fx(text);
    REQUIRE(r.ok());
    CHECK_MESSAGE(round_trip_failure(r.graph).empty(), round_trip_failure(r.graph));
  }
  // and programs built with the builder (a cond in a loop's body too)
  for (const ctfx::ir& g : {sgd_skip(), doubling()}) CHECK_MESSAGE(round_trip_failure(g).empty(), round_trip_failure(g));
  const std::string fx = ctfx::to_fx(doubling());
  CHECK(fx.find("        while_loop_cond_graph_0 = self.while_loop_cond_graph_0\n"
                "        while_loop_body_graph_0 = self.while_loop_body_graph_0\n"
                "        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, "
                "(zeros, x), (n,))\n") != std::string::npos);
  CHECK(fx.find("\n    class while_loop_body_graph_0(torch.nn.Module):\n"
                "        def forward(self, i: \"i64[][]cpu\", x: \"f32[3][1]cpu\", m: \"i64[][]cpu\"):\n") != std::string::npos);
  const ctfx::fx_parse_result nested = ctfx::parse_fx(nested_text);
  REQUIRE(nested.ok());
  CHECK(ctfx::to_fx(nested.graph).find("\n        class true_graph_0(torch.nn.Module):\n            def forward(self, ") != std::string::npos);
}

TEST_CASE("control flow: the plan listing shows each branch's and body's own plan") {
  const ctfx::runtime_plan p(sgd_skip());
  REQUIRE(p.error().ok());
  const std::string t = ctfx::listing(p.graph(), p.life(), p.memory_plan());
  INFO(t);
  CHECK(t.find("    if lt.item():  # the predicate, read on the host\n"
               "        # subgraph_0: the then-graph, a plan of its own\n"
               "        def subgraph_0(x, y):\n") != std::string::npos);
  CHECK(t.find("    else:\n        # subgraph_1: the else-graph, a plan of its own\n        def subgraph_1(x, y):\n") != std::string::npos);
  CHECK(t.find("            %clone : f32[4] = clone(%x)  # step 0\n            return (%clone,)\n") != std::string::npos);
  // A loop: the condition's plan, the flag, then the body's (in place for the Jacobi sweep).
  ctfx::fx_parse_result r = ctfx::parse_fx(jacobi_text);
  REQUIRE(r.ok());
  const ctfx::runtime_plan jp(r.graph);
  REQUIRE(jp.error().ok());
  const std::string j = ctfx::listing(jp.graph(), jp.life(), jp.memory_plan());
  INFO(j);
  CHECK(j.find("    while True:\n        # subgraph_0: the condition graph, a plan of its own\n        def subgraph_0(") != std::string::npos);
  CHECK(j.find("        if not flag.item(): break  # the condition's one b8, read on the host\n"
               "        # subgraph_2: the body graph in its in-place form") != std::string::npos);
  // a body that returns one of its inputs (x unchanged) has no in-place form: two buffer sets
  const ctfx::ir keep = ctfx::build_checked([](ctfx::builder& g) {
    auto loop = g.while_loop(
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          (void)b.input("x", ctfx::f32, {2});
          b.output(cmp(LT, i, std::int64_t{2}));
        },
        [](ctfx::builder& b) {
          auto i = b.input("i", ctfx::i64, {});
          b.output(i + 1, b.input("x", ctfx::f32, {2}));
        },
        {g.zeros({}, ctfx::i64), g.input("x", ctfx::f32, {2})});
    g.output(loop[1]);
  });
  const ctfx::runtime_plan kp(keep);
  REQUIRE(kp.error().ok());
  const std::string k = ctfx::listing(kp.graph(), kp.life(), kp.memory_plan());
  INFO(k);
  CHECK(k.find("        # subgraph_1: the body graph (it writes the next carried values into the other of two buffer sets)") != std::string::npos);
}
