// sign, floor and truncating division, isnan, isinf, reciprocal and logical_xor from the C++ side:
// compiled<G> (typed kernels), the run-time plan and the reference agree with PyTorch's values
// (the FX side: the captured programs sign_and_divisions and nan_inf_reciprocal_xor).
#include <doctest/doctest.h>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>
#include <ctfx.hpp>
#include <ctfx/exec/compiled.hpp>
#include <ctfx/exec/runtime.hpp>
#include <ctfx/graph/fx_print.hpp>

namespace {

constexpr auto everyday = ctfx::graph([](ctfx::builder& g) {
  auto x = g.input("x", ctfx::f32, {8});
  auto y = g.input("y", ctfx::f32, {8});
  auto i = g.input("i", ctfx::i64, {8});
  auto j = g.input("j", ctfx::i64, {8});
  g.output(ctfx::sign(x), ctfx::floor_divide(x, y), ctfx::trunc_divide(x, y), ctfx::floor_divide(i, j), ctfx::trunc_divide(i, 16),
           ctfx::isnan(x), ctfx::isinf(x), ctfx::reciprocal(i), ctfx::logical_xor(i, x));
});
using plan = ctfx::compiled<decltype(everyday)>;

// PyTorch's results for these inputs (torch 2.15, CPU eager).
const std::vector<float> X = {7.0f, -7.0f, 7.5f, -0.0f, NAN, INFINITY, -2.25f, 0.0f};
const std::vector<float> Y = {2.0f, 2.0f, -2.0f, 3.0f, 1.0f, 3.0f, 0.5f, 0.0f};
const std::vector<std::int64_t> I = {7, -7, 7, -9, 0, std::int64_t{1} << 40, -1, 13};
const std::vector<std::int64_t> J = {2, 2, -2, 4, 5, 3, 3, -13};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {  // -0.0 differs from +0.0
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEST_CASE("sign, floor/trunc division, isnan, isinf, reciprocal, logical_xor: PyTorch's values on every executor") {
  auto check = [&](auto&& run) {
    std::vector<float> sg(8), fd(8), td(8), rc(8);
    std::vector<std::int64_t> ifd(8), itd(8);
    std::vector<std::uint8_t> nan(8), inf(8), xr(8);
    auto x = X, y = Y;
    auto i = I, j = J;
    const auto f = ctfx::tensor_desc::contiguous(ctfx::f32, {8}), l = ctfx::tensor_desc::contiguous(ctfx::i64, {8}),
               b = ctfx::tensor_desc::contiguous(ctfx::b8, {8});
    const std::vector<ctfx::tensor_ref> ins = {ctfx::tensor_ref(x.data(), f), ctfx::tensor_ref(y.data(), f),
                                               ctfx::tensor_ref(i.data(), l), ctfx::tensor_ref(j.data(), l)};
    const std::vector<ctfx::tensor_ref> outs = {ctfx::tensor_ref(sg.data(), f),  ctfx::tensor_ref(fd.data(), f),  ctfx::tensor_ref(td.data(), f),
                                                ctfx::tensor_ref(ifd.data(), l), ctfx::tensor_ref(itd.data(), l), ctfx::tensor_ref(nan.data(), b),
                                                ctfx::tensor_ref(inf.data(), b), ctfx::tensor_ref(rc.data(), f),  ctfx::tensor_ref(xr.data(), b)};
    const ctfx::run_status st = run(ins, outs);
    REQUIRE_MESSAGE(st.ok, st.message);
    // sign: nan -> 0, -0.0 -> +0.0
    CHECK(same_bits(sg, std::vector<float>{1, -1, 1, 0, 0, 1, -1, 0}));
    // floor(x / y): PyTorch's div_floor_floating (x / 0 is the IEEE quotient, a zero quotient signed)
    CHECK(fd[0] == 3.0f);
    CHECK(fd[1] == -4.0f);
    CHECK(fd[2] == -4.0f);
    CHECK((fd[3] == 0.0f && std::signbit(fd[3])));
    CHECK(std::isnan(fd[4]));
    CHECK(std::isnan(fd[5]));  // fmod(inf, 3) is nan, and so is PyTorch's floor division
    CHECK(fd[6] == -5.0f);
    CHECK(std::isnan(fd[7]));
    CHECK(td[0] == 3.0f);
    CHECK(td[1] == -3.0f);
    CHECK(td[2] == -3.0f);
    CHECK((td[3] == 0.0f && std::signbit(td[3])));
    CHECK(td[6] == -4.0f);
    CHECK(ifd == std::vector<std::int64_t>{3, -4, -4, -3, 0, 366503875925, -1, -1});
    CHECK(itd == std::vector<std::int64_t>{0, 0, 0, 0, 0, 68719476736, 0, 0});
    CHECK(nan == std::vector<std::uint8_t>{0, 0, 0, 0, 1, 0, 0, 0});
    CHECK(inf == std::vector<std::uint8_t>{0, 0, 0, 0, 0, 1, 0, 0});
    CHECK(rc == std::vector<float>{1.0f / 7, -1.0f / 7, 1.0f / 7, -1.0f / 9, INFINITY, 1.0f / 1099511627776.0f, -1.0f, 1.0f / 13});
    // (i != 0) != (x != 0): a nan is true
    CHECK(xr == std::vector<std::uint8_t>{0, 0, 0, 1, 1, 0, 0, 1});
  };
  const ctfx::ir g = decltype(everyday)::get();
  check([&](auto in, auto out) { return plan::run(in, out); });
  check([&](auto in, auto out) { return ctfx::runtime_plan(g).run(in, out); });
  check([&](auto in, auto out) { return ctfx::reference_run(g, in, out); });
}

TEST_CASE("floor and trunc division print as PyTorch spells them and read back") {
  const ctfx::ir g = decltype(everyday)::get();
  const std::string text = ctfx::to_fx(g);
  CHECK(text.find("torch.ops.aten.floor_divide.default(x, y)") != std::string::npos);
  CHECK(text.find("torch.ops.aten.div.Scalar_mode(i, 16, rounding_mode = 'trunc')") != std::string::npos);
  CHECK(text.find("torch.ops.aten.sign.default(x)") != std::string::npos);
  const auto r = ctfx::parse_fx(text);
  REQUIRE_MESSAGE(r.ok(), ctfx::to_string(r.error));
  int floor_divs = 0, trunc_divs = 0;
  for (std::int32_t k = 0; k < r.graph.size(); ++k) {
    floor_divs += r.graph[k].op == ctfx::op_kind::floor_divide;
    trunc_divs += r.graph[k].op == ctfx::op_kind::trunc_divide;
  }
  CHECK(floor_divs == 2);
  CHECK(trunc_divs == 2);
}
