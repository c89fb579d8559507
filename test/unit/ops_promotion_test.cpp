// PyTorch's type promotion, checked against what torch decides (test/data/promotion_table.txt,
// written by tools/promotion_table/generate.py): the result dtype of add, div and lt for every pair
// of ctfx's dtypes as dimensioned or 0-d tensors and against Python ints and floats; and the values
// of f16 and bf16 ops against a Python float and a 0-d f32 tensor, bit for bit, on the run-time plan
// and the reference (PyTorch casts the other operand to the tensor's dtype first, except in mul
// and div, which read it at full precision).
#include <doctest/doctest.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/runtime.hpp>

namespace {

std::string table_path() {
  std::string f = __FILE__;
  return f.substr(0, f.rfind('/')) + "/../data/promotion_table.txt";
}

bool dtype_named(const std::string& s, ctfx::dtype& d) {
  for (int k = 0; k < 8; ++k) {
    const auto x = static_cast<ctfx::dtype>(k);
    if (ctfx::name_of(x) == s) { d = x; return true; }
  }
  return false;
}

enum class binop { add, div, lt };

// The graph `a op b` for operand kinds as the table names them; the dtype of its result, or "err".
std::string result_of(binop op, const std::string& ak, ctfx::dtype adt, const std::string& bk, ctfx::dtype bdt) {
  ctfx::diagnostic d;
  const ctfx::ir g = ctfx::build_checked(
      [&](ctfx::builder& b) {
        auto a = ak == "t" ? b.input("a", adt, {2}) : b.input("a", adt, {});
        auto apply = [&](auto rhs) {
          switch (op) {
            case binop::add: return a + rhs;
            case binop::div: return a / rhs;
            default: return ctfx::lt(a, rhs);
          }
        };
        if (bk == "int") b.output(apply(3));
        else if (bk == "float") b.output(apply(0.5));
        else b.output(apply(bk == "t" ? b.input("b", bdt, {2}) : b.input("b", bdt, {})));
      },
      &d);
  if (!g.error.ok() || !d.ok()) return "err";
  return std::string(ctfx::name_of(g.meta(g.arg(g.size() - 1, 0)).dt));
}

}  // namespace

TEST_CASE("promotion: result dtypes of add, div and lt are torch's for every pair of dtypes and operand kinds") {
  std::ifstream in(table_path());
  REQUIRE(in.good());
  std::string line;
  int rows = 0, mismatches = 0;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string tag, ak, an, bk, bn, rt, add, div, lt;
    s >> tag;
    if (tag != "dtype") continue;
    s >> ak >> an >> bk >> bn >> rt >> add >> div >> lt;
    ctfx::dtype adt{}, bdt{};
    REQUIRE(dtype_named(an, adt));
    if (bn != "-") REQUIRE(dtype_named(bn, bdt));
    ++rows;
    const std::string got[3] = {result_of(binop::add, ak, adt, bk, bdt), result_of(binop::div, ak, adt, bk, bdt),
                                result_of(binop::lt, ak, adt, bk, bdt)};
    const std::string want[3] = {add, div, lt};
    for (int k = 0; k < 3; ++k)
      if (got[k] != want[k]) {
        ++mismatches;
        MESSAGE(line << ": " << std::string(k == 0 ? "add" : k == 1 ? "div" : "lt") << " gives " << got[k] << ", torch " << want[k]);
      }
  }
  CHECK(rows == 288);
  CHECK(mismatches == 0);
}

TEST_CASE("promotion: f16 and bf16 against a Python float and a 0-d f32 tensor give torch's bits") {
  std::ifstream in(table_path());
  REQUIRE(in.good());
  std::string line;
  int rows = 0, mismatches = 0;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string tag, dn, op, form, number;
    s >> tag;
    if (tag != "value") continue;
    s >> dn >> op >> form >> number;
    ctfx::dtype dt{};
    REQUIRE(dtype_named(dn, dt));
    std::vector<std::uint16_t> x, want;
    std::string w;
    bool after = false;
    while (s >> w) {
      if (w == ":") { after = true; continue; }
      (after ? want : x).push_back(static_cast<std::uint16_t>(std::stol(w)));
    }
    REQUIRE(x.size() == want.size());
    const double v = std::strtod(number.c_str(), nullptr);
    const bool zerodim = form == "zerodim";
    const auto n = static_cast<ctfx::index_t>(x.size());
    ctfx::diagnostic d;
    const ctfx::ir g = ctfx::build_checked(
        [&](ctfx::builder& b) {
          auto a = b.input("x", dt, {n});
          ctfx::tensor r;
          auto apply = [&](auto rhs) {
            if (op == "add") return a + rhs;
            if (op == "sub") return a - rhs;
            if (op == "mul") return a * rhs;
            if (op == "div") return a / rhs;
            if (op == "remainder") return ctfx::remainder(a, rhs);
            if (op == "lt") return ctfx::lt(a, rhs);
            if (op == "eq") return ctfx::eq(a, rhs);
            return ctfx::ge(a, rhs);
          };
          if (zerodim) {
            auto sc = b.input("s", ctfx::f32, {});
            r = op == "maximum" ? ctfx::maximum(a, sc) : apply(sc);
          } else {
            r = apply(v);
          }
          b.output(r);
        },
        &d);
    REQUIRE_MESSAGE(d.ok(), line.substr(0, 40) << ": " << ctfx::to_string(d));
    const bool boolean = op == "lt" || op == "eq" || op == "ge";
    float sv = static_cast<float>(v);
    std::vector<std::uint16_t> out16(x.size()), ref16(x.size());
    std::vector<std::uint8_t> out8(x.size()), ref8(x.size());
    std::vector<ctfx::tensor_ref> ins = {ctfx::tensor_ref(x.data(), ctfx::tensor_desc::contiguous(dt, {n}))};
    if (zerodim) ins.push_back(ctfx::tensor_ref(&sv, ctfx::tensor_desc::contiguous(ctfx::f32, {})));
    const auto od = ctfx::tensor_desc::contiguous(boolean ? ctfx::b8 : dt, {n});
    void* o = boolean ? static_cast<void*>(out8.data()) : static_cast<void*>(out16.data());
    void* ro = boolean ? static_cast<void*>(ref8.data()) : static_cast<void*>(ref16.data());
    REQUIRE(ctfx::runtime_plan(g).run(ins, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(o, od)}).ok);
    REQUIRE(ctfx::reference_run(g, ins, std::vector<ctfx::tensor_ref>{ctfx::tensor_ref(ro, od)}).ok);
    ++rows;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const unsigned got = boolean ? out8[i] : out16[i], ref = boolean ? ref8[i] : ref16[i];
      if (got != want[i] || ref != want[i]) {
        ++mismatches;
        MESSAGE(dn << " " << op << " " << form << " " << number << " element " << i << " (bits " << x[i] << "): plan " << got
                   << ", reference " << ref << ", torch " << want[i]);
        break;
      }
    }
  }
  CHECK(rows == 136);
  CHECK(mismatches == 0);
}

// exp, log, sqrt, ... of an integer or bool tensor: f32 (PyTorch's int-to-float promotion), the
// input converted first; the functions that keep an integer (neg, abs, floor, ...) keep its dtype.
constexpr auto int_unary = ctfx::graph([](ctfx::builder& g) {
  auto i = g.input("i", ctfx::i64, {4});
  auto m = g.input("m", ctfx::b8, {4});
  g.output(ctfx::exp(i).named("e"), ctfx::sqrt(m).named("s"), ctfx::sigmoid(i).named("sg"), ctfx::neg(i).named("n"),
           ctfx::floor(i).named("f"));
});
constexpr ctfx::dtype dtype_of(std::string_view name) {
  const auto& g = int_unary.get();
  for (std::int32_t k = 0; k < g.size(); ++k)
    if (g[k].name.view() == name) return g[k].meta.dt;
  return ctfx::dtype::b8;
}

TEST_CASE("promotion: floating-point functions of integer and bool tensors give f32, integer-preserving ones keep the dtype") {
  static_assert(dtype_of("e") == ctfx::dtype::f32 && dtype_of("s") == ctfx::dtype::f32 && dtype_of("sg") == ctfx::dtype::f32);
  static_assert(dtype_of("n") == ctfx::dtype::i64 && dtype_of("f") == ctfx::dtype::i64);
  std::vector<std::int64_t> i = {0, 1, 4, -2};
  std::vector<std::uint8_t> m = {1, 0, 1, 1};
  std::vector<float> e(4), s(4), sg(4);
  std::vector<std::int64_t> n(4), f(4);
  const auto l = ctfx::tensor_desc::contiguous(ctfx::i64, {4}), b = ctfx::tensor_desc::contiguous(ctfx::b8, {4}),
             x = ctfx::tensor_desc::contiguous(ctfx::f32, {4});
  const std::vector<ctfx::tensor_ref> ins = {ctfx::tensor_ref(i.data(), l), ctfx::tensor_ref(m.data(), b)};
  const std::vector<ctfx::tensor_ref> outs = {ctfx::tensor_ref(e.data(), x), ctfx::tensor_ref(s.data(), x), ctfx::tensor_ref(sg.data(), x),
                                              ctfx::tensor_ref(n.data(), l), ctfx::tensor_ref(f.data(), l)};
  const ctfx::run_status st = ctfx::runtime_plan(int_unary.get()).run(ins, outs);
  REQUIRE_MESSAGE(st.ok, st.message);
  CHECK(e[0] == 1.0f);
  CHECK(e[2] > 54.5f);
  CHECK(e[2] < 54.7f);  // exp(4) in f32, not the integer 54
  CHECK(s[0] == 1.0f);
  CHECK(s[1] == 0.0f);
  CHECK(sg[1] > 0.73f);
  CHECK(sg[1] < 0.74f);  // sigmoid(1), not 0 or 1
  CHECK(n == std::vector<std::int64_t>{0, -1, -4, 2});
  CHECK(f == i);
}
