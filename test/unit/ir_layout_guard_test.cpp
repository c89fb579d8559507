// Result layouts whose stride order depends on sizes the graph leaves open (ops/result_layout.hpp:
// printed_order): a graph read from FX text takes the order PyTorch printed, under `order` symbols
// that a run checks against its sizes before anything is written (rule result-stride-order), in
// both executors.
#include <doctest/doctest.h>
#include <string>
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
