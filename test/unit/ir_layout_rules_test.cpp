// Result layouts (ops/result_layout.hpp): the strides of elementwise results, preserve_format copies,
// empty_like, cat, index, _foreach_* elements and auto_functionalized's updated arguments, as PyTorch's
// fake tensors compute them; and both executors (compiled<G> and runtime_plan) computing into such
// layouts.
#include <doctest/doctest.h>
#include "layout_text.hpp"
#include <algorithm>
#include <cctype>
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
  // test/data/layout_cases.txt: made by tools/layout_cases/make_cases.py from torch's FakeTensorMode
  // (elementwise ops, copies, empty_like, cat, foreach elements and index).
  std::ifstream f(data_path("layout_cases.txt"));
  REQUIRE(f.good());
  std::string line;
  int cases = 0, cat_cases = 0, index_cases = 0;
  while (std::getline(f, line)) {
    CAPTURE(line);
    std::istringstream in(line);
    std::string op;
    int n = 0;
    in >> op >> n;
    std::vector<ctfx::tensor_meta> ops;
    const bool index = op.rfind("index.", 0) == 0;
    for (int k = 0; k < n; ++k)
      ops.push_back(read_meta(in, op == "where" && k == 0 ? ctfx::dtype::b8 : index && k > 0 ? ctfx::dtype::i64 : ctfx::f32));
    int rank = 0;
    in >> rank;
    std::vector<long long> want(static_cast<std::size_t>(rank));
    for (auto& s : want) in >> s;
    const bool cat = op.rfind("cat.", 0) == 0;
    ctfx::tensor_meta shape = ops[0];
    if (!cat && !index)
      for (int k = 1; k < n; ++k) REQUIRE(ctfx::detail::broadcast_into(shape, ops[static_cast<std::size_t>(k)]));
    const ctfx::tensor_meta* ptr[3] = {&ops[0], n > 1 ? &ops[1] : nullptr, n > 2 ? &ops[2] : nullptr};
    ctfx::tensor_meta got;
    if (op == "add" || op == "where" || op == "neg" || op == "foreach_add" || op == "foreach_mul_scalar") {
      // (a foreach element: the elementwise op on element i of each list)
      got = ctfx::detail::elementwise_result(shape, ctfx::f32, ptr, n);
    } else if (op == "clone") {
      got = ctfx::detail::clone_meta(ops[0]);
    } else if (op == "empty_like") {
      got = ctfx::detail::empty_like_result(ops[0], ctfx::f32);
    } else if (op == "convert") {
      got = ctfx::detail::preserve_format_result(ops[0], ctfx::f64);
    } else if (cat || index) {  // through the graph's rule: the inputs as placeholders, then the op
      ctfx::ir g;
      std::vector<std::int32_t> ids;
      for (const auto& m : ops) {
        ctfx::node ph{};
        ph.op = ctfx::op_kind::placeholder;
        ph.meta = m;
        ph.meta.storage = g.fresh_storage();
        ids.push_back(g.append(ph, {}, {}));
      }
      ctfx::node c{};
      std::int32_t id = -1;
      if (cat) {
        c.op = ctfx::op_kind::cat;
        const ctfx::sym_expr d(std::stoll(op.substr(4)));
        id = g.append(c, std::span<const std::int32_t>(ids.data(), ids.size()), std::span<const ctfx::sym_expr>(&d, 1));
        ++cat_cases;
      } else {  // x, then per letter of the pattern an index (i) or None (n)
        c.op = ctfx::op_kind::index;
        std::vector<std::int32_t> args{ids[0]};
        std::size_t next = 1;
        for (char p : op.substr(6)) args.push_back(p == 'i' ? ids[next++] : -1);
        id = g.append(c, std::span<const std::int32_t>(args.data(), args.size()), {});
        ++index_cases;
      }
      REQUIRE_MESSAGE(ctfx::infer_meta(g, id), std::string(g.error.message()));
      got = g.meta(id);
    } else {
      FAIL("unknown op " << op);
    }
    REQUIRE(got.rank == rank);
    // Strides of extent-1 dimensions address nothing (PyTorch's printed strides are compared without
    // them); cat's are compared too (a later cat asks whether its inputs' strides are like
    // channels-last, extent-1 dimensions included).
    for (int k = 0; k < rank; ++k) {
      CAPTURE(k);
      if (cat || got.size[k].value() != 1) CHECK(got.stride[k].value() == want[static_cast<std::size_t>(k)]);
    }
    ++cases;
  }
  CHECK(cases >= 850);
  CHECK(cat_cases >= 150);
  CHECK(index_cases >= 200);
}

TEST_CASE("layout rules: random symbolic layouts get strides that fit PyTorch's at every size, or are refused") {
  // test/data/layout_sym_cases.txt: made by tools/layout_cases/make_sym_cases.py from torch's
  // FakeTensorMode with a ShapeEnv, each case built at eight sizes. Each case becomes an FX graph
  // (the operands as placeholders, the op's node), which ctfx parses; its result's strides,
  // evaluated at each build's sizes, must be PyTorch's on every extent longer than 1. Without the
  // result's strides in the text, a node ctfx refuses (rule result-stride-order) must be one whose
  // order the graph does not fix, and few are. With the strides PyTorch printed in one build, the
  // graph takes them where its rules leave the order open, under order symbols that hold at that
  // build's sizes: at every build where they hold, the strides must be that build's.
  std::ifstream f(data_path("layout_sym_cases.txt"));
  REQUIRE(f.good());
  auto split = [](const std::string& t, char sep) {
    std::vector<std::string> r;
    for (std::size_t b = 0;;) {
      const std::size_t e = t.find(sep, b);
      r.push_back(t.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) return r;
      b = e + 1;
    }
  };
  std::string line;
  int same = 0, varies = 0, refused = 0, printed_refused = 0, guarded_nodes = 0;
  while (std::getline(f, line)) {
    CAPTURE(line);
    const std::vector<std::string> field = split(line, '|');
    REQUIRE(field.size() == 6);
    const std::vector<std::string> operands = split(field[2], ';');
    const std::vector<std::string> builds = split(field[4], ';');
    const std::vector<std::string> printed = split(field[5], ';');
    REQUIRE(printed.size() == builds.size());
    const int symbols = static_cast<int>(split(split(builds[0], ':')[0], ',').size());
    std::string head = "class <lambda>(torch.nn.Module):\n    def forward(self";
    for (int k = 0; k < symbols; ++k) head += ", a" + std::to_string(k) + ": \"Sym(s" + std::to_string(k) + ")\"";
    for (std::size_t k = 0; k < operands.size(); ++k) head += ", x" + std::to_string(k) + ": \"" + operands[k] + "cpu\"";
    const std::string& op = field[1];
    std::string call;
    if (op == "add") call = "torch.ops.aten.add.Tensor(x0, x1)";
    else if (op == "neg") call = "torch.ops.aten.neg.default(x0)";
    else if (op == "clone") call = "torch.ops.aten.clone.default(x0)";
    else if (op == "convert") call = "torch.ops.prims.convert_element_type.default(x0, torch.float64)";
    else if (op.rfind("index.", 0) == 0) {
      call = "torch.ops.aten.index.Tensor(x0, [";
      for (int k = 0; k < std::stoi(op.substr(6)); ++k) call += "None, ";
      call += "x1])";
    } else if (op.rfind("cat.", 0) == 0) {
      call = "torch.ops.aten.cat.default([x0, x1], " + op.substr(4) + ")";
    } else {
      FAIL("unknown op " << op);
    }
    // The symbols' values at a build (false where the graph's guards fail there: sizes it refuses).
    auto bind = [&](const ctfx::ir& g, const std::string& build, std::vector<ctfx::index_t>& v) {
      const std::vector<std::string> vals = split(split(build, ':')[0], ',');
      v.assign(g.syms.size(), -1);
      for (std::size_t s = 0; s < g.syms.size(); ++s)
        if (g.syms[s].kind != ctfx::symbol_kind::derived)
          v[s] = std::stoll(vals[static_cast<std::size_t>(std::stoi(std::string(g.syms[s].name.view()).substr(1)))]);
      return ctfx::bind_derived(g, v).ok;
    };
    // The result's extents, and strides on extents longer than 1, at every build the graph runs at.
    auto check_builds = [&](const ctfx::ir& g) {
      const ctfx::tensor_meta& m = g.meta(g.find("r"));
      for (const std::string& build : builds) {
        CAPTURE(build);
        std::vector<ctfx::index_t> v;
        if (!bind(g, build, v)) continue;
        const std::vector<std::string> want = split(split(build, ':')[1], ',');
        REQUIRE(static_cast<int>(want.size()) == 2 * m.rank);
        for (int d = 0; d < m.rank; ++d) {
          CAPTURE(d);
          const ctfx::index_t n = m.size[d].eval(v);
          CHECK(n == std::stoll(want[static_cast<std::size_t>(d)]));
          if (n != 1) CHECK(m.stride[d].eval(v) == std::stoll(want[static_cast<std::size_t>(m.rank + d)]));
        }
      }
    };
    // (the result's type without strides: ctfx's are checked at every build's sizes)
    const std::string text = head + "):\n        r: \"" + field[3] + "cpu\" = " + call + "\n        return (r,)\n";
    CAPTURE(text);
    const auto r = ctfx::parse_fx(text);
    (field[0] == "same" ? same : varies) += 1;
    if (!r.ok()) {
      CHECK_MESSAGE(r.error.r == ctfx::rule::stride_order, ctfx::to_string(r.error));
      refused += field[0] == "same";
    } else {
      CHECK(field[0] == "same");
      check_builds(r.graph);
    }
    // With the strides PyTorch printed in each build.
    bool any_refused = false, any_guarded = false;
    for (std::size_t k = 0; k < printed.size(); ++k) {
      if (k > 0 && printed[k] == printed[k - 1]) continue;
      const std::string with = head + "):\n        r: \"" + printed[k] + "cpu\" = " + call + "\n        return (r,)\n";
      CAPTURE(with);
      const auto p = ctfx::parse_fx(with);
      if (!p.ok()) {
        FAIL_CHECK(ctfx::to_string(p.error));
        any_refused = true;
        continue;
      }
      std::vector<ctfx::index_t> v;
      std::string facts;
      for (std::size_t s = 0; s < p.graph.syms.size(); ++s) {
        msg m;
        ctfx::detail::put_symbol(m, p.graph, s);
        facts += std::string(m.view()) + "; ";
      }
      CHECK_MESSAGE(bind(p.graph, builds[k], v), facts);  // the printing build's sizes give the printed order
      for (const ctfx::symbol& s : p.graph.syms) any_guarded = any_guarded || s.op == ctfx::sym_op::order;
      check_builds(p.graph);
    }
    printed_refused += any_refused;
    guarded_nodes += any_guarded;
  }
  CHECK(same + varies >= 200);
  // Refused without the result's strides though one layout fits every size: a copy of a layout that
  // is dense only when a derived extent ((s0 + 2)//3) is 1, or a cat whose format depends on one.
  // With the printed strides, the order those leave open is taken under a guard.
  MESSAGE(refused << " of " << same << " cases that one layout fits refused without the result's strides; " << printed_refused
                  << " refused with PyTorch's; " << guarded_nodes << " taken under a guard");
  CHECK(refused * 10 <= same);
  CHECK(printed_refused == 0);
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

TEST_CASE("layout rules: cat is channels-last when every input suggests channels-last, else row-major") {
  // The strides as torch.cat gives them (ATen's cat meta: cat_compute_output_memory_format over
  // suggest_memory_format, then get_channels_last_strides_2d); extent-1 dimensions' strides included.
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {2, 4, 5, 3});   // N, H, W, C in memory
    auto x2 = g.input("x2", ctfx::f32, {2, 4, 5, 2});
    auto x1 = g.input("x1", ctfx::f32, {1, 4, 5, 3});
    auto y = g.input("y", ctfx::f32, {2, 2, 4, 5});   // row-major
    auto cl = x.permute({0, 3, 1, 2});                // [2, 3, 4, 5][60, 1, 15, 3]
    auto cl2 = x2.permute({0, 3, 1, 2});              // [2, 2, 4, 5][40, 1, 10, 2]
    auto cl1 = x1.permute({0, 3, 1, 2});              // [1, 3, 4, 5][60, 1, 15, 3]
    g.output(ctfx::cat({cl, cl2}, 1).named("dim1"), ctfx::cat({cl, cl1}, 0).named("dim0"), ctfx::cat({cl, cl}, 2).named("dim2"),
             ctfx::cat({cl, cl}, 3).named("dim3"), ctfx::cat({cl, cl2, cl}, 1).named("three"),
             ctfx::cat({cl, y}, 1).named("cl_contig"), ctfx::cat({y, cl}, 1).named("contig_cl"),
             ctfx::cat({cl.slice(1, 0, 2), cl2}, 1).named("gappy_cl"),  // a channel slice: strides still like channels-last
             ctfx::cat({relu(cl), cl2 * 2.0f}, 1).named("of_results"));
  };
  CHECK_LAYOUT(f, "dim1", "f32[2, 5, 4, 5][100, 1, 25, 5]");
  CHECK_LAYOUT(f, "dim0", "f32[3, 3, 4, 5][60, 1, 15, 3]");
  CHECK_LAYOUT(f, "dim2", "f32[2, 3, 8, 5][120, 1, 15, 3]");
  CHECK_LAYOUT(f, "dim3", "f32[2, 3, 4, 10][120, 1, 30, 3]");
  CHECK_LAYOUT(f, "three", "f32[2, 8, 4, 5][160, 1, 40, 8]");
  CHECK_LAYOUT(f, "cl_contig", "f32[2, 5, 4, 5][100, 20, 5, 1]");  // one contiguous input: contiguous
  CHECK_LAYOUT(f, "contig_cl", "f32[2, 5, 4, 5][100, 20, 5, 1]");
  CHECK_LAYOUT(f, "gappy_cl", "f32[2, 4, 4, 5][80, 1, 20, 4]");
  CHECK_LAYOUT(f, "of_results", "f32[2, 5, 4, 5][100, 1, 25, 5]");  // elementwise results keep channels-last
}

TEST_CASE("layout rules: cat of ambiguous N111 and N1H1 strides, channels-last-3d, trivial channels, rank 3, symbolic extents") {
  constexpr auto f = [](builder& g) {
    auto n = g.input("n", ctfx::f32, {2, 1, 1, 1});       // [1, 1, 1, 1]: channels-last or not, PyTorch says not
    auto w = g.input("w", ctfx::f32, {2, 1, 1, 4});
    auto h = g.input("h", ctfx::f32, {2, 3, 1, 1});       // permuted: N1H1 [2, 1, 3, 1][3, 1, 1, 1]
    auto hc = g.input("hc", ctfx::f32, {2, 1, 3, 1});     // row-major N1H1: [3, 3, 1, 1]
    auto c = g.input("c", ctfx::f32, {2, 1, 1, 3});       // permuted: NC11 [2, 3, 1, 1][3, 1, 3, 3]
    auto v = g.input("v", ctfx::f32, {2, 2, 3, 4, 3});    // N, D, H, W, C in memory
    auto v1 = g.input("v1", ctfx::f32, {2, 1, 3, 4, 3});
    auto z = g.input("z", ctfx::f32, {2, 3, 1, 3, 4});    // row-major
    auto e = g.input("e", ctfx::f32, {2, 1, 4, 5});
    auto t = g.input("t", ctfx::f32, {4, 3});
    auto s = g.input("s", ctfx::f32, {g.sym("s0"), 4, 5, 3});
    auto n11w = w.slice(3, 0, 1);                          // [2, 1, 1, 1][4, 4, 4, 1]
    auto cl3 = v.permute({0, 4, 1, 2, 3});                 // [2, 3, 2, 3, 4][72, 1, 36, 12, 3]
    auto cl3b = v1.permute({0, 4, 1, 2, 3});               // [2, 3, 1, 3, 4][36, 1, 36, 12, 3]
    g.output(ctfx::cat({n, n}, 1).named("n111"), ctfx::cat({n11w, n11w}, 1).named("n11w"),
             ctfx::cat({h.permute({0, 3, 1, 2}), h.permute({0, 3, 1, 2})}, 1).named("n1h1_cl"),
             ctfx::cat({hc, hc}, 1).named("n1h1_contig"),
             ctfx::cat({c.permute({0, 3, 1, 2}), c.permute({0, 3, 1, 2})}, 0).named("nc11"),
             ctfx::cat({cl3, cl3b}, 2).named("cl3d"), ctfx::cat({cl3, z}, 2).named("cl3d_contig"),
             ctfx::cat({e.expand({2, 3, 4, 5}), g.input("u", ctfx::f32, {2, 4, 5, 3}).permute({0, 3, 1, 2})}, 1).named("zero_c"),
             ctfx::cat({t.transpose(0, 1).unsqueeze(0), t.transpose(0, 1).unsqueeze(0)}, 0).named("rank3"),
             ctfx::cat({s.permute({0, 3, 1, 2}), s.permute({0, 3, 1, 2})}, 1).named("symbolic"));
  };
  CHECK_LAYOUT(f, "n111", "f32[2, 2, 1, 1][2, 1, 1, 1]");        // the d == 0 rule: NCHW by default
  CHECK_LAYOUT(f, "n11w", "f32[2, 2, 1, 1][2, 1, 1, 1]");
  CHECK_LAYOUT(f, "n1h1_cl", "f32[2, 2, 3, 1][6, 1, 2, 2]");     // [3, 1, 1, 1] is channels-last
  CHECK_LAYOUT(f, "n1h1_contig", "f32[2, 2, 3, 1][6, 3, 1, 1]");
  CHECK_LAYOUT(f, "nc11", "f32[4, 3, 1, 1][3, 1, 3, 3]");        // extent-1 strides as get_channels_last_strides_2d gives them
  CHECK_LAYOUT(f, "cl3d", "f32[2, 3, 3, 3, 4][108, 1, 36, 12, 3]");
  CHECK_LAYOUT(f, "cl3d_contig", "f32[2, 3, 3, 3, 4][108, 36, 12, 4, 1]");
  CHECK_LAYOUT(f, "zero_c", "f32[2, 6, 4, 5][120, 20, 5, 1]");   // stride 0 along C suggests contiguous
  CHECK_LAYOUT(f, "rank3", "f32[2, 3, 4][12, 4, 1]");            // rank 3 is never channels-last
  CHECK_LAYOUT(f, "symbolic", "f32[s0, 6, 4, 5][120, 1, 30, 6]");  // a symbolic N: still channels-last
  // The rule itself, on the cases c10's is_channels_last_strides_2d_s4 singles out.
  using ctfx::detail::memory_format;
  auto fmt = [](std::initializer_list<long> sizes, std::initializer_list<long> strides) {
    ctfx::tensor_meta m;
    m.rank = static_cast<std::int8_t>(sizes.size());
    int k = 0;
    for (long v : sizes) m.size[k++] = ctfx::sym_expr(v);
    k = 0;
    for (long v : strides) m.stride[k++] = ctfx::sym_expr(v);
    return ctfx::detail::suggest_memory_format(m);
  };
  CHECK(fmt({2, 3, 4, 5}, {60, 1, 15, 3}) == memory_format::channels_last);
  CHECK(fmt({2, 3, 4, 5}, {60, 20, 5, 1}) == memory_format::contiguous);
  CHECK(fmt({2, 1, 1, 1}, {1, 1, 1, 1}) == memory_format::contiguous);     // N111
  CHECK(fmt({2, 1, 1, 1}, {4, 4, 4, 4}) == memory_format::contiguous);     // N11W sliced on W
  CHECK(fmt({2, 1, 3, 1}, {3, 1, 1, 1}) == memory_format::channels_last);  // N1H1 channels-last
  CHECK(fmt({2, 1, 3, 1}, {3, 3, 1, 1}) == memory_format::contiguous);     // N1H1 row-major
  CHECK(fmt({1, 3, 1, 4}, {12, 4, 4, 1}) == memory_format::contiguous);    // 1C1W row-major...
  CHECK(fmt({1, 4, 1, 3}, {12, 1, 4, 4}) == memory_format::contiguous);    // ...transposed (1, 3): not channels-last
  CHECK(fmt({1, 4, 1, 3}, {12, 1, 12, 4}) == memory_format::channels_last);
  CHECK(fmt({2, 0, 4, 5}, {0, 1, 0, 0}) == memory_format::contiguous);     // an empty dimension
  CHECK(fmt({2, 3, 4, 5}, {60, 0, 15, 3}) == memory_format::contiguous);   // a trivial C dimension
  CHECK(fmt({2, 3, 2, 3, 4}, {72, 1, 36, 12, 3}) == memory_format::channels_last_3d);
  CHECK(fmt({2, 3, 2, 3, 4}, {72, 24, 12, 4, 1}) == memory_format::contiguous);
  CHECK(fmt({3, 4, 2}, {1, 6, 3}) == memory_format::contiguous);            // rank 3: never
}

TEST_CASE("layout rules: _foreach_* elements take the elementwise op's strides from both lists") {
  // ATen's foreach slow kernels (what the meta device runs) compute self[i].add(other[i]): an
  // element is laid out as that add, not as empty_like(self[i]).
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {3, 4});
    auto y = g.input("y", ctfx::f32, {4, 3});
    auto s = g.input("s", ctfx::f32, {1, 1});
    auto xt = x.transpose(0, 1);                       // [4, 3][1, 4]
    auto e = s.expand({4, 3});                         // [4, 3][0, 0]
    auto t = ctfx::foreach_add({xt, y, e}, {y, xt, xt});
    auto m = ctfx::foreach_mul({xt, y}, 2.0);
    auto u = ctfx::foreach_mul({y, e}, {y, y});
    g.output(t[0].named("perm_first"), t[1].named("contig_first"), t[2].named("expanded_self"), m[0].named("scalar_perm"),
             m[1].named("scalar_contig"), u[1].named("expanded_contig"));
  };
  CHECK_LAYOUT(f, "perm_first", "f32[4, 3][1, 4]");
  CHECK_LAYOUT(f, "contig_first", "f32[4, 3][3, 1]");
  CHECK_LAYOUT(f, "expanded_self", "f32[4, 3][1, 4]");  // empty_like(self) would be [3, 1]: other decides
  CHECK_LAYOUT(f, "scalar_perm", "f32[4, 3][1, 4]");
  CHECK_LAYOUT(f, "scalar_contig", "f32[4, 3][3, 1]");
  CHECK_LAYOUT(f, "expanded_contig", "f32[4, 3][3, 1]");
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

namespace {
struct double_acc_op : ctfx::custom_op<"t::double_acc_", "double_acc_(Tensor x, Tensor(a!) acc) -> Tensor"> {};
struct double_t_op : ctfx::custom_op<"t::double_t", "double_t(Tensor x) -> Tensor"> {};
}  // namespace

TEST_CASE("layout rules: a user op's fresh result takes the strides the graph declares, overlapping ones are refused") {
  // The op's fake implementation lays its result out (here column-major); only the printed graph says how.
  constexpr std::string_view text = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 4][4, 1]cpu", arg1_1: "f32[3, 4][4, 1]cpu"):
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops.t.double_acc_.default, x = arg0_1, acc = arg1_1)
        getitem: "f32[3, 4][1, 3]cpu" = auto_functionalized[0]
        getitem_1: "f32[3, 4][4, 1]cpu" = auto_functionalized[1];  auto_functionalized = None
        add: "f32[3, 4][1, 3]cpu" = torch.ops.aten.add.Tensor(getitem, 1)
        return (getitem, add)
)";
  const ctfx::fx_custom ops[] = {ctfx::fx_custom_of<double_acc_op>()};
  const auto r = ctfx::parse_fx(text, ops);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  const ctfx::tensor_meta& m = r.graph.meta(r.graph.find("getitem"));
  CHECK(m.stride[0] == ctfx::sym_expr(1));
  CHECK(m.stride[1] == ctfx::sym_expr(3));
  CHECK(r.graph.meta(r.graph.find("add")).stride[1] == ctfx::sym_expr(3));  // the elementwise rule follows it
  // Strides that put two elements at one address cannot be a fresh result's.
  std::string bad(text);
  bad.replace(bad.find("[1, 3]cpu\" = auto"), 6, "[1, 2]");
  const auto e = ctfx::parse_fx(bad, ops);
  REQUIRE(!e.ok());
  CAPTURE(ctfx::to_string(e.error));
  CHECK(ctfx::to_string(e.error).find("the declared strides of the user op's result place two elements at one address") != std::string::npos);
  // A user op that mutates nothing is called directly; its one result is the node, laid out as printed.
  constexpr std::string_view direct = R"(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 4][4, 1]cpu"):
        double_t: "f32[3, 4][1, 3]cpu" = torch.ops.t.double_t.default(arg0_1);  arg0_1 = None
        add: "f32[3, 4][1, 3]cpu" = torch.ops.aten.add.Tensor(double_t, 1)
        return (double_t, add)
)";
  const ctfx::fx_custom direct_ops[] = {ctfx::fx_custom_of<double_t_op>()};
  const auto d = ctfx::parse_fx(direct, direct_ops);
  REQUIRE_MESSAGE(d.ok(), ctfx::to_string(d.error));
  CHECK(d.graph.meta(d.graph.find("double_t")).stride[1] == ctfx::sym_expr(3));
  CHECK(d.graph.meta(d.graph.find("add")).stride[1] == ctfx::sym_expr(3));
  // Without declared strides (a graph built in C++) the result is row-major.
  constexpr auto f = [](builder& g) {
    auto x = g.input("x", ctfx::f32, {3, 4});
    auto acc = g.input("acc", ctfx::f32, {3, 4});
    auto res = g.call<double_acc_op>(x, acc);
    g.output(res[0].named("fresh"));
  };
  CHECK_LAYOUT(f, "fresh", "f32[3, 4][4, 1]");
}

TEST_CASE("layout rules: symbolic extents keep the stride order their strides decide") {
  // The orders PyTorch gives these (the captured dyn_permute_mul, dyn_transposed_plus,
  // dyn_channels_last_relu, dyn_clone_permuted, dyn_slice_t_add, dyn_index_permuted and
  // dyn_cat_channels_last graphs print them): strides that are products of sizes compare by
  // division (s1*s2 against s2), a symbol against a number by the sizes' least value 2.
  constexpr auto f = [](builder& g) {
    auto s0 = g.sym("s0"), s1 = g.sym("s1"), s2 = g.sym("s2");
    auto x = g.input("x", ctfx::f32, {s0, s1, s2});
    auto m = g.input("m", ctfx::f32, {s0, s1});
    auto y = g.input("y", ctfx::f32, {s1, s0});
    auto c = g.input("c", ctfx::f32, {s0, s1, s2, 3});  // N, H, W, C in memory
    auto i = g.input("i", ctfx::i64, {4});
    auto mt = m.transpose(0, 1);                         // [s1, s0][1, s1]
    auto cl = c.permute({0, 3, 1, 2});                   // channels-last [s0, 3, s1, s2]
    g.output((x.permute({2, 0, 1}) * 2.0f).named("perm"), (mt + y).named("t_first"), (y + mt).named("row_first"),
             ctfx::relu(cl).named("cl"), x.permute({1, 0, 2}).clone().named("clone"),
             (mt.slice(0, 1, s1) + 1.0f).named("sliced"), (m.slice(1, 0, s1, 2).transpose(0, 1) * 3.0f).named("step2"),
             ctfx::index(x.permute({2, 0, 1}), {ctfx::none, i}).named("index"),
             ctfx::cat({cl, cl}, 1).named("cat_cl"), ctfx::where(ctfx::gt(mt, 0.0), mt, y).named("where"));
  };
  CHECK_LAYOUT(f, "perm", "f32[s2, s0, s1][1, s1*s2, s2]");
  CHECK_LAYOUT(f, "t_first", "f32[s1, s0][1, s1]");
  CHECK_LAYOUT(f, "row_first", "f32[s1, s0][s0, 1]");
  CHECK_LAYOUT(f, "cl", "f32[s0, 3, s1, s2][3*s1*s2, 1, 3*s2, 3]");
  CHECK_LAYOUT(f, "clone", "f32[s1, s0, s2][s2, s1*s2, 1]");
  CHECK_LAYOUT(f, "sliced", "f32[s1 - 1, s0][1, s1 - 1]");
  CHECK_LAYOUT(f, "step2", "f32[((s1 + 1)//2), s0][1, ((s1 + 1)//2)]");
  CHECK_LAYOUT(f, "index", "f32[s2, 4, s1][1, s2, 4*s2]");
  CHECK_LAYOUT(f, "cat_cl", "f32[s0, 6, s1, s2][6*s1*s2, 1, 6*s2, 6]");
  CHECK_LAYOUT(f, "where", "f32[s1, s0][1, s1]");
}

TEST_CASE("layout rules: what is known of symbolic extents") {
  using ctfx::detail::tri;
  ctfx::ir g;
  const ctfx::sym_expr s0 = ctfx::sym_expr::symbol(0), s1 = ctfx::sym_expr::symbol(1);
  const ctfx::detail::sym_compare c{&g};  // no table: both count as sizes (>= 2)
  CHECK(c.ge(s0 * s1, s1) == tri::yes);                       // s0*s1 - s1 >= s1 * (2 - 1)
  CHECK(c.ge(s1, s0 * s1) == tri::no);
  CHECK(c.ge(s0, ctfx::sym_expr(2)) == tri::yes);
  CHECK(c.ge(s0, ctfx::sym_expr(3)) == tri::unknown);         // s0 may be 2
  CHECK(c.ge_distinct(ctfx::sym_expr(2), s0) == tri::no);     // 2 != s0: s0 > 2
  CHECK(c.ge(s0, s1) == tri::unknown);
  CHECK(c.eq(s0, ctfx::sym_expr(1)) == tri::no);
  CHECK(c.eq(s0 - ctfx::sym_expr(1), ctfx::sym_expr(1)) == tri::unknown);
  CHECK(c.divides(ctfx::sym_expr(3) * s0 * s1, s1) == tri::yes);
  CHECK(c.divides(s0, ctfx::sym_expr(3)) == tri::unknown);
  // A derived symbol (s0//2) is only known to be >= 0.
  ctfx::symbol d{};
  d.kind = ctfx::symbol_kind::derived;
  g.syms.push_back(ctfx::symbol{});
  g.syms.push_back(ctfx::symbol{});
  g.syms.push_back(d);
  const ctfx::sym_expr h = ctfx::sym_expr::symbol(2);
  CHECK(c.ge(h, ctfx::sym_expr(1)) == tri::unknown);
  CHECK(c.ge(h * s0, s0) == tri::unknown);
  CHECK(c.ge(s0 * h, ctfx::sym_expr(0)) == tri::yes);
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

namespace {

// Channels-last cats whose operands are elementwise kernels: each (a fused chain or a single op)
// is cat's only reader's operand, so it is computed straight into its slice of cat's channels-last
// buffer (fusion::into), at the slice's strides; a view operand is copied by cat.
constexpr long CN = 2, CC = 3, CH = 4, CW = 5, CC2 = 2;
constexpr auto cl_cat_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {CN, CH, CW, CC});   // N, H, W, C in memory
  auto y = b.input("y", ctfx::f32, {CN, CH, CW, CC2});
  auto xc = x.permute({0, 3, 1, 2});                     // [2, 3, 4, 5][60, 1, 15, 3]
  auto yc = y.permute({0, 3, 1, 2});                     // [2, 2, 4, 5][40, 1, 10, 2]
  auto c1 = ctfx::cat({ctfx::relu(xc) * 2.0f + 1.0f, yc - 0.5f}, 1).named("c1");  // [2, 5, 4, 5][100, 1, 25, 5]
  auto c0 = ctfx::cat({xc * 3.0f, xc + 2.0f}, 0).named("c0");                     // [4, 3, 4, 5][60, 1, 15, 3], returned
  auto c3 = ctfx::cat({xc - 1.0f, xc}, 3).named("c3");                            // [2, 3, 4, 10][120, 1, 30, 3]
  b.output((c1 * 0.5f).named("o1"), c0, (c3 + 0.25f).named("o3"));
});
using cl_cat_plan = ctfx::compiled<decltype(cl_cat_graph)>;

// _foreach_* on permuted and expanded operands: each element in its own layout.
constexpr auto foreach_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4});
  auto y = b.input("y", ctfx::f32, {4, 3});
  auto s = b.input("s", ctfx::f32, {1, 3});
  auto xt = x.transpose(0, 1);                           // [4, 3][1, 4]
  auto t = ctfx::foreach_add({xt, s.expand({4, 3})}, {y, xt});
  auto m = ctfx::foreach_mul({xt, y}, 3.0);
  b.output((t[0] * 1.0f).named("a0"), t[1], m[0], (m[1] - 1.0f).named("m1"));
});
using foreach_plan = ctfx::compiled<decltype(foreach_graph)>;

float in_x(long n, long c, long h, long w) { return static_cast<float>(((n * 7 + c * 5 + h * 3 + w) * 37) % 29) * 0.25f - 3.5f; }
float in_y(long n, long c, long h, long w) { return static_cast<float>(((n * 3 + c * 11 + h * 5 + w * 2) * 13) % 23) * 0.5f - 5.0f; }

struct cl_cat_data {
  std::vector<float> x = std::vector<float>(CN * CH * CW * CC), y = std::vector<float>(CN * CH * CW * CC2);
  std::vector<float> o1 = std::vector<float>(CN * (CC + CC2) * CH * CW), o0 = std::vector<float>(2 * CN * CC * CH * CW),
                     o3 = std::vector<float>(CN * CC * CH * 2 * CW);
  cl_cat_data() {  // stored N, H, W, C: element (n, c, h, w) of the channels-last views
    for (long n = 0; n < CN; ++n)
      for (long h = 0; h < CH; ++h)
        for (long w = 0; w < CW; ++w) {
          for (long c = 0; c < CC; ++c) x[static_cast<std::size_t>(((n * CH + h) * CW + w) * CC + c)] = in_x(n, c, h, w);
          for (long c = 0; c < CC2; ++c) y[static_cast<std::size_t>(((n * CH + h) * CW + w) * CC2 + c)] = in_y(n, c, h, w);
        }
  }
  std::vector<ctfx::tensor_ref> in() {
    return {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {CN, CH, CW, CC}), ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {CN, CH, CW, CC2})};
  }
  std::vector<ctfx::tensor_ref> out() {  // row-major caller buffers
    return {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {CN, CC + CC2, CH, CW}), ctfx::tensor_ref::contiguous(o0.data(), ctfx::f32, {2 * CN, CC, CH, CW}),
            ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {CN, CC, CH, 2 * CW})};
  }
};

std::string layout_of(const ctfx::ir& g, std::int32_t i) {
  ctfx::detail::msg m;
  const ctfx::tensor_meta& t = g.meta(i);
  for (int k = 0; k < t.rank; ++k) m << (k ? ", " : "[") << t.stride[k].value();
  m << "]+" << t.offset.value();
  return std::string(m.view());
}

}  // namespace

TEST_CASE("layout rules: both executors compute elementwise kernels into the slices of a channels-last cat, at the slices' strides") {
  const ctfx::ir g = cl_cat_plan::graph();
  const std::int32_t c1 = g.find("c1"), c0 = g.find("c0"), c3 = g.find("c3");
  REQUIRE(c1 >= 0);
  REQUIRE(c0 >= 0);
  REQUIRE(c3 >= 0);
  CHECK(layout_of(g, c1) == "[100, 1, 25, 5]+0");
  CHECK(layout_of(g, c0) == "[60, 1, 15, 3]+0");
  CHECK(layout_of(g, c3) == "[120, 1, 30, 3]+0");
  // The operands computed in their slices, the same in the compiler and at run time; the view xc
  // (c3's second operand) is copied by cat.
  const ctfx::fusion f = cl_cat_plan::fused();
  const ctfx::runtime_plan p(cl_cat_graph.get());
  REQUIRE(p.error().ok());
  for (std::int32_t i = 0; i < g.size(); ++i) CHECK(f.into_of(i) == p.fused().into_of(i));
  for (std::int32_t c : {c1, c0})
    for (int k = 0; k < 2; ++k) CHECK(f.into_of(g.arg(c, k)) == c);
  CHECK(f.into_of(g.arg(c3, 0)) == c3);
  CHECK(f.into_of(g.arg(c3, 1)) == -1);
  CHECK(f.is_member(g.arg(g.arg(c1, 0), 0)));  // relu(xc) * 2 is fused into the + 1 that c1 places
  // Each slice: cat's strides, offset by the operands before it along cat's dimension.
  auto slice = [&](std::int32_t c, int k) {
    const ctfx::tensor_meta s = ctfx::cat_slice_meta(g, c, g.arg(c, k));
    ctfx::detail::msg m;
    for (int d = 0; d < s.rank; ++d) m << (d ? ", " : "[") << s.size[d].value();
    for (int d = 0; d < s.rank; ++d) m << (d ? ", " : "][") << s.stride[d].value();
    m << "]+" << s.offset.value();
    return std::string(m.view());
  };
  CHECK(slice(c1, 0) == "[2, 3, 4, 5][100, 1, 25, 5]+0");
  CHECK(slice(c1, 1) == "[2, 2, 4, 5][100, 1, 25, 5]+3");
  CHECK(slice(c0, 1) == "[2, 3, 4, 5][60, 1, 15, 3]+120");
  CHECK(slice(c3, 0) == "[2, 3, 4, 5][120, 1, 30, 3]+0");
  // Values: compiled<G>, the run-time plan (fused, unfused, sequential and OpenMP) and the
  // reference, against the values computed here.
  cl_cat_data a, b, c, d, r;
  auto st = cl_cat_plan::run(a.in(), a.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  st = p.run(b.in(), b.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  st = p.run(c.in(), c.out(), ctfx::device_ctx{ctfx::backend::omp});
  REQUIRE_MESSAGE(st.ok, st.message);
  ctfx::plan_options unfused;
  unfused.fuse = false;
  REQUIRE(ctfx::runtime_plan(cl_cat_graph.get(), unfused).run(d.in(), d.out()).ok);
  REQUIRE(ctfx::reference_run(cl_cat_graph.get(), r.in(), r.out()).ok);
  const cl_cat_data want = [] {
    cl_cat_data e;
    auto relu = [](float v) { return v < 0.0f ? 0.0f : v; };
    for (long n = 0; n < CN; ++n)
      for (long h = 0; h < CH; ++h)
        for (long w = 0; w < CW; ++w) {
          for (long ch = 0; ch < CC + CC2; ++ch)
            e.o1[static_cast<std::size_t>(((n * (CC + CC2) + ch) * CH + h) * CW + w)] =
                (ch < CC ? relu(in_x(n, ch, h, w)) * 2.0f + 1.0f : in_y(n, ch - CC, h, w) - 0.5f) * 0.5f;
          for (long ch = 0; ch < CC; ++ch) {
            e.o0[static_cast<std::size_t>(((n * CC + ch) * CH + h) * CW + w)] = in_x(n, ch, h, w) * 3.0f;
            e.o0[static_cast<std::size_t>((((n + CN) * CC + ch) * CH + h) * CW + w)] = in_x(n, ch, h, w) + 2.0f;
            e.o3[static_cast<std::size_t>(((n * CC + ch) * CH + h) * 2 * CW + w)] = (in_x(n, ch, h, w) - 1.0f) + 0.25f;
            e.o3[static_cast<std::size_t>(((n * CC + ch) * CH + h) * 2 * CW + CW + w)] = in_x(n, ch, h, w) + 0.25f;
          }
        }
    return e;
  }();
  for (const cl_cat_data* o : {&a, &b, &c, &d, &r}) {
    CHECK(o->o1 == want.o1);
    CHECK(o->o0 == want.o0);
    CHECK(o->o3 == want.o3);
    CHECK(o->x == want.x);  // inputs untouched
    CHECK(o->y == want.y);
  }
  // With every access checked against the planned lifetimes.
  ctfx::plan_options lo;
  lo.check_lifetimes = true;
  cl_cat_data l;
  st = ctfx::runtime_plan(cl_cat_graph.get(), lo).run(l.in(), l.out());
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(l.o1 == want.o1);
  CHECK(l.o0 == want.o0);
  CHECK(l.o3 == want.o3);
}

TEST_CASE("layout rules: both executors compute _foreach_* elements into their permuted layouts") {
  const ctfx::ir g = foreach_plan::graph();
  std::int32_t items[4] = {-1, -1, -1, -1}, n = 0;
  for (std::int32_t i = 0; i < g.size(); ++i)
    if (g[i].op == ctfx::op_kind::getitem && n < 4) items[n++] = i;
  REQUIRE(n == 4);
  CHECK(layout_of(g, items[0]) == "[1, 4]+0");  // xt + y
  CHECK(layout_of(g, items[1]) == "[1, 4]+0");  // s.expand + xt: xt decides
  CHECK(layout_of(g, items[2]) == "[1, 4]+0");  // xt * 3
  CHECK(layout_of(g, items[3]) == "[3, 1]+0");  // y * 3
  std::vector<float> x(12), y(12), s(3);
  for (std::size_t i = 0; i < 12; ++i) {
    x[i] = static_cast<float>((i * 7) % 11) * 0.5f - 2.0f;
    y[i] = static_cast<float>((i * 5) % 13) * 0.25f - 1.5f;
  }
  for (std::size_t i = 0; i < 3; ++i) s[i] = static_cast<float>(i) - 0.75f;
  std::vector<float> want[4] = {std::vector<float>(12), std::vector<float>(12), std::vector<float>(12), std::vector<float>(12)};
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      const float xt = x[j * 4 + i], yv = y[i * 3 + j];
      want[0][i * 3 + j] = (xt + yv) * 1.0f;
      want[1][i * 3 + j] = s[j] + xt;
      want[2][i * 3 + j] = xt * 3.0f;
      want[3][i * 3 + j] = yv * 3.0f - 1.0f;
    }
  auto run = [&](auto&& exec) {
    std::vector<float> o[4] = {std::vector<float>(12), std::vector<float>(12), std::vector<float>(12), std::vector<float>(12)};
    std::vector<ctfx::tensor_ref> out;
    for (auto& v : o) out.push_back(ctfx::tensor_ref::contiguous(v.data(), ctfx::f32, {4, 3}));
    const ctfx::run_status st = exec(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4}),
                                                                   ctfx::tensor_ref::contiguous(y.data(), ctfx::f32, {4, 3}),
                                                                   ctfx::tensor_ref::contiguous(s.data(), ctfx::f32, {1, 3})},
                                     out);
    REQUIRE_MESSAGE(st.ok, st.message);
    for (int k = 0; k < 4; ++k) {
      CAPTURE(k);
      CHECK(o[k] == want[k]);
    }
  };
  const ctfx::runtime_plan p(foreach_graph.get());
  run([&](auto in, auto out) { return foreach_plan::run(in, out); });
  run([&](auto in, auto out) { return p.run(in, out); });
  run([&](auto in, auto out) { return p.run(in, out, ctfx::device_ctx{ctfx::backend::omp}); });
  run([&](auto in, auto out) { return ctfx::reference_run(foreach_graph.get(), in, out); });
}

namespace {

// Gathers whose results PyTorch lays out in a permuted order (index of a permuted input, indices
// apart, a 0-d index) and an elementwise op on one: every executor computes into those layouts.
constexpr auto index_graph = ctfx::graph([](ctfx::builder& b) {
  auto x = b.input("x", ctfx::f32, {3, 4, 5});
  auto i = b.input("i", ctfx::i64, {2});
  auto j = b.input("j", ctfx::i64, {});
  auto g1 = ctfx::index(x.permute({2, 0, 1}), {ctfx::none, i}).named("g1");      // [5, 2, 4]
  auto g2 = ctfx::index(x.permute({1, 2, 0}), {i, ctfx::none, i}).named("g2");   // apart: [2, 5]
  auto g3 = ctfx::index(x.permute({2, 1, 0}), {ctfx::none, j}).named("g3");      // 0-d: [5, 3]
  b.output(g1, (g1 * 2.0f).named("g1x2"), g2, g3);
});
using index_plan = ctfx::compiled<decltype(index_graph)>;

}  // namespace

TEST_CASE("layout rules: both executors gather into the layouts PyTorch gives index results") {
  const ctfx::ir g = index_plan::graph();
  CHECK(layout_of(g, g.find("g1")) == "[1, 5, 10]+0");  // as PyTorch's index meta function lays them out
  CHECK(layout_of(g, g.find("g1x2")) == "[1, 5, 10]+0");
  CHECK(layout_of(g, g.find("g3")) == "[1, 5]+0");      // 0-d index: x's first strides order it (x.permute's 1, 5)
  std::vector<float> x(60);
  for (std::size_t k = 0; k < 60; ++k) x[k] = static_cast<float>((k * 7) % 23) - 11.5f;
  std::vector<std::int64_t> i = {2, -1};
  std::int64_t j = 1;
  // By hand: x[a][b][c] at a*20 + b*5 + c; i wraps to {2, 2} along 3 and {2, 3} along 4.
  auto xv = [&](long a, long bb, long c) { return x[static_cast<std::size_t>(a * 20 + bb * 5 + c)]; };
  const long i3[2] = {2, 2}, i4[2] = {2, 3};
  std::vector<float> w1(40), w1x2(40), w2(10), w3(15);
  for (long c = 0; c < 5; ++c) {
    for (long k = 0; k < 2; ++k)
      for (long bb = 0; bb < 4; ++bb) {
        w1[static_cast<std::size_t>((c * 2 + k) * 4 + bb)] = xv(i3[k], bb, c);
        w1x2[static_cast<std::size_t>((c * 2 + k) * 4 + bb)] = xv(i3[k], bb, c) * 2.0f;
      }
    for (long k = 0; k < 2; ++k) w2[static_cast<std::size_t>(k * 5 + c)] = xv(i3[k], i4[k], c);
    for (long a = 0; a < 3; ++a) w3[static_cast<std::size_t>(c * 3 + a)] = xv(a, j, c);
  }
  auto run = [&](auto&& exec) {
    std::vector<float> o1(40), o2(40), o3(10), o4(15);
    const std::vector<ctfx::tensor_ref> in = {ctfx::tensor_ref::contiguous(x.data(), ctfx::f32, {3, 4, 5}),
                                              ctfx::tensor_ref::contiguous(i.data(), ctfx::i64, {2}),
                                              ctfx::tensor_ref::contiguous(&j, ctfx::i64, {})};
    const std::vector<ctfx::tensor_ref> out = {ctfx::tensor_ref::contiguous(o1.data(), ctfx::f32, {5, 2, 4}),
                                               ctfx::tensor_ref::contiguous(o2.data(), ctfx::f32, {5, 2, 4}),
                                               ctfx::tensor_ref::contiguous(o3.data(), ctfx::f32, {2, 5}),
                                               ctfx::tensor_ref::contiguous(o4.data(), ctfx::f32, {5, 3})};
    const ctfx::run_status st = exec(in, out);
    REQUIRE_MESSAGE(st.ok, st.message);
    CHECK(o1 == w1);
    CHECK(o2 == w1x2);
    CHECK(o3 == w2);
    CHECK(o4 == w3);
  };
  const ctfx::runtime_plan p(index_graph.get());
  ctfx::plan_options unfused;
  unfused.fuse = false;
  const ctfx::runtime_plan pu(index_graph.get(), unfused);
  run([&](auto in, auto out) { return index_plan::run(in, out); });
  run([&](auto in, auto out) { return p.run(in, out); });
  run([&](auto in, auto out) { return pu.run(in, out); });
  run([&](auto in, auto out) { return p.run(in, out, ctfx::device_ctx{ctfx::backend::omp}); });
  run([&](auto in, auto out) { return ctfx::reference_run(index_graph.get(), in, out); });
}
