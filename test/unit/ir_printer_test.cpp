// Printers (graph/print.hpp, graph/dot.hpp): the FX-like text of every op family, one node's line,
// the Graphviz text, layout strings and diagnostics, each against its exact expected text.
// (Nodes are made in separate statements: the order of evaluation of function arguments, and so
// the order of the printed nodes, is not fixed by C++.)
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/inplace_table.hpp>
#include <ctfx/passes/pipeline.hpp>
#include <string>

namespace {

struct sin_cos : ctfx::custom_op<"sin_cos", "sin_cos(Tensor x, Tensor(a!) out_sin, Tensor(a!) out_cos) -> ()"> {};

constexpr auto every_family = ctfx::graph([](ctfx::builder& g) {
  auto s0 = g.sym("s0");
  auto x = g.input("x", ctfx::f32, {4, 8});
  auto idx = g.input("idx", ctfx::i64, {2});
  auto v = g.input("v", ctfx::f32, {2, 8});
  auto d = g.input("d", ctfx::f32, {s0, 8});
  auto z = g.zeros({2, 8});
  auto f = g.full({4, 8}, 0.5, ctfx::f16);
  auto m = x * 2;
  auto a = m + 1.0;
  auto b = ctfx::exp(-a) / 2.5;
  auto e = ctfx::slice_scatter(x, v, 0, 2);
  auto row = v.select(0, 1);
  auto e2 = ctfx::select_scatter(e, row, 0, 3);
  auto dg = x.diagonal(1);
  auto e3 = ctfx::diagonal_scatter(e2, dg, 1);
  auto e4 = ctfx::as_strided_scatter(e3, z, {2, 8}, {8, 1}, 16);
  auto ip = ctfx::index_put(e4, {idx}, v, true);
  auto cols = x.slice(1, 0, 2);
  auto ip2 = ctfx::index_put(ip, {ctfx::none, idx}, cols);
  auto r = ctfx::foreach_add({a, b}, {x, x});
  auto r2 = ctfx::foreach_mul({a}, 3.0);
  auto sc = g.call<sin_cos>(x, a, b);
  auto c = ctfx::cat({x, z}, 0);
  auto sm = c.sum({1}, true);
  auto mx = x.amax({-1});
  auto vw = x.view({2, 16}).permute({1, 0}).unsqueeze(0).squeeze(0).expand({16, 2});
  auto t = x.transpose(0, 1).as_strided({2, 2}, {1, 8}).to(ctfx::i32);
  auto tail = d.slice(0, 1);
  (void)tail.sym_size(0);
  auto r1 = r[1];
  auto r20 = r2[0];
  auto sc0 = sc[0];
  auto cl = d.slice(0, 1, 5).clone();
  auto st = x.slice(1, 1, 7, 3);
  g.update(x, ip2);
  g.output(b, r1, r20, sc0, sm, mx, vw, t, f, cl, st);
});

}  // namespace

TEST_CASE("ir printer: to_text of every op family") {
  CHECK(ctfx::to_text(every_family.get()) ==
        R"(graph(%x : f32[4, 8], %idx : i64[2], %v : f32[2, 8], %d : f32[s0, 8]):
  %zeros : f32[2, 8] = zeros([2, 8], dtype=f32)
  %full : f16[4, 8] = full([4, 8], 0.5, dtype=f16)
  %mul : f32[4, 8] = mul(%x, 2)
  %add : f32[4, 8] = add(%mul, 1.0)
  %neg : f32[4, 8] = neg(%add)
  %exp : f32[4, 8] = exp(%neg)
  %div : f32[4, 8] = div(%exp, 2.5)
  %slice_scatter : f32[4, 8] = slice_scatter(%x, %v, dim=0, start=2, end=None)
  %select : f32[8] = select(%v, dim=0, index=1)
  %select_scatter : f32[4, 8] = select_scatter(%slice_scatter, %select, dim=0, index=3)
  %diagonal : f32[4] = diagonal(%x, offset=1, dim1=0, dim2=1)
  %diagonal_scatter : f32[4, 8] = diagonal_scatter(%select_scatter, %diagonal, offset=1, dim1=0, dim2=1)
  %as_strided_scatter : f32[4, 8] = as_strided_scatter(%diagonal_scatter, %zeros, size=[2, 8], stride=[8, 1], storage_offset=16)
  %index_put : f32[4, 8] = index_put(%as_strided_scatter, [%idx], %v, accumulate=True)
  %slice : f32[4, 2] = slice(%x, dim=1, start=0, end=2)
  %index_put_1 : f32[4, 8] = index_put(%index_put, [None, %idx], %slice)
  %foreach_add = _foreach_add([%add, %div], [%x, %x])
  %foreach_mul = _foreach_mul([%add], 3)
  %auto_functionalized = auto_functionalized(sin_cos, %x, %add, %div)
  %cat : f32[6, 8] = cat([%x, %zeros], dim=0)
  %sum : f32[6, 1] = sum(%cat, [1], keepdim=True)
  %amax : f32[4] = amax(%x, [-1])
  %view : f32[2, 16] = view(%x, size=[2, 16])
  %permute : f32[16, 2] = permute(%view, dims=[1, 0])
  %unsqueeze : f32[1, 16, 2] = unsqueeze(%permute, dim=0)
  %squeeze : f32[16, 2] = squeeze(%unsqueeze, dim=0)
  %expand : f32[16, 2] = expand(%squeeze, size=[16, 2])
  %transpose : f32[8, 4] = transpose(%x, dim0=0, dim1=1)
  %as_strided : f32[2, 2] = as_strided(%transpose, size=[2, 2], stride=[1, 8], storage_offset=0)
  %convert_element_type : i32[2, 2] = convert_element_type(%as_strided, i32)
  %slice_1 : f32[s0 - 1, 8] = slice(%d, dim=0, start=1, end=None)
  %sym_size = sym_size(%slice_1, 0)
  %getitem : f32[4, 8] = getitem(%foreach_add, 1)
  %getitem_1 : f32[4, 8] = getitem(%foreach_mul, 0)
  %getitem_2 : f32[4, 8] = getitem(%auto_functionalized, 0)
  %slice_2 : f32[4, 8] = slice(%d, dim=0, start=1, end=5)
  %clone : f32[4, 8] = clone(%slice_2)
  %slice_3 : f32[4, 2] = slice(%x, dim=1, start=1, end=7, step=3)
  %copy_ : f32[4, 8] = copy_(%x, %index_put_1)
  return (%div, %getitem, %getitem_1, %getitem_2, %sum, %amax, %expand, %convert_element_type, %full, %clone, %slice_3)
)");
}

TEST_CASE("ir printer: node_text of single nodes: renamed nodes, scalars, a single output") {
  constexpr auto small = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {3});
    auto i = g.input("i", ctfx::i64, {3});
    auto y = (x - 0.25).named("y");
    auto k = i * 3;
    auto q = (i / 2).named("q");
    auto p = ctfx::pow(x, 2.0);
    auto w = ctfx::pow(x, 0.5);
    auto u = ctfx::unsafe_index_put(w, {i}, k.to(ctfx::f32));
    auto mx = ctfx::maximum(y, p) + q;
    g.output(mx + u);
  });
  const ctfx::ir g = small.get();
  auto line = [&](const char* name) { return ctfx::node_text(g, g.find(name)); };
  CHECK(line("x") == "%x : f32[3] = placeholder()");
  CHECK(line("y") == "%y : f32[3] = sub(%x, 0.25)");
  CHECK(line("mul") == "%mul : i64[3] = mul(%i, 3)");               // an integer scalar
  CHECK(line("q") == "%q : f32[3] = div(%i, 2)");                   // true division gives f32
  CHECK(line("pow") == "%pow : f32[3] = pow(%x, 2)");               // an integral exponent
  CHECK(line("pow_1") == "%pow_1 : f32[3] = pow(%x, 0.5)");
  CHECK(line("unsafe_index_put") == "%unsafe_index_put : f32[3] = _unsafe_index_put(%pow_1, [%i], %convert_element_type)");
  CHECK(line("maximum") == "%maximum : f32[3] = maximum(%y, %pow)");
  CHECK(line("output") == "return (%add_1,)");
  CHECK(ctfx::to_text(g).substr(0, 37) == "graph(%x : f32[3], %i : i64[3]):\n  %y");
}

TEST_CASE("ir printer: to_dot") {
  constexpr auto tiny = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4});
    auto y = x + 1.0;
    auto r = g.call<sin_cos>(x, y, y);
    g.update(x, r[1]);
    g.output(y);
  });
  CHECK(ctfx::to_dot(tiny.get(), "step \"1\"") == R"(digraph "step \"1\"" {
  rankdir=TB;
  node [shape=box, fontname="monospace"];
  n0 [label="x\nplaceholder\nf32[4]", style=filled, fillcolor=lightblue];
  n1 [label="add\nadd\nf32[4]"];
  n2 [label="auto_functionalized\nauto_functionalized"];
  n3 [label="getitem\ngetitem\nf32[4]"];
  n4 [label="copy_\ncopy_\nf32[4]", color=red];
  n5 [label="output\noutput", style=filled, fillcolor=lightgrey];
  n0 -> n1 [label="0"];
  n0 -> n2 [label="0"];
  n1 -> n2 [label="1"];
  n1 -> n2 [label="2"];
  n2 -> n3 [label="0"];
  n0 -> n4 [label="0"];
  n3 -> n4 [label="1"];
  n1 -> n5 [label="0"];
}
)");
}

TEST_CASE("ir printer: layout_string, types and diagnostics") {
  constexpr auto f = ctfx::graph([](ctfx::builder& g) {
    auto s0 = g.sym("s0");
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto d = g.input("d", ctfx::bf16, {s0, 8});
    auto e = g.input("e", ctfx::i8, {});
    auto a = x.slice(1, 1, 7, 2);
    auto b = d.slice(0, 1).transpose(0, 1);
    auto c = x.unsqueeze(0).expand({3, 4, 8});
    g.output(a, b, c, e);
  });
  const ctfx::ir g = f.get();
  auto lay = [&](const char* name) { return ctfx::layout_string(g, g.meta(g.find(name))); };
  CHECK(lay("x") == "f32[4, 8][8, 1]");
  CHECK(lay("slice") == "f32[4, 3][8, 2]+1");
  CHECK(lay("transpose") == "bf16[8, s0 - 1][1, 8]+8");
  CHECK(lay("expand") == "f32[3, 4, 8][0, 8, 1]");
  CHECK(lay("e") == "i8[][]");
  CHECK(ctfx::to_string(g, g.meta(g.find("d"))) == "bf16[s0, 8]");
  CHECK(ctfx::to_string(g, g.meta(g.find("d")).numel()) == "8*s0");
  CHECK(ctfx::to_string(ctfx::verify(g)) == "ok");

  ctfx::diagnostic bad{};
  (void)ctfx::build_checked(
      [](ctfx::builder& b) {
        auto x = b.input("x", ctfx::f32, {4, 8});
        b.output(x.select(1, 8));
      },
      &bad);
  CHECK(ctfx::to_string(bad) == "node 'select' (select) at ir_printer_test.cpp:184: index 8 is out of range for dimension 1 of size 8 [rule static-index-in-range]");
  CHECK(ctfx::name_of(bad.r) == "static-index-in-range");
  CHECK(bad.node == 1);
}

TEST_CASE("ir printer: to_dot shows view bounds and the order after an in-place write") {
  // After reinplacing with the executors' table the scatter writes the caller's x in place
  // (a slice of x, then copy_ into it), and the product reads x: it must wait for that write.
  constexpr auto halo_row = ctfx::graph([](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto v = g.input("v", ctfx::f32, {2, 8});
    auto y = ctfx::slice_scatter(x, v, 0, 1, 3);
    g.update(x, y);
    g.output(y * 2.0);
  });
  const ctfx::ir g = ctfx::pipeline<decltype(halo_row), ctfx::executor_inplace_table>::get();
  const std::string d = ctfx::to_dot(g);
  INFO(d);
  CHECK(d.find("\\nslice\\nf32[2, 8]\\ndim=0, start=1, end=3") != std::string::npos);
  CHECK(d.find("copy_\\nf32[2, 8]\", color=red") != std::string::npos);
  std::int32_t write = -1, mul = -1;
  for (std::int32_t i = 0; i < g.size(); ++i) {
    if (g[i].op == ctfx::op_kind::copy_ && write < 0) write = i;
    if (g[i].op == ctfx::op_kind::mul) mul = i;
  }
  REQUIRE(write >= 0);
  REQUIRE(mul > write);
  CHECK(d.find("n" + std::to_string(write) + " -> n" + std::to_string(mul) + " [style=dashed, color=red, label=\"after write\"]") !=
        std::string::npos);
  // A functional graph writes nothing in place before its epilogue: no order edge.
  CHECK(ctfx::to_dot(halo_row.get()).find("after write") == std::string::npos);
}
