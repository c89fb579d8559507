// Tests of graph/fx_parse.hpp and graph/fx_print.hpp: FX graph texts that PyTorch printed
// (test/data/fx/*.txt, made by tools/fx_capture/capture.py with torch 2.15 on CPU) parse at compile
// time and at run time into the same graph, print back as FX text that re-parses to the same graph,
// and broken texts give errors naming the line, the column and the op.
#include <doctest/doctest.h>

#include <ctfx.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>
#include <string>

namespace {

struct sin_op : ctfx::custom_op<"ctfx_test::sin_", "sin_(Tensor x, Tensor(a!) out) -> ()"> {};
struct sin_cos_op
    : ctfx::custom_op<"ctfx_test::sin_cos_", "sin_cos_(Tensor x, Tensor(a!) out_sin, Tensor(a!) out_cos) -> ()"> {};
struct add_one_op : ctfx::custom_op<"ctfx_test::add_one_", "add_one_(Tensor(a!) x) -> ()"> {};
const ctfx::fx_custom user_ops[] = {ctfx::fx_custom_of<sin_op>(), ctfx::fx_custom_of<sin_cos_op>(),
                                    ctfx::fx_custom_of<add_one_op>()};

std::string data_dir() {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/fx/";
}
ctfx::fx_parse_result parse_file(const std::string& name) {
  return ctfx::parse_fx_file(data_dir() + name + ".txt", user_ops);
}

// ----- compile time: the texts are verbatim copies of test/data/fx/<name>.txt -----
constexpr auto kv_cache_index = ctfx::fx_graph<R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[2, 3, 16, 4][192, 64, 4, 1]cpu", arg1_1: "i64[1][1]cpu", arg2_1: "f32[2, 3, 1, 4][12, 4, 4, 1]cpu"):
        # File: /work/main/tools/fx_capture/capture.py:72 in kv_cache_index, code: cache[:, :, pos] = k
        index_put: "f32[2, 3, 16, 4][192, 64, 4, 1]cpu" = torch.ops.aten.index_put.default(arg0_1, [None, None, arg1_1], arg2_1);  arg1_1 = arg2_1 = None
        copy_: "f32[2, 3, 16, 4][192, 64, 4, 1]cpu" = torch.ops.aten.copy_.default(arg0_1, index_put);  arg0_1 = index_put = copy_ = None
        return ()
)fx">();
constexpr auto slice_scatter_chain = ctfx::fx_graph<R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[8, 4][4, 1]cpu", arg1_1: "f32[2, 4][4, 1]cpu", arg2_1: "f32[2, 4][4, 1]cpu"):
        # File: /work/main/tools/fx_capture/capture.py:57 in slice_scatter_chain, code: x[0:2] = a
        slice_1: "f32[2, 4][4, 1]cpu" = torch.ops.aten.slice.Tensor(arg0_1, 0, 0, 2);  slice_1 = None
        slice_scatter: "f32[8, 4][4, 1]cpu" = torch.ops.aten.slice_scatter.default(arg0_1, arg1_1, 0, 0, 2);  arg1_1 = None

        # File: /work/main/tools/fx_capture/capture.py:58 in slice_scatter_chain, code: x[4:6] = b
        slice_4: "f32[2, 4][4, 1]cpu" = torch.ops.aten.slice.Tensor(slice_scatter, 0, 4, 6);  slice_4 = None
        slice_scatter_1: "f32[8, 4][4, 1]cpu" = torch.ops.aten.slice_scatter.default(slice_scatter, arg2_1, 0, 4, 6);  slice_scatter = arg2_1 = None

        # File: /work/main/tools/fx_capture/capture.py:59 in slice_scatter_chain, code: return x.sum(0)
        sum_1: "f32[4][1]cpu" = torch.ops.aten.sum.dim_IntList(slice_scatter_1, [0])

        # File: /work/main/tools/fx_capture/capture.py:58 in slice_scatter_chain, code: x[4:6] = b
        copy_: "f32[8, 4][4, 1]cpu" = torch.ops.aten.copy_.default(arg0_1, slice_scatter_1);  arg0_1 = slice_scatter_1 = copy_ = None
        return (sum_1,)
)fx">();
constexpr auto inplace_custom_op = ctfx::fx_graph<R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[3, 3][3, 1]cpu"):
        # File: /work/main/tools/fx_capture/capture.py:144 in inplace_custom_op, code: out = torch.empty_like(x)
        empty: "f32[3, 3][3, 1]cpu" = torch.ops.aten.empty.memory_format([3, 3], dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)

        # File: /work/main/tools/fx_capture/capture.py:145 in inplace_custom_op, code: sin_(x, out)
        auto_functionalized = torch.ops.higher_order.auto_functionalized(torch.ops.ctfx_test.sin_.default, x = arg0_1, out = empty);  arg0_1 = empty = None
        getitem_1: "f32[3, 3][3, 1]cpu" = auto_functionalized[1];  auto_functionalized = None
        return (getitem_1,)
)fx", sin_op>();
constexpr auto dynamic_slice = ctfx::fx_graph<R"fx(class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "Sym(s27)", arg2_1: "f32[s77, s27][s27, 1]cpu"):
        # File: /work/main/tools/fx_capture/capture.py:134 in dynamic_slice, code: return x[1:] * 2
        slice_1: "f32[s77 - 1, s27][s27, 1]cpu" = torch.ops.aten.slice.Tensor(arg2_1, 0, 1, 9223372036854775807);  arg2_1 = None
        mul: "f32[s77 - 1, s27][s27, 1]cpu" = torch.ops.aten.mul.Tensor(slice_1, 2);  slice_1 = None
        return (mul,)
)fx">();

// Parsed in the compiler: structure and metadata are checked there.
static_assert(decltype(kv_cache_index)::get().size() == 6);  // 3 inputs, index_put, copy_, output
static_assert(decltype(kv_cache_index)::get()[3].op == ctfx::op_kind::index_put);
static_assert(decltype(kv_cache_index)::get()[4].op == ctfx::op_kind::copy_);
static_assert(decltype(slice_scatter_chain)::get().nodes.back().nargs == 1);
static_assert(decltype(inplace_custom_op)::get().customs.size() == 1);
// s77, s27, and PyTorch's guard that x[1:] starts inside the dimension: Max(1, s77) == s77
static_assert(decltype(dynamic_slice)::get().syms.size() == 4);
static_assert(decltype(dynamic_slice)::get().syms[1].kind == ctfx::symbol_kind::backed);
static_assert(decltype(dynamic_slice)::get().syms[3].op == ctfx::sym_op::guard);
// A broken text gives a diagnostic at compile time too (fx_graph turns it into a compile error).
static_assert(ctfx::parse_fx("def forward(self, x: \"f32[4][1]cpu\"):\n    y = torch.ops.aten.nope.default(x)\n    return (y,)\n")
                  .error.r == ctfx::rule::fx_text);

}  // namespace

TEST_CASE("fx: every captured PyTorch graph parses at run time, and prints back to the same graph") {
  const char* names[] = {"alias_views", "cat_sum", "clone_noop", "clone_returned", "convert_and_mul", "diagonal_scatter",
                         "dynamic_slice", "dynamic_update", "expand_unsqueeze", "factories", "foreach_add",
                         "foreach_add_inplace", "halo_exchange", "index_put_accumulate", "index_put_chain",
                         "index_put_copy", "inplace_custom_op", "inplace_custom_op_input",
                         "inplace_custom_op_intermediate", "inplace_custom_op_two_mutated", "kv_cache_index",
                         "kv_cache_slice", "multiple_intermediate", "select_scatter", "select_scatter_row",
                         "slice_scatter_chain", "unsafe_index_put_like", "view_inplaced", "compare_ops",
                         "logical_ops", "where_ops", "clamp_ops", "maximum_minimum_full", "mean_dims", "masked_fill_put", "index_gather",
                         "masked_put_value", "masked_put_rows", "masked_put_accumulate", "masked_index_put",
                         "compare_promotion", "iota_tril_triu", "arange_forms", "one_hot_compare", "position_ids", "pad_forms", "flip_forms",
                         "cumulative_products"};
  for (const char* n : names) {
    CAPTURE(n);
    auto r = parse_file(n);
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    CHECK(ctfx::verify(r.graph).ok());
    std::string fx = ctfx::to_fx(r.graph, user_ops);
    auto again = ctfx::parse_fx(fx, user_ops);
    REQUIRE_MESSAGE(again.ok(), ctfx::to_string(again.error));
    CHECK(ctfx::to_text(again.graph) == ctfx::to_text(r.graph));
    CHECK(ctfx::to_fx(again.graph, user_ops) == fx);
  }
}

TEST_CASE("fx: compile-time and run-time parses give the same graph") {
  CHECK(ctfx::to_text(kv_cache_index.get()) == ctfx::to_text(parse_file("kv_cache_index").graph));
  CHECK(ctfx::to_text(slice_scatter_chain.get()) == ctfx::to_text(parse_file("slice_scatter_chain").graph));
  CHECK(ctfx::to_text(inplace_custom_op.get()) == ctfx::to_text(parse_file("inplace_custom_op").graph));
  CHECK(ctfx::to_text(dynamic_slice.get()) == ctfx::to_text(parse_file("dynamic_slice").graph));
}

TEST_CASE("fx: the parsed graph is PyTorch's, op by op") {
  CHECK(ctfx::to_text(kv_cache_index.get()) ==
        "graph(%arg0_1 : f32[2, 3, 16, 4], %arg1_1 : i64[1], %arg2_1 : f32[2, 3, 1, 4]):\n"
        "  %index_put : f32[2, 3, 16, 4] = index_put(%arg0_1, [None, None, %arg1_1], %arg2_1)\n"
        "  %copy_ : f32[2, 3, 16, 4] = copy_(%arg0_1, %index_put)\n"
        "  return ()\n");
  CHECK(ctfx::to_text(dynamic_slice.get()) ==
        "graph(%arg2_1 : f32[s77, s27]):\n"
        "  %slice_1 : f32[s77 - 1, s27] = slice(%arg2_1, dim=0, start=1, end=None)\n"
        "  %mul : f32[s77 - 1, s27] = mul(%slice_1, 2)\n"
        "  return (%mul,)\n");
  // auto_functionalized: PyTorch's element 1 (after the None result) is ctfx's element 0.
  std::string t = ctfx::to_text(inplace_custom_op.get());
  CHECK(t.find("auto_functionalized(ctfx_test::sin_, %arg0_1, %empty)") != std::string::npos);
  CHECK(t.find("getitem(%auto_functionalized, 0)") != std::string::npos);
  CHECK(ctfx::to_fx(inplace_custom_op.get(), user_ops).find("auto_functionalized[1]") != std::string::npos);
}

TEST_CASE("fx: print_readable forms: keyword arguments, lists, None, scalars, dtypes, operator.getitem") {
  auto r = ctfx::parse_fx(R"(
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 8][8, 1]cpu", i: "i64[2][1]cpu", v: "f32[2, 8][8, 1]cpu"):
        # a comment, then a blank line

        full: "f32[4, 8][8, 1]cpu" = torch.ops.aten.full.default([4, 8], 0.5, dtype = torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
        add: "f32[4, 8][8, 1]cpu" = torch.ops.aten.add.Tensor(x, full);  full = None
        mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(add, -1.5e-3)
        sl: "f32[4, 4][8, 1]cpu" = torch.ops.aten.slice.Tensor(mul, dim = 1, start = 4, end = 9223372036854775807)
        ip: "f32[4, 8][8, 1]cpu" = torch.ops.aten.index_put.default(x, [i], v, accumulate = True)
        fe = torch.ops.aten._foreach_mul.Scalar([x, add], 2.0)
        g: "f32[4, 8][8, 1]cpu" = operator.getitem(fe, 1)
        e: "i32[3][1]cpu" = torch.ops.aten.empty.memory_format([3], dtype = torch.int32, device = device(type='cpu'))
        t: "f32[8, 4][1, 8]cpu" = torch.ops.aten.permute.default(x, [1, 0])
        return (sl, ip, g, e, t, None)
)");
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  std::string t = ctfx::to_text(r.graph);
  CHECK(t.find("%mul : f32[4, 8] = mul(%add, -0.0015)") != std::string::npos);
  CHECK(t.find("slice(%mul, dim=1, start=4, end=None)") != std::string::npos);
  CHECK(t.find("index_put(%x, [%i], %v, accumulate=True)") != std::string::npos);
  CHECK(t.find("_foreach_mul([%x, %add], 2)") != std::string::npos);
  CHECK(t.find("return (%sl, %ip, %g, %e, %t, None)") != std::string::npos);
  auto again = ctfx::parse_fx(ctfx::to_fx(r.graph));
  REQUIRE_MESSAGE(again.ok(), ctfx::to_string(again.error));
  CHECK(ctfx::to_text(again.graph) == t);
}

TEST_CASE("fx: errors name the line, the column and the op") {
  auto bad_op = ctfx::parse_fx(
      "def forward(self, x: \"f32[4][1]cpu\"):\n"
      "    y: \"f32[4][1]cpu\" = torch.ops.aten.frobnicate.default(x)\n"
      "    return (y,)\n");
  CHECK(bad_op.error.r == ctfx::rule::fx_text);
  CHECK(bad_op.line == 2);
  CHECK(bad_op.column == 25);
  CHECK(std::string(bad_op.error.message()) ==
        "fx line 2, column 25: node 'y': unsupported op 'torch.ops.aten.frobnicate.default' [rule fx-text]");

  auto malformed = ctfx::parse_fx(
      "def forward(self, x: \"f32[4][1]cpu\"):\n"
      "    y: \"f32[4][1]cpu\" = torch.ops.aten.neg.default(x\n"
      "    return (y,)\n");
  CHECK(malformed.error.r == ctfx::rule::fx_text);
  CHECK(malformed.line == 3);  // the unclosed call runs into the next line
  CHECK(std::string(malformed.error.message()).find("expected ',' or ')'") != std::string::npos);

  auto undefined = ctfx::parse_fx(
      "def forward(self, x: \"f32[4][1]cpu\"):\n"
      "    y: \"f32[4][1]cpu\" = torch.ops.aten.add.Tensor(x, z)\n"
      "    return (y,)\n");
  CHECK(std::string(undefined.error.message()) == "fx line 2, column 54: 'z' is not defined before its use [rule fx-text]");

  // PyTorch's printed metadata disagrees with ctfx's rules: the line and the node are named.
  auto meta = ctfx::parse_fx(
      "def forward(self, x: \"f32[4, 8][8, 1]cpu\"):\n"
      "    s: \"f32[2, 8][8, 1]cpu\" = torch.ops.aten.slice.Tensor(x, 0, 0, 3)\n"
      "    return (s,)\n");
  CHECK(meta.error.r == ctfx::rule::metadata_inconsistent);
  CHECK(meta.line == 2);
  CHECK(std::string(meta.error.message()) ==
        "fx line 2: node 's': PyTorch printed f32[2, 8][8, 1], ctfx computed f32[3, 8][8, 1] [rule metadata-consistent]");

  // A rule broken while building the node: the builder's message, with the line in front.
  auto shapes = ctfx::parse_fx(
      "def forward(self, x: \"f32[4][1]cpu\", y: \"f32[3][1]cpu\"):\n"
      "    a = torch.ops.aten.add.Tensor(x, y)\n"
      "    return (a,)\n");
  CHECK(shapes.error.r == ctfx::rule::broadcast_shapes);
  CHECK(std::string(shapes.error.message()).rfind("fx line 2: node 'a' (add): operand shapes", 0) == 0);

  auto user = ctfx::parse_fx(
      "def forward(self, x: \"f32[4][1]cpu\"):\n"
      "    af = torch.ops.higher_order.auto_functionalized(torch.ops.mylib.foo.default, x = x)\n"
      "    return ()\n");
  CHECK(std::string(user.error.message()).find("user op 'torch.ops.mylib.foo.default' is not in the list") !=
        std::string::npos);

  auto missing = ctfx::parse_fx_file(data_dir() + "no_such_graph.txt");
  CHECK(missing.error.r == ctfx::rule::fx_text);
}
