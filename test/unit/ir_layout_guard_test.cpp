// Result layouts whose stride order depends on sizes the graph leaves open (ops/result_layout.hpp:
// printed_order): a graph read from FX text takes the order PyTorch printed, under `order` symbols
// that a run checks against its sizes before anything is written (rule result-stride-order), in
// both executors.
#include <doctest/doctest.h>
#include <string>
#include <utility>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

namespace {

// x[:, ::3].t() * 2, traced with 7 columns (PyTorch's make_fx, tracing_mode="symbolic"): the
// strides 3 and s96 order the result column-first; with 2 columns it would be row-first. The
// epilogue adds 1 to z, so that a refused run has an input to leave alone.
constexpr auto sliced_t = ctfx::fx_graph<R"fx(class f(torch.nn.Module):
    def forward(self, x_1: "f32[s75, s96][s96, 1]", z_1: "f32[s75, s96][s96, 1]"):
        slice_2: "f32[s75, ((s96 + 2)//3)][s96, 3]" = torch.ops.aten.slice.Tensor(x_1, 1, 0, 9223372036854775807, 3)
        t: "f32[((s96 + 2)//3), s75][3, s96]" = torch.ops.aten.t.default(slice_2);  slice_2 = None
        mul: "f32[((s96 + 2)//3), s75][1, Max(1, ((s96 + 2)//3))]" = torch.ops.aten.mul.Tensor(t, 2);  t = None
        add: "f32[s75, s96][s96, 1]" = torch.ops.aten.add.Tensor(z_1, 1)
        copy_: "f32[s75, s96][s96, 1]" = torch.ops.aten.copy_.default(z_1, add);  z_1 = add = copy_ = None
        return (mul,)
)fx">();

std::string order_facts(const ctfx::ir& g) {
  std::string t;
  for (std::size_t s = 0; s < g.syms.size(); ++s) {
    if (g.syms[s].op != ctfx::sym_op::order) continue;
    ctfx::detail::msg m;
    ctfx::detail::put_symbol(m, g, s);
    t += std::string(g.syms[s].name.view()) + ": " + std::string(m.view()) + "; ";
  }
  return t;
}

struct sliced_run {
  ctfx::run_status st;
  std::vector<float> out, z;
};
// Runs sliced_t on rows x cols (how: 0 compiled<G>, 1 runtime_plan); the output buffer starts at -1.
sliced_run run_sliced(int how, ctfx::index_t rows, ctfx::index_t cols) {
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (ctfx::index_t i = 0; i < rows; ++i)
    for (ctfx::index_t j = 0; j < cols; ++j) x[static_cast<std::size_t>(i * cols + j)] = static_cast<float>(10 * i + j);
  sliced_run r;
  r.z.assign(x.size(), 5.0f);
  const ctfx::index_t kept = (cols + 2) / 3;
  r.out.assign(static_cast<std::size_t>(kept * rows), -1.0f);
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref(x.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {rows, cols})),
                                         ctfx::tensor_ref(r.z.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {rows, cols}))};
  const std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref(r.out.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {kept, rows}))};
  r.st = how == 0 ? ctfx::compiled<decltype(sliced_t)>::run(in, out) : ctfx::runtime_plan(sliced_t.get()).run(in, out);
  return r;
}

}  // namespace

TEST_CASE("layout guard: an order that depends on open sizes takes PyTorch's printed strides, under a guard") {
  const ctfx::ir g = sliced_t.get();
  const ctfx::tensor_meta& m = g.meta(g.find("mul"));
  std::vector<ctfx::index_t> v(g.syms.size(), -1);
  v[0] = 4;  // s75
  v[1] = 7;  // s96
  REQUIRE(ctfx::bind_derived(g, v).ok);
  CHECK(m.stride[0].eval(v) == 1);
  CHECK(m.stride[1].eval(v) == 3);  // (7 + 2)//3 columns kept: column-first, as printed
  MESSAGE(order_facts(g));
  CHECK(order_facts(g).find("mul: ") == 0);
}

TEST_CASE("layout guard: both executors run sizes that give the printed order, and refuse the others before any write") {
  for (int how = 0; how < 2; ++how) {
    CAPTURE(how);
    const sliced_run ok = run_sliced(how, 4, 7);
    REQUIRE_MESSAGE(ok.st.ok, ok.st.message);
    // out[a][b] = 2 * x[b][3a] (out is the caller's row-major [3, 4] buffer)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b) CHECK(ok.out[static_cast<std::size_t>(a * 4 + b)] == 2.0f * static_cast<float>(10 * b + 3 * a));
    CHECK(ok.z == std::vector<float>(28, 6.0f));
    // 2 columns: strides 3 and 2 order the result row-first, which the graph did not trace.
    const sliced_run bad = run_sliced(how, 4, 2);
    CHECK(!bad.st.ok);
    CAPTURE(bad.st.message);
    CHECK(bad.st.message.find("rule result-stride-order: node 'mul' is laid out in the strides PyTorch printed") == 0);
    CHECK(bad.st.message.find("they need 3 < s96 (or the comparisons of one other set), and these inputs give 3 and 2; fix: ") != std::string::npos);
    CHECK(bad.st.node >= 0);
    CHECK(bad.out == std::vector<float>(4, -1.0f));  // nothing written
    CHECK(bad.z == std::vector<float>(8, 5.0f));
  }
}

namespace {
// x[::3].clone(): the slice is dense only when it keeps one row ((s75 + 2)//3 == 1), and clone
// keeps a dense layout's strides and gives another dense ones (preserve_format). PyTorch printed
// the first at 2 rows, the second at 7.
std::string clone_text(const char* strides) {
  return std::string(R"fx(class f(torch.nn.Module):
    def forward(self, x_1: "f32[s75, s96][s96, 1]"):
        slice_1: "f32[((s75 + 2)//3), s96][3*s96, 1]" = torch.ops.aten.slice.Tensor(x_1, 0, 0, 9223372036854775807, 3);  x_1 = None
        clone: "f32[((s75 + 2)//3), s96])fx") + strides + R"fx(" = torch.ops.aten.clone.default(slice_1);  slice_1 = None
        return (clone,)
)fx";
}
// Runs the graph on rows x 5 (x[i][j] = 10 i + j); the output buffer starts at -1.
std::pair<ctfx::run_status, std::vector<float>> run_clone(const ctfx::ir& g, ctfx::index_t rows) {
  std::vector<float> x(static_cast<std::size_t>(rows * 5));
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = static_cast<float>(10 * (k / 5) + k % 5);
  const ctfx::index_t kept = (rows + 2) / 3;
  std::vector<float> out(static_cast<std::size_t>(kept * 5), -1.0f);
  const ctfx::run_status st = ctfx::runtime_plan(g).run(
      std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {rows, 5}))},
      std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(out.data(), ctfx::tensor_desc::contiguous(ctfx::f32, {kept, 5}))});
  return {st, out};
}
}  // namespace

TEST_CASE("layout guard: a copy of a layout that is dense only when a derived extent is 1 takes the printed strides") {
  // Traced with 2 rows: one row kept, dense, its strides kept ([3*s96, 1]); the guard needs one row.
  const auto one = ctfx::parse_fx(clone_text("[3*s96, 1]"));
  REQUIRE_MESSAGE(one.ok(), ctfx::to_string(one.error));
  CHECK(one.graph.meta(one.graph.find("clone")).stride[0] == ctfx::sym_expr::symbol(1) * 3);
  for (ctfx::index_t rows : {2, 3}) {
    CAPTURE(rows);
    const auto r = run_clone(one.graph, rows);
    REQUIRE_MESSAGE(r.first.ok, r.first.message);
    CHECK(r.second == std::vector<float>{0, 1, 2, 3, 4});
  }
  const auto three = run_clone(one.graph, 7);  // three rows kept: PyTorch would lay them out densely
  CHECK(!three.first.ok);
  CHECK(three.first.message.find("rule result-stride-order: node 'clone'") == 0);
  CHECK(three.second == std::vector<float>(15, -1.0f));  // nothing written
  // Traced with 7 rows: dense strides [s96, 1], which a single row (2 or 3 rows in x) also takes.
  const auto many = ctfx::parse_fx(clone_text("[s96, 1]"));
  REQUIRE_MESSAGE(many.ok(), ctfx::to_string(many.error));
  for (ctfx::index_t rows : {2, 7, 9}) {
    CAPTURE(rows);
    const auto r = run_clone(many.graph, rows);
    REQUIRE_MESSAGE(r.first.ok, r.first.message);
    for (std::size_t k = 0; k < r.second.size(); ++k) CHECK(r.second[k] == static_cast<float>(30 * (k / 5) + k % 5));
  }
}
