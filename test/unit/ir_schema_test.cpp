// Op schemas (ops/schema.hpp, ops/custom.hpp): the alias annotations read from PyTorch-style
// signatures at compile time, their agreement with the value-side op table (ops/op_kind.hpp), the
// view<->scatter twins, and user-op signatures parsed into custom_schema.
#include <doctest/doctest.h>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <ctfx.hpp>
#include <ctfx/kernels/pointwise.hpp>
#include <string>
#include <type_traits>

namespace {

namespace ops = ctfx::ops;
using ctfx::op_kind;

// ----- signature parsing -----
static_assert(ctfx::schema_mutated_arg("f(Tensor x, Tensor(a!) y) -> ()") == 1);
static_assert(ctfx::schema_mutated_arg("f(Tensor(a!) x, Tensor(b!) y) -> ()") == 0);  // the first one
static_assert(ctfx::schema_mutated_arg("f(Tensor x) -> Tensor") == -1);
static_assert(ctfx::schema_mutated_arg("f(int[2] size, SymInt[] s, Tensor(a!) out) -> ()") == 2);
static_assert(ctfx::schema_mutated_arg("f(Tensor(a!)[] xs, Tensor[] ys) -> ()") == 0);
static_assert(ctfx::schema_mutated_arg("f(Tensor(a!) x)") == -1);  // no "->": not a signature
static_assert(ctfx::schema_mutated_arg("garbage") == -1);
static_assert(ctfx::schema_returns_alias("f(Tensor(a) x) -> Tensor(a)"));
static_assert(!ctfx::schema_returns_alias("f(Tensor(a!) x) -> Tensor(a!)"));  // mutation, not a view
static_assert(!ctfx::schema_returns_alias("f(Tensor x) -> Tensor"));
static_assert(!ctfx::schema_returns_alias("f(Tensor(a) x)"));

// ----- built-in tags -----
static_assert(ops::copy__t::mutated_arg == 0);
static_assert(ops::add__t::mutated_arg == 0 && ops::mul__t::mutated_arg == 0);
static_assert(ops::index_put__t::mutated_arg == 0 && ops::unsafe_index_put__t::mutated_arg == 0);
static_assert(ops::foreach_add__t::mutated_arg == 0);  // Tensor(a!)[]
static_assert(ops::fill__t::mutated_arg == 0);
static_assert(ops::all_reduce__t::mutated_arg == 0);
static_assert(ops::generalized_scatter__t::mutated_arg == 0);
static_assert(ops::add_t::mutated_arg == -1 && ops::index_put_t::mutated_arg == -1);
static_assert(ops::slice_t::mutated_arg == -1 && ops::slice_scatter_t::mutated_arg == -1);
static_assert(ops::slice_t::is_view && ops::select_t::is_view && ops::view_t::is_view && ops::alias_t::is_view);
static_assert(ops::expand_t::is_view && ops::as_strided_t::is_view && ops::squeeze_t::is_view);
static_assert(!ops::add_t::is_view && !ops::clone_t::is_view && !ops::slice_scatter_t::is_view);
static_assert(!ops::copy__t::is_view && !ops::add__t::is_view);
static_assert(ops::slice_scatter_t::name == "slice_scatter" && ops::generalized_scatter_t::name == "_generalized_scatter");
static_assert(ops::convert_t::name == "convert_element_type");

// The type side and the value side agree for every tag: a tag's signature says the same as the
// op_table row of its op_kind (which the passes read).
template <class... T>
struct tags {
  static constexpr bool agree() {
    return ((ctfx::facts(T::kind).mutates == (T::mutated_arg >= 0) &&
             (!ctfx::facts(T::kind).mutates || ctfx::facts(T::kind).mutated_arg == T::mutated_arg) &&
             ctfx::facts(T::kind).is_view == T::is_view && ctfx::facts(T::kind).name == T::name) && ...);
  }
  static constexpr std::size_t count = sizeof...(T);
};
using all_tags = tags<
    ops::placeholder_t, ops::output_t, ops::getitem_t, ops::sym_size_t, ops::copy__t, ops::copy_t, ops::clone_t,
    ops::empty_t, ops::empty_like_t, ops::zeros_t, ops::ones_t, ops::full_t, ops::fill__t, ops::neg_t, ops::abs_t,
    ops::exp_t, ops::exp2_t, ops::log_t, ops::log2_t, ops::log10_t, ops::sin_t, ops::cos_t, ops::sqrt_t, ops::relu_t, ops::ceil_t, ops::floor_t, ops::round_t,
    ops::trunc_t, ops::tanh_t, ops::erf_t, ops::log1p_t, ops::expm1_t, ops::sigmoid_t, ops::rsqrt_t, ops::sign_t, ops::convert_t, ops::bitwise_not_t, ops::logical_not_t, ops::add_t, ops::sub_t, ops::mul_t, ops::div_t, ops::maximum_t, ops::minimum_t,
    ops::pow_t, ops::remainder_t, ops::fmod_t, ops::hypot_t, ops::atan2_t, ops::floor_divide_t, ops::trunc_divide_t,
    ops::bitwise_and_t, ops::bitwise_or_t, ops::bitwise_xor_t, ops::bitwise_left_shift_t, ops::bitwise_right_shift_t, ops::add__t, ops::sub__t, ops::mul__t, ops::div__t, ops::clamp_min_t, ops::clamp_max_t, ops::eq_t,
    ops::ne_t, ops::lt_t, ops::le_t, ops::gt_t, ops::ge_t, ops::logical_and_t, ops::logical_or_t, ops::where_t, ops::fma_t, ops::slice_t, ops::select_t, ops::diagonal_t,
    ops::as_strided_t, ops::view_t, ops::permute_t, ops::transpose_t, ops::unsqueeze_t, ops::squeeze_t,
    ops::expand_t, ops::alias_t, ops::slice_scatter_t, ops::select_scatter_t, ops::diagonal_scatter_t,
    ops::as_strided_scatter_t, ops::generalized_scatter_t, ops::generalized_scatter__t, ops::index_put_t,
    ops::index_put__t, ops::unsafe_index_put_t, ops::unsafe_index_put__t, ops::index_tensor_t, ops::gather_t, ops::scatter_t,
    ops::scatter__t, ops::sum_t, ops::amax_t, ops::amin_t, ops::prod_t, ops::mean_t, ops::argmax_t, ops::argmin_t, ops::cumsum_t, ops::cumprod_t, ops::logcumsumexp_t, ops::var_t, ops::var_mean_t, ops::cat_t, ops::mm_t, ops::addmm_t, ops::bmm_t, ops::baddbmm_t, ops::foreach_add_t, ops::foreach_mul_t, ops::foreach_add__t, ops::foreach_mul__t, ops::all_reduce_t,
    ops::all_reduce__t, ops::broadcast_t, ops::broadcast__t, ops::all_gather_t, ops::reduce_scatter_t,
    ops::all_gather_blocks_t, ops::all_gather_blocks__t, ops::reduce_scatter_blocks_t, ops::reduce_scatter_blocks__t,
    ops::halo_exchange_t, ops::halo_exchange__t>;
static_assert(all_tags::agree());
// Every built-in op but the two user-op kinds and the two control-flow kinds (whose signature is
// their subgraphs', checked by ops/control.hpp) has a tag.
static_assert(all_tags::count == static_cast<std::size_t>(op_kind::count_) - 4);

// View <-> scatter twins: a type on the scatter, the same pairing in the table, both ways.
static_assert(std::is_same_v<ops::slice_scatter_t::view, ops::slice_t>);
static_assert(std::is_same_v<ops::select_scatter_t::view, ops::select_t>);
static_assert(std::is_same_v<ops::diagonal_scatter_t::view, ops::diagonal_t>);
static_assert(std::is_same_v<ops::as_strided_scatter_t::view, ops::as_strided_t>);
template <class S>
constexpr bool twins() {
  return ctfx::facts(S::kind).twin == S::view::kind && ctfx::facts(S::view::kind).twin == S::kind &&
         ctfx::is_view_scatter(S::kind);
}
static_assert(twins<ops::slice_scatter_t>() && twins<ops::select_scatter_t>() && twins<ops::diagonal_scatter_t>() &&
              twins<ops::as_strided_scatter_t>());
// Functional <-> in-place twins.
static_assert(ctfx::facts(op_kind::add).twin == op_kind::add_ && ctfx::facts(op_kind::add_).twin == op_kind::add);
static_assert(ctfx::facts(op_kind::index_put).twin == op_kind::index_put_);
static_assert(ctfx::facts(op_kind::foreach_mul_).twin == op_kind::foreach_mul);
static_assert(ctfx::facts(op_kind::generalized_scatter).twin == op_kind::generalized_scatter_);

// What an op computes on one element is defined once (kernels/pointwise.hpp), for every executor and
// the reference; the tags carry names and schemas only.
TEST_CASE("element semantics: one definition, PyTorch's answers for NaN, signed zeros and integer wrap") {
  namespace k = ctfx::kernels;
  const double nan = __builtin_nan("");
  auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  // relu keeps NaN and -0.0 (torch.relu), abs makes -0.0 +0.0, neg flips the sign bit of a NaN too
  CHECK(std::isnan(k::unary_value<double>(op_kind::relu, nan)));
  CHECK(same(k::unary_value<double>(op_kind::relu, -0.0), -0.0));
  CHECK(k::unary_value<double>(op_kind::relu, -2.0) == 0.0);
  CHECK(k::unary_value<std::int64_t>(op_kind::relu, 3) == 3);
  CHECK(same(k::unary_value<double>(op_kind::abs, -0.0), 0.0));
  CHECK(std::signbit(k::unary_value<double>(op_kind::neg, nan)));
  CHECK(k::unary_value<std::int64_t>(op_kind::neg, INT64_MIN) == INT64_MIN);  // wraps
  // NaN: unequal to everything, true as a bool; maximum, minimum and clamp propagate it
  CHECK(k::binary_value<double>(op_kind::eq, nan, nan) == 0.0);
  CHECK(k::binary_value<double>(op_kind::ne, nan, 1.0) == 1.0);
  CHECK(k::unary_value<double>(op_kind::logical_not, nan) == 0.0);
  CHECK(std::isnan(k::binary_value<double>(op_kind::clamp_min, 1.0, nan)));
  CHECK(std::isnan(k::binary_value<double>(op_kind::maximum, nan, 2.0)));
  CHECK(std::isnan(k::binary_value<double>(op_kind::minimum, 2.0, nan)));
  CHECK(k::binary_value<std::int64_t>(op_kind::clamp_max, 3, 2) == 2);
  CHECK(k::binary_value<std::int64_t>(op_kind::maximum, 2, 5) == 5);
  CHECK(k::binary_value<std::int64_t>(op_kind::sub, 2, 5) == -3);
  CHECK(k::binary_value<double>(op_kind::div, 7.0, 2.0) == 3.5);
  CHECK(k::binary_value<std::int64_t>(op_kind::add, INT64_MAX, 1) == INT64_MIN);  // wraps
  // Python's modulo and floor division: the divisor's sign; an integer division by 0 is 0 here
  CHECK(k::binary_value<std::int64_t>(op_kind::remainder, -7, 3) == 2);
  CHECK(k::binary_value<std::int64_t>(op_kind::remainder, 7, -3) == -2);
  CHECK(k::binary_value<std::int64_t>(op_kind::remainder, 5, 0) == 0);
  CHECK(k::binary_value<std::int64_t>(op_kind::floor_divide, -7, 2) == -4);
  CHECK(k::binary_value<std::int64_t>(op_kind::trunc_divide, -7, 2) == -3);
  // fma rounds once; integers modulo 2^bits
  CHECK(k::fma_value<std::int64_t>(3, 4, 5) == 17);
  CHECK(k::fma_value<double>(1.0 + 0x1p-30, 1.0 + 0x1p-30, -1.0) == 0x1p-29 + 0x1p-60);
}

// ----- user ops -----
struct sin_op : ctfx::custom_op<"sin", "sin(Tensor x, Tensor(a!) result) -> ()"> {};
struct sin_cos : ctfx::custom_op<"sin_cos", "sin_cos(Tensor x, Tensor(a!) out_sin, Tensor(a!) out_cos) -> ()"> {};
struct foo : ctfx::custom_op<"foo", "foo(Tensor x) -> Tensor"> {};
struct mixed : ctfx::custom_op<"mixed", "mixed(Tensor x, int k, float s, Tensor(a!) y, Tensor? z) -> (Tensor, Tensor)", 2> {};
struct kern : ctfx::user_kernel<"kern", "kern(Tensor in_ptr, Tensor(a!) out_ptr) -> ()"> {};
struct sync_op : ctfx::custom_op<"sync_op", "sync_op(Tensor x) -> Tensor"> {
  static constexpr bool host_sync = true;
};

constexpr ctfx::custom_schema s_sin = sin_op::schema();
static_assert(s_sin.name == ctfx::name_t("sin") && s_sin.n_args == 2 && s_sin.mutates == 0b10 && s_sin.n_returns == 0);
static_assert(!s_sin.user_kernel && s_sin.returns_like == 0);
constexpr ctfx::custom_schema s_sc = sin_cos::schema();
static_assert(s_sc.n_args == 3 && s_sc.mutates == 0b110 && s_sc.n_returns == 0);
static_assert(ctfx::detail::mutated_count(s_sc) == 2 && ctfx::detail::kth_mutated(s_sc, 0) == 1 &&
              ctfx::detail::kth_mutated(s_sc, 1) == 2 && ctfx::detail::kth_mutated(s_sc, 2) == -1);
constexpr ctfx::custom_schema s_foo = foo::schema();
static_assert(s_foo.n_args == 1 && s_foo.mutates == 0 && s_foo.n_returns == 1);
// Non-tensor arguments are not counted; Tensor? is a tensor argument.
constexpr ctfx::custom_schema s_mixed = mixed::schema();
static_assert(s_mixed.n_args == 3 && s_mixed.mutates == 0b010 && s_mixed.n_returns == 2 && s_mixed.returns_like == 2);
constexpr ctfx::custom_schema s_kern = kern::schema();
static_assert(s_kern.user_kernel && s_kern.n_args == 2 && s_kern.mutates == 0b10);
static_assert(sin_op::name == "sin" && foo::signature == "foo(Tensor x) -> Tensor");
static_assert(ctfx::detail::declares_host_sync<sync_op>() && !ctfx::detail::declares_host_sync<foo>());

}  // namespace

TEST_CASE("ir schema: user ops in a graph take the schema's form") {
  // A mutating op is called functionally (auto_functionalized) and returns its results, then the
  // new value of each mutated argument; a pure op is a plain custom call. Each op is registered once.
  constexpr auto f = [](ctfx::builder& g) {
    auto x = g.input("x", ctfx::f32, {4, 8});
    auto out = g.input("out", ctfx::f32, {2, 3});
    auto r = g.call<sin_cos>(x, out, x);
    auto p = g.call<foo>(x.transpose(0, 1));
    auto r2 = g.call<sin_cos>(x, x, out);
    g.output(r[0].named("new_sin"), r[1].named("new_cos"), p[0].named("foo_out"), r2[1]);
  };
  constexpr auto check = [](auto fn) {
    ctfx::ir g = ctfx::build_checked(fn);
    const auto call = g.find("auto_functionalized");
    const auto pure = g.find("custom");
    return g.customs.size() == 2 && g[call].op == op_kind::auto_functionalized && g[pure].op == op_kind::custom &&
           g[call].aux == 0 && g[pure].aux == 1 && g[g.find("auto_functionalized_1")].aux == 0 &&
           g.meta(call).storage == -1 && ctfx::verify(g).ok();
  };
  static_assert(check(f));
  ctfx::ir g = ctfx::build_checked(f);
  // The new value of `out` (a clone of it, contiguous), of `x`, and foo's result shaped like its
  // argument 0 but contiguous.
  CHECK(ctfx::layout_string(g, g.meta(g.find("new_sin"))) == "f32[2, 3][3, 1]");
  CHECK(ctfx::layout_string(g, g.meta(g.find("new_cos"))) == "f32[4, 8][8, 1]");
  CHECK(ctfx::layout_string(g, g.meta(g.find("foo_out"))) == "f32[8, 4][4, 1]");
  CHECK(g.meta(g.find("new_sin")).storage != g.meta(g.find("out")).storage);
  CHECK(ctfx::node_text(g, g.find("auto_functionalized")) == "%auto_functionalized = auto_functionalized(sin_cos, %x, %out, %x)");
  CHECK(ctfx::node_text(g, g.find("custom")) == "%custom = custom(foo, %transpose)");

  ctfx::diagnostic d{};
  (void)ctfx::build_checked(
      [](ctfx::builder& b) {
        auto x = b.input("x", ctfx::f32, {4});
        auto r = b.call<sin_op>(x, x);
        b.output(r[1]);
      },
      &d);
  CHECK(ctfx::to_string(d) == "node 'getitem' (getitem): index 1 is out of range for 'auto_functionalized' [rule valid-argument]");
}
