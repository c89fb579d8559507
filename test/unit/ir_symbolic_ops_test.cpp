// Sizes as PyTorch writes them with dynamic shapes (graph/sym_ops.hpp): floor division, modulo, Max
// and Min as derived symbols of the graph (simplified where the answer is known, made once per
// distinct expression so that equal expressions compare equal), their printing, their parse from
// FX text (sizes, Sym lines, torch.sym_max), the binder's evaluation with Python's semantics, the
// guards PyTorch relied on checked at run time, and the errors.
#include <doctest/doctest.h>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

namespace {

using ctfx::sym_expr;

constexpr ctfx::ir two_symbols() {
  ctfx::ir g;
  for (const char* n : {"s0", "s1"}) {
    ctfx::symbol s{};
    s.name = ctfx::name_t(n);
    g.syms.push_back(s);
  }
  return g;
}

// ----- simplification and canonical equality, at compile time -----
constexpr bool simplifies() {
  ctfx::ir g = two_symbols();
  const sym_expr a = sym_expr::symbol(0), b = sym_expr::symbol(1);
  bool ok = ctfx::sym_floordiv(g, sym_expr(7), sym_expr(-2)) == sym_expr(-4);  // Python's floor
  ok = ok && ctfx::sym_mod(g, sym_expr(-7), sym_expr(3)) == sym_expr(2);           // sign of the divisor
  ok = ok && ctfx::sym_floordiv(g, a * 4 + 6, sym_expr(2)) == a * 2 + 3;          // exact
  ok = ok && ctfx::sym_floordiv(g, a * 4 + 7, sym_expr(4)) == a + 1;              // (4a + 7)//4
  ok = ok && ctfx::sym_floordiv(g, a * 4 - 1, sym_expr(4)) == a - 1;              // (4a - 1)//4
  ok = ok && ctfx::sym_mod(g, a * 4 + 7, sym_expr(4)) == sym_expr(3);
  ok = ok && ctfx::sym_floordiv(g, a * b, b) == a && ctfx::sym_mod(g, a * b, b) == sym_expr(0);
  ok = ok && ctfx::sym_floordiv(g, a + b, a + b) == sym_expr(1);
  ok = ok && ctfx::sym_max(g, a, a - 1) == a && ctfx::sym_min(g, a + 2, a) == a;
  ok = ok && g.syms.size() == 2;  // nothing above needed a derived symbol
  return ok;
}
static_assert(simplifies());

constexpr bool canonical() {
  ctfx::ir g = two_symbols();
  const sym_expr a = sym_expr::symbol(0), b = sym_expr::symbol(1);
  const sym_expr h = ctfx::sym_floordiv(g, a, sym_expr(2));
  bool ok = g.syms.size() == 3 && h == sym_expr::symbol(2);
  ok = ok && ctfx::sym_floordiv(g, a + 1 - 1, sym_expr(2)) == h;  // the same expression, the same symbol
  ok = ok && a - h == a - ctfx::sym_floordiv(g, a, sym_expr(2));  // ... so sizes built on it compare equal
  ok = ok && !(ctfx::sym_floordiv(g, a, sym_expr(3)) == h);
  ok = ok && ctfx::sym_max(g, sym_expr(1), a) == ctfx::sym_max(g, a, sym_expr(1));  // Max is commutative
  ok = ok && ctfx::sym_min(g, a, b) == ctfx::sym_min(g, b, a) && !(ctfx::sym_min(g, a, b) == ctfx::sym_max(g, a, b));
  ok = ok && ctfx::sym_mod(g, a, sym_expr(4)) == ctfx::sym_mod(g, a, sym_expr(4)) && !(ctfx::sym_mod(g, a, sym_expr(4)) == ctfx::sym_floordiv(g, a, sym_expr(4)));
  // (s0//2)//2 nests: a derived symbol over a derived symbol
  const sym_expr q = ctfx::sym_floordiv(g, h, sym_expr(2));
  ok = ok && q.as_symbol() > h.as_symbol() && g.syms[static_cast<std::size_t>(q.as_symbol())].a == h;
  ok = ok && ctfx::uses_derived(g, q * 2 + a) && !ctfx::uses_derived(g, a * b + 1);
  ok = ok && ctfx::sym_floordiv(g, a, sym_expr(0)).overflow;  // a static zero divisor is no size
  return ok;
}
static_assert(canonical());

// ----- the builder: symbolic slice bounds and indices -----
constexpr auto halves = ctfx::graph([](ctfx::builder& b) {
  auto n = b.sym("n");
  auto x = b.input("x", ctfx::f32, {n, 3});
  auto h = b.floordiv(n, 2);
  b.output(x.slice(0, 0, h) * 2.0, x.slice(0, h) + 1.0, x.select(0, -1) * 3.0, x.slice(0, 1, ctfx::end_of_dim, 2) * 1.0);
});
constexpr bool halves_sizes() {
  const ctfx::ir g = halves.get();
  const auto o = g.args_of(g.output_node());
  const sym_expr n = sym_expr::symbol(0);
  ctfx::ir t = g;  // the same expressions again: found in the table, not made anew
  const sym_expr h = ctfx::sym_floordiv(t, n, sym_expr(2));
  return t.syms.size() == g.syms.size() && g.meta(o[0]).size[0] == h && g.meta(o[1]).size[0] == n - h &&
         g.meta(o[2]).rank == 1 && g.meta(o[3]).size[0] == ctfx::sym_floordiv(t, n, sym_expr(2)) &&  // (n - 1 + 1)//2
         t.syms.size() == g.syms.size();
}
static_assert(halves_sizes());

std::string text(const ctfx::ir& g, const sym_expr& e) { return ctfx::to_string(g, e); }

ctfx::ir parsed(const char* fx) {
  const auto r = ctfx::parse_fx(fx);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  return r.graph;
}
std::string parse_error(const char* fx) {
  const auto r = ctfx::parse_fx(fx);
  return r.ok() ? std::string("ok") : ctfx::to_string(r.error);
}
}  // namespace

TEST_CASE("ir symbolic ops: derived symbols print as PyTorch prints them") {
  ctfx::ir g = two_symbols();
  const sym_expr a = sym_expr::symbol(0), b = sym_expr::symbol(1);
  CHECK(text(g, ctfx::sym_floordiv(g, a, sym_expr(2))) == "(s0//2)");
  CHECK(text(g, ctfx::sym_floordiv(g, a + 1, sym_expr(2))) == "((s0 + 1)//2)");
  CHECK(text(g, a - ctfx::sym_floordiv(g, a, ctfx::sym_floordiv(g, a, sym_expr(2)))) == "s0 - (s0//(s0//2))");
  CHECK(text(g, ctfx::sym_mod(g, a, sym_expr(3))) == "Mod(s0, 3)");
  CHECK(text(g, ctfx::sym_max(g, a, sym_expr(1))) == "Max(1, s0)");
  CHECK(text(g, ctfx::sym_min(g, b * 2, a)) == "Min(s0, 2*s1)");
  CHECK(text(g, ctfx::sym_floordiv(g, a * b, sym_expr(4)) * 3) == "3*((s0*s1)//4)");
}

TEST_CASE("ir symbolic ops: the binder evaluates them with Python's floor division and modulo") {
  ctfx::ir g = two_symbols();
  const sym_expr a = sym_expr::symbol(0), b = sym_expr::symbol(1);
  const sym_expr d = ctfx::sym_floordiv(g, a - 10, b), m = ctfx::sym_mod(g, a - 10, b), mx = ctfx::sym_max(g, a - 10, b),
                 mn = ctfx::sym_min(g, a - 10, b), nested = ctfx::sym_floordiv(g, d * 3, sym_expr(2));
  std::vector<ctfx::index_t> v(g.syms.size(), -1);
  v[0] = 3;
  v[1] = 4;
  REQUIRE(ctfx::bind_derived(g, v).ok);
  CHECK(d.eval(v) == -2);  // -7 // 4
  CHECK(m.eval(v) == 1);   // -7 % 4
  CHECK(mx.eval(v) == 4);
  CHECK(mn.eval(v) == -7);
  CHECK(nested.eval(v) == -3);  // -6 // 2
  v.assign(g.syms.size(), -1);
  v[0] = 3;
  v[1] = 0;
  const auto st = ctfx::bind_derived(g, v);
  CHECK(!st.ok);
  CHECK(st.message == "rule symbolic-division: ((s0 - 10)//s1) divides by zero for these inputs");
}

// A view PyTorch traced under the guard that s77 is even: (s77//2)*2 == s77.
constexpr const char* floordiv_view = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "f32[s77, 3][3, 1]cpu"):
        floordiv: "Sym((s77//2))" = arg0_1 // 2;  arg0_1 = None
        view: "f32[(s77//2), (s77//((s77//2))), 3][3*((s77//((s77//2)))), 3, 1]cpu" = torch.ops.aten.reshape.default(arg1_1, [floordiv, 2, 3]);  arg1_1 = floordiv = None
        sum_1: "f32[(s77//2), 3][3, 1]cpu" = torch.ops.aten.sum.dim_IntList(view, [1]);  view = None
        return (sum_1,)
)fx";

TEST_CASE("ir symbolic ops: FX sizes with //, Mod, Max and torch.sym_min parse, and PyTorch's guards are checked at run time") {
  const ctfx::ir g = parsed(floordiv_view);
  const auto out = g.args_of(g.output_node())[0];
  CHECK(ctfx::to_string(g, g.meta(out)) == "f32[(s77//2), 3]");
  auto run = [&](ctfx::index_t rows) {
    std::vector<float> x(static_cast<std::size_t>(rows * 3)), y(static_cast<std::size_t>(rows / 2 * 3), -1.0f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    const auto st = ctfx::runtime_plan(g).run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {rows, 3}))},
                                              std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(y.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {rows / 2, 3}))});
    return std::make_pair(st, y);
  };
  const auto even = run(6);
  REQUIRE_MESSAGE(even.first.ok, even.first.message);
  CHECK(even.second == std::vector<float>{3, 5, 7, 15, 17, 19, 27, 29, 31});  // rows (0,1), (2,3), (4,5) summed
  const auto odd = run(5);
  CHECK(!odd.first.ok);
  CHECK(odd.first.message.find("rule symbolic-guard: the graph was traced assuming Eq(") == 0);
  CHECK(odd.second == std::vector<float>(6, -1.0f));  // validated before anything was written

  const ctfx::ir m = parsed(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "f32[s77, 2][2, 1]cpu"):
        mod: "Sym(Mod(s77, 4))" = arg0_1 % 4
        sub: "Sym(s77 - (Mod(s77, 4)))" = arg0_1 - mod;  arg0_1 = mod = None
        sym_min: "Sym(Min(5, s77 - (Mod(s77, 4))))" = torch.sym_min(sub, 5);  sub = None
        sym_max: "Sym(Max(1, Min(5, s77 - (Mod(s77, 4)))))" = torch.sym_max(1, sym_min)
        slice_1: "f32[Min(5, s77 - (Mod(s77, 4))), 2][2, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, sym_min);  arg1_1 = sym_min = None
        select: "f32[2][1]cpu" = torch.ops.aten.select.int(slice_1, 0, -1)
        clone: "f32[2][1]cpu" = torch.ops.aten.clone.default(select)
        return (slice_1, clone)
)fx");
  const auto o = m.args_of(m.output_node());
  CHECK(ctfx::to_string(m, m.meta(o[0])) == "f32[Min(5, s77 - Mod(s77, 4)), 2]");
  std::vector<ctfx::index_t> v(m.syms.size(), -1);
  v[0] = 11;
  REQUIRE(ctfx::bind_derived(m, v).ok);
  CHECK(m.meta(o[0]).size[0].eval(v) == 5);          // min(5, 11 - 3)
  CHECK(m.meta(m.arg(o[1], 0)).offset.eval(v) == 8);  // row 4 of x: x[:5][-1]
}

TEST_CASE("ir symbolic ops: errors name the line or the node") {
  CHECK(parse_error(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[s0, 4][4, 1]cpu"):
        floordiv: "Sym(s0/2)" = arg0_1
        return (arg0_1,)
)fx").find("true division of symbolic sizes ('/') is not an integer size") != std::string::npos);
  CHECK(parse_error(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[(s0//0), 4][4, 1]cpu"):
        return (arg0_1,)
)fx").find("division by zero in a symbolic size") != std::string::npos);
  CHECK(parse_error(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[s0 + s1 + s2 + s3 + s4, 4][4, 1]cpu"):
        return (arg0_1,)
)fx").find("a symbolic size needs more than 4 terms of 4 symbols") != std::string::npos);
  // A slice whose bounds are known out of order on a symbolic dimension, in the compiler.
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {b.sym("n"), 3});
    b.output(x.slice(0, -1, -2).clone());
  }, &d);
  CHECK(d.r == ctfx::rule::index_out_of_range);
  CHECK(std::string(d.message()).find("node 'slice' (slice)") == 0);
}
