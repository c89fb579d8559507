// Result layouts (ops/result_layout.hpp): the strides of elementwise results, preserve_format copies,
// empty_like and auto_functionalized's updated arguments, as PyTorch's fake tensors compute them;
// and both executors (compiled<G> and runtime_plan) computing into such layouts.
#include <doctest/doctest.h>
#include "layout_text.hpp"
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>

namespace {

using ctfx::builder;
using ctfx_test::layout;
using ctfx_test::str;
using ctfx::detail::msg;


#define CHECK_LAYOUT(F, NAME, EXPECT)              \
  do {                                             \
    constexpr auto got_ = layout(F, NAME);         \
    CHECK(str(got_) == std::string(EXPECT));       \
  } while (0)

std::string data_path(const char* file) {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/" + file;
}

ctfx::tensor_meta read_meta(std::istringstream& in, ctfx::dtype dt) {
  ctfx::tensor_meta m;
  int rank = 0;
  in >> rank;
  m.rank = static_cast<std::int8_t>(rank);
  m.dt = dt;
  long long v = 0;
  for (int k = 0; k < rank; ++k) { in >> v; m.size[k] = ctfx::sym_expr(v); }
  for (int k = 0; k < rank; ++k) { in >> v; m.stride[k] = ctfx::sym_expr(v); }
  m.storage = 0;
  return m;
}

}  // namespace

// ----- the rules against PyTorch -----

TEST_CASE("layout rules: random operand layouts give the result strides PyTorch's fake tensors give") {
  // test/data/layout_cases.txt: made by tools/layout_cases/make_cases.py from torch's FakeTensorMode.
  std::ifstream f(data_path("layout_cases.txt"));
  REQUIRE(f.good());
  std::string line;
  int cases = 0;
  while (std::getline(f, line)) {
    CAPTURE(line);
    std::istringstream in(line);
    std::string op;
    int n = 0;
    in >> op >> n;
    std::vector<ctfx::tensor_meta> ops;
    for (int k = 0; k < n; ++k) ops.push_back(read_meta(in, op == "where" && k == 0 ? ctfx::dtype::b8 : ctfx::f32));
    int rank = 0;
    in >> rank;
    std::vector<long long> want(static_cast<std::size_t>(rank));
    for (auto& s : want) in >> s;
    ctfx::tensor_meta shape = ops[0];
    for (int k = 1; k < n; ++k) REQUIRE(ctfx::detail::broadcast_into(shape, ops[static_cast<std::size_t>(k)]));
    const ctfx::tensor_meta* ptr[3] = {&ops[0], n > 1 ? &ops[1] : nullptr, n > 2 ? &ops[2] : nullptr};
    ctfx::tensor_meta got;
    if (op == "add" || op == "where" || op == "neg") got = ctfx::detail::elementwise_result(shape, ctfx::f32, ptr, n);
    else if (op == "clone") got = ctfx::detail::clone_meta(ops[0]);
    else if (op == "empty_like") got = ctfx::detail::empty_like_result(ops[0], ctfx::f32);
    else if (op == "convert") got = ctfx::detail::preserve_format_result(ops[0], ctfx::f64);
    else FAIL("unknown op " << op);
    REQUIRE(got.rank == rank);
    // Strides of extent-1 dimensions address nothing (PyTorch's printed strides are compared without them).
    for (int k = 0; k < rank; ++k) {
      CAPTURE(k);
      if (got.size[k].value() != 1) CHECK(got.stride[k].value() == want[static_cast<std::size_t>(k)]);
    }
    ++cases;
  }
  CHECK(cases >= 400);
}

// ----- each rule on a built graph -----

TEST_CASE("layout rules: elementwise results keep the stride order of their operands") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {3, 4});
    auto y = g.input("y", ctfx::f32, {4, 3});
    auto t = g.input("t", ctfx::f32, {2, 3, 4});
    auto r = g.input("r", ctfx::f32, {3});
    auto c = g.input("c", ctfx::f32, {4, 1});
    auto s = g.input("s", ctfx::f32, {});
    auto u = g.input("u", ctfx::f32, {4, 2, 3});
    auto xt = x.transpose(0, 1);
    g.output((xt + y).named("perm_first"), (y + xt).named("contig_first"), (xt + r).named("bcast_row"),
             (c * xt).named("bcast_col"), (xt * s).named("zero_dim"), (-xt).named("unary"),
             (t.permute({2, 0, 1}) * t.permute({2, 0, 1})).named("both_perm"),
             (t.permute({1, 0, 2}) + u.permute({2, 1, 0})).named("first_decides"),
             ctfx::gt(xt, y).named("compare"), ctfx::where(ctfx::gt(y, 0.0), xt, y).named("where_first_cond"),
             (x.slice(1, 1, 3) * 2.0).named("nondense"), (xt.slice(0, 1, 3) + 1.0).named("nondense_perm"),
             (xt.unsqueeze(1) * 2.0).named("size_one"), (c.expand({4, 3}) + 1.0).named("expanded"));
  };
  CHECK_LAYOUT(f, "perm_first", "f32[4, 3][1, 4]");        // the first operand that orders two dims decides
  CHECK_LAYOUT(f, "contig_first", "f32[4, 3][3, 1]");
  CHECK_LAYOUT(f, "bcast_row", "f32[4, 3][1, 4]");         // r's stride 0 orders nothing: xt decides
  CHECK_LAYOUT(f, "bcast_col", "f32[4, 3][1, 4]");
  CHECK_LAYOUT(f, "zero_dim", "f32[4, 3][1, 4]");          // a 0-d operand does not count
  CHECK_LAYOUT(f, "unary", "f32[4, 3][1, 4]");
  CHECK_LAYOUT(f, "both_perm", "f32[4, 2, 3][1, 12, 4]");
  CHECK_LAYOUT(f, "first_decides", "f32[3, 2, 4][4, 12, 1]");
  CHECK_LAYOUT(f, "compare", "b8[4, 3][1, 4]");
  CHECK_LAYOUT(f, "where_first_cond", "f32[4, 3][3, 1]");  // the row-major condition comes first
  CHECK_LAYOUT(f, "nondense", "f32[3, 2][2, 1]");          // a gappy operand: dense in its order
  CHECK_LAYOUT(f, "nondense_perm", "f32[2, 3][1, 2]");
  CHECK_LAYOUT(f, "size_one", "f32[4, 1, 3][1, 12, 4]");
  CHECK_LAYOUT(f, "expanded", "f32[4, 3][3, 1]");          // stride 0 only: row-major
}

TEST_CASE("layout rules: channels-last operands give channels-last results") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {2, 4, 5, 3});  // N, H, W, C in memory
    auto y = g.input("y", ctfx::f32, {2, 3, 4, 5});
    auto b = g.input("b", ctfx::f32, {3, 1, 1});
    auto cl = x.permute({0, 3, 1, 2});               // [2, 3, 4, 5][60, 1, 15, 3]
    g.output(ctfx::relu(cl).named("relu"), (cl + y).named("cl_first"), (y + cl).named("contig_first"),
             (cl * b).named("bcast"), cl.clone().named("clone"));
  };
  CHECK_LAYOUT(f, "relu", "f32[2, 3, 4, 5][60, 1, 15, 3]");
  CHECK_LAYOUT(f, "cl_first", "f32[2, 3, 4, 5][60, 1, 15, 3]");
  CHECK_LAYOUT(f, "contig_first", "f32[2, 3, 4, 5][60, 20, 5, 1]");
  CHECK_LAYOUT(f, "bcast", "f32[2, 3, 4, 5][60, 1, 15, 3]");
  CHECK_LAYOUT(f, "clone", "f32[2, 3, 4, 5][60, 1, 15, 3]");
}

TEST_CASE("layout rules: conversions and empty_like keep a dense layout, or the stride order of a non-dense one") {
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {3, 6});
    auto t = g.input("t", ctfx::f32, {3, 4, 2});
    g.output(t.permute({1, 0, 2}).to(ctfx::f64).named("conv_dense"), x.slice(1, 1, 4).to(ctfx::f64).named("conv_gappy"),
             x.transpose(0, 1).slice(0, 1, 4).to(ctfx::f16).named("conv_gappy_perm"),
             ctfx::empty_like(x.transpose(0, 1)).named("empty_perm"), ctfx::empty_like(x.slice(1, 0, 6, 2)).named("empty_step"));
  };
  CHECK_LAYOUT(f, "conv_dense", "f64[4, 3, 2][2, 8, 1]");
  CHECK_LAYOUT(f, "conv_gappy", "f64[3, 3][3, 1]");
  CHECK_LAYOUT(f, "conv_gappy_perm", "f16[3, 3][1, 3]");
  CHECK_LAYOUT(f, "empty_perm", "f32[6, 3][1, 6]");
  CHECK_LAYOUT(f, "empty_step", "f32[3, 3][3, 1]");
}

TEST_CASE("layout rules: PyTorch's printed strides check out through the FX parser, and clone(contiguous_format) is row-major") {
  constexpr std::string_view text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 6][6, 1]cpu", arg1_1: "f32[2, 3, 4, 5][60, 1, 15, 3]cpu"):
        permute: "f32[6, 4][1, 6]cpu" = torch.ops.aten.permute.default(arg0_1, [1, 0])
        slice_1: "f32[3, 4][1, 6]cpu" = torch.ops.aten.slice.Tensor(permute, 0, 1, 4);  permute = None
        clone: "f32[3, 4][1, 3]cpu" = torch.ops.aten.clone.default(slice_1)
        clone_1: "f32[3, 4][4, 1]cpu" = torch.ops.aten.clone.default(slice_1, memory_format = torch.contiguous_format)
        add: "f32[3, 4][1, 3]cpu" = torch.ops.aten.add.Tensor(clone, clone_1)
        relu: "f32[2, 3, 4, 5][60, 1, 15, 3]cpu" = torch.ops.aten.relu.default(arg1_1)
        return (add, relu)
)";
  const auto r = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  // A stride PyTorch would not give is refused, naming the rule.
  std::string bad(text);
  const std::string printed = "add: \"f32[3, 4][1, 3]";
  bad.replace(bad.find(printed), printed.size(), "add: \"f32[3, 4][4, 1]");
  const auto e = ctfx::parse_fx(bad);
  REQUIRE(!e.ok());
  CAPTURE(ctfx::to_string(e.error));
  CHECK(ctfx::to_string(e.error).find("node 'add': PyTorch printed f32[3, 4][4, 1], ctfx computed f32[3, 4][1, 3] [rule metadata-consistent]") != std::string::npos);
}

namespace {
struct add_one_op : ctfx::custom_op<"t::add_one_", "add_one_(Tensor(a!) x) -> ()"> {};
}  // namespace

TEST_CASE("layout rules: auto_functionalized's updated argument keeps the argument's strides and offset") {
  constexpr std::string_view text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 5][5, 1]cpu"):
        select: "f32[4][5]cpu" = torch.ops.aten.select.int(arg0_1, 1, 1)
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops.t.add_one_.default, x = select);  select = None
        getitem_1: "f32[4][5]cpu" = auto_functionalized[1];  auto_functionalized = None
        select_scatter: "f32[4, 5][5, 1]cpu" = torch.ops.aten.select_scatter.default(arg0_1, getitem_1, 1, 1)
        return (select_scatter,)
)";
  const ctfx::fx_custom ops[] = {ctfx::fx_custom_of<add_one_op>()};
  const auto r = ctfx::parse_fx(text, ops);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::tensor_meta& m = r.graph.meta(r.graph.find("getitem_1"));
  CHECK(m.stride[0] == ctfx::sym_expr(5));
  CHECK(m.offset == ctfx::sym_expr(1));
  CHECK(m.storage != r.graph.meta(r.graph.find("arg0_1")).storage);
}

// ----- both executors on such layouts -----

namespace {

// Permuted, non-dense and broadcast operands, fused chains storing into permuted results, a
// non-dense clone, and an in-place update of a transposed slice of the input.
constexpr auto strided_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {4, 6});
  auto y = b.input("y", ctfx::f32, {6, 4});
  auto r = b.input("r", ctfx::f32, {4});
  auto xt = x.transpose(0, 1);                               // [6, 4][1, 6]
  auto a = (xt + y) * 2.0;                                   // [6, 4][1, 6]
  auto c = xt.slice(0, 1, 4).clone();                        // [3, 4][1, 3]
  auto d = ctfx::maximum(c, y.slice(0, 0, 3)) - r;           // [3, 4][1, 3]
  auto e = ctfx::where(ctfx::gt(a, 0.0), a, (-xt).to(ctfx::f64).to(ctfx::f32));
  b.update(x, ctfx::slice_scatter(xt, xt.slice(0, 2, 5) + 1.0, 0, 2, 5).transpose(0, 1));
  b.output(a, d, e.slice(0, 1, 5));
});
using strided_plan = ctfx::compiled<decltype(strided_graph)>;

static_assert(strided_plan::graph().size() > 0);

struct strided_data {
  std::vector<float> x = std::vector<float>(24), y = std::vector<float>(24), r = std::vector<float>(4);
  std::vector<float> o1 = std::vector<float>(24), o2 = std::vector<float>(12), o3 = std::vector<float>(16);
  strided_data() {
    for (int i = 0; i < 24; ++i) {
      x[static_cast<std::size_t>(i)] = static_cast<float>((i * 7) % 11) - 5.5f;
      y[static_cast<std::size_t>(i)] = static_cast<float>((i * 5) % 13) * 0.25f - 1.0f;
    }
    for (int i = 0; i < 4; ++i) r[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {4, 6}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {6, 4}),
            ctfx::tensor_ref::contiguous(r.data(), ctfx::f32, {4})};
  }
  std::vector<ctfx::tensor_ref> out() {
    return {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {6, 4}), ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {3, 4}),
            ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {4, 4})};
  }
};

}  // namespace

TEST_CASE("layout rules: compiled<G>, the run-time plan (fused or not) and the reference agree on strided results") {
  const ctfx::ir& g = strided_graph.get();
  {  // the executors compute into a permuted result
    bool permuted_result = false;
    for (std::int32_t i = 0; i < g.size(); ++i)
      if (g[i].op == ctfx::op_kind::mul && g.meta(i).stride[0] == ctfx::sym_expr(1)) permuted_result = true;
    CHECK(permuted_result);
  }
  strided_data ref, a, b, c;
  REQUIRE(ctfx::reference_run(g, ref.in(), ref.out()).ok);
  const auto st = strided_plan::run(a.in(), a.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  REQUIRE(ctfx::runtime_plan(g).run(b.in(), b.out()).ok);
  ctfx::plan_options unfused;
  unfused.fuse = false;
  REQUIRE(ctfx::runtime_plan(g, unfused).run(c.in(), c.out()).ok);
  for (strided_data* d : {&a, &b, &c}) {
    CHECK(d->x == ref.x);
    CHECK(d->y == ref.y);
    CHECK(d->o1 == ref.o1);
    CHECK(d->o2 == ref.o2);
    CHECK(d->o3 == ref.o3);
  }
  // By hand: o1[i][j] = (x[j][i] + y[i][j]) * 2, o2 = max(x[j][i+1], y[i][j]) - r[j], and x's
  // columns 2..4 grew by 1.
  const strided_data in;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 4; ++j)
      CHECK(ref.o1[static_cast<std::size_t>(i * 4 + j)] == (in.x[static_cast<std::size_t>(j * 6 + i)] + in.y[static_cast<std::size_t>(i * 4 + j)]) * 2.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      const float xv = in.x[static_cast<std::size_t>(j * 6 + i + 1)], yv = in.y[static_cast<std::size_t>(i * 4 + j)];
      CHECK(ref.o2[static_cast<std::size_t>(i * 4 + j)] == (xv < yv ? yv : xv) - in.r[static_cast<std::size_t>(j)]);
    }
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 6; ++i)
      CHECK(ref.x[static_cast<std::size_t>(j * 6 + i)] == in.x[static_cast<std::size_t>(j * 6 + i)] + (i >= 2 && i < 5 ? 1.0f : 0.0f));
}
