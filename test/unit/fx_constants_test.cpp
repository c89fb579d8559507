// Constants exactly, end to end: FX text as PyTorch prints it read into the IR with every float
// correctly rounded and every int an exact int64 (2**53 + 1, int64's max and min), printed back
// to the same bits, and computed exactly by the run-time plan, the reference and compiled<G>.
#include <doctest/doctest.h>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_parse.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {

constexpr auto int_fx = ctfx::fx_graph<R"(def forward(self, arg0_1: "i64[4][1]cpu"):
    add: "i64[4][1]cpu" = torch.ops.aten.add.Tensor(arg0_1, 9007199254740993)
    eq: "b8[4][1]cpu" = torch.ops.aten.eq.Scalar(arg0_1, 9007199254740993)
    gt: "b8[4][1]cpu" = torch.ops.aten.gt.Scalar(arg0_1, 0)
    full_default: "i64[][]cpu" = torch.ops.aten.full.default([], 9223372036854775807, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    where: "i64[4][1]cpu" = torch.ops.aten.where.self(gt, arg0_1, full_default)
    full_default_1: "i64[][]cpu" = torch.ops.aten.full.default([], -9223372036854775808, dtype = torch.int64, layout = torch.strided, device = device(type='cpu'), pin_memory = False)
    lt: "b8[4][1]cpu" = torch.ops.aten.lt.Scalar(arg0_1, 0)
    where_1: "i64[4][1]cpu" = torch.ops.aten.where.self(lt, full_default_1, arg0_1)
    sub: "i64[4][1]cpu" = torch.ops.aten.sub.Tensor(arg0_1, 100000000000000001)
    return (add, eq, where, where_1, sub)
)">();
using int_def = decltype(int_fx);

// In the compiler: the ints stay int64, the float keeps its last bit.
static_assert(int_def::get()[1].scalar.i == 9007199254740993);
static_assert(int_def::get()[4].scalar.i == std::numeric_limits<std::int64_t>::max());
static_assert(int_def::get()[6].scalar.i == std::numeric_limits<std::int64_t>::min());
static_assert(ctfx::parse_fx(R"(def forward(self, arg0_1: "f64[1][1]cpu"):
    mul: "f64[1][1]cpu" = torch.ops.aten.mul.Tensor(arg0_1, 0.041666666666666664)
    return (mul,)
)").graph[1].scalar.d == 0.041666666666666664);

}  // namespace

TEST_CASE("constants: ints beyond 2^53 and int64's extremes compute exactly on every executor") {
  const ctfx::ir g = int_def::get();
  REQUIRE(g.error.ok());
  std::vector<std::int64_t> x = {0, 9007199254740992, -5, 9007199254740993};
  const auto d = ctfx::tensor_desc::contiguous(ctfx::i64, {4});
  const auto db = ctfx::tensor_desc::contiguous(ctfx::b8, {4});
  const std::int64_t mx = std::numeric_limits<std::int64_t>::max(), mn = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> add = {9007199254740993, 18014398509481985, 9007199254740988, 18014398509481986};
  const std::vector<std::uint8_t> eq = {0, 0, 0, 1};
  const std::vector<std::int64_t> where = {mx, 9007199254740992, mx, 9007199254740993};
  const std::vector<std::int64_t> where1 = {0, 9007199254740992, mn, 9007199254740993};
  const std::vector<std::int64_t> sub = {-100000000000000001, 9007199254740992 - 100000000000000001, -100000000000000006,
                                         9007199254740993 - 100000000000000001};
  auto check_run = [&](auto&& run) {
    std::vector<std::int64_t> o0(4), o2(4), o3(4), o4(4);
    std::vector<std::uint8_t> o1(4);
    const std::vector<ctfx::tensor_ref> outs = {ctfx::tensor_ref(o0.data(), d), ctfx::tensor_ref(o1.data(), db), ctfx::tensor_ref(o2.data(), d),
                                                ctfx::tensor_ref(o3.data(), d), ctfx::tensor_ref(o4.data(), d)};
    REQUIRE(run(std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(x.data(), d)}, outs).ok);
    CHECK(o0 == add);
    CHECK(o1 == eq);
    CHECK(o2 == where);
    CHECK(o3 == where1);
    CHECK(o4 == sub);
  };
  const ctfx::runtime_plan plan(g);
  check_run([&](auto in, auto out) { return plan.run(in, out); });
  check_run([&](auto in, auto out) { return ctfx::reference_run(g, in, out); });
  using compiled = ctfx::compiled<int_def>;
  check_run([&](auto in, auto out) { return compiled::run(in, out); });
}

TEST_CASE("constants: graphs printed with random doubles and int64s read back to the same bits") {
  std::mt19937_64 rng(42);
  int nodes = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<ctfx::scalar_value> want;
    const ctfx::ir g = ctfx::build_checked([&](ctfx::builder& b) {
      auto x = b.input("x", ctfx::f64, {3});
      auto i = b.input("i", ctfx::i64, {3});
      for (int k = 0; k < 6; ++k) {
        std::uint64_t bits = rng();
        if ((bits >> 52 & 0x7ff) == 0x7ff) bits &= ~(std::uint64_t{1} << 62);  // finite
        const double v = __builtin_bit_cast(double, bits);
        x = x * v;
        want.push_back(v);
        const auto n = static_cast<std::int64_t>(rng());
        i = i + n;
        want.push_back(ctfx::scalar_value::integer(n));
      }
      b.output(x);
      b.output(i);
    });
    REQUIRE(g.error.ok());
    const std::string text = ctfx::to_fx(g);
    const auto r = ctfx::parse_fx(text);
    REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
    std::vector<ctfx::scalar_value> got;
    for (std::int32_t k = 0; k < r.graph.size(); ++k)
      if (ctfx::is_binary(r.graph[k].op) && r.graph[k].nargs == 1) got.push_back(r.graph[k].scalar);
    // the ops alternate in the graph's order as they were built: x * v, i + n
    std::vector<ctfx::scalar_value> fs, is, wf, wi;
    for (const auto& s : got) (s.exact_int() ? is : fs).push_back(s);
    for (const auto& s : want) (s.exact_int() ? wi : wf).push_back(s);
    REQUIRE(fs.size() == wf.size());
    REQUIRE(is.size() == wi.size());
    for (std::size_t k = 0; k < fs.size(); ++k) CHECK(fs[k].same(wf[k]));
    for (std::size_t k = 0; k < is.size(); ++k) CHECK(is[k].same(wi[k]));
    nodes += static_cast<int>(got.size());
  }
  CHECK(nodes == 2400);
}

TEST_CASE("constants: an int outside int64's range is refused with its reason") {
  const auto r = ctfx::parse_fx(R"(def forward(self, arg0_1: "i64[4][1]cpu"):
    add: "i64[4][1]cpu" = torch.ops.aten.add.Tensor(arg0_1, 9223372036854775808)
    return (add,)
)");
  REQUIRE_FALSE(r.ok());
  CHECK(ctfx::to_string(r.error).find("outside int64's range") != std::string::npos);
}
