// Static plans with symbolic extents (exec/static_plan.hpp, static_symbols_ref): every decision made
// in the compiler, the layouts, storage sizes and workspace offsets evaluated from the inputs'
// shapes on each call. The plan's text, the numbers a call binds against the run-time program's,
// the values against the functional reference at several extents, the arena's lanes, and the
// refusals in the program's words.
#include <doctest/doctest.h>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr long D = 64;
// RMSNorm of a run-time number of rows: one row chain, the output in the caller's buffer.
constexpr auto rms = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n"), D});
  auto w = b.input("w", ctfx::f32, {D});
  b.output(x * ctfx::rsqrt((x * x).mean({1}, true) + 1e-6f) * w);
});
using rms_plan = ctfx::compiled<decltype(rms)>;

// Two values of symbolic size materialized (each read by two reductions, so no output holds it):
// two lanes of the arena's symbolic region, the second above the first.
constexpr auto lanes = ctfx::graph([](ctfx::builder& b) {
  const auto n = b.sym("n");
  auto x = b.input("x", ctfx::f32, {n, 8});
  auto y = b.input("y", ctfx::f32, {n, 16});
  auto e = ctfx::exp(x);
  auto f = ctfx::exp(y);
  b.output(e.sum({1}), e.amax({1}), f.sum({1}), f.amax({1}));
});
using lanes_plan = ctfx::compiled<decltype(lanes)>;

// Two symbols, one of them in a broadcast operand's extent.
constexpr auto two_symbols = ctfx::graph([](ctfx::builder& b) {
  const auto m = b.sym("m");
  auto x = b.input("x", ctfx::f32, {b.sym("n"), m});
  auto c = b.input("c", ctfx::f32, {m});
  b.output(ctfx::exp(x * c) + x.sum({0}));
});
using two_symbols_plan = ctfx::compiled<decltype(two_symbols)>;

// A slice of the first two rows: its extent Min(n, 2), a derived symbol bound on each call.
constexpr auto sliced = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n"), 8});
  b.output(x.slice(0, 0, 2) * 2.0f);
});
using sliced_plan = ctfx::compiled<decltype(sliced)>;

// A view PyTorch traced under the guard that s77 is even ((s77//2)*2 == s77): the floor division
// and the guard are derived symbols, the guard checked on each call before anything is written.
constexpr auto halves = ctfx::fx_graph<R"fx(class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "f32[s77, 3][3, 1]cpu"):
        floordiv: "Sym((s77//2))" = arg0_1 // 2;  arg0_1 = None
        view: "f32[(s77//2), (s77//((s77//2))), 3][3*((s77//((s77//2)))), 3, 1]cpu" = torch.ops.aten.reshape.default(arg1_1, [floordiv, 2, 3]);  arg1_1 = floordiv = None
        sum_1: "f32[(s77//2), 3][3, 1]cpu" = torch.ops.aten.sum.dim_IntList(view, [1]);  view = None
        return (sum_1,)
)fx">();
using halves_plan = ctfx::compiled<decltype(halves)>;

// A scatter into rows 1.. of a copy of x: the view it writes is [n - 1, 8] at element 8.
constexpr auto tail = ctfx::graph([](ctfx::builder& b) {
  const auto n = b.sym("n");
  auto x = b.input("x", ctfx::f32, {n, 8});
  auto s = b.input("s", ctfx::f32, {n - 1, 8});
  b.output(ctfx::slice_scatter(x, s, 0, 1));
});
using tail_plan = ctfx::compiled<decltype(tail)>;

// A ring buffer of a run-time number of rows: the new row computed straight into the row the
// caller's position selects (a put's row: its extent n and stride 16 bound per call).
constexpr auto ring = ctfx::graph([](ctfx::builder& b) {
  auto buf = b.input("buf", ctfx::f32, {b.sym("n"), 16});
  auto row = b.input("row", ctfx::f32, {1, 16});
  auto pos = b.input("pos", ctfx::i64, {1});
  auto nb = ctfx::index_put(buf, {pos}, ctfx::exp(row) * 2.0f);
  b.update(buf, nb);
  b.output(nb.sum({0}));
});
using ring_plan = ctfx::compiled<decltype(ring)>;

// A grid of run-time extents whose ghost cells a periodic halo exchange fills in place: the
// scratch it packs edges into is sized per call.
constexpr auto ghosted = ctfx::graph([](ctfx::builder& b) {
  auto u = b.input("u", ctfx::f32, {b.sym("n"), b.sym("m")});
  b.update(u, ctfx::halo_exchange(u, 1, {1, 1, true, true}));
});
using ghosted_plan = ctfx::compiled<decltype(ghosted)>;

// An input whose extent is 2n: no call's shape gives n alone, so the program reports it.
constexpr auto unbound = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {b.sym("n") * 2});
  b.output(x + 1.0f);
});
using unbound_plan = ctfx::compiled<decltype(unbound)>;

#if !defined(__CUDACC__)
static_assert(rms_plan::run_plan.usable && rms_plan::run_plan.n_symbols == 1 && !rms_plan::static_numbers);
static_assert(lanes_plan::run_plan.usable && lanes_plan::planned_arena.planned && lanes_plan::planned_arena.n_lanes == 2);
static_assert(two_symbols_plan::run_plan.usable && two_symbols_plan::run_plan.n_symbols == 2);
static_assert(sliced_plan::run_plan.usable && halves_plan::run_plan.usable && halves_plan::run_plan.n_symbols > 1);
static_assert(tail_plan::run_plan.usable && tail_plan::run_plan.n_scatters == 1 && ring_plan::run_plan.usable && ring_plan::run_plan.n_rows == 1);
static_assert(ghosted_plan::run_plan.usable && ghosted_plan::run_plan.n_collectives == 1 && ghosted_plan::run_plan.n_symbols == 2);
#endif
static_assert(!unbound_plan::run_plan.usable);

// A KV-cache write at a position read from an input with item() (torch 2.15's graph of
// `p = pos.item(); cache[:, p:p+1] = k`): the position is a data-dependent symbol, which the
// static plan leaves to the run-time program; it reads the value when the call binds.
constexpr auto kv_at = ctfx::fx_graph<R"fx(class <lambda>(torch.nn.Module):
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
)fx">();
using kv_at_plan = ctfx::compiled<decltype(kv_at)>;
static_assert(!kv_at_plan::run_plan.usable);

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>(i * 7 % 23) - 11) * scale;
  return v;
}

bool same(const ctfx::run_status& a, const ctfx::run_status& b) { return a.ok == b.ok && a.node == b.node && a.message == b.message; }

// Runs Plan with these inputs and dense outputs of the reference's shapes; checks the bytes
// against reference_run and the binding against the run-time program's.
template <class Plan>
void check_run(const ctfx::ir& functional, const std::vector<ctfx::tensor_ref>& in) {
  std::vector<ctfx::tensor_desc> descs(in.begin(), in.end());
  const ctfx::binding bd = Plan::bind(descs);
  REQUIRE_MESSAGE(bd.status.ok, bd.status.message);
  const ctfx::binding pb = Plan::prog().bind(descs);
  REQUIRE(pb.status.ok);
  CHECK(bd.workspace_bytes == pb.workspace_bytes);
  CHECK(bd.symbols == pb.symbols);
  REQUIRE(bd.outputs.size() == pb.outputs.size());
  std::vector<std::vector<float>> got, want;
  std::vector<ctfx::tensor_ref> out, ref;
  for (std::size_t j = 0; j < bd.outputs.size(); ++j) {
    CHECK(bd.outputs[j].rank == pb.outputs[j].rank);
    for (int d = 0; d < bd.outputs[j].rank; ++d) CHECK(bd.outputs[j].size[d] == pb.outputs[j].size[d]);
    got.emplace_back(static_cast<std::size_t>(bd.outputs[j].numel()), -7.0f);
    want.emplace_back(static_cast<std::size_t>(bd.outputs[j].numel()), 0.0f);
  }
  for (std::size_t j = 0; j < bd.outputs.size(); ++j) {
    out.emplace_back(got[j].data(), bd.outputs[j]);
    ref.emplace_back(want[j].data(), bd.outputs[j]);
  }
  std::vector<std::byte> ws(bd.workspace_bytes);
  const ctfx::run_status st = Plan::run(in, out, {}, ws);
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::reference_run(functional, in, ref).ok);
  for (std::size_t j = 0; j < got.size(); ++j) CHECK(std::memcmp(got[j].data(), want[j].data(), got[j].size() * sizeof(float)) == 0);
  // Without a workspace given: the plan allocates what bind() said.
  for (auto& g : got) std::fill(g.begin(), g.end(), -7.0f);
  REQUIRE(Plan::run(in, out).ok);
  for (std::size_t j = 0; j < got.size(); ++j) CHECK(std::memcmp(got[j].data(), want[j].data(), got[j].size() * sizeof(float)) == 0);
}

}  // namespace

#if !defined(__CUDACC__)
TEST_CASE("static plan with symbolic extents: the plan, and the values at several extents") {
  // The row means and their rsqrt in two lanes of 4n bytes (live together), the output computed
  // in the caller's buffer.
  CHECK(ctfx::to_text(rms_plan::run_plan.ref(), rms_plan::graph()) ==
        "input 0: x\n"
        "input 1: w\n"
        "output 0: mul_2 [n, 64]\n"
        "storage 0: input 0\n"
        "storage 1: input 1\n"
        "storage 3: workspace pool 0 +0 lane 0, 4*n bytes\n"
        "storage 5: workspace pool 0 +0 lane 1, 4*n bytes\n"
        "storage 7: output 0\n"
        "step: mean\n"
        "step: rsqrt\n"
        "step: mul_2\n"
        "pool 0: 0 bytes, lane 0 4*n bytes, lane 1 4*n bytes\n"
        "workspace: the pools, then 256 bytes of scratch\n");
  auto w = ramp(D, 0.125f);
  for (const long n : {1L, 7L, 37L, 300L}) {
    CAPTURE(n);
    auto x = ramp(static_cast<std::size_t>(n * D), 0.25f);
    check_run<rms_plan>(rms.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n, D}), ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {D})});
  }
  // No rows at all: nothing is computed, nothing fails.
  check_run<rms_plan>(rms.get(), {ctfx::tensor_ref::contiguous(nullptr, ctfx::f32, {0, D}), ctfx::tensor_ref::contiguous(w.data(), ctfx::f32, {D})});
  for (const long m : {1L, 5L, 33L}) {
    CAPTURE(m);
    auto x = ramp(static_cast<std::size_t>(3 * m), 0.5f), c = ramp(static_cast<std::size_t>(m), 0.75f);
    check_run<two_symbols_plan>(two_symbols.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, m}),
                                                    ctfx::tensor_ref::contiguous(c.data(), ctfx::f32, {m})});
  }
}

TEST_CASE("static plan with symbolic extents: derived symbols and PyTorch's guards, bound and checked per call") {
  for (const long n : {2L, 5L, 9L}) {
    CAPTURE(n);
    auto x = ramp(static_cast<std::size_t>(n * 8), 0.5f);
    check_run<sliced_plan>(sliced.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n, 8})});
  }
  CHECK(sliced_plan::bind({ctfx::tensor_desc::contiguous(ctfx::f32, {5, 8})}).outputs[0].size[0] == 2);
  // The slice was built assuming n >= 2 (its guard Eq(n, Max(2, n))): one row is refused, as the program refuses it.
  const std::vector<ctfx::tensor_desc> one{ctfx::tensor_desc::contiguous(ctfx::f32, {1, 8})};
  const ctfx::run_status guard = sliced_plan::bind(one).status;
  CHECK(guard.message == "rule symbolic-guard: the graph was traced assuming Eq(n, Max(2, n)) (a PyTorch guard); these inputs give 1 and 2");
  CHECK(same(guard, sliced_plan::prog().bind(one).status));
  for (const long rows : {2L, 6L, 40L}) {
    CAPTURE(rows);
    auto x = ramp(static_cast<std::size_t>(rows * 3), 0.25f);
    check_run<halves_plan>(halves.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {rows, 3})});
  }
  // An odd row count breaks the guard: refused in the program's words, the output untouched.
  auto x = ramp(5 * 3, 0.25f);
  std::vector<float> y(6, -1.0f);
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {5, 3})};
  const std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {2, 3})};
  const ctfx::run_status st = halves_plan::run(in, out);
  CHECK(!st.ok);
  CHECK(st.message.find("rule symbolic-guard: the graph was traced assuming Eq(") == 0);
  CHECK(same(st, halves_plan::prog().run(in, out, {}, {}, nullptr, nullptr)));
  const std::vector<ctfx::tensor_desc> descs{in[0]};
  CHECK(same(halves_plan::bind(descs).status, halves_plan::prog().bind(descs).status));
  CHECK(y == std::vector<float>(6, -1.0f));
}

TEST_CASE("static plan with symbolic extents: slots of symbolic size in the arena's lanes, evaluated per call") {
  // The compiler's arena: one pool whose symbolic region holds two lanes, exp(x)'s and exp(y)'s
  // bytes; the program made with it lays them out as the runner does.
  const auto& P = lanes_plan::planned_arena;
  REQUIRE(P.n_pools == 1);
  CHECK(P.pools[0].n_lanes == 2);
  const std::string text = ctfx::to_text(lanes_plan::run_plan.ref(), lanes_plan::graph());
  CHECK(text.find("storage 2: workspace pool 0 +0 lane 0, 32*n bytes\n") != std::string::npos);
  CHECK(text.find("storage 3: workspace pool 0 +0 lane 1, 64*n bytes\n") != std::string::npos);
  CHECK(text.find("pool 0: 0 bytes, lane 0 32*n bytes, lane 1 64*n bytes\n") != std::string::npos);
  REQUIRE(lanes_plan::prog().error().ok);
  CHECK(lanes_plan::prog().arena().pools.size() == 1);
  CHECK(lanes_plan::prog().arena().pools[0].lanes.size() == 2);
  for (const long n : {1L, 3L, 5L, 64L}) {  // (n = 3: lane 0 is 96 bytes, so lane 1 starts at 128)
    CAPTURE(n);
    auto x = ramp(static_cast<std::size_t>(n * 8), 0.125f), y = ramp(static_cast<std::size_t>(n * 16), 0.0625f);
    check_run<lanes_plan>(lanes.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n, 8}),
                                        ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {n, 16})});
  }
}

TEST_CASE("static plan with symbolic extents: refusals in the run-time program's words, before anything is written") {
  auto x5 = ramp(5 * 8, 0.25f), y6 = ramp(6 * 16, 0.25f), y5 = ramp(5 * 16, 0.25f);
  std::vector<std::vector<float>> o(4, std::vector<float>(6 * 16, -7.0f));
  auto outs = [&](long n) {
    return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(o[0].data(), ctfx::f32, {n}), ctfx::tensor_ref::contiguous(o[1].data(), ctfx::f32, {n}),
                                         ctfx::tensor_ref::contiguous(o[2].data(), ctfx::f32, {n}), ctfx::tensor_ref::contiguous(o[3].data(), ctfx::f32, {n})};
  };
  auto untouched = [&] {
    for (const auto& v : o)
      for (const float f : v)
        if (f != -7.0f) return false;
    return true;
  };
  // Inputs that disagree on n.
  std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(x5.data(), ctfx::f32, {5, 8}), ctfx::tensor_ref::contiguous(y6.data(), ctfx::f32, {6, 16})};
  ctfx::run_status st = lanes_plan::run(in, outs(5));
  CHECK(!st.ok);
  CHECK(same(st, lanes_plan::prog().run(in, outs(5), {}, {}, nullptr, nullptr)));
  CHECK(st.message.find("input 1 ('y')") != std::string::npos);
  CHECK(!lanes_plan::bind({in[0], in[1]}).status.ok);
  // An output of the wrong extent.
  in[1] = ctfx::tensor_ref::contiguous(y5.data(), ctfx::f32, {5, 16});
  st = lanes_plan::run(in, outs(6));
  CHECK(!st.ok);
  CHECK(same(st, lanes_plan::prog().run(in, outs(6), {}, {}, nullptr, nullptr)));
  // Another element type, another rank, too few inputs.
  std::vector<double> xd(5 * 8);
  st = lanes_plan::run({ctfx::tensor_ref::contiguous(xd.data(), ctfx::f64, {5, 8}), in[1]}, outs(5));
  CHECK(!st.ok);
  CHECK(same(st, lanes_plan::prog().run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(xd.data(), ctfx::f64, {5, 8}), in[1]}, outs(5), {}, {},
                                        nullptr, nullptr)));
  st = lanes_plan::run({ctfx::tensor_ref::contiguous(x5.data(), ctfx::f32, {40}), in[1]}, outs(5));
  CHECK(!st.ok);
  CHECK(st.message.find("rank") != std::string::npos);
  st = lanes_plan::run({in[0]}, outs(5));
  CHECK(!st.ok);
  CHECK(same(st, lanes_plan::prog().run(std::vector<ctfx::tensor_ref>{in[0]}, outs(5), {}, {}, nullptr, nullptr)));
  // A workspace smaller than bind() says.
  std::vector<std::byte> small(lanes_plan::bind({in[0], in[1]}).workspace_bytes - 1);
  st = lanes_plan::run(in, outs(5), {}, small);
  CHECK(!st.ok);
  CHECK(st.message.find("workspace") != std::string::npos);
  CHECK(untouched());
  // A symbol that no input's extent is: left to the program, which says so.
  CHECK(std::string(unbound_plan::run_plan.why).find("no input's extent") != std::string::npos);
  std::vector<float> u(8), v(8);
  st = unbound_plan::run({ctfx::tensor_ref::contiguous(u.data(), ctfx::f32, {8})}, {ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {8})});
  CHECK(!st.ok);
  CHECK(st.message.find("rule symbol-bound") != std::string::npos);
}
#endif

#if !defined(__CUDACC__)
TEST_CASE("static plan with symbolic extents: a scatter's view and a put's row, bound per call") {
  CHECK(ctfx::to_text(tail_plan::run_plan.ref(), tail_plan::graph()).find(
            "scatter: slice_scatter (its base copied, then its source into [n - 1, 8] at element 8 of storage 2)\n") != std::string::npos);
  for (const long n : {1L, 2L, 9L, 100L}) {
    CAPTURE(n);
    auto x = ramp(static_cast<std::size_t>(n * 8), 0.5f), s = ramp(static_cast<std::size_t>((n - 1) * 8), 0.25f);
    check_run<tail_plan>(tail.get(), {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {n, 8}),
                                      ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {n - 1, 8})});
  }
  CHECK(ctfx::to_text(ring_plan::run_plan.ref(), ring_plan::graph()).find("row: mul in the row of index 'pos'\n") != std::string::npos);
  // The plan's buffer and sum against the reference's, for positions counted from either end.
  const auto row = ramp(16, 0.125f);
  for (const long n : {1L, 3L, 64L}) {
    for (const std::int64_t at : {std::int64_t{0}, static_cast<std::int64_t>(n - 1), std::int64_t{-1}, -static_cast<std::int64_t>(n)}) {
      CAPTURE(n);
      CAPTURE(at);
      auto got = ramp(static_cast<std::size_t>(n * 16), 0.5f), want = got;
      std::vector<std::int64_t> pos{at};
      std::vector<float> sum(16, -7.0f), ref_sum(16, 0.0f);
      auto in = [&](std::vector<float>& buf) {
        return std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {n, 16}),
                                             ctfx::tensor_ref::contiguous(const_cast<float*>(row.data()), ctfx::f32, {1, 16}),
                                             ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1})};
      };
      const ctfx::run_status st = ring_plan::run(in(got), {ctfx::tensor_ref::contiguous(sum.data(), ctfx::f32, {16})});
      REQUIRE_MESSAGE(st.ok, st.message);
      REQUIRE(ctfx::reference_run(ring.get(), in(want), {ctfx::tensor_ref::contiguous(ref_sum.data(), ctfx::f32, {16})}).ok);
      CHECK(got == want);
      CHECK(std::memcmp(sum.data(), ref_sum.data(), sizeof(float) * 16) == 0);
    }
  }
  // A position past the last row: refused in the program's words, before anything is written.
  auto buf = ramp(3 * 16, 0.5f);
  const auto before = buf;
  std::vector<std::int64_t> pos{3};
  std::vector<float> sum(16, -7.0f);
  const std::vector<ctfx::tensor_ref> in{ctfx::tensor_ref::contiguous(buf.data(), ctfx::f32, {3, 16}),
                                         ctfx::tensor_ref::contiguous(const_cast<float*>(row.data()), ctfx::f32, {1, 16}),
                                         ctfx::tensor_ref::contiguous(pos.data(), ctfx::i64, {1})};
  const std::vector<ctfx::tensor_ref> out{ctfx::tensor_ref::contiguous(sum.data(), ctfx::f32, {16})};
  const ctfx::run_status st = ring_plan::run(in, out);
  CHECK(!st.ok);
  CHECK(same(st, ring_plan::prog().run(in, out, {}, {}, nullptr, nullptr)));
  CHECK(buf == before);
  CHECK(sum == std::vector<float>(16, -7.0f));
}

TEST_CASE("static plan with symbolic extents: a halo exchange, its scratch sized per call") {
  CHECK(ctfx::to_text(ghosted_plan::run_plan.ref(), ghosted_plan::graph()).find(
            "workspace: the pools, then 256 bytes of scratch or the halo exchanges' edges, the larger\n") != std::string::npos);
  for (const auto& [n, m] : {std::pair<long, long>{3, 3}, {4, 9}, {40, 5}, {130, 70}}) {
    CAPTURE(n);
    CAPTURE(m);
    const auto before = ramp(static_cast<std::size_t>(n * m), 0.5f);
    auto got = before, want = before;
    const std::vector<ctfx::tensor_desc> descs{ctfx::tensor_desc::contiguous(ctfx::f32, {n, m})};
    const ctfx::binding bd = ghosted_plan::bind(descs), pb = ghosted_plan::prog().bind(descs);
    REQUIRE(bd.status.ok);
    CHECK(bd.workspace_bytes == pb.workspace_bytes);
    std::vector<std::byte> ws(bd.workspace_bytes);
    const ctfx::run_status st = ghosted_plan::run({ctfx::tensor_ref::contiguous(got.data(), ctfx::f32, {n, m})}, {}, {}, ws);
    REQUIRE_MESSAGE(st.ok, st.message);
    REQUIRE(ctfx::reference_run(ghosted.get(), {ctfx::tensor_ref::contiguous(want.data(), ctfx::f32, {n, m})}, {}).ok);
    CHECK(got == want);
    CHECK(got != before);
  }
}
#endif

TEST_CASE("exec static symbolic: compiled<G> runs a position read with item() through the run-time program") {
  CHECK(std::string(kv_at_plan::run_plan.why) == "a data-dependent symbol (the run-time program binds it)");
  std::vector<float> k{1, 2, 3, 4, 5, 6};
  for (std::int64_t pos : {3, 8}) {
    std::vector<float> cache(48, 0.0f), out(48, -1.0f);
    std::int64_t at = pos;
    const ctfx::run_status st = kv_at_plan::run({ctfx::tensor_ref::contiguous(&at, {}), ctfx::tensor_ref::contiguous(cache.data(), {2, 8, 3}),
                                                 ctfx::tensor_ref::contiguous(k.data(), {2, 1, 3})},
                                                {ctfx::tensor_ref::contiguous(out.data(), {2, 8, 3})});
    if (pos == 8) {  // one past the last row: refused before anything is written
      CHECK_FALSE(st.ok);
      CHECK(st.message.find("rule symbolic-guard") == 0);
      CHECK(cache == std::vector<float>(48, 0.0f));
      CHECK(out == std::vector<float>(48, -1.0f));
      continue;
    }
    REQUIRE_MESSAGE(st.ok, st.message);
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) CHECK(cache[static_cast<std::size_t>(b * 24 + 3 * 3 + c)] == k[static_cast<std::size_t>(b * 3 + c)]);
    CHECK(out == cache);
  }
}
