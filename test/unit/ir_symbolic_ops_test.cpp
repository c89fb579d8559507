// Sizes as PyTorch writes them with dynamic shapes (graph/sym_ops.hpp): floor division, modulo, Max
// and Min as derived symbols of the graph (simplified where the answer is known, made once per
// distinct expression so that equal expressions compare equal), their printing, their parse from
// FX text (sizes, Sym lines, torch.sym_max), the binder's evaluation with Python's semantics, the
// guards PyTorch relied on checked at run time, and the errors.
#include <doctest/doctest.h>
#include <cmath>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/plan/listing.hpp>

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

// ----- values read from inputs with item() (graph/data_dependent.hpp, exec/input_values.hpp) -----
namespace {
// torch 2.15's graph of `p = pos.item(); cache[:, p:p+1] = k` (test/data/fx/it_kv_write.txt)
constexpr const char* kv_write_fx = R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[2, 8, 3][24, 3, 1]cpu", arg2_1: "f32[2, 1, 3][3, 3, 1]cpu"):
        _local_scalar_dense: "Sym(u5)" = torch.ops.aten._local_scalar_dense.default(arg0_1);  arg0_1 = None
        add: "Sym(u5 + 1)" = _local_scalar_dense + 1
        slice_1: "f32[2, u6, 3][24, 3, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 1, _local_scalar_dense, add)
        sym_size_int: "Sym(u6)" = torch.ops.aten.sym_size.int(slice_1, 1)
        expand: "f32[2, u6, 3][3, 0, 1]cpu" = torch.ops.aten.expand.default(arg2_1, [2, sym_size_int, 3]);  arg2_1 = sym_size_int = None
        copy: "f32[2, u6, 3][24, 3, 1]cpu" = torch.ops.aten.copy.default(slice_1, expand);  slice_1 = expand = None
        slice_scatter: "f32[2, 8, 3][24, 3, 1]cpu" = torch.ops.aten.slice_scatter.default(arg1_1, copy, 1, _local_scalar_dense, add);  copy = _local_scalar_dense = add = None
        copy_: "f32[2, 8, 3][24, 3, 1]cpu" = torch.ops.aten.copy_.default(arg1_1, slice_scatter);  arg1_1 = slice_scatter = None
        return (copy_,)
)fx";
// `m = n.item(); torch._check(m >= 1); torch._check(m <= x.shape[0]); x[:m].sum()` (it_check.txt)
constexpr const char* check_fx = R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[9, 2][2, 1]cpu"):
        _local_scalar_dense: "Sym(u1)" = torch.ops.aten._local_scalar_dense.default(arg0_1);  arg0_1 = None
        ge: "Sym(u1 >= 1)" = _local_scalar_dense >= 1
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed for expression s33 >= 1 on node 'ge'");  ge = _assert_scalar = None
        le: "Sym(u1 <= 9)" = _local_scalar_dense <= 9
        _assert_scalar_1 = torch.ops.aten._assert_scalar.default(le, "Runtime assertion failed for expression s33 <= 9 on node 'le'");  le = _assert_scalar_1 = None
        slice_1: "f32[u1, 2][2, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, _local_scalar_dense);  arg1_1 = _local_scalar_dense = None
        sum_1: "f32[][]cpu" = torch.ops.aten.sum.default(slice_1);  slice_1 = None
        return (sum_1,)
)fx";
// `x[:n.item()] * 2` (it_valid_len.txt): an output sized by the value
constexpr const char* valid_len_fx = R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[10, 3][3, 1]cpu"):
        _local_scalar_dense: "Sym(u2)" = torch.ops.aten._local_scalar_dense.default(arg0_1);  arg0_1 = None
        slice_1: "f32[u3, 3][3, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, _local_scalar_dense);  arg1_1 = _local_scalar_dense = None
        mul: "f32[u3, 3][3, 1]cpu" = torch.ops.aten.mul.Tensor(slice_1, 2);  slice_1 = None
        return (mul,)
)fx";
// `x[n.item() % 4]` (it_mod.txt): Python's modulo of a value that may be negative
constexpr const char* mod_fx = R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[4, 3][3, 1]cpu"):
        _local_scalar_dense: "Sym(u1)" = torch.ops.aten._local_scalar_dense.default(arg0_1);  arg0_1 = None
        mod: "Sym(PythonMod(u1, 4))" = _local_scalar_dense % 4;  _local_scalar_dense = None
        select: "f32[3][1]cpu" = torch.ops.aten.select.int(arg1_1, 0, mod);  arg1_1 = mod = None
        return (select,)
)fx";

ctfx::tensor_ref f32_ref(std::vector<float>& v, std::initializer_list<ctfx::index_t> sizes) {
  return {v.data(), ctfx::tensor_desc::contiguous(ctfx::f32, sizes)};
}
ctfx::tensor_ref i64_scalar(std::int64_t& v) { return {&v, ctfx::tensor_desc::contiguous(ctfx::i64, {})}; }
}  // namespace

TEST_CASE("ir symbolic ops: item() of an input is an unbacked symbol bound from its value") {
  const ctfx::ir g = parsed(kv_write_fx);
  int values = 0;
  for (const auto& s : g.syms) values += ctfx::is_input_value(s) ? 1 : 0;
  CHECK(values == 1);  // u5, read from input 0; u6 stands for ctfx's own length (1)
  const ctfx::runtime_plan p(g);
  REQUIRE_MESSAGE(p.error().ok(), ctfx::to_string(p.error()));
  std::vector<float> k(6);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<float>(i + 1);
  for (std::int64_t pos : {0, 5, 7}) {
    std::vector<float> cache(48, -1.0f), out(48, 0.0f);
    std::int64_t at = pos;
    const auto st = p.run({i64_scalar(at), f32_ref(cache, {2, 8, 3}), f32_ref(k, {2, 1, 3})}, {f32_ref(out, {2, 8, 3})});
    REQUIRE_MESSAGE(st.ok, st.message);
    // the hand reference: row `pos` of each batch takes k, the rest stays -1
    for (int b = 0; b < 2; ++b)
      for (int r = 0; r < 8; ++r)
        for (int c = 0; c < 3; ++c) {
          const float want = r == pos ? k[static_cast<std::size_t>(b * 3 + c)] : -1.0f;
          CHECK(cache[static_cast<std::size_t>(b * 24 + r * 3 + c)] == want);
          CHECK(out[static_cast<std::size_t>(b * 24 + r * 3 + c)] == want);
        }
  }
}

TEST_CASE("ir symbolic ops: a position out of range is refused before anything is written") {
  const ctfx::runtime_plan p(parsed(kv_write_fx));
  std::vector<float> k(6, 5.0f);
  for (std::int64_t pos : {8, 100, -1}) {
    std::vector<float> cache(48, -1.0f), out(48, 7.0f);
    std::int64_t at = pos;
    const auto st = p.run({i64_scalar(at), f32_ref(cache, {2, 8, 3}), f32_ref(k, {2, 1, 3})}, {f32_ref(out, {2, 8, 3})});
    CHECK_FALSE(st.ok);
    CHECK(st.message.find("rule symbolic-guard") == 0);
    CHECK(st.message.find("u5") != std::string::npos);
    CHECK(cache == std::vector<float>(48, -1.0f));  // the cache is as it was
    CHECK(out == std::vector<float>(48, 7.0f));
  }
}

TEST_CASE("ir symbolic ops: _assert_scalar and torch._check become checks of the bind") {
  const ctfx::runtime_plan p(parsed(check_fx));
  REQUIRE(p.error().ok());
  std::vector<float> x(18);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  for (std::int64_t n : {1, 5, 9}) {
    std::int64_t m = n;
    float out = 0.0f;
    const auto st = p.run({i64_scalar(m), f32_ref(x, {9, 2})}, {ctfx::tensor_ref::contiguous(&out, {})});
    REQUIRE_MESSAGE(st.ok, st.message);
    float want = 0.0f;
    for (std::int64_t i = 0; i < 2 * n; ++i) want += x[static_cast<std::size_t>(i)];
    CHECK(out == doctest::Approx(want));
  }
  for (std::int64_t n : {0, -3, 10}) {  // m >= 1 and m <= 9 (the slice's own guards would take 0)
    std::int64_t m = n;
    float out = 3.0f;
    const auto st = p.run({i64_scalar(m), f32_ref(x, {9, 2})}, {ctfx::tensor_ref::contiguous(&out, {})});
    CHECK_FALSE(st.ok);
    CHECK(st.message.find("rule symbolic-guard") == 0);
    CHECK(out == 3.0f);
  }
}

TEST_CASE("ir symbolic ops: an output sized by a value read with item()") {
  const ctfx::runtime_plan p(parsed(valid_len_fx));
  REQUIRE(p.error().ok());
  std::vector<float> x(30);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 4.0f;
  std::int64_t n = 4;
  // shapes alone cannot size the output: the bind says so and names the symbol and the input
  const auto no_values = p.bind({ctfx::tensor_desc::contiguous(ctfx::i64, {}), ctfx::tensor_desc::contiguous(ctfx::f32, {10, 3})});
  CHECK_FALSE(no_values.status.ok);
  CHECK(no_values.status.message.find("rule unbacked-symbol: symbol 'u2' is the value of input 0 (item())") == 0);
  const auto b = p.bind_values({i64_scalar(n), f32_ref(x, {10, 3})});
  REQUIRE_MESSAGE(b.status.ok, b.status.message);
  REQUIRE(b.outputs.size() == 1);
  CHECK(b.outputs[0].rank == 2);
  CHECK(b.outputs[0].size[0] == 4);
  std::vector<float> out(12, 0.0f);
  const auto st = p.run({i64_scalar(n), f32_ref(x, {10, 3})}, {f32_ref(out, {4, 3})});
  REQUIRE_MESSAGE(st.ok, st.message);
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == x[i] * 2.0f);
  std::int64_t zero = 0;  // an empty prefix
  CHECK(p.bind_values({i64_scalar(zero), f32_ref(x, {10, 3})}).outputs[0].size[0] == 0);
  std::int64_t eleven = 11;  // PyTorch would clamp to 10; ctfx refuses the bound
  CHECK(p.bind_values({i64_scalar(eleven), f32_ref(x, {10, 3})}).status.message.find("rule symbolic-guard") == 0);
}

TEST_CASE("ir symbolic ops: a value read with item() takes Python's modulo, negative values included") {
  const ctfx::runtime_plan p(parsed(mod_fx));
  REQUIRE(p.error().ok());
  std::vector<float> x(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  for (std::int64_t n : {6, -3, 0, -8}) {
    std::int64_t m = n;
    std::vector<float> out(3, -1.0f);
    const auto st = p.run({i64_scalar(m), f32_ref(x, {4, 3})}, {f32_ref(out, {3})});
    REQUIRE_MESSAGE(st.ok, st.message);
    const std::int64_t row = ((n % 4) + 4) % 4;
    for (std::size_t c = 0; c < 3; ++c) CHECK(out[c] == x[static_cast<std::size_t>(row * 3) + c]);
  }
}

TEST_CASE("ir symbolic ops: comparisons of sizes parse in every form PyTorch prints") {
  const ctfx::ir g = parsed(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "i64[1][1]cpu", arg1_1: "f32[8][1]cpu"):
        _local_scalar_dense: "Sym(u0)" = torch.ops.aten._local_scalar_dense.default(arg0_1)
        ge: "Sym(u0 >= 0)" = _local_scalar_dense >= 0
        _assert_scalar = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed for expression u0 >= 0 on node 'ge'")
        ne: "Sym(Ne(u0, 3))" = _local_scalar_dense != 3
        _assert_scalar_1 = torch.ops.aten._assert_scalar.default(ne, "Runtime assertion failed for expression Ne(u0, 3) on node 'ne'")
        lt: "Sym(u0 < 8)" = _local_scalar_dense < 8
        _assert_scalar_2 = torch.ops.aten._assert_scalar.default(lt, "Runtime assertion failed for expression u0 < 8 on node 'lt'")
        sym_constrain_range_for_size_default = torch.ops.aten.sym_constrain_range_for_size.default(_local_scalar_dense)
        select: "f32[][]cpu" = torch.ops.aten.select.int(arg1_1, 0, _local_scalar_dense)
        clone: "f32[][]cpu" = torch.ops.aten.clone.default(select)
        return (clone,)
)fx");
  const ctfx::runtime_plan p(g);
  REQUIRE(p.error().ok());
  std::vector<float> x{0, 1, 2, 3, 4, 5, 6, 7};
  for (std::int64_t n = -1; n <= 8; ++n) {
    std::int64_t m = n;
    float out = -1.0f;
    const auto st = p.run({{&m, ctfx::tensor_desc::contiguous(ctfx::i64, {1})}, f32_ref(x, {8})}, {ctfx::tensor_ref::contiguous(&out, {})});
    const bool holds = n >= 0 && n < 8 && n != 3;
    CHECK(st.ok == holds);
    CHECK(out == (holds ? static_cast<float>(n) : -1.0f));
  }
  CHECK(parse_error(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu"):
        _local_scalar_dense: "Sym(u0)" = torch.ops.aten._local_scalar_dense.default(arg0_1)
        eq: "Sym(Eq(u0, u0 + 1))" = _local_scalar_dense == _local_scalar_dense + 1
        _assert_scalar = torch.ops.aten._assert_scalar.default(eq, "never")
        return (arg0_1,)
)fx").find("'_assert_scalar': the assertion never holds") != std::string::npos);
}

TEST_CASE("ir symbolic ops: a value the graph computes is computed ahead and checked before any write") {
  // `p = (pos + 1).item(); cache[p] = row`, returning pos + 1: the value's cone (add) runs when the
  // call binds, so the bound check of the write's position runs before the cache is touched
  const ctfx::ir g = parsed(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[4, 3][3, 1]cpu", arg2_1: "f32[3][1]cpu"):
        add: "i64[][]cpu" = torch.ops.aten.add.Tensor(arg0_1, 1)
        _local_scalar_dense: "Sym(u0)" = torch.ops.aten._local_scalar_dense.default(add)
        select_scatter: "f32[4, 3][3, 1]cpu" = torch.ops.aten.select_scatter.default(arg1_1, arg2_1, 0, _local_scalar_dense)
        copy_: "f32[4, 3][3, 1]cpu" = torch.ops.aten.copy_.default(arg1_1, select_scatter)
        return (add,)
)fx");
  for (const bool reinplace : {true, false}) {
    ctfx::plan_options o;
    o.reinplace = reinplace;
    const ctfx::runtime_plan p(g, o);
    REQUIRE_MESSAGE(p.error().ok(), ctfx::to_string(p.error()));
    std::vector<float> row{7, 8, 9};
    for (std::int64_t n : {-1, 0, 2, 3, 9}) {
      std::vector<float> cache(12, 0.5f);
      std::int64_t pos = n, out = -5;
      const auto st = p.run({i64_scalar(pos), f32_ref(cache, {4, 3}), f32_ref(row, {3})}, {i64_scalar(out)});
      const bool in_range = n + 1 >= 0 && n + 1 < 4;
      INFO(st.message);
      CHECK(st.ok == in_range);
      if (!in_range) {  // refused when the call binds: nothing was written, and the message says so
        CHECK(st.message.find("rule symbolic-guard") == 0);
        CHECK(st.message.find("nothing was written") != std::string::npos);
        CHECK(cache == std::vector<float>(12, 0.5f));
        CHECK(out == -5);
        continue;
      }
      CHECK(out == n + 1);
      for (std::size_t i = 0; i < 12; ++i) CHECK(cache[i] == (static_cast<std::int64_t>(i / 3) == n + 1 ? row[i % 3] : 0.5f));
    }
    // a bind with shapes only cannot compute the value
    CHECK(ctfx::listing(p.graph(), p.life(), p.memory_plan()).find("    u0 = ...item()  # a value the graph computes, computed ahead") != std::string::npos);
    const auto b = p.bind({ctfx::tensor_desc::contiguous(ctfx::i64, {}), ctfx::tensor_desc::contiguous(ctfx::f32, {4, 3}),
                           ctfx::tensor_desc::contiguous(ctfx::f32, {3})});
    CHECK(b.status.message.find("rule unbacked-symbol: symbol 'u0' is a value the graph computes") == 0);
  }
  // the reference executor (the functional graph as written) computes it the same way
  std::vector<float> cache(12, 0.0f), row{1, 2, 3};
  std::int64_t pos = 0, out = 0;
  REQUIRE(ctfx::reference_run(g, {i64_scalar(pos), f32_ref(cache, {4, 3}), f32_ref(row, {3})}, {i64_scalar(out)}).ok);
  CHECK(cache[3] == 1.0f);
  CHECK(out == 1);
}

TEST_CASE("ir symbolic ops: item() of a float, or of a computed value whose size depends on another, is refused") {
  const ctfx::ir nested = parsed(R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "i64[8][1]cpu"):
        _local_scalar_dense: "Sym(u0)" = torch.ops.aten._local_scalar_dense.default(arg0_1)
        slice_1: "i64[u0][1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, _local_scalar_dense)
        sum_1: "i64[][]cpu" = torch.ops.aten.sum.default(slice_1)
        _local_scalar_dense_1: "Sym(u1)" = torch.ops.aten._local_scalar_dense.default(sum_1)
        add: "i64[][]cpu" = torch.ops.aten.add.Tensor(sum_1, 1)
        return (add,)
)fx");
  const ctfx::runtime_plan p(nested);
  CHECK(std::string(p.error().message()).find("node 'sum_1', read with item(), depends on node 'slice_1', whose size depends on another value") !=
        std::string::npos);
  ctfx::diagnostic d{};
  (void)ctfx::build_checked([](ctfx::builder& b) {
    auto x = b.input("x", ctfx::f32, {8});
    auto n = b.input("n", ctfx::f32, {});
    const sym_expr u = ctfx::item(b, n, "u0");
    b.output(x.select(0, u).clone());
  }, &d);
  CHECK(d.r == ctfx::rule::bad_argument);
  CHECK(std::string(d.message()).find("item() of a f32 tensor is a float") != std::string::npos);
}

TEST_CASE("ir symbolic ops: a buffer sized by a value read with item() is planned once the value is known") {
  // `m = n.item(); torch._check_is_size(m); torch.zeros(m, 3) + x[:1]` (test/data/fx/it_zeros_n.txt)
  const ctfx::ir g = parsed(R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[][]cpu", arg1_1: "f32[5, 3][3, 1]cpu"):
        _local_scalar_dense: "Sym(u1)" = torch.ops.aten._local_scalar_dense.default(arg0_1);  arg0_1 = None
        full: "f32[u1, 3][3, 1]cpu" = torch.ops.aten.full.default([_local_scalar_dense, 3], 0, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False);  _local_scalar_dense = None
        slice_1: "f32[1, 3][3, 1]cpu" = torch.ops.aten.slice.Tensor(arg1_1, 0, 0, 1)
        add: "f32[u1, 3][3, 1]cpu" = torch.ops.aten.add.Tensor(full, slice_1);  full = slice_1 = None
        exp: "f32[u1, 3][3, 1]cpu" = torch.ops.aten.exp.default(add)
        sum_1: "f32[][]cpu" = torch.ops.aten.sum.default(exp);  arg1_1 = None
        return (sum_1,)
)fx");
  ctfx::plan_options o;
  o.fuse = false;  // each op its own kernel: `full`, `add` and `exp` need buffers
  const ctfx::runtime_plan p(g, o);
  REQUIRE(p.error().ok());
  const ctfx::arena_plan per_buffer = ctfx::plan_arena(p.graph(), p.life());
  const std::string listing = ctfx::arena_listing(p.graph(), p.life(), per_buffer);
  INFO(listing);
  CHECK(listing.find("def call(arg0_1, arg1_1):\n    u1 = arg0_1.item()\n") != std::string::npos);
  CHECK(ctfx::listing(p.graph(), p.life(), p.memory_plan()).find("def call(arg0_1, arg1_1):\n    u1 = arg0_1.item()\n") != std::string::npos);
  // each buffer sized by u1 is in a pool made at its first buffer, never in one made before u1 is read
  std::size_t unbacked = 0;
  for (std::size_t b = 0; b < p.life().buffers.size(); ++b) {
    const auto& q = per_buffer.pools[static_cast<std::size_t>(per_buffer.slots[b].pool)];
    if (!p.life().buffers[b].unbacked) continue;
    ++unbacked;
    CHECK(q.kind == ctfx::pool_kind::unbacked);
    CHECK(q.begin <= p.life().buffers[b].begin);
  }
  CHECK(unbacked == 3);  // full, add, exp
  CHECK(listing.find("  # after its data-dependent size is known") != std::string::npos);
  std::vector<float> x{0.5f, -1.0f, 2.0f, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
  for (std::int64_t n : {0, 1, 4}) {
    std::int64_t m = n;
    float out = -1.0f;
    const auto st = p.run({i64_scalar(m), f32_ref(x, {5, 3})}, {ctfx::tensor_ref::contiguous(&out, {})});
    REQUIRE_MESSAGE(st.ok, st.message);
    float row = 0.0f;  // the hand reference: n rows of exp(x[0])
    for (std::size_t c = 0; c < 3; ++c) row += std::exp(x[c]);
    CHECK(out == doctest::Approx(static_cast<float>(n) * row));
  }
  std::int64_t negative = -1;  // torch._check_is_size
  float out = 0.0f;
  CHECK(p.run({i64_scalar(negative), f32_ref(x, {5, 3})}, {ctfx::tensor_ref::contiguous(&out, {})}).message.find("rule") == 0);
}
